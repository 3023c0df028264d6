package test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/ptr"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

const (
	composedPolicyFile = "deploy/composed-objects-policy.yaml"
	mdPolicyFile       = "deploy/machinedeployment-policy.yaml"
	// crossplaneUser is Crossplane's ServiceAccount as its Helm chart
	// installs it (crossplane-system/crossplane).
	crossplaneUser = "system:serviceaccount:crossplane-system:crossplane"
	minSizeKey     = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	maxSizeKey     = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

// admitted evaluates v on one request by username (an authenticated user,
// in groups besides system:authenticated) and reports whether it admits it, with the messages
// of its denials.
func admitted(t *testing.T, v validating.Validator, op admission.Operation, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, sub string, obj, old *unstructured.Unstructured, params runtime.Object, username string, groups ...string) (bool, string) {
	t.Helper()
	decisions := evaluate(t, v, admissionRequest{op: op, gvr: gvr, gvk: gvk, sub: sub, obj: obj, old: old, params: params,
		user: &user.DefaultInfo{Name: username, Groups: append([]string{"system:authenticated"}, groups...)}})
	msg := ""
	ok := true
	for _, d := range decisions {
		if d.Action != validating.ActionAdmit {
			ok = false
			msg += d.Message + "; "
		}
	}
	return ok, msg
}

// policyUser is a requester of deploy/composed-objects-policy.yaml.
type policyUser struct {
	name   string
	groups []string
	// clusterWide: may write every protected kind in every namespace
	// (a ClusterRoleBinding); otherwise only what a namespace's roles grant.
	clusterWide bool
}

var (
	crossplaneSA   = policyUser{name: crossplaneUser, groups: []string{"system:serviceaccounts", "system:serviceaccounts:crossplane-system"}, clusterWide: true}
	gcSA           = policyUser{name: "system:serviceaccount:kube-system:generic-garbage-collector", groups: []string{"system:serviceaccounts"}, clusterWide: true}
	nsControllerSA = policyUser{name: "system:serviceaccount:kube-system:namespace-controller", groups: []string{"system:serviceaccounts"}, clusterWide: true}
	kcmUser        = policyUser{name: "system:kube-controller-manager", clusterWide: true}
	masters        = policyUser{name: "admin", groups: []string{"system:masters"}}
	platformTeam   = policyUser{name: "ops@corp", groups: []string{"tenantkube:platform"}}
	// editTenant holds Kubernetes' edit in its namespace; tenantSA is a
	// ServiceAccount of that namespace (edit runs pods as any of them).
	editTenant = policyUser{name: "mallory"}
	tenantSA   = policyUser{name: "system:serviceaccount:tenant-demo:default", groups: []string{"system:serviceaccounts"}}
	// otherSA is a namespace-scoped ServiceAccount of Crossplane's namespace;
	// operator an operator bound cluster-wide (Kamaji, cert-manager).
	otherSA  = policyUser{name: "system:serviceaccount:crossplane-system:other", groups: []string{"system:serviceaccounts"}}
	operator = policyUser{name: "system:serviceaccount:kamaji-system:kamaji", groups: []string{"system:serviceaccounts"}, clusterWide: true}
)

// rbacLike answers the policy's authorizer checks as RBAC would for u:
// system:masters may do anything, a cluster-wide binding allows a check of
// no namespace, a namespace's roles allow none. asked counts the checks.
type rbacLike struct{ asked int }

func (r *rbacLike) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r.asked++
	for _, g := range a.GetUser().GetGroups() {
		if g == "system:masters" {
			return authorizer.DecisionAllow, "", nil
		}
	}
	for _, u := range []policyUser{crossplaneSA, gcSA, nsControllerSA, kcmUser, operator} {
		if u.name == a.GetUser().GetName() && a.GetNamespace() == "" {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// decide evaluates the composed-objects policy v on one request of u (the
// old object alone for a DELETE) and returns whether it admits it, with the
// messages of its denials and how many authorizer checks it made; a CEL
// evaluation error fails the test.
func decide(t *testing.T, v validating.Validator, op admission.Operation, obj, old *unstructured.Unstructured, u policyUser) (bool, string, int) {
	t.Helper()
	var o, oo runtime.Object
	ref := obj
	if obj != nil {
		o = obj
	} else {
		ref = old
	}
	if old != nil {
		oo = old
	}
	gvk := ref.GroupVersionKind()
	gr, ok := protectedKinds[gvk.Kind]
	if !ok {
		t.Fatalf("%s is not a kind of %s", gvk.Kind, composedPolicyFile)
	}
	gvr := gr.WithVersion(gvk.Version)
	info := &user.DefaultInfo{Name: u.name, Groups: append([]string{"system:authenticated"}, u.groups...)}
	attr := admission.NewAttributesRecord(o, oo, gvk, ref.GetNamespace(), ref.GetName(), gvr, "", op, nil, false, info)
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: o, VersionedOldObject: oo}
	authz := &rbacLike{}
	res := v.Validate(context.Background(), gvr, va, nil, nil, celconfig.RuntimeCELCostBudget, authz)
	admit, msg := true, ""
	for _, d := range res.Decisions {
		if d.Evaluation == validating.EvalError {
			t.Errorf("%s %s %s/%s by %s: evaluation error: %s", op, gvk.Kind, ref.GetNamespace(), ref.GetName(), u.name, d.Message)
		}
		if d.Action != validating.ActionAdmit {
			admit = false
			msg += d.Message + "; "
		}
	}
	return admit, msg, authz.asked
}

// protectedKinds are the kinds deploy/composed-objects-policy.yaml
// protects, by the resource it matches.
var protectedKinds = map[string]schema.GroupResource{
	"ConfigMap": {Resource: "configmaps"}, "ServiceAccount": {Resource: "serviceaccounts"}, "Service": {Resource: "services"},
	"Deployment": {Group: "apps", Resource: "deployments"}, "RoleBinding": {Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
	"Ingress":        {Group: "networking.k8s.io", Resource: "ingresses"},
	"HelmRelease":    {Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"},
	"HelmRepository": {Group: "source.toolkit.fluxcd.io", Resource: "helmrepositories"}, "OCIRepository": {Group: "source.toolkit.fluxcd.io", Resource: "ocirepositories"},
	"Certificate": {Group: "cert-manager.io", Resource: "certificates"}, "Issuer": {Group: "cert-manager.io", Resource: "issuers"},
}

// fluxOrCertManager: kinds of Flux and cert-manager, whose composed names
// the policy does not list (see its header).
func fluxOrCertManager(kind string) bool {
	g := protectedKinds[kind].Group
	return strings.HasSuffix(g, ".fluxcd.io") || g == "cert-manager.io"
}

// managementNamespace matches a cluster's management namespace
// tenantkube-<digest>, where no tenant holds a role.
var managementNamespace = regexp.MustCompile(`^tenantkube-[a-z2-7]{26}$`)

// foreignController makes u controlled by an object of the tenant's.
func foreignController(u *unstructured.Unstructured) {
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "mine", UID: "6d1b5e0e-0000-4000-8000-000000000001",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
}

// precreated is o as a tenant creates it ahead of Crossplane: o's name and
// content, no label, no owner.
func precreated(o *unstructured.Unstructured) *unstructured.Unstructured {
	p := o.DeepCopy()
	p.SetLabels(nil)
	p.SetAnnotations(nil)
	p.SetOwnerReferences(nil)
	return p
}

// TestComposedObjectsPolicy evaluates deploy/composed-objects-policy.yaml
// with kube-apiserver's own validator (and an authorizer answering as RBAC
// would) on every composed object of the golden renders of the kinds it
// protects: an update that changes anything but annotations (data, spec,
// subjects, labels, the image of a Deployment) is admitted for Crossplane's
// ServiceAccount only, an annotation-only update for anyone, a create only
// for Crossplane; a delete only for Crossplane, the garbage collector, the
// namespace controller, kube-controller-manager, system:masters and
// tenantkube:platform; a controller reference of another owner only for
// Crossplane and the platform. In a tenant's namespace, an object of the
// same name created ahead of Crossplane (no label, no owner) is refused to
// the tenant where the kind is a core one (its name is listed), admitted
// for a Flux or cert-manager kind (Crossplane adopts it), and refused to
// the tenant with a controller reference of its own for every kind; the
// update by which Crossplane adopts it is admitted.
func TestComposedObjectsPolicy(t *testing.T) {
	root := repoRoot(t)
	p, _, v := loadPolicy(t, filepath.Join(root, composedPolicyFile))
	if p.Spec.MatchConstraints.ObjectSelector != nil || p.Spec.MatchConstraints.NamespaceSelector != nil {
		t.Errorf("%s: object or namespace selector set: an object created ahead of Crossplane carries no label", composedPolicyFile)
	}
	matched := map[schema.GroupResource]map[admissionregistrationv1.OperationType]bool{}
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				gr := schema.GroupResource{Group: g, Resource: res}
				if matched[gr] == nil {
					matched[gr] = map[admissionregistrationv1.OperationType]bool{}
				}
				for _, op := range r.Operations {
					matched[gr][op] = true
				}
			}
		}
	}
	for kind, gr := range protectedKinds {
		for _, op := range []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete} {
			if !matched[gr][op] {
				t.Errorf("%s does not match %s of %s (%s)", composedPolicyFile, op, gr, kind)
			}
		}
	}
	// Each changes one field a tenant could turn against the management
	// side; the last changes annotations only.
	changes := map[string]func(u *unstructured.Unstructured){
		"data":   func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "data", "hostile") },
		"labels": func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"crossplane.io/composite": "other"}) },
		"image":  func(u *unstructured.Unstructured) { setFirstContainerImage(u, "registry.example/evil:latest") },
		"spec": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "ExternalName", "spec", "type")
		},
		"suspend":  func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, true, "spec", "suspend") },
		"subjects": func(u *unstructured.Unstructured) { _ = unstructured.SetNestedSlice(u.Object, []any{}, "subjects") },
		"automount": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, true, "automountServiceAccountToken")
		},
		"annotations": func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "2"})
		},
	}
	everyone := []policyUser{crossplaneSA, gcSA, nsControllerSA, kcmUser, masters, platformTeam, editTenant, tenantSA, otherSA, operator}
	deleters := map[string]bool{crossplaneSA.name: true, gcSA.name: true, nsControllerSA.name: true, kcmUser.name: true, masters.name: true, platformTeam.name: true}
	platform := map[string]bool{crossplaneSA.name: true, masters.name: true, platformTeam.name: true}
	seen := map[string]int{}
	checked := map[string]bool{} // many renders compose the same object
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		kind := o.obj.GetKind()
		if _, ok := protectedKinds[kind]; !ok || o.obj.GetNamespace() == "" || checked[fmt.Sprint(o.obj.Object)] {
			continue
		}
		checked[fmt.Sprint(o.obj.Object)] = true
		seen[kind]++
		where := o.file + " " + kind + " " + o.obj.GetNamespace() + "/" + o.obj.GetName()
		for name, change := range changes {
			changed := o.obj.DeepCopy()
			change(changed)
			for _, u := range everyone {
				ok, msg, _ := decide(t, v, admission.Update, changed, o.obj, u)
				want := u.name == crossplaneUser || name == "annotations"
				if fmt.Sprint(changed.Object) == fmt.Sprint(o.obj.Object) {
					want = true // the change does not apply to this kind
				}
				if ok != want {
					t.Errorf("%s: update changing %s by %s: admitted %t, want %t (%s)", where, name, u.name, ok, want, msg)
				}
			}
		}
		hijacked := o.obj.DeepCopy()
		foreignController(hijacked)
		for _, u := range everyone {
			if ok, msg, _ := decide(t, v, admission.Create, o.obj, nil, u); ok != (u.name == crossplaneUser) {
				t.Errorf("%s: create by %s admitted %t (%s)", where, u.name, ok, msg)
			}
			if ok, msg, _ := decide(t, v, admission.Delete, nil, o.obj, u); ok != deleters[u.name] {
				t.Errorf("%s: delete by %s admitted %t, want %t (%s)", where, u.name, ok, deleters[u.name], msg)
			}
			if ok, msg, _ := decide(t, v, admission.Update, hijacked, o.obj, u); ok != platform[u.name] {
				t.Errorf("%s: another controller set by %s admitted %t, want %t (%s)", where, u.name, ok, platform[u.name], msg)
			}
		}
		if managementNamespace.MatchString(o.obj.GetNamespace()) {
			continue
		}
		// Ahead of Crossplane, in the tenant's namespace.
		pre := precreated(o.obj)
		owned := pre.DeepCopy()
		foreignController(owned)
		for _, u := range everyone {
			want := platform[u.name] || fluxOrCertManager(kind)
			if ok, msg, _ := decide(t, v, admission.Create, pre, nil, u); ok != want {
				t.Errorf("%s: created ahead of Crossplane by %s: admitted %t, want %t (%s)", where, u.name, ok, want, msg)
			} else if !ok && !strings.Contains(msg, "is a name tenantkube composes") {
				t.Errorf("%s: created ahead of Crossplane by %s: denial %q does not say the name is composed", where, u.name, msg)
			}
			want = platform[u.name] || (fluxOrCertManager(kind) && u.clusterWide)
			if ok, msg, _ := decide(t, v, admission.Create, owned, nil, u); ok != want {
				t.Errorf("%s: created ahead of Crossplane, controlled by the requester's object, by %s: admitted %t, want %t (%s)", where, u.name, ok, want, msg)
			}
		}
		if ok, msg, _ := decide(t, v, admission.Update, o.obj, pre, crossplaneSA); !ok {
			t.Errorf("%s: Crossplane adopting an object created ahead of it: refused (%s)", where, msg)
		}
	}
	for k := range protectedKinds {
		if seen[k] == 0 {
			t.Errorf("no composed %s in the golden renders: nothing checked", k)
		}
	}
}

func setFirstContainerImage(u *unstructured.Unstructured, image string) {
	cs, found, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if !found || len(cs) == 0 {
		return
	}
	c := cs[0].(map[string]any)
	c["image"] = image
	_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
}

// TestComposedObjectsPolicyReplace plays, request by request, a tenant
// holding Kubernetes' edit in its namespace replacing (kubectl replace
// --force: delete, then create) the composed AuthenticationConfiguration
// ConfigMap and the Service behind the shared ingress, and creating them
// ahead of Crossplane; each move is refused with a message naming the
// object. The same requests by the identities that make them in a running
// cluster are admitted, as are the tenant's own objects.
func TestComposedObjectsPolicyReplace(t *testing.T) {
	_, _, v := loadPolicy(t, filepath.Join(repoRoot(t), composedPolicyFile))
	const composite = `labels: {crossplane.io/composite: demo-x7k2p, crossplane.io/claim-name: demo, crossplane.io/claim-namespace: tenant-demo}
  ownerReferences: [{apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p, uid: 26ef1c3e-c03e-593c-9faf-3856a12bcbde, controller: true, blockOwnerDeletion: true}]`
	const tenants = `ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: mine, uid: 6d1b5e0e-0000-4000-8000-000000000001, controller: true}]`
	cm := func(meta, rest string) *unstructured.Unstructured {
		return obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-oidc-authn-config\n  namespace: tenant-demo\n  "+meta+"\n"+rest)
	}
	svc := func(name, meta, spec string) *unstructured.Unstructured {
		return obj(t, "apiVersion: v1\nkind: Service\nmetadata:\n  name: "+name+"\n  namespace: tenant-demo\n  "+meta+"\nspec: "+spec)
	}
	hr := func(meta, spec string) *unstructured.Unstructured {
		return obj(t, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: demo-cilium\n  namespace: tenant-demo\n  "+meta+"\nspec: "+spec)
	}
	const apiSvc = "demo-api-palshf35yaol7elrqnhhx3go7i"
	const clusterIP = `{type: ClusterIP, selector: {kamaji.clastix.io/name: demo}, ports: [{name: kube-apiserver, port: 6443, protocol: TCP, targetPort: 6443}]}`
	const externalName = `{type: ExternalName, externalName: metadata.internal.example}`
	const release = `{chart: {spec: {chart: cilium, sourceRef: {kind: HelmRepository, name: demo-cilium}}}, kubeConfig: {secretRef: {name: demo-admin-kubeconfig}}}`
	composedCM := cm(composite, "data: {config.yaml: 'kind: AuthenticationConfiguration'}")
	composedSvc := svc(apiSvc, composite, clusterIP)
	composedHR := hr(composite, release)
	gcDropsOwner := composedSvc.DeepCopy()
	gcDropsOwner.SetOwnerReferences(nil)
	for _, c := range []struct {
		name     string
		op       admission.Operation
		obj, old *unstructured.Unstructured
		user     policyUser
		// denied: substrings of the denials; nil: admitted.
		denied []string
		// asks: the policy asks the authorizer.
		asks bool
	}{
		{name: "tenant deletes the composed ConfigMap", op: admission.Delete, old: composedCM, user: editTenant,
			denied: []string{"configmaps tenant-demo/demo-oidc-authn-config is composed by Crossplane", "not mallory"}},
		{name: "tenant's pod deletes the composed ConfigMap", op: admission.Delete, old: composedCM, user: tenantSA, denied: []string{"is composed by Crossplane"}},
		{name: "tenant re-creates the ConfigMap under its own controller", op: admission.Create, obj: cm(tenants, "data: {config.yaml: 'kind: AuthenticationConfiguration'}"), user: editTenant,
			denied: []string{"configmaps tenant-demo/demo-oidc-authn-config is a name tenantkube composes", "may not make ConfigMap mine its controller"}, asks: true},
		{name: "tenant creates the ConfigMap ahead of Crossplane, immutable", op: admission.Create, obj: cm("labels: {}", "immutable: true\ndata: {config.yaml: x}"), user: editTenant,
			denied: []string{"is a name tenantkube composes"}},
		{name: "tenant creates the ConfigMap ahead of Crossplane, in binaryData", op: admission.Create, obj: cm("labels: {}", "binaryData: {config.yaml: eA==}"), user: editTenant,
			denied: []string{"is a name tenantkube composes"}},
		{name: "tenant makes its object the composed ConfigMap's controller", op: admission.Update, obj: cm(tenants+"\n  labels: {crossplane.io/composite: demo-x7k2p, crossplane.io/claim-name: demo, crossplane.io/claim-namespace: tenant-demo}", "data: {config.yaml: 'kind: AuthenticationConfiguration'}"), old: composedCM, user: editTenant,
			denied: []string{"may not make ConfigMap mine its controller"}},
		{name: "tenant deletes the composed Service", op: admission.Delete, old: composedSvc, user: editTenant,
			denied: []string{"services tenant-demo/" + apiSvc + " is composed by Crossplane"}},
		{name: "tenant re-creates the Service as ExternalName under its own controller", op: admission.Create, obj: svc(apiSvc, tenants, externalName), user: editTenant,
			denied: []string{"services tenant-demo/" + apiSvc + " is a name tenantkube composes", "may not make ConfigMap mine its controller"}, asks: true},
		{name: "tenant creates the proxy Service ahead of Crossplane", op: admission.Create, obj: svc("demo-app-rqqefm5jthbbytoacbu6cqnmim", "labels: {}", externalName), user: editTenant,
			denied: []string{"is a name tenantkube composes"}},
		{name: "tenant turns the composed Service into ExternalName", op: admission.Update, obj: svc(apiSvc, composite, externalName), old: composedSvc, user: editTenant,
			denied: []string{"may change only its annotations"}},
		{name: "tenant deletes a composed HelmRelease", op: admission.Delete, old: composedHR, user: editTenant, denied: []string{"helmreleases tenant-demo/demo-cilium is composed by Crossplane"}},
		{name: "tenant suspends a composed HelmRelease", op: admission.Update, obj: hr(composite, `{suspend: true, chart: {spec: {chart: cilium, sourceRef: {kind: HelmRepository, name: demo-cilium}}}, kubeConfig: {secretRef: {name: demo-admin-kubeconfig}}}`), old: composedHR, user: editTenant,
			denied: []string{"may change only its annotations"}},
		{name: "tenant creates a HelmRelease ahead of Crossplane under its own controller", op: admission.Create, obj: hr(tenants, release), user: editTenant,
			denied: []string{"helmreleases tenant-demo/demo-cilium: mallory may not make ConfigMap mine its controller"}, asks: true},
		{name: "tenant's pod sets a controller on its own Service", op: admission.Create, obj: svc("web", tenants, clusterIP), user: tenantSA,
			denied: []string{"may not make ConfigMap mine its controller"}, asks: true},

		{name: "Crossplane creates the ConfigMap", op: admission.Create, obj: composedCM, user: crossplaneSA},
		{name: "Crossplane applies new data", op: admission.Update, obj: cm(composite, "data: {config.yaml: 'kind: AuthenticationConfiguration\njwt: []'}"), old: composedCM, user: crossplaneSA},
		{name: "Crossplane deletes what it no longer composes", op: admission.Delete, old: composedSvc, user: crossplaneSA},
		{name: "Crossplane adopts a Service created ahead of it", op: admission.Update, obj: composedSvc, old: svc(apiSvc, "labels: {}", clusterIP), user: crossplaneSA},
		{name: "the garbage collector deletes the ConfigMap with its XR", op: admission.Delete, old: composedCM, user: gcSA},
		{name: "the garbage collector drops a gone owner", op: admission.Update, obj: gcDropsOwner, old: composedSvc, user: gcSA},
		{name: "kube-controller-manager's own identity deletes", op: admission.Delete, old: composedHR, user: kcmUser},
		{name: "the namespace controller empties the namespace", op: admission.Delete, old: composedSvc, user: nsControllerSA},
		{name: "system:masters deletes", op: admission.Delete, old: composedCM, user: masters},
		{name: "the platform team deletes", op: admission.Delete, old: composedHR, user: platformTeam},
		{name: "the platform creates under a composed name with a controller", op: admission.Create, obj: svc(apiSvc, tenants, clusterIP), user: masters},
		{name: "Kamaji creates a Service it controls", op: admission.Create, obj: svc("demo", tenants, clusterIP), user: operator, asks: true},
		{name: "tenant annotates the composed ConfigMap", op: admission.Update, obj: cm(composite+"\n  annotations: {note: x}", "data: {config.yaml: 'kind: AuthenticationConfiguration'}"), old: composedCM, user: editTenant},
		{name: "tenant deletes its own ConfigMap", op: admission.Delete, old: cm("labels: {}", "data: {a: b}"), user: editTenant},
		{name: "tenant creates its own immutable ConfigMap", op: admission.Create, obj: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: tenant-demo}\nimmutable: true\ndata: {a: b}"), user: editTenant},
		{name: "tenant creates its own ExternalName Service", op: admission.Create, obj: svc("web", "labels: {}", externalName), user: editTenant},
		{name: "tenant creates a HelmRelease ahead of Crossplane, which adopts it", op: admission.Create, obj: hr("labels: {}", release), user: editTenant},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, msg, asked := decide(t, v, c.op, c.obj, c.old, c.user)
			if ok != (c.denied == nil) {
				t.Fatalf("%s by %s: admitted %t (%s)", c.op, c.user.name, ok, msg)
			}
			for _, w := range c.denied {
				if !strings.Contains(msg, w) {
					t.Errorf("denial %q does not say %q", msg, w)
				}
			}
			if (asked > 0) != c.asks {
				t.Errorf("authorizer asked %d times, want asked %t", asked, c.asks)
			}
		})
	}
}

// TestMachineDeploymentPolicy evaluates deploy/machinedeployment-policy.yaml
// with kube-apiserver's own validator on every composed MachineDeployment of
// the golden renders, as its own parameter (the binding selects the
// composed MachineDeployments): for every replica count from 0 to max-size
// + 2, through the object and through the scale subresource, the
// cluster-autoscaler's ServiceAccount is admitted exactly inside [min-size,
// max-size] (by the annotations, arithmetic here), Crossplane always; a
// change of either annotation is refused but to Crossplane; a parameter of
// another name leaves the request alone.
func TestMachineDeploymentPolicy(t *testing.T) {
	root := repoRoot(t)
	p, b, v := loadPolicy(t, filepath.Join(root, mdPolicyFile))
	if p.Spec.ParamKind == nil || p.Spec.ParamKind.Kind != "MachineDeployment" || b.Spec.ParamRef == nil || b.Spec.ParamRef.Selector == nil ||
		b.Spec.ParamRef.ParameterNotFoundAction == nil || *b.Spec.ParamRef.ParameterNotFoundAction != admissionregistrationv1.AllowAction {
		t.Fatalf("%s: paramKind %+v, paramRef %+v: want MachineDeployments selected by label, Allow when none", mdPolicyFile, p.Spec.ParamKind, b.Spec.ParamRef)
	}
	autoscaler := "system:serviceaccount:tenant-demo:demo-cluster-autoscaler"
	gvk := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}
	gvr := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}
	scaleGVK := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	n := 0
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		if o.obj.GetKind() != "MachineDeployment" {
			continue
		}
		md := o.obj
		a := md.GetAnnotations()
		lo, err1 := strconv.ParseInt(a[minSizeKey], 10, 64)
		hi, err2 := strconv.ParseInt(a[maxSizeKey], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		n++
		old := md.DeepCopy()
		oldReplicas, found, _ := unstructured.NestedInt64(old.Object, "spec", "replicas")
		if !found {
			oldReplicas = lo
			_ = unstructured.SetNestedField(old.Object, lo, "spec", "replicas")
		}
		scale := func(r int64) *unstructured.Unstructured {
			s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
				"metadata": map[string]any{"name": md.GetName(), "namespace": md.GetNamespace()}, "spec": map[string]any{}}}
			if r != 0 {
				s.Object["spec"] = map[string]any{"replicas": r}
			}
			return s
		}
		for r := int64(0); r <= hi+2; r++ {
			want := (r >= lo && r <= hi) || r == oldReplicas
			obj := old.DeepCopy()
			_ = unstructured.SetNestedField(obj.Object, r, "spec", "replicas")
			for _, u := range []string{autoscaler, crossplaneUser} {
				w := want || u == crossplaneUser
				if ok, msg := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, old, u); ok != w {
					t.Errorf("%s %s: replicas %d by %s (bounds [%d, %d]): admitted %t, want %t (%s)", o.file, md.GetName(), r, u, lo, hi, ok, w, msg)
				}
				if ok, msg := admitted(t, v, admission.Update, gvr.GroupResource().WithVersion("v1beta2"), scaleGVK, "scale", scale(r), scale(oldReplicas), old, u); ok != w {
					t.Errorf("%s %s: scale to %d by %s (bounds [%d, %d]): admitted %t, want %t (%s)", o.file, md.GetName(), r, u, lo, hi, ok, w, msg)
				}
			}
			other := old.DeepCopy()
			other.SetName(md.GetName() + "-other")
			if ok, _ := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, other, autoscaler); !ok {
				t.Errorf("%s %s: replicas %d refused by the parameter of another MachineDeployment", o.file, md.GetName(), r)
			}
		}
		for _, key := range []string{minSizeKey, maxSizeKey} {
			obj := old.DeepCopy()
			ann := obj.GetAnnotations()
			ann[key] = "1000"
			obj.SetAnnotations(ann)
			for _, u := range []string{autoscaler, "mallory", crossplaneUser} {
				if ok, msg := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, old, u); ok != (u == crossplaneUser) {
					t.Errorf("%s %s: %s changed by %s: admitted %t (%s)", o.file, md.GetName(), key, u, ok, msg)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no composed MachineDeployment with both autoscaler annotations in the golden renders")
	}
}

// TestCSIDataVolumePolicy evaluates deploy/csi-datavolume-policy.yaml: a
// DataVolume a tenantkube CSI controller (ServiceAccount
// <N>-kcsi-controller of the DataVolume's namespace) creates must name a
// StorageClass, the way kubevirt/csi-driver writes it (spec.storage); the
// driver admits a volume of no class (allowDefault) and would place it on
// the management cluster's default class. Nobody else is matched.
func TestCSIDataVolumePolicy(t *testing.T) {
	_, _, v := loadPolicy(t, filepath.Join(repoRoot(t), "deploy", "csi-datavolume-policy.yaml"))
	gvk := schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"}
	gvr := schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datavolumes"}
	dv := func(storage string) *unstructured.Unstructured {
		return obj(t, "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: pvc-1f2e, namespace: tenant-demo}\nspec: {source: {blank: {}}, "+storage+"}")
	}
	csi := "system:serviceaccount:tenant-demo:demo-kcsi-controller"
	// A claim's CSI controller runs in the claim's management namespace
	// (fntest.ManagementNamespace: tenantkube- and 26 base32 characters).
	claimCSI := "system:serviceaccount:" + fntest.ManagementNamespace("tenant-demo", "demo") + ":demo-kcsi-controller"
	for _, c := range []struct {
		name, storage, user string
		want                bool
	}{
		{"class named", "storage: {storageClassName: replicated, resources: {requests: {storage: 1Gi}}}", csi, true},
		{"no class", "storage: {resources: {requests: {storage: 1Gi}}}", csi, false},
		{"empty class", "storage: {storageClassName: '', resources: {requests: {storage: 1Gi}}}", csi, false},
		{"pvc with a class", "pvc: {storageClassName: replicated}", csi, true},
		{"pvc without", "pvc: {accessModes: [ReadWriteOnce]}", csi, false},
		{"another namespace's controller", "storage: {resources: {requests: {storage: 1Gi}}}", "system:serviceaccount:tenant-other:demo-kcsi-controller", true},
		{"a claim's controller, in its management namespace", "storage: {resources: {requests: {storage: 1Gi}}}", claimCSI, false},
		{"a claim's controller naming a class", "storage: {storageClassName: replicated, resources: {requests: {storage: 1Gi}}}", claimCSI, true},
		{"a lookalike management namespace", "storage: {resources: {requests: {storage: 1Gi}}}", "system:serviceaccount:tenantkube-x:demo-kcsi-controller", true},
		{"a controller name with a suffix", "storage: {resources: {requests: {storage: 1Gi}}}", claimCSI + "-x", true},
		{"KubeVirt's worker disks", "storage: {resources: {requests: {storage: 1Gi}}}", "system:serviceaccount:kubevirt:kubevirt-controller", true},
	} {
		ok, msg := admitted(t, v, admission.Create, gvr, gvk, "", dv(c.storage), nil, nil, c.user)
		if ok != c.want {
			t.Errorf("%s: admitted %t, want %t (%s)", c.name, ok, c.want, msg)
		}
		if !ok && !strings.Contains(msg, "DataVolume pvc-1f2e: the KubeVirt CSI controller must name a StorageClass") {
			t.Errorf("%s: denial %q does not name the DataVolume", c.name, msg)
		}
	}
}

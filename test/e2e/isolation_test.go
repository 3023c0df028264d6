//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/internal/fntest"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Crossplane's identity in the live test: the ServiceAccount and
// ClusterRoles Crossplane's Helm chart v2.4 installs
// (cluster/charts/crossplane/templates/{serviceaccount,clusterrole,
// clusterrolebinding}.yaml of crossplane/crossplane), plus
// deploy/crossplane-rbac.yaml — never system:masters.
const (
	xpServiceAccount = "crossplane"
	xpClusterRole    = "crossplane"
	// aggregateLabel selects the ClusterRoles aggregated into Crossplane's.
	aggregateLabel = "rbac.crossplane.io/aggregate-to-crossplane"
)

// chartRule is one rule of the chart's crossplane:system:aggregate-to-crossplane.
func chartRule(groups, resources, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

// crossplaneChartRules are the rules the chart (v2.4) gives Crossplane core
// itself, before any aggregation.
func crossplaneChartRules() []rbacv1.PolicyRule {
	crud := []string{"get", "list", "create", "update", "patch", "watch", "delete"}
	return []rbacv1.PolicyRule{
		chartRule([]string{""}, []string{"events"}, []string{"create", "update", "patch", "delete"}),
		chartRule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions", "customresourcedefinitions/status"}, []string{"*"}),
		chartRule([]string{""}, []string{"secrets"}, []string{"get", "list", "watch", "create", "update", "patch", "delete"}),
		chartRule([]string{""}, []string{"serviceaccounts", "services"}, []string{"*"}),
		chartRule([]string{"apiextensions.crossplane.io", "ops.crossplane.io", "pkg.crossplane.io", "protection.crossplane.io"}, []string{"*"}, []string{"*"}),
		chartRule([]string{"extensions", "apps"}, []string{"deployments"}, crud),
		chartRule([]string{"", "coordination.k8s.io"}, []string{"configmaps", "leases"}, crud),
		chartRule([]string{"admissionregistration.k8s.io"}, []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}, crud),
	}
}

// xrdSystemRoles plays Crossplane's RBAC manager (`crossplane rbac start`,
// which binds a metrics listener on :8080 that the test cannot move): the
// ClusterRole it renders for each XRD of the package so that core may
// reconcile the composite kind and, for a claim XRD, the claim kind
// (<plural> and <plural>/status every verb, <plural>/finalizers update).
// Crossplane v2.4.0 internal/controller/rbac/definition/roles.go:63-92, 158-176; cmd/crossplane/rbac/rbac.go:77-86.
func (e *env) xrdSystemRoles() ([]*rbacv1.ClusterRole, error) {
	files, err := filepath.Glob(e.path("package", "xrd*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*rbacv1.ClusterRole
	for _, f := range files {
		objs, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		for _, x := range objs {
			group, _, _ := unstructured.NestedString(x.Object, "spec", "group")
			cr := &rbacv1.ClusterRole{
				TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{
					Name:   "crossplane:composite:" + x.GetName() + ":aggregate-to-crossplane",
					Labels: map[string]string{aggregateLabel: "true"},
				},
			}
			for _, names := range []string{"names", "claimNames"} {
				plural, _, _ := unstructured.NestedString(x.Object, "spec", names, "plural")
				if plural == "" {
					continue
				}
				cr.Rules = append(cr.Rules,
					chartRule([]string{group}, []string{plural, plural + "/status"}, []string{"*"}),
					chartRule([]string{group}, []string{plural + "/finalizers"}, []string{"update"}))
			}
			out = append(out, cr)
		}
	}
	return out, nil
}

// crossplaneIdentity creates Crossplane's ServiceAccount and RBAC as a real
// installation has them, applies deploy/crossplane-rbac.yaml, waits for
// kube-controller-manager to aggregate it into Crossplane's ClusterRole,
// checks a few things Crossplane must not be able to do, and writes a
// kubeconfig with a token of that ServiceAccount for core init and start.
func (e *env) crossplaneIdentity() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.ensureNamespace(ctx, xpNamespace); err != nil {
		return err
	}
	sa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": xpServiceAccount, "namespace": xpNamespace},
	}}
	toU := func(o any) (*unstructured.Unstructured, error) {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		return u, yaml.Unmarshal(b, &u.Object)
	}
	aggregated := &rbacv1.ClusterRole{
		TypeMeta:        metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta:      metav1.ObjectMeta{Name: xpClusterRole},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{aggregateLabel: "true"}}}},
	}
	system := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: xpClusterRole + ":system:aggregate-to-crossplane", Labels: map[string]string{aggregateLabel: "true"}},
		Rules:      crossplaneChartRules(),
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: xpClusterRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: xpClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: xpServiceAccount, Namespace: xpNamespace}},
	}
	xrdRoles, err := e.xrdSystemRoles()
	if err != nil {
		return err
	}
	apply1 := []*unstructured.Unstructured{sa}
	for _, o := range append([]any{aggregated, system, binding}, toAny(xrdRoles)...) {
		u, err := toU(o)
		if err != nil {
			return err
		}
		apply1 = append(apply1, u)
	}
	deploy, err := decodeFile(e.path("deploy", "crossplane-rbac.yaml"))
	if err != nil {
		return err
	}
	for _, o := range append(apply1, deploy...) {
		if err := apply(ctx, e.c, o); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		return err
	}
	// kube-controller-manager's clusterrole-aggregation controller fills
	// the rules of Crossplane's ClusterRole.
	if err := poll(time.Minute, func(ctx context.Context) (bool, string, error) {
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, xpClusterRole, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		have := map[string]bool{}
		for _, r := range cr.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					have[g+"/"+res] = true
				}
			}
		}
		ok := have["kamaji.clastix.io/datastores"] && have["tenantkube.io/xkubernetesclusters"] && have["tenantkube.io/tenantclusters"] && have["apiextensions.k8s.io/customresourcedefinitions"]
		return ok, fmt.Sprintf("ClusterRole %s aggregated %d rules so far", xpClusterRole, len(cr.Rules)), nil
	}); err != nil {
		return err
	}
	if err := e.crossplaneCannot(ctx, cs); err != nil {
		return err
	}
	tok, err := cs.CoreV1().ServiceAccounts(xpNamespace).CreateToken(ctx, xpServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(24 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of ServiceAccount %s/%s: %w", xpNamespace, xpServiceAccount, err)
	}
	kc := tokenKubeconfig(e.apiPort, e.testCA.certPEM, "crossplane", tok.Status.Token)
	e.xpKubeconfig = filepath.Join(e.work, "crossplane", "kubeconfig")
	if err := os.MkdirAll(filepath.Dir(e.xpKubeconfig), 0o755); err != nil {
		return err
	}
	return os.WriteFile(e.xpKubeconfig, kc, 0o600)
}

// crossplaneCannot asks the API server (SubjectAccessReview) whether
// Crossplane's ServiceAccount may do what deploy/ does not grant: create Roles
// or ClusterRoles, bind any ClusterRole but the controllers', touch KubeVirt
// VMs or EndpointSlices, read PersistentVolumes (only the CSI controller's
// ClusterRole does), impersonate. Any "yes" is an error, and so is a "no"
// to binding the controllers' ClusterRoles or creating the CSI controller's
// ClusterRoleBinding.
func (e *env) crossplaneCannot(ctx context.Context, cs kubernetes.Interface) error {
	user := "system:serviceaccount:" + xpNamespace + ":" + xpServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + xpNamespace, "system:authenticated"}
	may := func(attr authorizationv1.ResourceAttributes) (bool, error) {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attr},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	}
	var widened []string
	for _, a := range []authorizationv1.ResourceAttributes{
		{Namespace: demoNS, Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "roles"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "cluster-admin"},
		{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Namespace: demoNS, Verb: "update", Group: "kubevirt.io", Resource: "virtualmachines"},
		{Namespace: demoNS, Verb: "update", Group: "subresources.kubevirt.io", Resource: "virtualmachineinstances", Subresource: "addvolume"},
		{Namespace: demoNS, Verb: "create", Group: "discovery.k8s.io", Resource: "endpointslices"},
		{Verb: "impersonate", Resource: "users"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "get", Resource: "persistentvolumes"},
	} {
		ok, err := may(a)
		if err != nil {
			return err
		}
		if ok {
			widened = append(widened, fmt.Sprintf("%s %s.%s/%s %s in %q", a.Verb, a.Resource, a.Group, a.Subresource, a.Name, a.Namespace))
		}
	}
	for _, a := range []authorizationv1.ResourceAttributes{
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "tenantkube:cluster-autoscaler"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "tenantkube:kccm"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "tenantkube:kcsi-controller"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "tenantkube:kcsi-persistentvolumes"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
	} {
		ok, err := may(a)
		if err != nil {
			return err
		}
		if !ok {
			widened = append(widened, fmt.Sprintf("NOT %s %s.%s %s, which it composes", a.Verb, a.Resource, a.Group, a.Name))
		}
	}
	if len(widened) > 0 {
		return fmt.Errorf("Crossplane's ServiceAccount may: %s", strings.Join(widened, "; "))
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ---------------------------------------------------------------------------
// Scenarios.

// tenantObjects is the composed objects of cluster n in namespace ns: those
// labelled tenantkube.io/cluster=n in ns, and the cluster-scoped ones
// labelled with ns (the DataStore).
func (e *env) tenantObjects(t *testing.T, ns, n string) map[string]snap {
	t.Helper()
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	objs, err := e.composed(ctx, n)
	e.must(t, err, "list composed objects")
	out := map[string]snap{}
	for i := range objs {
		u := &objs[i]
		if u.GetNamespace() != ns && u.GetNamespace() != fntest.ManagementNamespace(ns, n) && !(u.GetNamespace() == "" && u.GetLabels()["tenantkube.io/namespace"] == ns) {
			continue
		}
		out[describe(u)] = snap{uid: string(u.GetUID()), rv: u.GetResourceVersion(), generation: u.GetGeneration(), obj: u.Object}
	}
	return out
}

// tenantClaim is a claim of examples/claim.yaml's spec, named n in ns.
func (e *env) tenantClaim(t *testing.T, ns, n string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	c := e.claimYAML(t)
	c.SetNamespace(ns)
	c.SetName(n)
	if spec != nil {
		c.Object["spec"] = spec
	}
	return c
}

// deleteTenantClaim deletes claim ns/n and waits until it and every
// object of it (tenantObjects) are gone.
func (e *env) deleteTenantClaim(t *testing.T, ns, n string) {
	t.Helper()
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	cl, err := get(ctx, e.c, gvkClaim, ns, n)
	if kerrors.IsNotFound(err) {
		return
	}
	e.must(t, err, "claim "+ns+"/"+n)
	e.must(t, e.c.Delete(ctx, cl, client.PropagationPolicy(metav1.DeletePropagationForeground)), "delete claim "+ns+"/"+n)
	waitFor(t, deleteBound, fmt.Sprintf("claim %s/%s and its objects gone", ns, n), func(ctx context.Context) (bool, string, error) {
		_, cerr := get(ctx, e.c, gvkClaim, ns, n)
		left := e.tenantObjects(t, ns, n)
		var names []string
		for k := range left {
			names = append(names, k)
		}
		sort.Strings(names)
		if !kerrors.IsNotFound(cerr) {
			names = append(names, "the claim")
		}
		return len(names) == 0, fmt.Sprintf("%d left: %s", len(names), strings.Join(names, ", ")), nil
	})
}

// controllerUID is the UID of the controller owner of u ("" when none).
func controllerUID(u *unstructured.Unstructured) string {
	for _, o := range u.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return string(o.UID)
		}
	}
	return ""
}

// sameNameTwoTenants: tenant-b's cluster "demo" and the demo
// tenant's converge side by side; they share no DataStore, no host, no
// object; tenant-demo's objects are untouched by the other's life and
// deletion.
func (e *env) sameNameTwoTenants(t *testing.T) {
	const otherNS = "tenant-b"
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	e.reconciles(t, "control-plane", 2, time.Minute)
	before := e.tenantObjects(t, demoNS, demo)
	e.must(t, e.ensureNamespace(ctx, otherNS), "namespace "+otherNS)
	e.must(t, apply(ctx, e.c, e.tenantClaim(t, otherNS, demo, nil)), "apply claim tenant-b/demo")
	e.waitComposed(t, otherNS, demo, withCertManager(), true)
	hostOf := func(ns string) string {
		kcp, err := get(ctx, e.c, gvkKCP, ns, demo)
		e.must(t, err, "KamajiControlPlane "+ns+"/demo")
		h, _, _ := unstructured.NestedString(kcp.Object, "spec", "network", "ingress", "hostname")
		ds, _, _ := unstructured.NestedString(kcp.Object, "spec", "dataStoreName")
		return h + " " + ds
	}
	if a, b := hostOf(demoNS), hostOf(otherNS); a != "demo.tenant-demo.k8s.example.net:443 tenant-demo.demo" || b != "demo.tenant-b.k8s.example.net:443 tenant-b.demo" {
		errorf(t, "host and DataStore: tenant-demo %q, tenant-b %q", a, b)
	}
	for _, ns := range []string{demoNS, otherNS} {
		ds, err := get(ctx, e.c, gvkDataStore, "", ns+".demo")
		e.must(t, err, "DataStore "+ns+".demo")
		xr, err := e.xrName(ctx, ns, demo)
		e.must(t, err, "XR of "+ns+"/demo")
		x, err := get(ctx, e.c, gvkXR, "", xr)
		e.must(t, err, "XR "+xr)
		if controllerUID(ds) != string(x.GetUID()) {
			errorf(t, "DataStore %s.demo is controlled by %q, not by the XR %s of %s/demo", ns, controllerUID(ds), xr, ns)
		}
	}
	e.compare(t, "tenant-demo/demo while tenant-b/demo converged", before, e.tenantObjects(t, demoNS, demo), false)
	e.deleteTenantClaim(t, otherNS, demo)
	e.compare(t, "tenant-demo/demo after tenant-b/demo was deleted", before, e.tenantObjects(t, demoNS, demo), false)
}

// hostileTenant: a tenant in namespace "tenant" tries each
// attack of the issue against tenant-demo/demo. Nothing of tenant-demo's
// changes: refused at admission, answered by a Fatal result that composes
// nothing, or — the name collision of "NS-N" — composed under its own names.
func (e *env) hostileTenant(t *testing.T) {
	const evilNS = "tenant"
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	e.reconciles(t, "control-plane", 2, time.Minute)
	before := e.tenantObjects(t, demoNS, demo)
	e.must(t, e.ensureNamespace(ctx, evilNS), "namespace "+evilNS)
	group := func(g map[string]any) map[string]any {
		base := map[string]any{"minReplicas": int64(0), "maxReplicas": int64(3), "instanceType": "u1.medium", "diskSize": "20Gi"}
		for k, v := range g {
			base[k] = v
		}
		return map[string]any{"md0": base}
	}
	gpus := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"name": "nvidia.com/L40S"}
		}
		return out
	}
	// Refused at admission.
	for name, c := range map[string]struct {
		spec map[string]any
		want string
	}{
		"unbounded-replicas": {map[string]any{"nodeGroups": group(map[string]any{"maxReplicas": int64(2147483647)})}, "should be less than or equal to 5000"},
		"many-gpus":          {map[string]any{"nodeGroups": group(map[string]any{"gpus": gpus(17)})}, "must have at most 16 items"},
		"huge-cpu":           {map[string]any{"nodeGroups": group(map[string]any{"resources": map[string]any{"cpu": "100000", "memory": "4Gi"}})}, "resources.cpu must be at most 256"},
	} {
		err := apply(ctx, e.c, e.tenantClaim(t, evilNS, "x-"+name, c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			errorf(t, "claim %s/x-%s: want a rejection containing %q, got %v", evilNS, name, c.want, err)
		}
	}
	// Admitted, answered by a Fatal result naming the field and value.
	fatal := map[string]struct {
		spec       map[string]any
		field, val string
	}{
		"evil-image":    {map[string]any{"images": map[string]any{"waitForKubeconfig": "attacker.example/evil:latest"}}, "spec.images.waitForKubeconfig", "attacker.example/evil:latest"},
		"squat-api":     {map[string]any{"host": "demo.tenant-demo.k8s.example.net"}, "spec.host", "demo.tenant-demo.k8s.example.net"},
		"squat-ingress": {map[string]any{"addons": map[string]any{"ingressNginx": map[string]any{"enabled": true, "hosts": []any{"demo.tenant-demo.k8s.example.net"}}}}, "spec.addons.ingressNginx.hosts[0]", "demo.tenant-demo.k8s.example.net"},
		"wildcard":      {map[string]any{"addons": map[string]any{"ingressNginx": map[string]any{"enabled": true, "hosts": []any{"*.k8s.example.net"}}}}, "spec.addons.ingressNginx.hosts[0]", "*.k8s.example.net"},
	}
	for name, c := range fatal {
		e.must(t, apply(ctx, e.c, e.tenantClaim(t, evilNS, name, c.spec)), "apply claim "+evilNS+"/"+name)
	}
	for name, c := range fatal {
		waitFor(t, 2*time.Minute, fmt.Sprintf("XR of %s/%s Synced=False naming %s", evilNS, name, c.field), func(ctx context.Context) (bool, string, error) {
			xr, err := e.xrName(ctx, evilNS, name)
			if err != nil {
				return false, "", err
			}
			u, err := get(ctx, e.c, gvkXR, "", xr)
			if err != nil {
				return false, "", err
			}
			s, r, m := condition(u, "Synced")
			return s == "False" && strings.Contains(m, c.field) && strings.Contains(m, c.val), fmt.Sprintf("XR Synced=%s %s %q", s, r, m), nil
		})
		if left := e.tenantObjects(t, evilNS, name); len(left) > 0 {
			errorf(t, "claim %s/%s: a Fatal pipeline composed %d objects", evilNS, name, len(left))
		}
	}
	// (tenant, demo-demo) and (tenant-demo, demo) were both "tenant-demo-demo"
	// as DataStore names: now each has its own.
	e.must(t, apply(ctx, e.c, e.tenantClaim(t, evilNS, "demo-demo", nil)), "apply claim tenant/demo-demo")
	e.waitComposed(t, evilNS, "demo-demo", withCertManager(), false)
	if _, err := get(ctx, e.c, gvkDataStore, "", "tenant.demo-demo"); err != nil {
		errorf(t, "DataStore tenant.demo-demo of tenant/demo-demo: %v", err)
	}
	e.compare(t, "tenant-demo/demo while a hostile tenant tried every attack", before, e.tenantObjects(t, demoNS, demo), false)
	for name := range fatal {
		e.deleteTenantClaim(t, evilNS, name)
	}
	e.deleteTenantClaim(t, evilNS, "demo-demo")
	e.compare(t, "tenant-demo/demo after the hostile tenant's claims were deleted", before, e.tenantObjects(t, demoNS, demo), false)
}

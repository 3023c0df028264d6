//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// hostileUser holds deploy/tenant-rbac.yaml's tenantkube:tenant in
	// demoNS; editUser holds Kubernetes' edit there.
	hostileUser = "mallory"
	editUser    = "eve"
	mdMinKey    = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	mdMaxKey    = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

var gvrMD = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}

// hostileMove is one request of the hostile tenant, as the
// SubjectAccessReview that authorizes it.
type hostileMove struct {
	name string
	attr authorizationv1.ResourceAttributes
}

// hostileTenantRole: a tenant bound to tenantkube:tenant in demoNS
// (deploy/tenant-rbac.yaml), with deploy/composed-objects-policy.yaml and
// deploy/machinedeployment-policy.yaml applied, tries every move towards
// the permissions of what the demo cluster composes there: impersonating
// each composed ServiceAccount, creating a pod as it, requesting its
// token, changing a composed ConfigMap, patching a composed Deployment's
// image, scaling the MachineDeployment past its max-size annotation and
// changing that annotation. Each is refused, by SubjectAccessReview and by
// the request itself, and the objects read afterwards are unchanged.
// A user holding Kubernetes' edit there is checked the same way: the
// policies refuse its ConfigMap, image and annotation changes, while its
// impersonation, token and pod moves are allowed (logged as the finding;
// admission cannot tell an impersonated ServiceAccount from the
// controller), and the MachineDeployment policy refuses the scale it then
// makes as the cluster-autoscaler's ServiceAccount.
func (e *env) hostileTenantRole(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")

	var installed []*unstructured.Unstructured
	for _, f := range []string{"tenant-rbac.yaml", "composed-objects-policy.yaml", "machinedeployment-policy.yaml"} {
		objs, err := decodeFile(e.path("deploy", f))
		e.must(t, err, "deploy/"+f)
		for _, o := range objs {
			e.must(t, apply(ctx, e.c, o), "apply deploy/"+f+" "+o.GetKind()+" "+o.GetName())
			installed = append(installed, o)
		}
	}
	bindings := []*unstructured.Unstructured{
		roleBinding(demoNS, "hostile-tenant", "tenantkube:tenant", hostileUser),
		roleBinding(demoNS, "hostile-edit", "edit", editUser),
	}
	for _, rb := range bindings {
		e.must(t, apply(ctx, e.c, rb), "RoleBinding "+rb.GetName())
		installed = append(installed, rb)
	}
	// Later scenarios play controllers as the administrator.
	t.Cleanup(func() {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		for _, o := range installed {
			if o.GetKind() == "ClusterRole" {
				continue
			}
			if err := e.c.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})

	objs, err := e.composed(ctx, demo)
	e.must(t, err, "composed objects of "+demo)
	var sas []string
	var cm, dep, md *unstructured.Unstructured
	for i := range objs {
		o := &objs[i]
		if o.GetNamespace() != demoNS {
			continue
		}
		switch o.GetKind() {
		case "ServiceAccount":
			sas = append(sas, o.GetName())
		case "ConfigMap":
			// The OIDC AuthenticationConfiguration where the claim has one.
			if cm == nil || strings.HasSuffix(o.GetName(), "-oidc-authn-config") {
				cm = o
			}
		case "Deployment":
			if dep == nil {
				dep = o
			}
		case "MachineDeployment":
			if md == nil {
				md = o
			}
		}
	}
	sort.Strings(sas)
	if len(sas) == 0 || cm == nil || dep == nil || md == nil {
		t.Fatalf("composed in %s: ServiceAccounts %v, ConfigMap %v, Deployment %v, MachineDeployment %v; want each", demoNS, sas, cm != nil, dep != nil, md != nil)
	}
	maxSize := md.GetAnnotations()[mdMaxKey]
	var max int64
	if _, err := fmt.Sscan(maxSize, &max); err != nil || maxSize == "" {
		t.Fatalf("MachineDeployment %s annotation %s %q", md.GetName(), mdMaxKey, maxSize)
	}
	t.Logf("composed in %s: ServiceAccounts %v, ConfigMap %s, Deployment %s, MachineDeployment %s (max-size %d)", demoNS, sas, cm.GetName(), dep.GetName(), md.GetName(), max)

	mallory := e.userConfig(t, hostileUser)
	eve := e.userConfig(t, editUser)
	userClient := func(cfg *rest.Config) (client.Client, kubernetes.Interface, dynamic.Interface) {
		c, err := client.New(cfg, client.Options{Scheme: e.c.Scheme()})
		e.must(t, err, "client")
		k, err := kubernetes.NewForConfig(cfg)
		e.must(t, err, "clientset")
		d, err := dynamic.NewForConfig(cfg)
		e.must(t, err, "dynamic client")
		return c, k, d
	}
	mc, mk, md1 := userClient(mallory)
	ec, _, _ := userClient(eve)

	imagePatch := func(image string) []byte {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": containerName(dep), "image": image}}}}}})
		return b
	}
	const evilImage = "registry.example/evil:latest"
	cmPatch := []byte(`{"data":{"hostile":"true"}}`)

	// The policies take effect once the API server has loaded them: a
	// dry run by the edit user is refused from then on.
	waitFor(t, time.Minute, "the composed-objects policy to refuse a dry run", func(ctx context.Context) (bool, string, error) {
		err := ec.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "composed by Crossplane"), fmt.Sprintf("%v", err), nil
	})
	autoscalerSA := "system:serviceaccount:" + demoNS + ":" + demo + "-cluster-autoscaler"
	asCfg := rest.CopyConfig(e.cfg)
	asCfg.Impersonate = rest.ImpersonationConfig{UserName: autoscalerSA}
	asDyn, err := dynamic.NewForConfig(asCfg)
	e.must(t, err, "dynamic client as "+autoscalerSA)
	scaleTo := func(ctx context.Context, d dynamic.Interface, n int64, opts metav1.UpdateOptions) error {
		s, err := d.Resource(gvrMD).Namespace(demoNS).Get(ctx, md.GetName(), metav1.GetOptions{}, "scale")
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(s.Object, n, "spec", "replicas"); err != nil {
			return err
		}
		_, err = d.Resource(gvrMD).Namespace(demoNS).Update(ctx, s, opts, "scale")
		return err
	}
	// Cluster API's defaulting webhook gives an autoscaled MachineDeployment
	// without spec.replicas its min-size annotation; the scale subresource
	// answers only once replicas is set. Cluster API does not run in this
	// suite (TestControllers runs it), so the admin plays that default.
	if _, ok, _ := unstructured.NestedInt64(md.Object, "spec", "replicas"); !ok {
		minSize := md.GetAnnotations()[mdMinKey]
		if _, err := strconv.Atoi(minSize); err != nil {
			t.Fatalf("MachineDeployment %s annotation %s %q", md.GetName(), mdMinKey, minSize)
		}
		e.must(t, mergePatch(ctx, e.c, gvkMD, demoNS, md.GetName(), `{"spec":{"replicas":`+minSize+`}}`),
			"default spec.replicas of MachineDeployment "+md.GetName()+" to "+minSize)
	}
	waitFor(t, time.Minute, "the MachineDeployment policy to refuse a dry-run scale past max-size", func(ctx context.Context) (bool, string, error) {
		err := scaleTo(ctx, asDyn, max+1, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "outside the node group bounds"), fmt.Sprintf("%v", err), nil
	})
	before := e.tenantObjects(t, demoNS, demo)

	// SubjectAccessReviews.
	var moves []hostileMove
	for _, sa := range sas {
		moves = append(moves,
			hostileMove{"impersonate ServiceAccount " + sa, authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "impersonate", Resource: "serviceaccounts", Name: sa}},
			hostileMove{"impersonate user system:serviceaccount:" + demoNS + ":" + sa, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "system:serviceaccount:" + demoNS + ":" + sa}},
			hostileMove{"request a token of " + sa, authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: sa}},
		)
	}
	moves = append(moves,
		hostileMove{"create a pod", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "pods"}},
		hostileMove{"exec into a pod", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "pods", Subresource: "exec"}},
		hostileMove{"create a Deployment", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Group: "apps", Resource: "deployments"}},
		hostileMove{"patch Deployment " + dep.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "patch", Group: "apps", Resource: "deployments", Name: dep.GetName()}},
		hostileMove{"patch ConfigMap " + cm.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "patch", Resource: "configmaps", Name: cm.GetName()}},
		hostileMove{"create a Secret", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "secrets"}},
		hostileMove{"create a RoleBinding", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}},
		hostileMove{"patch MachineDeployment " + md.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "patch", Group: "cluster.x-k8s.io", Resource: "machinedeployments", Name: md.GetName()}},
		hostileMove{"scale MachineDeployment " + md.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "update", Group: "cluster.x-k8s.io", Resource: "machinedeployments", Subresource: "scale", Name: md.GetName()}},
	)
	var editAllows []string
	for _, m := range moves {
		if ok := e.sar(ctx, t, cs, hostileUser, m.attr); ok {
			t.Errorf("SubjectAccessReview: %s may %s", hostileUser, m.name)
		}
		if e.sar(ctx, t, cs, editUser, m.attr) {
			editAllows = append(editAllows, m.name)
		}
	}
	t.Logf("finding: Kubernetes' edit in %s allows: %s", demoNS, strings.Join(editAllows, "; "))
	for _, want := range []string{"impersonate ServiceAccount " + sas[0], "request a token of " + sas[0], "create a pod", "patch Deployment " + dep.GetName(), "patch ConfigMap " + cm.GetName()} {
		if !contains(editAllows, want) {
			t.Errorf("edit does not allow %q: the finding no longer holds", want)
		}
	}

	// The requests themselves, as mallory.
	forbidden := func(what string, err error) {
		t.Helper()
		if !kerrors.IsForbidden(err) {
			t.Errorf("%s as %s: want Forbidden, got %v", what, hostileUser, err)
		}
	}
	for _, sa := range sas {
		imp := rest.CopyConfig(mallory)
		imp.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + demoNS + ":" + sa}
		ik, err := kubernetes.NewForConfig(imp)
		e.must(t, err, "clientset impersonating "+sa)
		_, err = ik.CoreV1().ServiceAccounts(demoNS).Get(ctx, sa, metav1.GetOptions{})
		forbidden("impersonate ServiceAccount "+sa, err)
		_, err = mk.CoreV1().ServiceAccounts(demoNS).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
		forbidden("request a token of "+sa, err)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "as-" + sa, Namespace: demoNS},
			Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: evilImage}}},
		}
		_, err = mk.CoreV1().Pods(demoNS).Create(ctx, pod, metav1.CreateOptions{})
		forbidden("create a pod as "+sa, err)
	}
	forbidden("patch ConfigMap "+cm.GetName(), mc.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch)))
	forbidden("patch Deployment "+dep.GetName()+" image", mc.Patch(ctx, dep.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, imagePatch(evilImage))))
	forbidden("scale MachineDeployment "+md.GetName()+" past max-size", scaleTo(ctx, md1, max+1, metav1.UpdateOptions{}))
	_, err = md1.Resource(gvrMD).Namespace(demoNS).Patch(ctx, md.GetName(), types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+mdMaxKey+`":"1000"}}}`), metav1.PatchOptions{})
	forbidden("raise MachineDeployment "+md.GetName()+" max-size", err)

	// The edit user's rewrites the policies refuse.
	refused := func(what, want string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want refused (%q), got %v", what, want, err)
		}
	}
	refused("patch ConfigMap "+cm.GetName()+" as "+editUser, "composed by Crossplane",
		ec.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch)))
	refused("patch Deployment "+dep.GetName()+" image as "+editUser, "composed by Crossplane",
		ec.Patch(ctx, dep.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, imagePatch(evilImage))))
	// What an edit user gets by impersonating the cluster-autoscaler.
	refused("scale MachineDeployment "+md.GetName()+" past max-size as "+autoscalerSA, "outside the node group bounds",
		scaleTo(ctx, asDyn, max+1, metav1.UpdateOptions{}))
	raised, err := asDyn.Resource(gvrMD).Namespace(demoNS).Get(ctx, md.GetName(), metav1.GetOptions{})
	e.must(t, err, "MachineDeployment "+md.GetName()+" as "+autoscalerSA)
	a := raised.GetAnnotations()
	a[mdMaxKey] = "1000"
	raised.SetAnnotations(a)
	_, err = asDyn.Resource(gvrMD).Namespace(demoNS).Update(ctx, raised, metav1.UpdateOptions{})
	refused("raise MachineDeployment "+md.GetName()+" max-size as "+autoscalerSA, "only Crossplane changes", err)
	// Inside the bounds the autoscaler still scales (dry run).
	if err := scaleTo(ctx, asDyn, max, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("scale MachineDeployment %s to max-size %d as %s (dry run): %v", md.GetName(), max, autoscalerSA, err)
	}

	// Nothing changed.
	after := e.tenantObjects(t, demoNS, demo)
	for _, o := range []*unstructured.Unstructured{cm, dep, md} {
		k := describe(o)
		b, a := before[k], after[k]
		if a.uid != b.uid || a.generation != b.generation {
			t.Errorf("%s changed: uid %s -> %s, generation %d -> %d", k, b.uid, a.uid, b.generation, a.generation)
		}
	}
	cur, err := get(ctx, e.c, gvkDeployment, demoNS, dep.GetName())
	e.must(t, err, "Deployment "+dep.GetName())
	if strings.Contains(fmt.Sprint(cur.Object["spec"]), evilImage) {
		t.Errorf("Deployment %s runs %s", dep.GetName(), evilImage)
	}
	cur, err = get(ctx, e.c, gvkConfigMap, demoNS, cm.GetName())
	e.must(t, err, "ConfigMap "+cm.GetName())
	if _, ok, _ := unstructured.NestedString(cur.Object, "data", "hostile"); ok {
		t.Errorf("ConfigMap %s holds the hostile key", cm.GetName())
	}
	cur, err = get(ctx, e.c, gvkMD, demoNS, md.GetName())
	e.must(t, err, "MachineDeployment "+md.GetName())
	if r, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas"); r > max || cur.GetAnnotations()[mdMaxKey] != maxSize {
		t.Errorf("MachineDeployment %s: replicas %d, %s %q; want at most %d and %q", md.GetName(), r, mdMaxKey, cur.GetAnnotations()[mdMaxKey], max, maxSize)
	}
	for _, sa := range sas {
		if _, err := cs.CoreV1().Pods(demoNS).Get(ctx, "as-"+sa, metav1.GetOptions{}); !kerrors.IsNotFound(err) {
			t.Errorf("pod %s/as-%s: %v, want NotFound", demoNS, sa, err)
		}
	}
}

// userConfig is a client configuration authenticating as user by a client
// certificate of the test CA (no groups but system:authenticated).
func (e *env) userConfig(t *testing.T, user string) *rest.Config {
	t.Helper()
	kp, err := e.testCA.issue(user, nil, nil, nil, false, true)
	e.must(t, err, "client certificate for "+user)
	cfg := rest.CopyConfig(e.cfg)
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = kp.certPEM, kp.keyPEM
	return cfg
}

// sar reports whether user (group system:authenticated) may make the
// request attr describes.
func (e *env) sar(ctx context.Context, t *testing.T, cs kubernetes.Interface, user string, attr authorizationv1.ResourceAttributes) bool {
	t.Helper()
	a := attr
	r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:authenticated"}, ResourceAttributes: &a,
	}}, metav1.CreateOptions{})
	e.must(t, err, "SubjectAccessReview")
	return r.Status.Allowed
}

func roleBinding(ns, name, clusterRole, user string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}}
}

// containerName is the name of dep's first container.
func containerName(dep *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	n, _ := cs[0].(map[string]any)["name"].(string)
	return n
}

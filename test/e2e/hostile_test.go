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

	"github.com/tenantkube/tenantkube/internal/fntest"
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
// (deploy/tenant-rbac.yaml), with deploy/composed-objects-policy.yaml,
// deploy/machinedeployment-policy.yaml and
// deploy/encryption-secret-policy.yaml applied, tries every move towards
// the permissions of what the demo cluster composes: impersonating each
// composed ServiceAccount (in the claim's management namespace), creating
// a pod as it, requesting its token, changing a composed ConfigMap and
// Service, patching a composed Deployment's image, scaling the
// MachineDeployment past its max-size annotation and changing that
// annotation. Each is refused, by SubjectAccessReview and by the request
// itself, and the objects read afterwards are unchanged. A user holding
// Kubernetes' edit in demoNS is checked the same way: every move to a
// controller's ServiceAccount and into the management namespace is
// refused by RBAC (what edit grants in demoNS is logged), the policies
// refuse its writes on composed objects of demoNS, and the
// MachineDeployment policy bounds the scale the cluster-autoscaler's
// ServiceAccount makes.
func (e *env) hostileTenantRole(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")

	var installed []*unstructured.Unstructured
	for _, f := range []string{"tenant-rbac.yaml", "composed-objects-policy.yaml", "machinedeployment-policy.yaml", "csi-datavolume-policy.yaml", "encryption-secret-policy.yaml"} {
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
				errorf(t, "delete %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})

	objs, err := e.composed(ctx, demo)
	e.must(t, err, "composed objects of "+demo)
	mgmt := fntest.ManagementNamespace(demoNS, demo)
	var sas []string
	var cm, dep, md, svc *unstructured.Unstructured
	for i := range objs {
		o := &objs[i]
		switch {
		case o.GetNamespace() == mgmt && o.GetKind() == "ServiceAccount":
			sas = append(sas, o.GetName())
		case o.GetNamespace() == mgmt && o.GetKind() == "Deployment":
			if dep == nil {
				dep = o
			}
		case o.GetKind() == "ConfigMap" && (o.GetNamespace() == mgmt || o.GetNamespace() == demoNS):
			// The OIDC AuthenticationConfiguration in demoNS where the
			// claim has one, else the cloud-config.
			if cm == nil || strings.HasSuffix(o.GetName(), "-oidc-authn-config") {
				cm = o
			}
		case o.GetNamespace() == demoNS && o.GetKind() == "Service" && svc == nil:
			svc = o
		case o.GetNamespace() == demoNS && o.GetKind() == "MachineDeployment" && md == nil:
			md = o
		}
		if o.GetNamespace() == demoNS && (o.GetKind() == "ServiceAccount" || o.GetKind() == "Deployment") {
			errorf(t, "%s %s/%s: a claim composes no ServiceAccount or Deployment in its namespace", o.GetKind(), demoNS, o.GetName())
		}
	}
	sort.Strings(sas)
	if len(sas) == 0 || cm == nil || dep == nil || md == nil || svc == nil {
		fatalf(t, "composed in %s and %s: ServiceAccounts %v, ConfigMap %v, Deployment %v, MachineDeployment %v, Service %v; want each", demoNS, mgmt, sas, cm != nil, dep != nil, md != nil, svc != nil)
	}
	maxSize := md.GetAnnotations()[mdMaxKey]
	var max int64
	if _, err := fmt.Sscan(maxSize, &max); err != nil || maxSize == "" {
		fatalf(t, "MachineDeployment %s annotation %s %q", md.GetName(), mdMaxKey, maxSize)
	}
	t.Logf("composed: ServiceAccounts %s/%v, ConfigMap %s/%s, Deployment %s/%s, Service %s/%s, MachineDeployment %s/%s (max-size %d)",
		mgmt, sas, cm.GetNamespace(), cm.GetName(), mgmt, dep.GetName(), demoNS, svc.GetName(), demoNS, md.GetName(), max)

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
	ec, ek, _ := userClient(eve)

	imagePatch := func(image string) []byte {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": containerName(dep), "image": image}}}}}})
		return b
	}
	const evilImage = "registry.example/evil:latest"
	cmPatch := []byte(`{"data":{"hostile":"true"}}`)
	svcPatch := []byte(`{"metadata":{"labels":{"hostile":"true"}}}`)

	// The policies take effect once the API server has loaded them: a
	// dry run by the edit user is refused from then on.
	waitFor(t, time.Minute, "the composed-objects policy to refuse a dry run", func(ctx context.Context) (bool, string, error) {
		err := ec.Patch(ctx, svc.DeepCopy(), client.RawPatch(types.MergePatchType, svcPatch), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "composed by Crossplane"), fmt.Sprintf("%v", err), nil
	})
	autoscalerSA := "system:serviceaccount:" + mgmt + ":" + demo + "-cluster-autoscaler"
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
			fatalf(t, "MachineDeployment %s annotation %s %q", md.GetName(), mdMinKey, minSize)
		}
		e.must(t, mergePatch(ctx, e.c, gvkMD, demoNS, md.GetName(), `{"spec":{"replicas":`+minSize+`}}`),
			"default spec.replicas of MachineDeployment "+md.GetName()+" to "+minSize)
	}
	waitFor(t, time.Minute, "the MachineDeployment policy to refuse a dry-run scale past max-size", func(ctx context.Context) (bool, string, error) {
		err := scaleTo(ctx, asDyn, max+1, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "outside the node group bounds"), fmt.Sprintf("%v", err), nil
	})
	before := e.tenantObjects(t, demoNS, demo)

	// SubjectAccessReviews: the moves to the controllers, refused to both
	// users; the tenant's own namespace, refused to tenantkube:tenant.
	var toControllers []hostileMove
	for _, sa := range sas {
		toControllers = append(toControllers,
			hostileMove{"impersonate ServiceAccount " + mgmt + "/" + sa, authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "impersonate", Resource: "serviceaccounts", Name: sa}},
			hostileMove{"impersonate user system:serviceaccount:" + mgmt + ":" + sa, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "system:serviceaccount:" + mgmt + ":" + sa}},
			hostileMove{"request a token of " + mgmt + "/" + sa, authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: sa}},
		)
	}
	toControllers = append(toControllers,
		hostileMove{"create a pod in " + mgmt, authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "create", Resource: "pods"}},
		hostileMove{"exec into a pod in " + mgmt, authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "create", Resource: "pods", Subresource: "exec"}},
		hostileMove{"create a Secret in " + mgmt, authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "create", Resource: "secrets"}},
		hostileMove{"patch Deployment " + mgmt + "/" + dep.GetName(), authorizationv1.ResourceAttributes{Namespace: mgmt, Verb: "patch", Group: "apps", Resource: "deployments", Name: dep.GetName()}},
		hostileMove{"impersonate group system:serviceaccounts:" + mgmt, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "groups", Name: "system:serviceaccounts:" + mgmt}},
	)
	inNamespace := []hostileMove{
		{"create a pod", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "pods"}},
		{"exec into a pod", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "pods", Subresource: "exec"}},
		{"create a Deployment", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Group: "apps", Resource: "deployments"}},
		{"patch ConfigMap " + cm.GetName(), authorizationv1.ResourceAttributes{Namespace: cm.GetNamespace(), Verb: "patch", Resource: "configmaps", Name: cm.GetName()}},
		{"patch Service " + svc.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "patch", Resource: "services", Name: svc.GetName()}},
		{"delete ConfigMap " + cm.GetName(), authorizationv1.ResourceAttributes{Namespace: cm.GetNamespace(), Verb: "delete", Resource: "configmaps", Name: cm.GetName()}},
		{"delete Service " + svc.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "delete", Resource: "services", Name: svc.GetName()}},
		{"create a ConfigMap", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "configmaps"}},
		{"create a Service", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "services"}},
		{"create a HelmRelease", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"}},
		{"update the Secret " + demo + "-admin-kubeconfig", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "update", Resource: "secrets", Name: demo + "-admin-kubeconfig"}},
		{"read Secrets of another namespace", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "list", Resource: "secrets"}},
		{"create a Secret", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "secrets"}},
		{"create a RoleBinding", authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}},
		{"patch MachineDeployment " + md.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "patch", Group: "cluster.x-k8s.io", Resource: "machinedeployments", Name: md.GetName()}},
		{"scale MachineDeployment " + md.GetName(), authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "update", Group: "cluster.x-k8s.io", Resource: "machinedeployments", Subresource: "scale", Name: md.GetName()}},
	}
	for _, m := range toControllers {
		for _, u := range []string{hostileUser, editUser} {
			if e.sar(ctx, t, cs, u, m.attr) {
				errorf(t, "SubjectAccessReview: %s may %s", u, m.name)
			}
		}
	}
	var editAllows []string
	for _, m := range inNamespace {
		if e.sar(ctx, t, cs, hostileUser, m.attr) {
			errorf(t, "SubjectAccessReview: %s may %s", hostileUser, m.name)
		}
		if e.sar(ctx, t, cs, editUser, m.attr) {
			editAllows = append(editAllows, m.name)
		}
	}
	t.Logf("Kubernetes' edit in %s allows there: %s (none of it reaches a controller in %s)", demoNS, strings.Join(editAllows, "; "), mgmt)
	for _, want := range []string{"create a pod", "patch Service " + svc.GetName()} {
		if !contains(editAllows, want) {
			errorf(t, "edit does not allow %q in %s: the edit user checks nothing", want, demoNS)
		}
	}

	// The requests themselves, as mallory.
	forbiddenAs := func(user, what string, err error) {
		t.Helper()
		if !kerrors.IsForbidden(err) {
			errorf(t, "%s as %s: want Forbidden, got %v", what, user, err)
		}
	}
	forbidden := func(what string, err error) {
		t.Helper()
		forbiddenAs(hostileUser, what, err)
	}
	// The moves to the controllers, as each user.
	for _, u := range []struct {
		name string
		cfg  *rest.Config
		k    kubernetes.Interface
	}{{hostileUser, mallory, mk}, {editUser, eve, ek}} {
		for _, sa := range sas {
			imp := rest.CopyConfig(u.cfg)
			imp.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + mgmt + ":" + sa}
			ik, err := kubernetes.NewForConfig(imp)
			e.must(t, err, "clientset impersonating "+sa)
			_, err = ik.CoreV1().ServiceAccounts(mgmt).Get(ctx, sa, metav1.GetOptions{})
			forbiddenAs(u.name, "impersonate ServiceAccount "+mgmt+"/"+sa, err)
			_, err = u.k.CoreV1().ServiceAccounts(mgmt).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
			forbiddenAs(u.name, "request a token of "+mgmt+"/"+sa, err)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "as-" + sa, Namespace: mgmt},
				Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: evilImage}}},
			}
			_, err = u.k.CoreV1().Pods(mgmt).Create(ctx, pod, metav1.CreateOptions{})
			forbiddenAs(u.name, "create a pod as "+mgmt+"/"+sa, err)
		}
	}
	forbidden("patch ConfigMap "+cm.GetName(), mc.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch)))
	forbidden("patch Service "+svc.GetName(), mc.Patch(ctx, svc.DeepCopy(), client.RawPatch(types.MergePatchType, svcPatch)))
	forbidden("patch Deployment "+dep.GetName()+" image", mc.Patch(ctx, dep.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, imagePatch(evilImage))))
	forbiddenAs(editUser, "patch Deployment "+mgmt+"/"+dep.GetName()+" image", ec.Patch(ctx, dep.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, imagePatch(evilImage))))
	forbidden("scale MachineDeployment "+md.GetName()+" past max-size", scaleTo(ctx, md1, max+1, metav1.UpdateOptions{}))
	_, err = md1.Resource(gvrMD).Namespace(demoNS).Patch(ctx, md.GetName(), types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+mdMaxKey+`":"1000"}}}`), metav1.PatchOptions{})
	forbidden("raise MachineDeployment "+md.GetName()+" max-size", err)

	// The edit user's rewrites the policies refuse.
	refused := func(what, want string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			errorf(t, "%s: want refused (%q), got %v", what, want, err)
		}
	}
	refused("patch Service "+svc.GetName()+" as "+editUser, "composed by Crossplane",
		ec.Patch(ctx, svc.DeepCopy(), client.RawPatch(types.MergePatchType, svcPatch)))
	if cm.GetNamespace() == demoNS {
		refused("patch ConfigMap "+cm.GetName()+" as "+editUser, "composed by Crossplane",
			ec.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch)))
	} else {
		forbiddenAs(editUser, "patch ConfigMap "+cm.GetNamespace()+"/"+cm.GetName(), ec.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, cmPatch)))
	}
	// The name a cluster's encryption Secret is composed under: taken
	// ahead of Crossplane, labelled as composed or not, it is refused
	// (deploy/encryption-secret-policy.yaml); a Secret of another name is
	// the edit user's own.
	for _, labels := range []map[string]string{nil, {"crossplane.io/composite": demo}} {
		squat := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: demo + "-squat-encryption-config", Namespace: demoNS, Labels: labels},
			StringData: map[string]string{"keys.json": "{}"}}
		_, err := ek.CoreV1().Secrets(demoNS).Create(ctx, squat, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused(fmt.Sprintf("create Secret %s (labels %v) as %s", squat.Name, labels, editUser), "encryption keys", err)
	}
	own := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: demo + "-eve-notes", Namespace: demoNS}, StringData: map[string]string{"a": "b"}}
	_, err = ek.CoreV1().Secrets(demoNS).Create(ctx, own, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	e.must(t, err, "create Secret "+own.Name+" as "+editUser+" (not an encryption Secret's name)")
	// The cluster-autoscaler's own power (played by the administrator:
	// no tenant reaches its ServiceAccount) stays inside the bounds.
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
		errorf(t, "scale MachineDeployment %s to max-size %d as %s (dry run): %v", md.GetName(), max, autoscalerSA, err)
	}
	// The CSI controller's own power (played by the administrator): a
	// volume of no StorageClass would land on the management cluster's
	// default class.
	csiSA := "system:serviceaccount:" + mgmt + ":" + demo + "-kcsi-controller"
	csiCfg := rest.CopyConfig(e.cfg)
	csiCfg.Impersonate = rest.ImpersonationConfig{UserName: csiSA}
	csiDyn, err := dynamic.NewForConfig(csiCfg)
	e.must(t, err, "dynamic client as "+csiSA)
	gvrDV := schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datavolumes"}
	dv := func(class string) *unstructured.Unstructured {
		storage := map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}
		if class != "" {
			storage["storageClassName"] = class
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": "pvc-hostile", "namespace": demoNS},
			"spec":     map[string]any{"source": map[string]any{"blank": map[string]any{}}, "storage": storage},
		}}
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	waitFor(t, time.Minute, "the CSI DataVolume policy to refuse a dry run of a volume of no class by "+csiSA, func(ctx context.Context) (bool, string, error) {
		_, err := csiDyn.Resource(gvrDV).Namespace(demoNS).Create(ctx, dv(""), dryRun)
		return err != nil && strings.Contains(err.Error(), "must name a StorageClass"), fmt.Sprintf("%v", err), nil
	})
	if _, err := csiDyn.Resource(gvrDV).Namespace(demoNS).Create(ctx, dv("replicated"), dryRun); err != nil {
		errorf(t, "create a DataVolume naming a StorageClass as %s (dry run): %v", csiSA, err)
	}

	// Nothing changed.
	after := e.tenantObjects(t, demoNS, demo)
	for _, o := range []*unstructured.Unstructured{cm, dep, md, svc} {
		k := describe(o)
		b, a := before[k], after[k]
		if a.uid != b.uid || a.generation != b.generation {
			errorf(t, "%s changed: uid %s -> %s, generation %d -> %d", k, b.uid, a.uid, b.generation, a.generation)
		}
	}
	cur, err := get(ctx, e.c, gvkDeployment, mgmt, dep.GetName())
	e.must(t, err, "Deployment "+dep.GetName())
	if strings.Contains(fmt.Sprint(cur.Object["spec"]), evilImage) {
		errorf(t, "Deployment %s runs %s", dep.GetName(), evilImage)
	}
	cur, err = get(ctx, e.c, gvkConfigMap, cm.GetNamespace(), cm.GetName())
	e.must(t, err, "ConfigMap "+cm.GetName())
	if _, ok, _ := unstructured.NestedString(cur.Object, "data", "hostile"); ok {
		errorf(t, "ConfigMap %s holds the hostile key", cm.GetName())
	}
	cur, err = get(ctx, e.c, gvkMD, demoNS, md.GetName())
	e.must(t, err, "MachineDeployment "+md.GetName())
	if r, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas"); r > max || cur.GetAnnotations()[mdMaxKey] != maxSize {
		errorf(t, "MachineDeployment %s: replicas %d, %s %q; want at most %d and %q", md.GetName(), r, mdMaxKey, cur.GetAnnotations()[mdMaxKey], max, maxSize)
	}
	for _, sa := range sas {
		if _, err := cs.CoreV1().Pods(mgmt).Get(ctx, "as-"+sa, metav1.GetOptions{}); !kerrors.IsNotFound(err) {
			errorf(t, "pod %s/as-%s: %v, want NotFound", mgmt, sa, err)
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

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

const (
	labelCluster   = "tenantkube.io/cluster"
	labelManagedBy = "app.kubernetes.io/managed-by"
	demoNS         = "tenant-demo"
	demo           = "demo"
	patchVersion   = "v1.35.6"
	// GC rediscovers new types about every 30 s, so a first deletion after
	// the XRD appeared may wait that long before anything goes.
	deleteBound = 3 * time.Minute
)

var (
	gvkClaim              = schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "KubernetesCluster"}
	gvkXR                 = schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "XKubernetesCluster"}
	gvkCluster            = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}
	gvkMD                 = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}
	gvkMS                 = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"}
	gvkMHC                = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineHealthCheck"}
	gvkKCT                = schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"}
	gvkKVCluster          = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "KubevirtCluster"}
	gvkKMT                = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "KubevirtMachineTemplate"}
	gvkKCP                = schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha2", Kind: "KamajiControlPlane"}
	gvkEtcd               = schema.GroupVersionKind{Group: "etcd.aenix.io", Version: "v1alpha1", Kind: "EtcdCluster"}
	gvkDataStore          = schema.GroupVersionKind{Group: "kamaji.clastix.io", Version: "v1alpha1", Kind: "DataStore"}
	gvkClusterRoleBinding = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}
	gvkHR                 = schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"}
	gvkHelmChart          = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmChart"}
	gvkConfigMap          = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	gvkUsage              = schema.GroupVersionKind{Group: "protection.crossplane.io", Version: "v1beta1", Kind: "Usage"}
	gvkDeployment         = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkIngress            = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	gvkService            = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	baseReleases          = []string{"cilium", "coredns", "vsnap-crd", "csi", "prometheus-operator-crds", "metrics-server"}
	certManagerHR         = []string{"cert-manager-crds", "cert-manager"}
)

// TestE2E brings the stack up once and runs the scenarios in order; each
// scenario leaves the demo claim converged for the next.
func TestE2E(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		fatal(t, err)
	}
	workDir = e.work
	t.Cleanup(func() { stopAll() })
	t.Logf("work directory %s, component logs in %s", e.work, e.logs)
	if !scenario(t, "bring-up and package install", e.up) {
		t.FailNow()
	}

	scenario(t, "usage webhook on loopback", e.usageWebhook)
	if !scenario(t, "claim converges", e.claimConverges) {
		t.FailNow()
	}
	scenario(t, "quiet steady state", e.quietSteadyState)
	scenario(t, "drift: a composed object edited by hand is restored", e.driftRestored)
	scenario(t, "scale and change instance type", e.scaleAndInstanceType)
	scenario(t, "enable then disable an add-on", e.addonToggle)
	scenario(t, "add-on releases suspended while the tenant API does not answer", e.releasesFollowControlPlane)
	scenario(t, "bad claims", e.badClaims)
	scenario(t, "two tenants, one cluster name", e.sameNameTwoTenants)
	scenario(t, "composition fields refused to a tenant by the platform's admission policy", e.compositionFields)
	scenario(t, "a hostile tenant tries every attack", e.hostileTenant)
	scenario(t, "a hostile tenant with the prescribed role tries every move", e.hostileTenantRole)
	scenario(t, "a tenant holding edit cannot replace a composed object", e.composedReplaceRefused)
	scenario(t, "kccm: the cloud controller cannot carry tenant Service fields into the management cluster", e.kccmServicePolicy)
	scenario(t, "fault: kill and restart a function", e.faultFunction)
	scenario(t, "fault: restart kube-apiserver", e.faultAPIServer)
	scenario(t, "fault: restart crossplane core", e.faultCore)
	scenario(t, "platform settings changed: every tenant follows", e.platformSettingChange)
	scenario(t, "platform lacks an API: one message, nothing touched", e.platformLacksAPI)
	scenario(t, "kamaji deployment: what Kamaji builds from each KamajiControlPlane passes the API server (dry run)", e.kamajiDeployments)
	// The Crossplane v2 API: each scenario needs the one before.
	v2 := &namespacedAPI{e: e}
	_ = scenario(t, "namespaced: a tenant with namespace-scoped RBAC only", v2.tenantRBAC) &&
		scenario(t, "namespaced: waits for its Tenant, then composes", v2.waitsForTenant) &&
		scenario(t, "namespaced: a Tenant's two clusters share its etcd", v2.twoClustersOneTenant) &&
		scenario(t, "namespaced: a change reaches the MachineDeployment", v2.changeReachesMachineDeployment) &&
		scenario(t, "namespaced: the spread counts TenantClusters, their records kept by the Tenant", v2.spreadCountsTenantClusters) &&
		scenario(t, "namespaced: delete a TenantCluster in order", v2.deleteOneCluster) &&
		scenario(t, "namespaced: a Tenant held until its last cluster is gone", v2.deleteTenantHeld)
	scenario(t, "delete with kubeconfig Secret gone", e.deleteDeadTenant)
	scenario(t, "delete a never-Ready cluster", e.deleteDemo)
}

func ctxT(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func (e *env) must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		fatalf(t, "%s: %v", what, err)
	}
}

func (e *env) claimYAML(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeFile(e.path("examples", "claim.yaml"))
	e.must(t, err, "read examples/claim.yaml")
	if len(objs) != 1 {
		fatalf(t, "examples/claim.yaml holds %d objects, want 1", len(objs))
	}
	return objs[0]
}

func (e *env) patchClaim(t *testing.T, ns, name, patch string) {
	t.Helper()
	ctx, cancel := ctxT(30 * time.Second)
	defer cancel()
	e.must(t, mergePatch(ctx, e.c, gvkClaim, ns, name, patch), "patch claim "+ns+"/"+name+" with "+patch)
}

// xrName is the name of the XR bound to a claim.
func (e *env) xrName(ctx context.Context, ns, name string) (string, error) {
	cl, err := get(ctx, e.c, gvkClaim, ns, name)
	if err != nil {
		return "", err
	}
	xr, _, _ := unstructured.NestedString(cl.Object, "spec", "resourceRef", "name")
	if xr == "" {
		return "", fmt.Errorf("claim %s/%s has no XR yet", ns, name)
	}
	return xr, nil
}

// nudge changes an annotation of the XR, which makes Crossplane reconcile it.
func (e *env) nudge(ctx context.Context, ns, name string) error {
	xr, err := e.xrName(ctx, ns, name)
	if err != nil {
		return err
	}
	return mergePatch(ctx, e.c, gvkXR, "", xr,
		fmt.Sprintf(`{"metadata":{"annotations":{"e2e.tenantkube.io/nudge":%q}}}`, time.Now().Format(time.RFC3339Nano)))
}

// reconciles waits until function f has answered n more RunFunction calls
// than it had at the start, nudging the demo claim's XR when Crossplane is
// idle.
func (e *env) reconciles(t *testing.T, f string, n int, timeout time.Duration) {
	t.Helper()
	e.reconcilesNudging(t, f, n, timeout, func(ctx context.Context) error { return e.nudge(ctx, demoNS, demo) })
}

// reconcilesOf is reconciles nudging the XR gvk ns/name (a TenantCluster,
// a Tenant) itself.
func (e *env) reconcilesOf(t *testing.T, gvk schema.GroupVersionKind, ns, name, f string, n int, timeout time.Duration) {
	t.Helper()
	e.reconcilesNudging(t, f, n, timeout, func(ctx context.Context) error {
		return mergePatch(ctx, e.c, gvk, ns, name,
			fmt.Sprintf(`{"metadata":{"annotations":{"e2e.tenantkube.io/nudge":%q}}}`, time.Now().Format(time.RFC3339Nano)))
	})
}

func (e *env) reconcilesNudging(t *testing.T, f string, n int, timeout time.Duration, nudge func(context.Context) error) {
	t.Helper()
	start, err := e.runFunctionCalls(f)
	e.must(t, err, "read function metrics")
	last, lastChange := start, time.Now()
	waitFor(t, timeout, fmt.Sprintf("%d reconciles through function %s", n, f), func(ctx context.Context) (bool, string, error) {
		cur, err := e.runFunctionCalls(f)
		if err != nil {
			return false, "", err
		}
		if cur >= start+n {
			return true, "", nil
		}
		if cur != last {
			last, lastChange = cur, time.Now()
		} else if time.Since(lastChange) > 1500*time.Millisecond {
			_ = nudge(ctx)
			lastChange = time.Now()
		}
		return false, fmt.Sprintf("%d of %d calls", cur-start, n), nil
	})
}

// composed is the composed objects of a cluster (label tenantkube.io/cluster),
// without the claim and the XR.
func (e *env) composed(ctx context.Context, name string) ([]unstructured.Unstructured, error) {
	all, err := labelled(ctx, e.cfg, e.c, labelCluster+"="+name)
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, u := range all {
		if u.GroupVersionKind().Group == gvkClaim.Group {
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

type snap struct {
	uid        string
	rv         string
	generation int64
	obj        map[string]any
}

func (e *env) snapshot(t *testing.T, name string) map[string]snap {
	t.Helper()
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	objs, err := e.composed(ctx, name)
	e.must(t, err, "list composed objects")
	out := map[string]snap{}
	for i := range objs {
		u := &objs[i]
		out[describe(u)] = snap{uid: string(u.GetUID()), rv: u.GetResourceVersion(), generation: u.GetGeneration(), obj: u.Object}
	}
	return out
}

// changes lists every object of before that disappeared, was re-created
// (new UID), or changed generation (and resourceVersion when rv is set),
// and every object of after that is new; dumps keep both versions of a
// changed object in the logs directory.
func (e *env) changes(what string, before, after map[string]snap, rv bool) []string {
	var problems []string
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			problems = append(problems, k+": gone")
		case a.uid != b.uid:
			problems = append(problems, fmt.Sprintf("%s: UID %s -> %s (re-created)", k, b.uid, a.uid))
		case a.generation != b.generation:
			problems = append(problems, fmt.Sprintf("%s: generation %d -> %d", k, b.generation, a.generation))
			e.dump(what, k, b, a)
		case rv && a.rv != b.rv:
			paths := changedPaths(b.obj, a.obj)
			if len(paths) == 1 && paths[0] == "status" {
				continue // a controller's status write (Crossplane's Usage controller), not the composition's
			}
			problems = append(problems, fmt.Sprintf("%s: resourceVersion %s -> %s, changed %v", k, b.rv, a.rv, paths))
			e.dump(what, k, b, a)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			problems = append(problems, k+": new")
		}
	}
	sort.Strings(problems)
	return problems
}

// unionKeys are the keys of b and a together, sorted.
func unionKeys(b, a map[string]any) []string {
	keys := maps.Clone(b)
	if keys == nil {
		keys = map[string]any{}
	}
	maps.Copy(keys, a)
	return slices.Sorted(maps.Keys(keys))
}

// changedPaths lists where two versions of an object differ: top-level
// members, and metadata's members by name (metadata.labels, …), leaving out
// what every write changes (resourceVersion, managedFields).
func changedPaths(b, a map[string]any) []string {
	var out []string
	for _, k := range unionKeys(b, a) {
		if k != "metadata" {
			if !reflect.DeepEqual(b[k], a[k]) {
				out = append(out, k)
			}
			continue
		}
		bm, _ := b[k].(map[string]any)
		am, _ := a[k].(map[string]any)
		for _, m := range unionKeys(bm, am) {
			if m != "resourceVersion" && m != "managedFields" && !reflect.DeepEqual(bm[m], am[m]) {
				out = append(out, "metadata."+m)
			}
		}
	}
	return out
}

// compare fails the test with every change between before and after.
func (e *env) compare(t *testing.T, what string, before, after map[string]snap, rv bool) {
	t.Helper()
	if problems := e.changes(what, before, after, rv); len(problems) > 0 {
		errorf(t, "%s: %d of %d composed objects changed (before/after JSON in %s):\n  %s",
			what, len(problems), len(before), e.logs, strings.Join(problems, "\n  "))
	}
}

// settleBound is how long a claim change may take to come to rest: the
// objects composed from what earlier steps observe follow a few reconciles
// after the first.
const settleBound = 3 * time.Minute

// settled waits until three reconciles through function f write none of
// cluster name's composed objects and Crossplane's Usage controller has
// taken up every Usage (Ready; it then adds an ownerReference to the
// using object, once), and returns their snapshot then.
func (e *env) settled(t *testing.T, name, f string) map[string]snap {
	t.Helper()
	deadline := time.Now().Add(settleBound)
	prev := e.snapshot(t, name)
	for {
		e.reconciles(t, f, 3, time.Minute)
		cur := e.snapshot(t, name)
		diff := e.changes("settling", prev, cur, true)
		for k, o := range cur {
			u := unstructured.Unstructured{Object: o.obj}
			if u.GetKind() == "Usage" {
				if s, _, _ := condition(&u, "Ready"); s != "True" {
					diff = append(diff, k+": not Ready yet")
				}
			}
		}
		if len(diff) == 0 {
			return cur
		}
		if time.Now().After(deadline) {
			fatalf(t, "composed objects of %s still written after %s: %s", name, settleBound, strings.Join(diff, "; "))
		}
		t.Logf("settling: %s", strings.Join(diff, "; "))
		prev = cur
	}
}

func (e *env) dump(what, key string, b, a snap) {
	name := strings.NewReplacer(" ", "_", "/", "_", ":", "_").Replace(what + "-" + key)
	for suffix, o := range map[string]map[string]any{"before": b.obj, "after": a.obj} {
		j, _ := json.MarshalIndent(o, "", "  ")
		_ = os.WriteFile(filepath.Join(e.logs, name+"."+suffix+".json"), j, 0o644)
	}
}

// ---------------------------------------------------------------------------

// usageWebhook proves Crossplane's Usage webhook answers the API server on
// loopback: a used ConfigMap cannot be deleted until its user is gone.
func (e *env) usageWebhook(t *testing.T) {
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	ns := "e2e-usage"
	e.must(t, e.ensureNamespace(ctx, ns), "namespace")
	for _, n := range []string{"used", "user"} {
		cm := &unstructured.Unstructured{}
		cm.SetGroupVersionKind(gvkConfigMap)
		cm.SetNamespace(ns)
		cm.SetName(n)
		e.must(t, apply(ctx, e.c, cm), "ConfigMap "+n)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "protection.crossplane.io/v1beta1", "kind": "Usage",
		"metadata": map[string]any{"name": "used-by-user", "namespace": ns},
		"spec": map[string]any{
			"of": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "resourceRef": map[string]any{"name": "used"}},
			"by": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "resourceRef": map[string]any{"name": "user"}},
		},
	}}
	e.must(t, apply(ctx, e.c, u), "Usage")
	waitFor(t, time.Minute, "the used ConfigMap labelled crossplane.io/in-use", func(ctx context.Context) (bool, string, error) {
		cm, err := get(ctx, e.c, gvkConfigMap, ns, "used")
		if err != nil {
			return false, "", err
		}
		us, _ := get(ctx, e.c, gvkUsage, ns, "used-by-user")
		s, r, m := condition(us, "Ready")
		return cm.GetLabels()["crossplane.io/in-use"] == "true", fmt.Sprintf("Usage Ready=%s %s %s", s, r, m), nil
	})
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(gvkConfigMap)
	cm.SetNamespace(ns)
	cm.SetName("used")
	err := e.c.Delete(ctx, cm)
	if err == nil || !strings.Contains(err.Error(), "nousages.protection.crossplane.io") {
		fatalf(t, "deleting a used ConfigMap: want a denial by the Usage webhook, got %v", err)
	}
	t.Logf("denied as expected: %v", err)
	user := cm.DeepCopy()
	user.SetName("user")
	e.must(t, e.c.Delete(ctx, user), "delete the user")
	waitFor(t, time.Minute, "the used ConfigMap deletable once its user is gone", func(ctx context.Context) (bool, string, error) {
		err := e.c.Delete(ctx, cm.DeepCopy())
		if err == nil || kerrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, err.Error(), nil
	})
	ns0 := &unstructured.Unstructured{}
	ns0.SetGroupVersionKind(gvkNamespace)
	ns0.SetName(ns)
	_ = e.c.Delete(ctx, ns0)
}

// expectedObjects checks the claim's composed objects as docs/architecture.md
// lists them; it returns "" when all are there.
func (e *env) expectedObjects(ctx context.Context, ns, n string, releases []string) (string, error) {
	return e.expectedClusterObjects(ctx, ns, n, releases, "")
}

// expectedClusterObjects is expectedObjects for a claim (tenantDataStore
// "": a dedicated etcd and DataStore labelled with the cluster) or a
// TenantCluster, whose KamajiControlPlane uses the DataStore
// tenantDataStore of its tenant and which composes no etcd of its own.
func (e *env) expectedClusterObjects(ctx context.Context, ns, n string, releases []string, tenantDataStore string) (string, error) {
	var missing []string
	need := func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
		u, err := get(ctx, e.c, gvk, namespace, name)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s %s: %v", gvk.Kind, name, err))
			return nil
		}
		if u.GetLabels()[labelCluster] != n || u.GetLabels()[labelManagedBy] != "tenantkube" {
			missing = append(missing, fmt.Sprintf("%s %s: labels %v", gvk.Kind, name, u.GetLabels()))
		}
		return u
	}
	str := func(u *unstructured.Unstructured, want string, path ...string) {
		if u == nil {
			return
		}
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		if fmt.Sprint(got) != want {
			missing = append(missing, fmt.Sprintf("%s %s: .%s = %v, want %s", u.GetKind(), u.GetName(), strings.Join(path, "."), got, want))
		}
	}
	byLabel := func(gvk schema.GroupVersionKind, namespace string) []unstructured.Unstructured {
		opts := []client.ListOption{client.MatchingLabels{labelCluster: n}}
		if namespace != "" {
			opts = append(opts, client.InNamespace(namespace))
		}
		items, err := list(ctx, e.c, gvk, opts...)
		if err != nil || len(items) == 0 {
			missing = append(missing, fmt.Sprintf("%s labelled %s=%s: %d found (%v)", gvk.Kind, labelCluster, n, len(items), err))
		}
		return items
	}
	cluster := need(gvkCluster, ns, n)
	str(cluster, "KamajiControlPlane", "spec", "controlPlaneRef", "kind")
	str(cluster, n, "spec", "controlPlaneRef", "name")
	str(cluster, n, "spec", "infrastructureRef", "name")
	need(gvkKVCluster, ns, n)
	kcp := need(gvkKCP, ns, n)
	str(kcp, patchVersion, "spec", "version")
	if tenantDataStore != "" {
		str(kcp, tenantDataStore, "spec", "dataStoreName")
	} else {
		byLabel(gvkEtcd, ns)
		ds := byLabel(gvkDataStore, "")
		if len(ds) == 1 {
			str(kcp, ds[0].GetName(), "spec", "dataStoreName")
		}
	}
	md := need(gvkMD, ns, n+"-md0")
	str(md, patchVersion, "spec", "template", "spec", "version")
	str(md, n+"-md0", "spec", "template", "spec", "bootstrap", "configRef", "name")
	kmts := byLabel(gvkKMT, ns)
	if md != nil {
		ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
		found := false
		for _, k := range kmts {
			found = found || k.GetName() == ref
		}
		if !found || !strings.HasPrefix(ref, n+"-md0-") {
			missing = append(missing, fmt.Sprintf("MachineDeployment %s-md0 refers to KubevirtMachineTemplate %q, which is not among the composed ones", n, ref))
		}
	}
	need(gvkKCT, ns, n+"-md0")
	need(gvkMHC, ns, n+"-md0")
	for _, r := range releases {
		hr := need(gvkHR, ns, n+"-"+r)
		str(hr, n+"-admin-kubeconfig", "spec", "kubeConfig", "secretRef", "name")
		str(hr, "super-admin.svc", "spec", "kubeConfig", "secretRef", "key")
	}
	return strings.Join(missing, "; "), nil
}

// withCertManager is the releases of a claim with cert-manager enabled.
func withCertManager() []string {
	return append(append([]string{}, baseReleases...), certManagerHR...)
}

// waitComposed waits until every object of claim ns/n with the given
// releases is composed and, when synced, the claim is Synced=True.
func (e *env) waitComposed(t *testing.T, ns, n string, releases []string, synced bool) {
	t.Helper()
	waitFor(t, 3*time.Minute, "every composed object of "+ns+"/"+n, func(ctx context.Context) (bool, string, error) {
		why, err := e.expectedObjects(ctx, ns, n, releases)
		if err != nil || why != "" || !synced {
			return why == "" && err == nil, why, err
		}
		cl, err := get(ctx, e.c, gvkClaim, ns, n)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(cl, "Synced")
		return s == "True", fmt.Sprintf("claim Synced=%s %s %s", s, r, m), nil
	})
}

func (e *env) claimConverges(t *testing.T) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	claim := e.claimYAML(t)
	if claim.GetNamespace() != demoNS || claim.GetName() != demo {
		fatalf(t, "examples/claim.yaml is %s/%s, the scenarios expect %s/%s", claim.GetNamespace(), claim.GetName(), demoNS, demo)
	}
	e.must(t, e.ensureNamespace(ctx, demoNS), "namespace")
	e.must(t, apply(ctx, e.c, claim), "apply examples/claim.yaml")
	start := time.Now()
	e.waitComposed(t, demoNS, demo, withCertManager(), true)
	objs := e.snapshot(t, demo)
	t.Logf("claim to all composed objects: %.1fs; %d composed objects", time.Since(start).Seconds(), len(objs))
	ctx, cancel = ctxT(time.Minute)
	defer cancel()
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	a := md.GetAnnotations()
	if a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] != "0" || a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] != "10" {
		errorf(t, "MachineDeployment autoscaler annotations: %v", a)
	}
	kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
	e.must(t, err, "KamajiControlPlane")
	if r, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas"); r != 2 {
		errorf(t, "KamajiControlPlane replicas %d, want 2 (controlPlane.replicas)", r)
	}
	e.checkCSIController(t)
}

// checkCSIController checks the composed CSI controller Deployment as the
// API server stored it: the seed chart's containers, snapshots
// included, each hardened, and the management-API token only in the
// driver; and that its ServiceAccount may get, and only get,
// PersistentVolumes through the composed ClusterRoleBinding.
func (e *env) checkCSIController(t *testing.T) {
	t.Helper()
	e.checkCSIPersistentVolumeRead(t)
	var d *unstructured.Unstructured
	mgmt := fntest.ManagementNamespace(demoNS, demo)
	waitFor(t, time.Minute, "Deployment "+mgmt+"/"+demo+"-kcsi-controller", func(ctx context.Context) (bool, string, error) {
		var err error
		if d, err = get(ctx, e.c, gvkDeployment, mgmt, demo+"-kcsi-controller"); kerrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	if pod["priorityClassName"] != "system-cluster-critical" || pod["automountServiceAccountToken"] != false || pod["enableServiceLinks"] != false {
		errorf(t, "CSI controller pod: priorityClassName %v, automountServiceAccountToken %v, enableServiceLinks %v",
			pod["priorityClassName"], pod["automountServiceAccountToken"], pod["enableServiceLinks"])
	}
	containers, _, _ := unstructured.NestedSlice(pod, "containers")
	var names []string
	for _, c := range containers {
		c := c.(map[string]any)
		name := c["name"].(string)
		names = append(names, name)
		args := fmt.Sprint(c["args"])
		switch name {
		case "csi-snapshotter":
			for _, a := range []string{"--csi-address=/csi/csi.sock", "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc", "--timeout=1m", "--worker-threads=10"} {
				if !strings.Contains(args, a) {
					errorf(t, "csi-snapshotter args %s lack %s", args, a)
				}
			}
		case "snapshot-controller":
			if !strings.Contains(args, "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc") || !strings.Contains(args, "--worker-threads=10") {
				errorf(t, "snapshot-controller args %s", args)
			}
		}
		if lim, _, _ := unstructured.NestedString(c, "resources", "limits", "memory"); lim != "512Mi" {
			errorf(t, "%s: memory limit %q, want 512Mi", name, lim)
		}
		if ro, _, _ := unstructured.NestedBool(c, "securityContext", "readOnlyRootFilesystem"); !ro {
			errorf(t, "%s: root file system not read-only", name)
		}
		token := strings.Contains(fmt.Sprint(c["volumeMounts"]), "/var/run/secrets/kubernetes.io/serviceaccount")
		if token != (name == "csi-driver") {
			errorf(t, "%s: management API token mounted %t", name, token)
		}
	}
	want := []string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "snapshot-controller", "csi-liveness-probe"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		errorf(t, "CSI controller containers %v, want %v", names, want)
	}
}

// checkCSIPersistentVolumeRead: Crossplane, under its ServiceAccount,
// composed the ClusterRoleBinding tenantkube:kcsi-controller:<NS>.<N>,
// controlled by the XR, and the API server authorizes the CSI controller's
// ServiceAccount (in the cluster's management namespace) to get a
// PersistentVolume (kubevirt/csi-driver
// EnsureControllerResize) but not to list, watch or change one.
func (e *env) checkCSIPersistentVolumeRead(t *testing.T) {
	t.Helper()
	name := "tenantkube:kcsi-controller:" + demoNS + "." + demo
	var crb *unstructured.Unstructured
	waitFor(t, time.Minute, "ClusterRoleBinding "+name, func(ctx context.Context) (bool, string, error) {
		var err error
		if crb, err = get(ctx, e.c, gvkClusterRoleBinding, "", name); kerrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	if role, _, _ := unstructured.NestedString(crb.Object, "roleRef", "name"); role != "tenantkube:kcsi-persistentvolumes" {
		errorf(t, "ClusterRoleBinding %s binds %q", name, role)
	}
	xr, err := e.xrName(ctx, demoNS, demo)
	e.must(t, err, "XR of the demo claim")
	x, err := get(ctx, e.c, gvkXR, "", xr)
	e.must(t, err, "XR "+xr)
	if controllerUID(crb) != string(x.GetUID()) {
		errorf(t, "ClusterRoleBinding %s is controlled by %q, not by the XR %s", name, controllerUID(crb), xr)
	}
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")
	mgmt := fntest.ManagementNamespace(demoNS, demo)
	sa := "system:serviceaccount:" + mgmt + ":" + demo + "-kcsi-controller"
	for verb, want := range map[string]bool{"get": true, "list": false, "watch": false, "update": false, "delete": false} {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + mgmt, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "persistentvolumes", Name: "pvc-infra"},
		}}, metav1.CreateOptions{})
		e.must(t, err, "SubjectAccessReview")
		if r.Status.Allowed != want {
			errorf(t, "%s may %s persistentvolumes: %t, want %t", sa, verb, r.Status.Allowed, want)
		}
	}
}

func (e *env) mdAnnotations(ctx context.Context) (map[string]string, string, error) {
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	if err != nil {
		return nil, "", err
	}
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return md.GetAnnotations(), ref, nil
}

func (e *env) waitMaxSize(t *testing.T, max string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "MachineDeployment max-size "+max, func(ctx context.Context) (bool, string, error) {
		a, _, err := e.mdAnnotations(ctx)
		if err != nil {
			return false, "", err
		}
		got := a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"]
		return got == max, "max-size " + got, nil
	})
}

func (e *env) certManagerValues(ctx context.Context) (map[string]any, error) {
	hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-cert-manager")
	if err != nil {
		return nil, err
	}
	v, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	return v, nil
}

func (e *env) quietSteadyState(t *testing.T) {
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"certManager":{"valuesOverride":{"e2eMarker":{"enabled":true}}}}}}`)
	waitFor(t, 2*time.Minute, "valuesOverride in HelmRelease demo-cert-manager", func(ctx context.Context) (bool, string, error) {
		v, err := e.certManagerValues(ctx)
		if err != nil {
			return false, "", err
		}
		_, ok := v["e2eMarker"]
		return ok, fmt.Sprintf("values %v", v), nil
	})
	// Let the change settle, then watch 20 reconciles write nothing.
	before := e.settled(t, demo, "control-plane")
	e.reconciles(t, "addons", 20, 4*time.Minute)
	after := e.snapshot(t, demo)
	e.compare(t, "20 reconciles of a converged claim", before, after, true)

	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"certManager":{"valuesOverride":null}}}}`)
	waitFor(t, 2*time.Minute, "valuesOverride gone from HelmRelease demo-cert-manager", func(ctx context.Context) (bool, string, error) {
		v, err := e.certManagerValues(ctx)
		if err != nil {
			return false, "", err
		}
		_, ok := v["e2eMarker"]
		return !ok, fmt.Sprintf("values %v", v), nil
	})
}

// driftBound is how soon Crossplane restores a composed object edited by
// hand: realtime compositions reconcile the XR on the object's change, so
// the poll interval (deploy/crossplane/values.yaml) plays no part.
const driftBound = 30 * time.Second

// driftRestored edits the demo cluster's MachineDeployment as someone with
// write access to its namespace would (its max-size annotation and its
// node drain timeout) and waits for Crossplane to restore both, touching
// neither the claim nor the XR. (Its Kubernetes version would not do: the
// workers function keeps the version a node group runs while a roll is
// due.)
func (e *env) driftRestored(t *testing.T) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	drain := func(md *unstructured.Unstructured) int64 {
		v, _, _ := unstructured.NestedInt64(md.Object, "spec", "template", "spec", "deletion", "nodeDrainTimeoutSeconds")
		return v
	}
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	max, timeout := md.GetAnnotations()[mdMaxKey], drain(md)
	if max == "" || max == "77" || timeout == 0 || timeout == 7 {
		fatalf(t, "MachineDeployment %s-md0 before the edit: max-size annotation %q, nodeDrainTimeoutSeconds %d", demo, max, timeout)
	}
	start := time.Now()
	e.must(t, mergePatch(ctx, e.c, gvkMD, demoNS, demo+"-md0",
		`{"metadata":{"annotations":{"`+mdMaxKey+`":"77"}},"spec":{"template":{"spec":{"deletion":{"nodeDrainTimeoutSeconds":7}}}}}`), "edit the MachineDeployment")
	waitFor(t, driftBound, "the hand edit undone", func(ctx context.Context) (bool, string, error) {
		md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
		if err != nil {
			return false, "", err
		}
		got, d := md.GetAnnotations()[mdMaxKey], drain(md)
		return got == max && d == timeout, fmt.Sprintf("max-size %s, nodeDrainTimeoutSeconds %d", got, d), nil
	})
	report("drift: a hand edit of a composed MachineDeployment undone by Crossplane %.1fs later (bound %s)",
		time.Since(start).Seconds(), driftBound)
}

func (e *env) scaleAndInstanceType(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	_, oldKMT, err := e.mdAnnotations(ctx)
	e.must(t, err, "MachineDeployment")
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	// A MachineSet as CAPI would keep it for the current rollout: owned by
	// the MachineDeployment, referring to the current machine template.
	// Cluster API v1.13.6 internal/controllers/machinedeployment/machinedeployment_rollout_planner.go:217-316.
	ms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
		"metadata": map[string]any{
			"name": demo + "-md0-e2e", "namespace": demoNS,
			"labels": map[string]any{"cluster.x-k8s.io/cluster-name": demo, "cluster.x-k8s.io/deployment-name": demo + "-md0"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
				"name": md.GetName(), "uid": string(md.GetUID()),
			}},
		},
		"spec": map[string]any{
			"clusterName": demo, "replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"cluster.x-k8s.io/cluster-name": demo, "e2e.tenantkube.io/ms": "md0"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"cluster.x-k8s.io/cluster-name": demo, "e2e.tenantkube.io/ms": "md0"}},
				"spec": map[string]any{
					"clusterName": demo, "version": patchVersion,
					"bootstrap": map[string]any{"configRef": map[string]any{
						"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": demo + "-md0",
					}},
					"infrastructureRef": map[string]any{
						"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "KubevirtMachineTemplate", "name": oldKMT,
					},
				},
			},
		},
	}}
	e.must(t, apply(ctx, e.c, ms), "create MachineSet standing in for CAPI")

	e.patchClaim(t, demoNS, demo, `{"spec":{"nodeGroups":{"md0":{"minReplicas":1,"maxReplicas":5,"instanceType":"u1.large"}}}}`)
	var newKMT string
	waitFor(t, 2*time.Minute, "scaled MachineDeployment on a new machine template", func(ctx context.Context) (bool, string, error) {
		a, ref, err := e.mdAnnotations(ctx)
		if err != nil {
			return false, "", err
		}
		min := a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"]
		max := a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"]
		if min != "1" || max != "5" || ref == oldKMT {
			return false, fmt.Sprintf("min %s max %s template %s (old %s)", min, max, ref, oldKMT), nil
		}
		if _, err := get(ctx, e.c, gvkKMT, demoNS, ref); err != nil {
			return false, "", err
		}
		newKMT = ref
		return true, "", nil
	})
	kmt, err := get(ctx, e.c, gvkKMT, demoNS, newKMT)
	e.must(t, err, "new KubevirtMachineTemplate")
	it, _, _ := unstructured.NestedString(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "instancetype", "name")
	if it != "u1.large" {
		errorf(t, "new KubevirtMachineTemplate %s: instancetype %q, want u1.large", newKMT, it)
	}
	// The old template stays while the MachineSet refers to it.
	e.reconciles(t, "workers", 3, time.Minute)
	if _, err := get(ctx, e.c, gvkKMT, demoNS, oldKMT); err != nil {
		errorf(t, "old KubevirtMachineTemplate %s, still used by MachineSet %s-md0-e2e, is gone: %v", oldKMT, demo, err)
	}
	e.must(t, e.c.Delete(ctx, ms), "delete MachineSet")
	waitFor(t, 2*time.Minute, "old KubevirtMachineTemplate "+oldKMT+" gone once no MachineSet uses it", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkKMT, demoNS, oldKMT)
		return kerrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
	})
	if _, err := get(ctx, e.c, gvkKMT, demoNS, newKMT); err != nil {
		errorf(t, "new KubevirtMachineTemplate %s: %v", newKMT, err)
	}
}

func (e *env) addonToggle(t *testing.T) {
	e.proxiedIngress(t)
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"velero":{"enabled":true}}}}`)
	waitFor(t, 2*time.Minute, "HelmRelease demo-velero", func(ctx context.Context) (bool, string, error) {
		hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-velero")
		if err != nil {
			return false, "", err
		}
		ns, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
		return ns == "cozy-velero", "targetNamespace " + ns, nil
	})
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"velero":{"enabled":false}}}}`)
	waitFor(t, 2*time.Minute, "HelmRelease demo-velero gone", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkHR, demoNS, demo+"-velero")
		return kerrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
	})
}

// proxiedIngress enables ingress-nginx with a host and reads the
// management Ingresses and Services as the API server stored them the way
// ingress-nginx reads them (fntest.ReadAsNginx, with the Ingress Kamaji
// builds from the KamajiControlPlane): the host passes TLS through to the
// proxy Service's port 443 and sends plain HTTP to its port 80, with no
// snippet; the cluster's API host passes TLS through to the API server
// Service's port 6443; every upstream name ends in the cluster's digest;
// then disables it again.
func (e *env) proxiedIngress(t *testing.T) {
	const host = "apps." + demoNS + ".k8s.example.net" // under the tenant host (baseDomain of examples/platform-settings.yaml)
	const apiHost = demo + "." + demoNS + ".k8s.example.net"
	id := function.Identity{Namespace: demoNS, Name: demo}
	proxy, api := id.IngressBackendName(function.IngressRoleApps), id.IngressBackendName(function.IngressRoleAPIServer)
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"ingressNginx":{"enabled":true,"hosts":["`+host+`"]}}}}`)
	// Crossplane applies the composed objects one by one: wait for all.
	var ingresses []map[string]any
	var svc *unstructured.Unstructured
	waitFor(t, 2*time.Minute, "Ingresses and Services "+proxy+", "+api, func(ctx context.Context) (bool, string, error) {
		ingresses = nil
		for _, n := range []string{proxy, proxy + "-http", api} {
			ing, err := get(ctx, e.c, gvkIngress, demoNS, n)
			if kerrors.IsNotFound(err) {
				return false, "Ingress " + n + " not found", nil
			} else if err != nil {
				return false, "", err
			}
			ingresses = append(ingresses, ing.Object)
		}
		for _, n := range []string{api, proxy} {
			var err error
			if svc, err = get(ctx, e.c, gvkService, demoNS, n); kerrors.IsNotFound(err) {
				return false, "Service " + n + " not found", nil
			} else if err != nil {
				return false, "", err
			}
		}
		return true, "", nil
	})
	kcp, err := get(context.Background(), e.c, gvkKCP, demoNS, demo)
	if err != nil {
		fatal(t, err)
	}
	ingresses = append(ingresses, fntest.KamajiIngress(kcp.Object))
	v := fntest.ReadAsNginx("nginx", ingresses)
	if len(v.Snippets) > 0 {
		errorf(t, "snippet annotations %v", v.Snippets)
	}
	for h, want := range map[string][2]fntest.Backend{
		host:    {{Namespace: demoNS, Service: proxy, Port: int64(443)}, {Namespace: demoNS, Service: proxy, Port: int64(80)}},
		apiHost: {{Namespace: demoNS, Service: api, Port: int64(6443)}, {Namespace: demoNS, Service: api, Port: int64(6443)}},
	} {
		r := v.Routes[h]
		if !r.Passthrough || r.HTTPSTo != want[0] || r.HTTPTo != want[1] {
			errorf(t, "%s: route %+v, want TLS passed through to %+v, HTTP to %+v", h, r, want[0], want[1])
		}
	}
	for up := range v.Upstreams {
		if !strings.HasPrefix(up, demoNS+"-"+proxy+"-") && !strings.HasPrefix(up, demoNS+"-"+api+"-") {
			errorf(t, "upstream %s: not named after a Service with the cluster's digest", up)
		}
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var sp []string
	for _, p := range ports {
		p := p.(map[string]any)
		sp = append(sp, fmt.Sprintf("%v:%v->%v", p["appProtocol"], p["port"], p["targetPort"]))
	}
	if want := []string{"http:80->30000", "https:443->30001"}; fmt.Sprint(sp) != fmt.Sprint(want) {
		errorf(t, "Service ports %v, want %v", sp, want)
	}
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"ingressNginx":{"enabled":false,"hosts":null}}}}`)
	waitFor(t, 2*time.Minute, "Ingresses "+proxy+" gone", func(ctx context.Context) (bool, string, error) {
		for _, n := range []string{proxy, proxy + "-http"} {
			if _, err := get(ctx, e.c, gvkIngress, demoNS, n); !kerrors.IsNotFound(err) {
				return false, fmt.Sprintf("get %s: %v", n, err), nil
			}
		}
		return true, "", nil
	})
}

// releasesFollowControlPlane checks docs/architecture.md's suspension rule live: while
// the KamajiControlPlane does not report ready (no Kamaji runs here, so it
// never does by itself) every add-on HelmRelease is suspended, so deleting
// the cluster then cannot wait on Flux; once the control plane reports
// ready (the test writes its status as Kamaji would) the releases resume,
// and they are suspended again when it stops answering.
func (e *env) releasesFollowControlPlane(t *testing.T) {
	suspended := func(want bool) func(ctx context.Context) (bool, string, error) {
		return func(ctx context.Context) (bool, string, error) {
			hrs, err := list(ctx, e.c, gvkHR, client.InNamespace(demoNS), client.MatchingLabels{labelCluster: demo})
			if err != nil {
				return false, "", err
			}
			var wrong []string
			for _, hr := range hrs {
				if s, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend"); s != want {
					wrong = append(wrong, hr.GetName())
				}
			}
			return len(hrs) > 0 && len(wrong) == 0, fmt.Sprintf("%d HelmReleases, suspend != %t: %v", len(hrs), want, wrong), nil
		}
	}
	setReady := func(ready bool) {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
		e.must(t, err, "KamajiControlPlane")
		// Provider v0.20.0 controllers/kamajicontrolplane_controller.go:301, 341-344.
		e.must(t, unstructured.SetNestedField(kcp.Object, ready, "status", "ready"), "set status.ready")
		// Kamaji reports the version it runs; the CRD requires it.
		version, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
		e.must(t, unstructured.SetNestedField(kcp.Object, version, "status", "version"), "set status.version")
		e.must(t, e.c.Status().Update(ctx, kcp), "update KamajiControlPlane status")
		e.must(t, e.nudge(ctx, demoNS, demo), "nudge")
	}
	waitFor(t, time.Minute, "every HelmRelease suspended while the control plane is not ready", suspended(true))
	setReady(true)
	waitFor(t, 2*time.Minute, "every HelmRelease resumed once the control plane is ready", suspended(false))
	setReady(false)
	waitFor(t, 2*time.Minute, "every HelmRelease suspended again", suspended(true))
}

func (e *env) badClaims(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	mk := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster",
			"metadata": map[string]any{"name": name, "namespace": demoNS},
			"spec":     spec,
		}}
		return u
	}
	group := func(extra map[string]any) map[string]any {
		g := map[string]any{"minReplicas": int64(0), "maxReplicas": int64(3), "instanceType": "u1.medium", "diskSize": "20Gi"}
		for k, v := range extra {
			g[k] = v
		}
		return map[string]any{"nodeGroups": map[string]any{"md0": g}}
	}
	rejected := []struct {
		name, want string
		spec       map[string]any
	}{
		{"min-above-max", "minReplicas must be less than or equal to maxReplicas", group(map[string]any{"minReplicas": int64(5), "maxReplicas": int64(2)})},
		{"ephemeral-storage", "diskSize", group(map[string]any{"ephemeralStorage": "10Gi"})},
		{"bad-expose", "exposeMethod", map[string]any{"addons": map[string]any{"ingressNginx": map[string]any{"enabled": true, "exposeMethod": "Bogus"}}}},
		{"half-resources", "resources.cpu and resources.memory must be set together", group(map[string]any{"resources": map[string]any{"cpu": "2"}})},
	}
	for _, r := range rejected {
		err := apply(ctx, e.c, mk("bad-"+r.name, r.spec))
		if err == nil {
			errorf(t, "claim bad-%s was admitted; want a rejection mentioning %q", r.name, r.want)
			continue
		}
		if !strings.Contains(err.Error(), r.want) {
			errorf(t, "claim bad-%s rejected with %q; want it to mention %q", r.name, err, r.want)
		}
	}
	if err := mergePatch(ctx, e.c, gvkClaim, demoNS, demo, `{"spec":{"storageClass":"other"}}`); err == nil || !strings.Contains(err.Error(), "storageClass is immutable") {
		errorf(t, "changing storageClass of the demo claim: want rejection 'storageClass is immutable', got %v", err)
	}

	// Admitted, but the workers function answers Fatal: the instance type
	// does not exist.
	bad := mk("bad-fatal", group(map[string]any{"instanceType": "e2e-no-such-type"}))
	e.must(t, apply(ctx, e.c, bad), "apply claim bad-fatal")
	// Crossplane reports a Fatal result on the XR as Synced=False with the
	// function's message. A claim's own Synced condition only covers the
	// claim-to-XR sync (Crossplane copies no XR Synced to it), so on the
	// claim the message must arrive as a Warning event or a condition the
	// function targets at the claim.
	waitFor(t, 2*time.Minute, "XR of claim bad-fatal Synced=False naming the missing instance type", func(ctx context.Context) (bool, string, error) {
		xr, err := e.xrName(ctx, demoNS, "bad-fatal")
		if err != nil {
			return false, "", err
		}
		u, err := get(ctx, e.c, gvkXR, "", xr)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(u, "Synced")
		return s == "False" && strings.Contains(m, "e2e-no-such-type"), fmt.Sprintf("XR Synced=%s %s %q", s, r, m), nil
	})
	var how string
	waitFor(t, time.Minute, "claim bad-fatal surfacing the Fatal message (Warning event or condition)", func(ctx context.Context) (bool, string, error) {
		cl, err := get(ctx, e.c, gvkClaim, demoNS, "bad-fatal")
		if err != nil {
			return false, "", err
		}
		conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["status"] == "False" && strings.Contains(fmt.Sprint(m["message"]), "e2e-no-such-type") {
				how = fmt.Sprintf("claim condition %v=False: %v", m["type"], m["message"])
				return true, "", nil
			}
		}
		evs := &corev1.EventList{}
		if err := e.c.List(ctx, evs, client.InNamespace(demoNS)); err != nil {
			return false, "", err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == gvkClaim.Kind && ev.InvolvedObject.Name == "bad-fatal" &&
				ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, "e2e-no-such-type") {
				how = "claim Warning event " + ev.Reason + ": " + ev.Message
				return true, "", nil
			}
		}
		s, r, m := condition(cl, "Synced")
		return false, fmt.Sprintf("claim Synced=%s %s %q, conditions %v, no Warning event naming the type", s, r, m, conds), nil
	})
	t.Logf("Fatal surfaced as %s", how)
	objs, err := e.composed(ctx, "bad-fatal")
	e.must(t, err, "list")
	if len(objs) > 0 {
		var names []string
		for i := range objs {
			names = append(names, describe(&objs[i]))
		}
		errorf(t, "a Fatal pipeline composed %d objects: %s", len(objs), strings.Join(names, ", "))
	}
	e.must(t, e.c.Delete(ctx, bad), "delete claim bad-fatal")
	waitFor(t, deleteBound, "claim bad-fatal gone", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkClaim, demoNS, "bad-fatal")
		return kerrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
	})
}

// fault runs a fault, waits for reconciliation to resume, checks that no
// composed object was lost or re-created, then proves a claim change still
// goes through.
func (e *env) fault(t *testing.T, maxSize string, do func(t *testing.T)) {
	e.reconciles(t, "workers", 2, time.Minute)
	before := e.snapshot(t, demo)
	do(t)
	e.reconciles(t, "workers", 3, 3*time.Minute)
	after := e.snapshot(t, demo)
	e.compare(t, "after the fault", before, after, false)
	e.patchClaim(t, demoNS, demo, fmt.Sprintf(`{"spec":{"nodeGroups":{"md0":{"maxReplicas":%s}}}}`, maxSize))
	e.waitMaxSize(t, maxSize)
}

func (e *env) faultFunction(t *testing.T) {
	e.fault(t, "6", func(t *testing.T) {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		e.must(t, e.nudge(ctx, demoNS, demo), "nudge")
		p := e.fns["workers"]
		pid := p.pid()
		p.kill()
		t.Logf("killed function-workers (pid %d)", pid)
		// Reconciles fail while it is down; nothing may be deleted.
		time.Sleep(5 * time.Second)
		e.must(t, p.start(), "restart function-workers")
		e.must(t, e.waitHTTP(p, fmt.Sprintf("http://127.0.0.1:%d/metrics", e.fnMetricsPorts["workers"]), nil, 30*time.Second), "function-workers up")
	})
}

func (e *env) faultAPIServer(t *testing.T) {
	e.fault(t, "7", func(t *testing.T) {
		pid := e.apiserver.pid()
		e.apiserver.stop()
		t.Logf("stopped kube-apiserver (pid %d)", pid)
		time.Sleep(3 * time.Second)
		e.must(t, e.apiserver.start(), "restart kube-apiserver")
		e.must(t, e.waitAPIServer(90*time.Second), "kube-apiserver ready")
	})
}

func (e *env) faultCore(t *testing.T) {
	e.fault(t, "8", func(t *testing.T) {
		pid := e.core.pid()
		e.core.stop()
		t.Logf("stopped crossplane core (pid %d)", pid)
		e.must(t, e.core.start(), "restart crossplane core")
	})
}

// deleteAndWait deletes a claim and waits, within deleteBound, until the
// claim, its XR and every object labelled with the cluster are gone.
func (e *env) deleteAndWait(t *testing.T, ns, name string) {
	e.deleteClusterAndWait(t, e.c, gvkClaim, ns, name)
}

// inUseWriters says, for an object missing the in-use label, which field
// managers last wrote its labels and when (metadata.managedFields), so a
// wait on a Usage says who took the label away.
func inUseWriters(obj *unstructured.Unstructured) string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		if m.FieldsV1 == nil || !strings.Contains(string(m.FieldsV1.Raw), `"f:labels"`) {
			continue
		}
		at := ""
		if m.Time != nil {
			at = m.Time.UTC().Format("15:04:05")
		}
		out = append(out, fmt.Sprintf("%s %s %s", m.Manager, m.Operation, at))
	}
	return fmt.Sprintf("resourceVersion %s, labels written by [%s]", obj.GetResourceVersion(), strings.Join(out, "; "))
}

// deleteClusterAndWait deletes the claim or TenantCluster (gvk) ns/name
// through c (foreground), and waits, within deleteBound, until it and
// every object labelled with the cluster are gone, in the Usages' order
// (trackDeletion). A Tenant's objects labelled with the cluster (the CSI
// controller's ClusterRoleBinding) follow the Tenant's reconciles and are
// left to the caller.
func (e *env) deleteClusterAndWait(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	cl, err := get(ctx, e.c, gvk, ns, name)
	e.must(t, err, gvk.Kind)
	// The deletion order holds once Crossplane's Usage controller has put
	// each Usage in effect (labelled the used object crossplane.io/in-use,
	// which the Usage webhook looks for); a claim deleted before that has
	// no order to keep.
	// The Usage controller puts a missing label back at its next poll of
	// the Usage (core's --poll-interval, a minute).
	waitFor(t, 90*time.Second, fmt.Sprintf("the Usages of claim %s/%s in effect", ns, name), func(ctx context.Context) (bool, string, error) {
		usages, err := list(ctx, e.c, gvkUsage, client.InNamespace(ns), client.MatchingLabels{labelCluster: name})
		if err != nil {
			return false, "", err
		}
		var pending []string
		for _, u := range usages {
			apiVersion, _, _ := unstructured.NestedString(u.Object, "spec", "of", "apiVersion")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "of", "kind")
			used, _, _ := unstructured.NestedString(u.Object, "spec", "of", "resourceRef", "name")
			obj, err := get(ctx, e.c, schema.FromAPIVersionAndKind(apiVersion, kind), ns, used)
			switch {
			case err != nil:
				pending = append(pending, fmt.Sprintf("%s (%s %s: %v)", u.GetName(), kind, used, err))
			case obj.GetLabels()["crossplane.io/in-use"] != "true":
				pending = append(pending, fmt.Sprintf("%s (%s %s: %s)", u.GetName(), kind, used, inUseWriters(obj)))
			}
		}
		return len(usages) > 0 && len(pending) == 0, fmt.Sprintf("%d Usages, not in effect: %v", len(usages), pending), nil
	})
	order := e.trackDeletion(ns, name)
	start := time.Now()
	e.must(t, c.Delete(ctx, cl, client.PropagationPolicy(metav1.DeletePropagationForeground)), "delete "+gvk.Kind)
	waitFor(t, deleteBound, fmt.Sprintf("%s %s/%s and everything labelled %s=%s gone", gvk.Kind, ns, name, labelCluster, name), func(ctx context.Context) (bool, string, error) {
		left, err := labelled(ctx, e.cfg, e.c, labelCluster+"="+name)
		if err != nil {
			return false, "", err
		}
		_, cerr := get(ctx, e.c, gvk, ns, name)
		var names []string
		for i := range left {
			if ref := metav1.GetControllerOf(&left[i]); ref != nil && ref.Kind == gvkTenant.Kind {
				continue
			}
			names = append(names, describe(&left[i]))
		}
		if !kerrors.IsNotFound(cerr) {
			names = append(names, "the "+gvk.Kind)
		}
		return len(names) == 0, fmt.Sprintf("%d left: %s", len(names), strings.Join(names, ", ")), nil
	})
	t.Logf("%s %s/%s and all its objects gone %.1fs after the delete", gvk.Kind, ns, name, time.Since(start).Seconds())
	order.check(t, start)
}

// deletionOrder records when each object that docs/architecture.md orders was first seen
// gone, polling every 100ms from before the claim's deletion.
type deletionOrder struct {
	stop chan struct{}
	done chan struct{}
	gone map[string]time.Time
}

func (e *env) trackDeletion(ns, n string) *deletionOrder {
	objs := []tracked{
		{"MachineDeployment", gvkMD, ns, n + "-md0"},
		{"KamajiControlPlane", gvkKCP, ns, n},
		{"EtcdCluster", gvkEtcd, ns, n + "-etcd"},
	}
	for _, r := range baseReleases {
		objs = append(objs, tracked{"HelmRelease " + r, gvkHR, ns, n + "-" + r})
	}
	objs = append(objs, tracked{"etcd CA Secret", gvkSecret, ns, n + "-etcd-ca"})
	return e.trackGone(objs)
}

// tracked is an object whose deletion a deletionOrder times, under key.
type tracked struct {
	key      string
	gvk      schema.GroupVersionKind
	ns, name string
}

// trackGone records when each of objs that exists now is first seen gone,
// polling every 100ms until check or gone stops it.
func (e *env) trackGone(objs []tracked) *deletionOrder {
	d := &deletionOrder{stop: make(chan struct{}), done: make(chan struct{}), gone: map[string]time.Time{}}
	// Track only what exists before the delete.
	var present []tracked
	for _, o := range objs {
		ctx, cancel := ctxT(5 * time.Second)
		if _, err := get(ctx, e.c, o.gvk, o.ns, o.name); err == nil {
			present = append(present, o)
		}
		cancel()
	}
	objs = present
	go func() {
		defer close(d.done)
		for {
			for _, o := range objs {
				if _, ok := d.gone[o.key]; ok {
					continue
				}
				ctx, cancel := ctxT(5 * time.Second)
				_, err := get(ctx, e.c, o.gvk, o.ns, o.name)
				cancel()
				if kerrors.IsNotFound(err) {
					d.gone[o.key] = time.Now()
				}
			}
			select {
			case <-d.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return d
}

// stopped stops the tracking and returns when each tracked object was
// first seen gone.
func (d *deletionOrder) stopped() map[string]time.Time {
	close(d.stop)
	<-d.done
	return d.gone
}

// check stops the tracking and asserts the order the Composition declares
// with Usages: add-on HelmReleases and node groups go before the
// control plane, etcd and its PKI after it.
func (d *deletionOrder) check(t *testing.T, start time.Time) {
	t.Helper()
	d.stopped()
	at := func(k string) string {
		g, ok := d.gone[k]
		if !ok {
			return k + " (never seen gone)"
		}
		return fmt.Sprintf("%s +%.1fs", k, g.Sub(start).Seconds())
	}
	var seq []string
	for k := range d.gone {
		seq = append(seq, k)
	}
	sort.Slice(seq, func(i, j int) bool { return d.gone[seq[i]].Before(d.gone[seq[j]]) })
	for i := range seq {
		seq[i] = at(seq[i])
	}
	t.Logf("deletion order: %s", strings.Join(seq, ", "))
	before := func(first, then string) {
		f, ok1 := d.gone[first]
		g, ok2 := d.gone[then]
		if ok1 && ok2 && f.After(g) {
			errorf(t, "deletion order: %s went after %s (the Usages of docs/architecture.md want it first)", at(first), at(then))
		}
	}
	before("MachineDeployment", "KamajiControlPlane")
	for _, r := range baseReleases {
		before("HelmRelease "+r, "KamajiControlPlane")
	}
	before("KamajiControlPlane", "EtcdCluster")
	before("KamajiControlPlane", "etcd CA Secret")
}

func (e *env) deleteDeadTenant(t *testing.T) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	ns, n := "tenant-dead", "dead"
	e.must(t, e.ensureNamespace(ctx, ns), "namespace")
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster",
		"metadata": map[string]any{"name": n, "namespace": ns},
		"spec":     map[string]any{"addons": map[string]any{"certManager": map[string]any{"enabled": true}}},
	}}
	e.must(t, apply(ctx, e.c, claim), "apply claim dead")
	e.waitComposed(t, ns, n, withCertManager(), false)
	ctx, cancel = ctxT(time.Minute) // waitComposed may have taken the first one
	defer cancel()
	// The kubeconfig Secret Kamaji would have written, then removed: the
	// tenant API is unreachable for Flux from now on.
	// Kamaji e51909fa internal/resources/kubeconfig.go:70-83, 174-180, 226-243.
	sec := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": n + "-admin-kubeconfig", "namespace": ns,
			"labels": kamajiLabels(n, "admin-kubeconfig")},
		"stringData": map[string]any{"super-admin.svc": "apiVersion: v1\nkind: Config\n"},
	}}
	e.must(t, apply(ctx, e.c, sec), "kubeconfig Secret")
	e.must(t, e.c.Delete(ctx, sec), "delete kubeconfig Secret")
	e.tenantCreatedObjects(t, ns, n)
	e.deleteAndWait(t, ns, n)
}

// tenantCreatedObjects creates in ns what the cluster's controllers would
// create there, labelled with the cluster as they label them — a
// DataVolume (the KubeVirt CSI driver, for a tenant PersistentVolume), a
// Service (the KubeVirt cloud controller, for a tenant LoadBalancer), a
// HelmChart (helm-controller, from a release's chart template), an etcd
// member's claim (the etcd StatefulSet, from the EtcdCluster's claim
// template) and the etcd client CA Secret (cert-manager, from a
// Certificate's secretTemplate) — and waits until the functions have composed each one (Crossplane's
// composite label and the XR as controller), so deleting the claim deletes
// them.
func (e *env) tenantCreatedObjects(t *testing.T, ns, n string) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	labels := map[string]any{labelCluster: n}
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": "pvc-0a1b2c3d", "namespace": ns, "labels": labels},
			"spec":     map[string]any{"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}},
		}},
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "a0b1c2d3e4f5", "namespace": ns, "labels": labels},
			"spec":     map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"port": int64(443)}}},
		}},
		// helm-controller v1.4.3 api/v2/helmrelease_types.go:1366-1368.
		{Object: map[string]any{
			"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
			"metadata": map[string]any{"name": ns + "-" + n + "-cilium", "namespace": ns, "labels": labels},
			"spec":     map[string]any{"chart": "cilium", "sourceRef": map[string]any{"kind": "HelmRepository", "name": n + "-cilium"}},
		}},
		// Ænix etcd-operator v0.4.2 internal/controller/factory/pvc.go:41-47, statefulset.go:74-80, 103-104;
		// Kubernetes v1.36.3 pkg/controller/statefulset/stateful_set_utils.go:117-120.
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": "data-" + n + "-etcd-0", "namespace": ns, "labels": labels},
			"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
				"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
		}},
		// cert-manager v1.21.1 pkg/controller/certificates/issuing/internal/secret.go:167-170, 215-222.
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
			"metadata":   map[string]any{"name": n + "-etcd-ca", "namespace": ns, "labels": labels},
			"stringData": map[string]any{"tls.crt": "x", "tls.key": "x"},
		}},
	}
	for _, o := range objs {
		e.must(t, apply(ctx, e.c, o), "create "+describe(o))
	}
	e.must(t, e.nudge(ctx, ns, n), "nudge")
	// The bound covers Crossplane's backoff while the management
	// namespace's objects wait for their Namespace (applied in no set
	// order on the claim's first reconciles).
	waitFor(t, 4*time.Minute, "the functions to compose what the tenant's controllers created", func(ctx context.Context) (bool, string, error) {
		var pending []string
		for _, o := range objs {
			u, err := get(ctx, e.c, o.GroupVersionKind(), ns, o.GetName())
			if err != nil {
				return false, "", err
			}
			ref := metav1.GetControllerOf(u)
			if u.GetLabels()["crossplane.io/composite"] == "" || ref == nil || ref.Kind != "XKubernetesCluster" {
				pending = append(pending, describe(u))
			}
		}
		return len(pending) == 0, fmt.Sprintf("not composed yet: %v; %s", pending, e.xrSynced(ctx, ns, n)), nil
	})
}

func (e *env) deleteDemo(t *testing.T) {
	e.deleteAndWait(t, demoNS, demo)
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	for _, n := range []string{demoNS, "tenant-dead", platformNS} {
		ns := &unstructured.Unstructured{}
		ns.SetGroupVersionKind(gvkNamespace)
		ns.SetName(n)
		e.must(t, client.IgnoreNotFound(e.c.Delete(ctx, ns)), "delete namespace "+n)
	}
	waitFor(t, 2*time.Minute, "tenant namespaces gone", func(ctx context.Context) (bool, string, error) {
		for _, n := range []string{demoNS, "tenant-dead", platformNS} {
			if _, err := get(ctx, e.c, gvkNamespace, "", n); !kerrors.IsNotFound(err) {
				return false, "namespace " + n + " still there", nil
			}
		}
		return true, "", nil
	})
}

// checkManagementNamespace: claim ns/n's management namespace
// (tenantkube-<digest>, worked out by fntest.ManagementNamespace) is
// labelled for the platform, and once Kamaji wrote the admin kubeconfig
// (played: TestControllers; Kamaji e51909fa internal/resources/kubeconfig.go:226-243) holds the controllers' kubeconfig Secret the
// control-plane function rebuilt from Kamaji's: the server the
// tenant API server's Service N.NS.svc:6443, Kamaji's CA, client
// certificate and key, and nothing else.
func (e *env) checkManagementNamespace(t *testing.T, ns, n string) {
	t.Helper()
	mgmt := fntest.ManagementNamespace(ns, n)
	var copied *unstructured.Unstructured
	waitFor(t, time.Minute, "Secret "+mgmt+"/"+n+"-admin-kubeconfig", func(ctx context.Context) (bool, string, error) {
		var err error
		if copied, err = get(ctx, e.c, gvkSecret, mgmt, n+"-admin-kubeconfig"); kerrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	nsObj, err := get(ctx, e.c, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", mgmt)
	e.must(t, err, "Namespace "+mgmt)
	if l := nsObj.GetLabels(); l["tenantkube.io/management-namespace"] != "true" || l["tenantkube.io/namespace"] != ns || l["tenantkube.io/cluster"] != n {
		errorf(t, "Namespace %s labels %v", mgmt, l)
	}
	kamaji, err := get(ctx, e.c, gvkSecret, ns, n+"-admin-kubeconfig")
	e.must(t, err, "Kamaji's Secret "+n+"-admin-kubeconfig")
	load := func(u *unstructured.Unstructured) *clientcmdapi.Config {
		b64, _, _ := unstructured.NestedString(u.Object, "data", "super-admin.svc")
		raw, err := base64.StdEncoding.DecodeString(b64)
		e.must(t, err, "Secret "+u.GetNamespace()+"/"+u.GetName())
		cfg, err := clientcmd.Load(raw)
		e.must(t, err, "kubeconfig of Secret "+u.GetNamespace()+"/"+u.GetName())
		return cfg
	}
	want, got := load(kamaji), load(copied)
	wctx, gctx := want.Contexts[want.CurrentContext], got.Contexts[got.CurrentContext]
	if wctx == nil || gctx == nil || len(got.Clusters) != 1 || len(got.AuthInfos) != 1 || len(got.Contexts) != 1 {
		fatalf(t, "kubeconfigs: Kamaji's current context %v, the copy's %v with %d clusters, %d users, %d contexts; want one each", wctx, gctx, len(got.Clusters), len(got.AuthInfos), len(got.Contexts))
	}
	wc, gc := want.Clusters[wctx.Cluster], got.Clusters[gctx.Cluster]
	wu, gu := want.AuthInfos[wctx.AuthInfo], got.AuthInfos[gctx.AuthInfo]
	if gc == nil || gu == nil {
		fatalf(t, "the copy's current context names no cluster or user")
	}
	if server := "https://" + n + "." + ns + ".svc:6443"; gc.Server != server {
		errorf(t, "the copy's server %q, want %q", gc.Server, server)
	}
	if !bytes.Equal(gc.CertificateAuthorityData, wc.CertificateAuthorityData) || !bytes.Equal(gu.ClientCertificateData, wu.ClientCertificateData) || !bytes.Equal(gu.ClientKeyData, wu.ClientKeyData) {
		errorf(t, "the copy's CA, client certificate or key differ from Kamaji's")
	}
	if gu.Token != "" || gu.TokenFile != "" || gu.Exec != nil || gu.AuthProvider != nil || gc.ProxyURL != "" || gc.InsecureSkipTLSVerify {
		errorf(t, "the copy holds more than the CA, client certificate and key: %+v %+v", gc, gu)
	}
}

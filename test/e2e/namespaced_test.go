//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Crossplane v2 API live: TenantClusters, namespaced XRs a
// tenant creates with nothing but namespace-scoped RBAC, and the
// cluster-scoped Tenant the platform creates for the namespace, whose etcd
// and DataStore the namespace's clusters share.
const (
	v2NS = "tenant-v2"
	// v2User is the tenant: an impersonated user whose only permission is
	// Kubernetes' edit ClusterRole bound in v2NS by a RoleBinding.
	v2User         = "alice@tenant-v2"
	labelNamespace = "tenantkube.io/namespace"
)

var (
	gvkTenantCluster = schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "TenantCluster"}
	gvkTenant        = schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "Tenant"}
	gvkRoleBinding   = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}
)

// namespacedAPI holds what its scenarios share: they run in order on one
// environment, each leaving v2NS as the next expects it.
type namespacedAPI struct {
	e *env
	// user is a client impersonating v2User.
	user client.Client
}

// tenantDataStore is the DataStore the Tenant of ns composes and the
// namespace's TenantClusters use (docs/tenant-guide.md, "The namespaced
// API: `TenantCluster`").
func tenantDataStore(ns string) string { return "tenantkube.tenant." + ns }

// dataStoreSchema is the key prefix a cluster's control plane keeps in a
// shared DataStore, worked out as docs/architecture.md (Names) states it: "t"
// and the first 31 hex digits of sha256("<NS>/<N>").
func dataStoreSchema(ns, n string) string {
	sum := sha256.Sum256([]byte(ns + "/" + n))
	return "t" + hex.EncodeToString(sum[:])[:31]
}

// tenantCluster is examples/xr-namespaced.yaml named n in v2NS.
func (a *namespacedAPI) tenantCluster(t *testing.T, n string) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeFile(a.e.path("examples", "xr-namespaced.yaml"))
	a.e.must(t, err, "read examples/xr-namespaced.yaml")
	if len(objs) != 1 || objs[0].GroupVersionKind() != gvkTenantCluster {
		fatalf(t, "examples/xr-namespaced.yaml: want one TenantCluster")
	}
	objs[0].SetNamespace(v2NS)
	objs[0].SetName(n)
	return objs[0]
}

// tenant is examples/tenant.yaml named after v2NS (a Tenant's name is its
// namespace).
func (a *namespacedAPI) tenant(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeFile(a.e.path("examples", "tenant.yaml"))
	a.e.must(t, err, "read examples/tenant.yaml")
	if len(objs) != 1 || objs[0].GroupVersionKind() != gvkTenant {
		fatalf(t, "examples/tenant.yaml: want one Tenant")
	}
	objs[0].SetName(v2NS)
	return objs[0]
}

// may asks the API server whether v2User may verb resource in ns.
func (a *namespacedAPI) may(ctx context.Context, cs kubernetes.Interface, verb, resource, ns string) (bool, error) {
	r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: v2User, Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: "tenantkube.io", Resource: resource},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// tenantRBAC: the tenant holds only Kubernetes' edit ClusterRole in v2NS,
// which deploy/crossplane-rbac.yaml extends with the namespaced cluster
// kinds (tenantkube:aggregate-to-edit, aggregated by
// kube-controller-manager). Through its own (impersonated) client it
// creates and reads a TenantCluster in v2NS, and is forbidden a
// TenantCluster in another namespace, the TenantClusters of all
// namespaces, and any Tenant.
func (a *namespacedAPI) tenantRBAC(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	e.must(t, e.ensureNamespace(ctx, v2NS), "namespace "+v2NS)
	rb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "alice-edit", "namespace": v2NS},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": v2User}},
	}}
	e.must(t, apply(ctx, e.c, rb), "RoleBinding "+v2NS+"/alice-edit")
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")
	waitFor(t, time.Minute, "Kubernetes' edit ClusterRole to aggregate tenantkube:aggregate-to-edit", func(ctx context.Context) (bool, string, error) {
		for _, r := range []string{"tenantclusters", "kubernetesclusters"} {
			ok, err := a.may(ctx, cs, "create", r, v2NS)
			if err != nil || !ok {
				return false, fmt.Sprintf("%s may not create %s in %s yet", v2User, r, v2NS), err
			}
		}
		return true, "", nil
	})
	cfg := rest.CopyConfig(e.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: v2User, Groups: []string{"system:authenticated"}}
	a.user, err = client.New(cfg, client.Options{Scheme: e.c.Scheme()})
	e.must(t, err, "client impersonating "+v2User)

	e.must(t, apply(ctx, a.user, a.tenantCluster(t, "one")), v2User+" creates TenantCluster "+v2NS+"/one")
	got, err := get(ctx, a.user, gvkTenantCluster, v2NS, "one")
	e.must(t, err, v2User+" reads TenantCluster "+v2NS+"/one")
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "version"); v != "v1.35" {
		errorf(t, "TenantCluster %s/one as %s reads it: spec.version %q, want v1.35", v2NS, v2User, v)
	}

	forbidden := func(what string, err error) {
		t.Helper()
		if !kerrors.IsForbidden(err) {
			errorf(t, "%s as %s: want Forbidden, got %v", what, v2User, err)
		}
	}
	other := a.tenantCluster(t, "intruder")
	other.SetNamespace(demoNS)
	forbidden("create TenantCluster "+demoNS+"/intruder", apply(ctx, a.user, other))
	_, err = get(ctx, a.user, gvkTenantCluster, demoNS, "intruder")
	forbidden("get TenantCluster "+demoNS+"/intruder", err)
	_, err = list(ctx, a.user, gvkTenantCluster)
	forbidden("list TenantClusters of all namespaces", err)
	forbidden("create Tenant "+v2User, apply(ctx, a.user, a.tenant(t)))
	_, err = get(ctx, a.user, gvkTenant, "", v2NS)
	forbidden("get Tenant "+v2NS, err)
	_, err = list(ctx, a.user, gvkTenant)
	forbidden("list Tenants", err)
	for _, r := range []string{"tenants", "xkubernetesclusters"} {
		if ok, err := a.may(ctx, cs, "get", r, ""); err != nil || ok {
			errorf(t, "%s may get %s: %t, %v; want false", v2User, r, ok, err)
		}
	}
}

// waitsForTenant: without a Tenant for v2NS, TenantCluster one reports
// ControlPlaneReady=False, reason WaitingForTenantDataStore, to the tenant
// and has no KamajiControlPlane; once the platform creates the Tenant, the
// Tenant composes the DataStore and the cluster composes its control plane
// on it.
func (a *namespacedAPI) waitsForTenant(t *testing.T) {
	e := a.e
	waitFor(t, 2*time.Minute, "TenantCluster one ControlPlaneReady=False WaitingForTenantDataStore", func(ctx context.Context) (bool, string, error) {
		tc, err := get(ctx, a.user, gvkTenantCluster, v2NS, "one")
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(tc, "ControlPlaneReady")
		return s == "False" && r == "WaitingForTenantDataStore", fmt.Sprintf("ControlPlaneReady=%s %s %q", s, r, m), nil
	})
	// A reconcile after the condition: still no control plane.
	e.reconcilesOf(t, gvkTenantCluster, v2NS, "one", "control-plane", 2, time.Minute)
	ctx, cancel := ctxT(3 * time.Minute)
	defer cancel()
	if _, err := get(ctx, e.c, gvkKCP, v2NS, "one"); !kerrors.IsNotFound(err) {
		errorf(t, "KamajiControlPlane %s/one while its Tenant's DataStore does not exist: %v, want NotFound", v2NS, err)
	}
	waiting, err := e.composed(ctx, "one")
	e.must(t, err, "composed objects of one")
	var names []string
	for i := range waiting {
		names = append(names, describe(&waiting[i]))
	}
	sort.Strings(names)
	t.Logf("composed while waiting for the Tenant: %d objects %v", len(names), names)

	start := time.Now()
	e.must(t, apply(ctx, e.c, a.tenant(t)), "the platform creates Tenant "+v2NS)
	waitFor(t, 3*time.Minute, "TenantCluster one composed on the Tenant's DataStore", func(ctx context.Context) (bool, string, error) {
		if _, err := get(ctx, e.c, gvkDataStore, "", tenantDataStore(v2NS)); err != nil {
			return false, "DataStore " + tenantDataStore(v2NS) + ": " + err.Error(), nil
		}
		why, err := e.expectedClusterObjects(ctx, v2NS, "one", withCertManager(), tenantDataStore(v2NS))
		return why == "" && err == nil, why, err
	})
	t.Logf("Tenant created to TenantCluster one composed on its DataStore: %.1fs", time.Since(start).Seconds())
	waitFor(t, time.Minute, "TenantCluster one no longer waiting for its DataStore", func(ctx context.Context) (bool, string, error) {
		tc, err := get(ctx, a.user, gvkTenantCluster, v2NS, "one")
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(tc, "ControlPlaneReady")
		return r != "WaitingForTenantDataStore", fmt.Sprintf("ControlPlaneReady=%s %s %q", s, r, m), nil
	})
}

// twoClustersOneTenant: a second TenantCluster of the tenant shares the
// Tenant's DataStore under a key prefix of its own; the DataStore points at
// the Tenant's etcd in v2NS with the TLS Secrets that etcd trusts; the
// Tenant binds each cluster's CSI controller to read PersistentVolumes.
func (a *namespacedAPI) twoClustersOneTenant(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(4 * time.Minute)
	defer cancel()
	e.must(t, apply(ctx, a.user, a.tenantCluster(t, "two")), v2User+" creates TenantCluster "+v2NS+"/two")
	waitFor(t, 2*time.Minute, "TenantCluster two composed", func(ctx context.Context) (bool, string, error) {
		why, err := e.expectedClusterObjects(ctx, v2NS, "two", withCertManager(), tenantDataStore(v2NS))
		return why == "" && err == nil, why, err
	})
	tenant, err := get(ctx, e.c, gvkTenant, "", v2NS)
	e.must(t, err, "Tenant "+v2NS)

	// The KamajiControlPlanes: one DataStore, two key prefixes.
	schemas := map[string]bool{}
	for _, n := range []string{"one", "two"} {
		kcp, err := get(ctx, e.c, gvkKCP, v2NS, n)
		e.must(t, err, "KamajiControlPlane "+n)
		ds, _, _ := unstructured.NestedString(kcp.Object, "spec", "dataStoreName")
		schema, _, _ := unstructured.NestedString(kcp.Object, "spec", "dataStoreSchema")
		if ds != tenantDataStore(v2NS) || schema != dataStoreSchema(v2NS, n) {
			errorf(t, "KamajiControlPlane %s/%s: dataStoreName %q dataStoreSchema %q, want %q %q", v2NS, n, ds, schema, tenantDataStore(v2NS), dataStoreSchema(v2NS, n))
		}
		schemas[schema] = true
	}
	if len(schemas) != 2 {
		errorf(t, "the two clusters share a dataStoreSchema: %v", schemas)
	}

	// The Tenant's etcd and its DataStore.
	etcds, err := list(ctx, e.c, gvkEtcd, client.InNamespace(v2NS))
	e.must(t, err, "EtcdClusters of "+v2NS)
	if len(etcds) != 1 {
		fatalf(t, "%d EtcdClusters in %s, want the Tenant's only", len(etcds), v2NS)
	}
	etcd := &etcds[0]
	if controllerUID(etcd) != string(tenant.GetUID()) {
		errorf(t, "EtcdCluster %s/%s is controlled by %q, not by the Tenant", v2NS, etcd.GetName(), controllerUID(etcd))
	}
	// No cluster name (at most 32 characters) nor "<N>-…" can equal the
	// etcd's name or a name derived from it.
	if run, _, _ := strings.Cut(etcd.GetName(), "-"); len(run) <= 32 {
		errorf(t, "EtcdCluster %s: its name starts with %q, a run of %d characters without '-'; want more than 32", etcd.GetName(), run, len(run))
	}
	ds, err := get(ctx, e.c, gvkDataStore, "", tenantDataStore(v2NS))
	e.must(t, err, "DataStore "+tenantDataStore(v2NS))
	if controllerUID(ds) != string(tenant.GetUID()) {
		errorf(t, "DataStore %s is controlled by %q, not by the Tenant", ds.GetName(), controllerUID(ds))
	}
	etcdTLS := func(k string) string {
		v, _, _ := unstructured.NestedString(etcd.Object, "spec", "security", "tls", k)
		return v
	}
	// The etcd-operator serves the members' clients on the Service named
	// after the EtcdCluster, port 2379.
	want := map[string]any{
		"driver":    "etcd",
		"endpoints": []any{etcd.GetName() + "." + v2NS + ".svc:2379"},
		"tlsConfig": map[string]any{
			"certificateAuthority": map[string]any{
				"certificate": map[string]any{"secretReference": map[string]any{"name": etcdTLS("clientTrustedCASecret"), "namespace": v2NS, "keyPath": "tls.crt"}},
				"privateKey":  map[string]any{"secretReference": map[string]any{"name": etcdTLS("clientTrustedCASecret"), "namespace": v2NS, "keyPath": "tls.key"}},
			},
			"clientCertificate": map[string]any{
				"certificate": map[string]any{"secretReference": map[string]any{"name": etcdTLS("clientSecret"), "namespace": v2NS, "keyPath": "tls.crt"}},
				"privateKey":  map[string]any{"secretReference": map[string]any{"name": etcdTLS("clientSecret"), "namespace": v2NS, "keyPath": "tls.key"}},
			},
		},
	}
	spec, _, _ := unstructured.NestedMap(ds.Object, "spec")
	for k, w := range want {
		if fmt.Sprint(spec[k]) != fmt.Sprint(w) {
			errorf(t, "DataStore %s spec.%s:\n  got  %v\n  want %v", ds.GetName(), k, spec[k], w)
		}
	}
	// Each Secret the DataStore and etcd name is written by a Certificate
	// the Tenant composed in v2NS.
	certs, err := list(ctx, e.c, gvkCertificate, client.InNamespace(v2NS))
	e.must(t, err, "Certificates of "+v2NS)
	written := map[string]bool{}
	for i := range certs {
		if controllerUID(&certs[i]) == string(tenant.GetUID()) {
			s, _, _ := unstructured.NestedString(certs[i].Object, "spec", "secretName")
			written[s] = true
		}
	}
	for _, k := range []string{"clientTrustedCASecret", "clientSecret", "serverSecret", "peerTrustedCASecret", "peerSecret"} {
		if !written[etcdTLS(k)] {
			errorf(t, "EtcdCluster %s security.tls.%s %q is not the secretName of a Certificate the Tenant composed (%v)", etcd.GetName(), k, etcdTLS(k), written)
		}
	}

	// The CSI controllers' ClusterRoleBindings, one per cluster, composed by
	// the Tenant from its required list of the namespace's TenantClusters
	// (read at its next reconcile).
	start := time.Now()
	for _, n := range []string{"one", "two"} {
		a.waitCSIBinding(t, n, string(tenant.GetUID()), true)
	}
	t.Logf("both CSI ClusterRoleBindings present %.1fs after TenantCluster two converged", time.Since(start).Seconds())
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")
	sa := "system:serviceaccount:" + v2NS + ":two-kcsi-controller"
	for verb, want := range map[string]bool{"get": true, "list": false} {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + v2NS, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "persistentvolumes", Name: "pvc-infra"},
		}}, metav1.CreateOptions{})
		e.must(t, err, "SubjectAccessReview")
		if r.Status.Allowed != want {
			errorf(t, "%s may %s persistentvolumes: %t, want %t", sa, verb, r.Status.Allowed, want)
		}
	}
}

// waitCSIBinding waits until the ClusterRoleBinding of cluster n's CSI
// controller exists (present) as the claim path composes it, controlled
// by the Tenant (tenantUID), or is gone (!present).
func (a *namespacedAPI) waitCSIBinding(t *testing.T, n, tenantUID string, present bool) {
	t.Helper()
	name := "tenantkube:kcsi-controller:" + v2NS + "." + n
	what := "ClusterRoleBinding " + name + " gone"
	if present {
		what = "ClusterRoleBinding " + name
	}
	waitFor(t, 2*time.Minute, what, func(ctx context.Context) (bool, string, error) {
		crb, err := get(ctx, a.e.c, gvkClusterRoleBinding, "", name)
		if kerrors.IsNotFound(err) {
			return !present, "not found", nil
		}
		if err != nil || !present {
			return false, "present", err
		}
		role, _, _ := unstructured.NestedString(crb.Object, "roleRef", "name")
		subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
		var got []string
		for _, s := range subjects {
			m, _ := s.(map[string]any)
			got = append(got, fmt.Sprintf("%v %v/%v", m["kind"], m["namespace"], m["name"]))
		}
		want := []string{"ServiceAccount " + v2NS + "/" + n + "-kcsi-controller"}
		switch {
		case role != "tenantkube:kcsi-persistentvolumes":
			return false, "", fmt.Errorf("%s binds %q, want tenantkube:kcsi-persistentvolumes", name, role)
		case fmt.Sprint(got) != fmt.Sprint(want):
			return false, "", fmt.Errorf("%s subjects %v, want %v", name, got, want)
		case crb.GetLabels()[labelNamespace] != v2NS || crb.GetLabels()[labelCluster] != n:
			return false, "", fmt.Errorf("%s labels %v", name, crb.GetLabels())
		case controllerUID(crb) != tenantUID:
			return false, "", fmt.Errorf("%s is controlled by %q, not by the Tenant %s", name, controllerUID(crb), tenantUID)
		}
		return true, "", nil
	})
}

// changeReachesMachineDeployment: the tenant raises a node group's
// minReplicas of TenantCluster one; its MachineDeployment follows (the
// autoscaler's min-size annotation), cluster two's does not move.
func (a *namespacedAPI) changeReachesMachineDeployment(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	two, err := get(ctx, e.c, gvkMD, v2NS, "two-md0")
	e.must(t, err, "MachineDeployment two-md0")
	e.must(t, mergePatch(ctx, a.user, gvkTenantCluster, v2NS, "one", `{"spec":{"nodeGroups":{"md0":{"minReplicas":1}}}}`),
		v2User+" raises minReplicas of TenantCluster one")
	waitFor(t, 2*time.Minute, "MachineDeployment one-md0 min-size 1", func(ctx context.Context) (bool, string, error) {
		md, err := get(ctx, e.c, gvkMD, v2NS, "one-md0")
		if err != nil {
			return false, "", err
		}
		got := md.GetAnnotations()["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"]
		return got == "1", "min-size " + got, nil
	})
	after, err := get(ctx, e.c, gvkMD, v2NS, "two-md0")
	e.must(t, err, "MachineDeployment two-md0")
	if after.GetGeneration() != two.GetGeneration() || after.GetAnnotations()["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] != "0" {
		errorf(t, "MachineDeployment two-md0 changed with cluster one: generation %d -> %d, annotations %v",
			two.GetGeneration(), after.GetGeneration(), after.GetAnnotations())
	}
}

// deleteOneCluster: the tenant deletes TenantCluster one; it and its
// objects go within deleteBound, node groups and add-ons before the
// control plane (the namespaced Usages); the Tenant's etcd and DataStore
// and cluster two stay; the Tenant drops cluster one's CSI binding.
func (a *namespacedAPI) deleteOneCluster(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(3 * time.Minute)
	defer cancel()
	tenant, err := get(ctx, e.c, gvkTenant, "", v2NS)
	e.must(t, err, "Tenant "+v2NS)
	before := e.tenantObjects(t, v2NS, "two")
	shared := a.tenantShared(t)
	start := time.Now()
	e.deleteClusterAndWait(t, a.user, gvkTenantCluster, v2NS, "one")
	a.waitCSIBinding(t, "one", string(tenant.GetUID()), false)
	waitFor(t, time.Minute, "no Usage of cluster one left in "+v2NS, func(ctx context.Context) (bool, string, error) {
		us, err := list(ctx, e.c, gvkUsage, client.InNamespace(v2NS), client.MatchingLabels{labelCluster: "one"})
		var names []string
		for i := range us {
			names = append(names, us[i].GetName())
		}
		return len(us) == 0 && err == nil, fmt.Sprintf("left: %v", names), err
	})
	t.Logf("the Tenant dropped cluster one's ClusterRoleBinding and Usages %.1fs after its deletion began", time.Since(start).Seconds())
	e.compare(t, "cluster two while cluster one was deleted", before, e.tenantObjects(t, v2NS, "two"), false)
	if now := a.tenantShared(t); fmt.Sprint(now) != fmt.Sprint(shared) {
		errorf(t, "the Tenant's etcd and DataStore changed while cluster one was deleted: %v -> %v", shared, now)
	}
}

// tenantShared is the UID of the Tenant's EtcdCluster and DataStore.
func (a *namespacedAPI) tenantShared(t *testing.T) []string {
	t.Helper()
	ctx, cancel := ctxT(30 * time.Second)
	defer cancel()
	etcds, err := list(ctx, a.e.c, gvkEtcd, client.InNamespace(v2NS))
	a.e.must(t, err, "EtcdClusters")
	ds, err := get(ctx, a.e.c, gvkDataStore, "", tenantDataStore(v2NS))
	a.e.must(t, err, "DataStore")
	out := []string{"DataStore " + string(ds.GetUID())}
	for i := range etcds {
		out = append(out, "EtcdCluster "+etcds[i].GetName()+" "+string(etcds[i].GetUID()))
	}
	return out
}

// deleteTenantHeld: the platform deletes the Tenant while cluster two
// still runs on its etcd. The Usage of the Tenant by the cluster's control
// plane makes Crossplane's webhook refuse the deletion (409) and nothing of
// the Tenant changes; once the tenant deletes cluster two, the cluster
// goes in order, Crossplane replays the Tenant's deletion and the Tenant
// goes with everything it composed, the etcd and DataStore after the
// control plane, each within deleteBound.
func (a *namespacedAPI) deleteTenantHeld(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	tenant, err := get(ctx, e.c, gvkTenant, "", v2NS)
	e.must(t, err, "Tenant "+v2NS)
	etcds, err := list(ctx, e.c, gvkEtcd, client.InNamespace(v2NS))
	e.must(t, err, "EtcdClusters")
	if len(etcds) != 1 {
		fatalf(t, "%d EtcdClusters in %s, want 1", len(etcds), v2NS)
	}
	etcdName := etcds[0].GetName()
	// The Tenant's objects (its labels) by UID.
	composedBy := func() map[string]string {
		objs, err := labelled(ctx, e.cfg, e.c, labelNamespace+"="+v2NS)
		e.must(t, err, "objects labelled "+labelNamespace+"="+v2NS)
		out := map[string]string{}
		for i := range objs {
			state := string(objs[i].GetUID())
			if objs[i].GetDeletionTimestamp() != nil {
				state += " deleting"
			}
			out[describe(&objs[i])] = state
		}
		return out
	}
	// The Usages of the Tenant by the served clusters' control planes are
	// in effect (the Tenant labelled in use) before the delete.
	waitFor(t, 2*time.Minute, "the Tenant labelled crossplane.io/in-use", func(ctx context.Context) (bool, string, error) {
		u, err := get(ctx, e.c, gvkTenant, "", v2NS)
		if err != nil {
			return false, "", err
		}
		return u.GetLabels()["crossplane.io/in-use"] == "true", fmt.Sprintf("labels %v", u.GetLabels()), nil
	})
	before := composedBy()
	err = e.c.Delete(ctx, tenant, client.PropagationPolicy(metav1.DeletePropagationForeground))
	if err == nil || !strings.Contains(err.Error(), "nousages.protection.crossplane.io") {
		fatalf(t, "deleting Tenant %s while cluster two runs: want a denial by the Usage webhook, got %v", v2NS, err)
	}
	t.Logf("denied as expected: %v", err)
	// Refused: for a while nothing of the Tenant changes.
	time.Sleep(5 * time.Second)
	if diff := fmt.Sprint(composedBy()); diff != fmt.Sprint(before) {
		errorf(t, "the Tenant's objects changed after its deletion was refused:\n  before %v\n  after  %v", before, diff)
	}
	if u, err := get(ctx, e.c, gvkTenant, "", v2NS); err != nil || u.GetDeletionTimestamp() != nil {
		fatalf(t, "Tenant %s after the refused deletion: %v, deletionTimestamp %v", v2NS, err, u.GetDeletionTimestamp())
	}

	// The tenant deletes its last cluster; the Tenant follows.
	order := e.trackGone([]tracked{
		{"KamajiControlPlane two", gvkKCP, v2NS, "two"},
		{"EtcdCluster", gvkEtcd, v2NS, etcdName},
		{"DataStore", gvkDataStore, "", tenantDataStore(v2NS)},
		{"Tenant", gvkTenant, "", v2NS},
	})
	deleted := time.Now()
	e.deleteClusterAndWait(t, a.user, gvkTenantCluster, v2NS, "two")
	waitFor(t, deleteBound, "the Tenant and everything it composed gone", func(ctx context.Context) (bool, string, error) {
		left, err := labelled(ctx, e.cfg, e.c, labelNamespace+"="+v2NS)
		if err != nil {
			return false, "", err
		}
		var names []string
		for i := range left {
			names = append(names, describe(&left[i]))
		}
		if _, err := get(ctx, e.c, gvkTenant, "", v2NS); !kerrors.IsNotFound(err) {
			names = append(names, "the Tenant")
		}
		return len(names) == 0, fmt.Sprintf("%d left: %s", len(names), strings.Join(names, ", ")), nil
	})
	t.Logf("Tenant and its objects gone %.1fs after the deletion of its last cluster began", time.Since(deleted).Seconds())
	gone := order.stopped()
	var seq []string
	for k, at := range gone {
		seq = append(seq, fmt.Sprintf("%s +%.1fs", k, at.Sub(deleted).Seconds()))
	}
	sort.Strings(seq)
	t.Logf("gone after the deletion of cluster two began: %s", strings.Join(seq, ", "))
	k, ok1 := gone["KamajiControlPlane two"]
	for _, used := range []string{"EtcdCluster", "DataStore"} {
		if u, ok2 := gone[used]; !ok1 || !ok2 || u.Before(k) {
			errorf(t, "the %s went at %v, the KamajiControlPlane using it at %v (both seen gone: %t, %t); want it after", used, u, k, ok1, ok2)
		}
	}
	nsObj := &unstructured.Unstructured{}
	nsObj.SetGroupVersionKind(gvkNamespace)
	nsObj.SetName(v2NS)
	e.must(t, client.IgnoreNotFound(e.c.Delete(ctx, nsObj)), "delete namespace "+v2NS)
}

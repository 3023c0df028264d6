package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// tenantCall is one request for a Tenant XR named name (the namespace)
// with spec and input (YAML, "" for none), observed composed resources and
// required resources by key (a key with no objects: answered with none).
type tenantCall struct {
	name, spec, input string
	uid, created      string
	observed          map[string]string
	required          map[string][]string
}

func (c tenantCall) request(t *testing.T) *fnv1.RunFunctionRequest {
	t.Helper()
	meta := map[string]any{"name": c.name}
	if c.uid != "" {
		meta["uid"] = c.uid
	}
	if c.created != "" {
		meta["creationTimestamp"] = c.created
	}
	xr := map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "Tenant", "metadata": meta}
	if c.spec != "" {
		xr["spec"] = fntest.YAMLStruct(t, c.spec).AsMap()
	}
	s, err := structpb.NewStruct(xr)
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}, Desired: &fnv1.State{}}
	if c.input != "" {
		req.Input = fntest.YAMLStruct(t, c.input)
	}
	for name, y := range c.observed {
		if req.Observed.Resources == nil {
			req.Observed.Resources = map[string]*fnv1.Resource{}
		}
		req.Observed.Resources[name] = &fnv1.Resource{Resource: fntest.YAMLStruct(t, y)}
	}
	for key, objs := range c.required {
		if req.RequiredResources == nil {
			req.RequiredResources = map[string]*fnv1.Resources{}
		}
		items := &fnv1.Resources{}
		for _, y := range objs {
			items.Items = append(items.Items, &fnv1.Resource{Resource: fntest.YAMLStruct(t, y)})
		}
		req.RequiredResources[key] = items
	}
	return req
}

// kcpCreated is the creationTimestamp of the KamajiControlPlanes of
// controlPlane.
const kcpCreated = "2026-12-03T10:00:00Z"

// controlPlane is the KamajiControlPlane n in ns on the DataStore ds as
// the TenantCluster n composed it (Crossplane's controller reference,
// beside Cluster API's owner reference to the Cluster n), created at
// kcpCreated.
func controlPlane(ns, n, ds string) string {
	return controlPlaneOf(ns, n, ds, kcpCreated, controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.NamespacedKind, n, true), capiOwner(n))
}

// controlPlaneOf is the KamajiControlPlane n in ns on the DataStore ds,
// created at created, with the owner references owners (YAML).
func controlPlaneOf(ns, n, ds, created string, owners ...string) string {
	return "{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: " + n + ", namespace: " + ns +
		", creationTimestamp: \"" + created + "\", labels: {app.kubernetes.io/managed-by: tenantkube, cluster.x-k8s.io/role: control-plane}, ownerReferences: [" +
		strings.Join(owners, ", ") + "]}, spec: {dataStoreName: " + ds + "}}"
}

// controllerRef is an owner reference to apiVersion/kind name, the
// controller when controller.
func controllerRef(apiVersion, kind, name string, controller bool) string {
	return fmt.Sprintf("{apiVersion: %s, kind: %s, name: %s, uid: 0a1b2c3d-0000-4000-8000-000000000001, controller: %t, blockOwnerDeletion: true}", apiVersion, kind, name, controller)
}

// capiOwner is Cluster API's owner reference to the Cluster n, which its
// Cluster controller sets on the control plane (no controller).
func capiOwner(n string) string {
	return "{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, name: " + n + ", uid: 0a1b2c3d-0000-4000-8000-000000000002}"
}

// usageYAML is an observed Usage in tenant-demo of kind/name by the
// KamajiControlPlane n, named u-<n>.
func usageYAML(n, kind, name string) string {
	return `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: u-` + n + `, namespace: tenant-demo}, spec: {of: {kind: ` + kind + `, resourceRef: {name: ` + name + `}}, by: {kind: KamajiControlPlane, resourceRef: {name: ` + n + `}}}}`
}

// tenantDS is the DataStore of the Tenant tenant-demo.
const tenantDS = "tenantkube.tenant.tenant-demo"

// TestTenantEtcdBaseIsInjective pins the naming rule of
// docs/architecture.md (Names): no name a cluster derives in NS (N, or N-<suffix> with N
// at most 32 characters) equals the tenant etcd's base or a name derived
// from it, because the base starts with more than 32 characters without
// '-'. The etcd-operator names the StatefulSet after the EtcdCluster: a
// StatefulSet name must leave room for the controller-revision-hash label
// (at most 52 characters); every other derived name is a DNS label.
func TestTenantEtcdBaseIsInjective(t *testing.T) {
	run, _, _ := strings.Cut(tenantEtcdBase, "-")
	if len(run) <= function.MaxClusterNameLength {
		t.Fatalf("the base %q starts with %d characters without '-', want more than %d", tenantEtcdBase, len(run), function.MaxClusterNameLength)
	}
	if len(tenantEtcdBase) > 52 {
		t.Errorf("the StatefulSet %q has %d characters, want at most 52", tenantEtcdBase, len(tenantEtcdBase))
	}
	var names []string
	for _, op := range []cpinput.EtcdOperator{cpinput.EtcdOperatorAenix, cpinput.EtcdOperatorCozystack} {
		n := etcdNamesOf(tenantEtcdBase, etcdOperatorOf(op))
		names = append(names, n.Cluster, n.ClientService, n.Headless, n.SelfSignedIssuer, n.PeerCA, n.PeerCAIssuer, n.ClientCA, n.ClientCAIssuer, n.Server, n.Peer, n.Client)
	}
	// Members: the StatefulSet's <cluster>-<ordinal> and the cozystack
	// operator's <cluster>-<5 random characters> (generateName).
	for i := range tkv1alpha1.MaxTenantEtcdReplicas {
		names = append(names, tenantEtcdBase+"-"+string(rune('0'+i)))
	}
	names = append(names, tenantEtcdBase+"-x7k2q")
	for _, name := range names {
		if err := function.ValidateDNSLabel(nil, name, 63); err != nil {
			t.Errorf("derived name %q: %v", name, err)
		}
		if !strings.HasPrefix(name, run) {
			t.Errorf("derived name %q does not start with the base's first run", name)
		}
	}
	// The longest cluster names that could come closest: the base's own
	// first 32 characters, as N and as the start of N-<suffix>.
	for _, clusterName := range []string{run[:function.MaxClusterNameLength], run[:function.MaxClusterNameLength] + "-etcd"} {
		for _, name := range names {
			if clusterName == name || strings.HasPrefix(name, strings.SplitN(clusterName, "-", 2)[0]+"-") {
				t.Errorf("cluster name %q meets the tenant etcd's name %q", clusterName, name)
			}
		}
	}
}

// TestTenantDefaultsAreTheInputs: a Tenant's etcd defaults are the
// control-plane input's (a claim's dedicated etcd).
func TestTenantDefaultsAreTheInputs(t *testing.T) {
	if tkv1alpha1.DefaultTenantEtcdReplicas != cpinput.DefaultEtcdReplicas || string(tkv1alpha1.DefaultTenantEtcdStorageSize) != string(cpinput.DefaultEtcdStorageSize) {
		t.Errorf("Tenant defaults %d/%s, input defaults %d/%s", tkv1alpha1.DefaultTenantEtcdReplicas, tkv1alpha1.DefaultTenantEtcdStorageSize, cpinput.DefaultEtcdReplicas, cpinput.DefaultEtcdStorageSize)
	}
}

// tenantSummary is what a test reads from a Tenant's desired state.
type tenantSummary struct {
	Composed    []string // composed-resource names, sorted
	Replicas    any
	Quota       any
	Storage     any
	Class       any
	Endpoint    any
	CASecret    any
	ClientCert  any
	Bindings    []string // ClusterRoleBinding name -> subject
	UsageOf     []string // Usage name: of kind/name(/namespace) by kind/name
	DataStore   any
	Clusters    any
	Requirement string // the KamajiControlPlanes' selector
}

func summarize(t *testing.T, rsp *fnv1.RunFunctionResponse) tenantSummary {
	t.Helper()
	var s tenantSummary
	s.Composed = fntest.DesiredNames(rsp)
	sort.Strings(s.Composed)
	if e := fntest.DesiredObject(t, rsp, nameEtcdCluster); e != nil {
		s.Replicas = fntest.Get(e, "spec", "replicas")
		s.Quota = fntest.Get(e, "spec", "options", "quota-backend-bytes")
		s.Storage = fntest.Get(e, "spec", "storage", "volumeClaimTemplate", "spec", "resources", "requests", "storage")
		s.Class = fntest.Get(e, "spec", "storage", "volumeClaimTemplate", "spec", "storageClassName")
	}
	if d := fntest.DesiredObject(t, rsp, nameDataStore); d != nil {
		s.Endpoint = fntest.Get(d, "spec", "endpoints")
		s.CASecret = fntest.Get(d, "spec", "tlsConfig", "certificateAuthority", "certificate", "secretReference", "name")
		s.ClientCert = fntest.Get(d, "spec", "tlsConfig", "clientCertificate", "certificate", "secretReference", "name")
	}
	for _, name := range s.Composed {
		o := fntest.DesiredObject(t, rsp, name)
		switch o["kind"] {
		case "ClusterRoleBinding":
			sub := fntest.Get(o, "subjects").([]any)[0].(map[string]any)
			s.Bindings = append(s.Bindings, fntest.Get(o, "metadata", "name").(string)+" -> "+sub["namespace"].(string)+"/"+sub["name"].(string)+" "+fntest.Get(o, "roleRef", "name").(string))
		case "Usage":
			of := fntest.Get(o, "spec", "of").(map[string]any)
			ref := of["resourceRef"].(map[string]any)
			ofs := of["kind"].(string) + "/" + ref["name"].(string)
			if ns, ok := ref["namespace"]; ok {
				ofs += " namespace=" + ns.(string) + ""
			}
			s.UsageOf = append(s.UsageOf, fntest.Get(o, "metadata", "namespace").(string)+"/"+fntest.Get(o, "metadata", "name").(string)+": "+ofs+" by "+
				fntest.Get(o, "spec", "by", "kind").(string)+"/"+fntest.Get(o, "spec", "by", "resourceRef", "name").(string))
		}
	}
	if xr := rsp.GetDesired().GetComposite().GetResource().AsMap(); xr != nil {
		s.DataStore = fntest.Get(xr, "status", "dataStoreName")
		s.Clusters = fntest.Get(xr, "status", "clusters")
	}
	if sel := rsp.GetRequirements().GetResources()[requiredTenantControlPlanes]; sel != nil {
		s.Requirement = sel.GetApiVersion() + " " + sel.GetKind() + " in " + sel.GetNamespace()
	}
	return s
}

// TestPlanTenant checks what a Tenant composes against values worked out
// by hand: quota-backend-bytes is 95% of the volume, rounded down (4Gi =
// 4294967296 bytes -> 4080218931.2 -> 4080218931; 1Gi = 1073741824 ->
// 1020054732.8 -> 1020054732); the DataStore dials the client Service
// <base>.<NS>.svc on etcd's client port 2379 with the client CA and client
// certificate Secrets; each TenantCluster N whose KamajiControlPlane N
// uses the Tenant's DataStore gets the CSI binding a claim's workers step
// composes (tenantkube:kcsi-controller:<NS>.<N>, subject
// N-kcsi-controller) and the Usages of the EtcdCluster, the DataStore and
// the Tenant itself by that KamajiControlPlane.
func TestPlanTenant(t *testing.T) {
	const base = "tenantkubenamespaceetcdofthetenant"
	etcdObjects := []string{"datastore", "etcd-ca", "etcd-ca-issuer", "etcd-client-cert", "etcd-peer-ca", "etcd-peer-ca-issuer", "etcd-peer-cert", "etcd-selfsigned-issuer", "etcd-server-cert", "etcdcluster"}
	with := func(extra ...string) []string {
		out := append(append([]string{}, etcdObjects...), extra...)
		sort.Strings(out)
		return out
	}
	perCluster := func(n string) []string {
		return []string{"kcsi-clusterrolebinding-" + n, "usage-datastore-by-kamajicontrolplane-" + n, "usage-etcdcluster-by-kamajicontrolplane-" + n, "usage-tenant-by-kamajicontrolplane-" + n}
	}
	endpoint := []any{base + ".tenant-demo.svc:2379"}
	// usage(n): the Usages by KamajiControlPlane n, in composed-name order
	// (datastore, etcdcluster, tenant).
	usage := func(n string) []string {
		return []string{
			"tenant-demo/" + base + "-datastore-used-by-" + n + ": DataStore/tenantkube.tenant.tenant-demo namespace= by KamajiControlPlane/" + n,
			"tenant-demo/" + base + "-used-by-" + n + ": EtcdCluster/" + base + " by KamajiControlPlane/" + n,
			"tenant-demo/" + base + "-tenant-used-by-" + n + ": Tenant/tenant-demo namespace= by KamajiControlPlane/" + n,
		}
	}
	binding := func(n string) string {
		return "tenantkube:kcsi-controller:tenant-demo." + n + " -> tenant-demo/" + n + "-kcsi-controller tenantkube:kcsi-persistentvolumes"
	}
	const req = "controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane in tenant-demo"
	secret := func(name string) string {
		return `{apiVersion: v1, kind: Secret, type: kubernetes.io/tls, metadata: {name: ` + name + `, namespace: tenant-demo}}`
	}
	type want = tenantSummary
	etcdDefaults := want{Replicas: 3.0, Quota: "4080218931", Storage: "4Gi", Endpoint: endpoint, CASecret: base + "-ca", ClientCert: base + "-client-tls", DataStore: tenantDS}
	with2 := func(w want, f func(*want)) want { f(&w); return w }
	cases := map[string]struct {
		reason string
		args   tenantCall
		want   want
	}{
		"Defaults": {
			reason: "An empty spec gets 3 members of 4Gi on the default storage class; one TenantCluster on the DataStore gets its binding and the Usages of the etcd, the DataStore and the Tenant.",
			args:   tenantCall{name: "tenant-demo", required: map[string][]string{requiredTenantControlPlanes: {controlPlane("tenant-demo", "demo", tenantDS)}}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.UsageOf, w.Clusters, w.Requirement = with(perCluster("demo")...), []string{binding("demo")}, usage("demo"), 1.0, req
			}),
		},
		"Sized": {
			reason: "The spec's replicas, size and class are used as given.",
			args:   tenantCall{name: "tenant-demo", spec: `{etcd: {replicas: 5, storageSize: 1Gi, storageClassName: fast}}`, input: `{etcd: {storageClassName: slow}}`, required: map[string][]string{requiredTenantControlPlanes: {}}},
			want: want{
				Composed: with(), Replicas: 5.0, Quota: "1020054732", Storage: "1Gi", Class: "fast", Endpoint: endpoint, CASecret: base + "-ca", ClientCert: base + "-client-tls",
				DataStore: tenantDS, Clusters: 0.0, Requirement: req,
			},
		},
		"InputStorageClass": {
			reason: "Without spec.etcd.storageClassName the input's etcd class is used.",
			args:   tenantCall{name: "tenant-demo", input: `{etcd: {storageClassName: slow}}`, required: map[string][]string{requiredTenantControlPlanes: {}}},
			want:   with2(etcdDefaults, func(w *want) { w.Composed, w.Class, w.Clusters, w.Requirement = with(), "slow", 0.0, req }),
		},
		"OnlyClustersOnTheDataStore": {
			reason: "Each TenantCluster of NS whose KamajiControlPlane uses the Tenant's DataStore gets its objects, in name order; none for a KamajiControlPlane of another namespace, one with no cluster name, or one on another DataStore (platform-shared, or a claim's dedicated <NS>.<N>) though controlled by its TenantCluster.",
			args: tenantCall{name: "tenant-demo", input: `{deletionOrder: None}`, required: map[string][]string{
				requiredTenantControlPlanes: {
					controlPlane("tenant-demo", "b", tenantDS), controlPlane("tenant-demo", "a", tenantDS), controlPlane("tenant-other", "c", tenantDS),
					controlPlane("tenant-demo", "a23456789012345678901234567890123", tenantDS), controlPlane("tenant-demo", "shared", "platform-shared"),
					controlPlane("tenant-demo", "dedicated", "tenant-demo.dedicated"),
				},
			}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.Clusters, w.Requirement = with("kcsi-clusterrolebinding-a", "kcsi-clusterrolebinding-b"), []string{binding("a"), binding("b")}, 2.0, req
			}),
		},
		"EveryEtcdDependencyProtected": {
			reason: "The five PKI Secrets and the members' claims in NS are composed for cleanup and each gets a Usage by the EtcdCluster; the client CA and client certificate Secrets get one per cluster too; other Secrets are left alone.",
			args: tenantCall{name: "tenant-demo", required: map[string][]string{
				requiredTenantControlPlanes: {controlPlane("tenant-demo", "demo", tenantDS)},
				"cleanup-secret": {secret(base + "-ca"), secret(base + "-client-tls"), secret(base + "-server-tls"), secret(base + "-peer-tls"), secret(base + "-peer-ca"),
					`{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo}}`},
				"cleanup-persistentvolumeclaim": {
					`{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-` + base + `-0, namespace: tenant-demo}}`,
					`{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-` + base + `-1, namespace: tenant-demo}}`,
				},
			}},
			want: with2(etcdDefaults, func(w *want) {
				var composed, usages []string
				for _, pvc := range []string{"data-" + base + "-0", "data-" + base + "-1"} {
					composed = append(composed, "cleanup-persistentvolumeclaim-"+pvc, "usage-persistentvolumeclaim-by-etcdcluster-"+pvc)
				}
				for _, sec := range []string{base + "-ca", base + "-client-tls", base + "-peer-ca", base + "-peer-tls", base + "-server-tls"} {
					composed = append(composed, "cleanup-secret-"+sec, "usage-secret-by-etcdcluster-"+sec)
				}
				composed = append(composed, perCluster("demo")...)
				composed = append(composed, "usage-etcd-ca-secret-by-kamajicontrolplane-demo", "usage-etcd-client-secret-by-kamajicontrolplane-demo")
				usages = append(usages, usage("demo")[0],
					"tenant-demo/"+base+"-ca-used-by-demo: Secret/"+base+"-ca by KamajiControlPlane/demo",
					"tenant-demo/"+base+"-client-tls-used-by-demo: Secret/"+base+"-client-tls by KamajiControlPlane/demo",
					usage("demo")[1],
					"tenant-demo/data-"+base+"-0-used-by-etcdcluster: PersistentVolumeClaim/data-"+base+"-0 by EtcdCluster/"+base,
					"tenant-demo/data-"+base+"-1-used-by-etcdcluster: PersistentVolumeClaim/data-"+base+"-1 by EtcdCluster/"+base)
				for _, sec := range []string{base + "-ca", base + "-client-tls", base + "-peer-ca", base + "-peer-tls", base + "-server-tls"} {
					usages = append(usages, "tenant-demo/"+sec+"-used-by-etcdcluster: Secret/"+sec+" by EtcdCluster/"+base)
				}
				usages = append(usages, usage("demo")[2])
				w.Composed, w.Bindings, w.UsageOf, w.Clusters, w.Requirement = with(composed...), []string{binding("demo")}, usages, 1.0, req
			}),
		},
		"EtcdDependenciesWithoutClusters": {
			reason: "With no cluster the etcd's Secrets and claims are still kept until the EtcdCluster is gone: deleting the Tenant deletes them after the etcd.",
			args: tenantCall{name: "tenant-demo", required: map[string][]string{
				requiredTenantControlPlanes:     {},
				"cleanup-secret":                {secret(base + "-server-tls")},
				"cleanup-persistentvolumeclaim": {`{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-` + base + `-0, namespace: tenant-demo}}`},
			}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed = with("cleanup-persistentvolumeclaim-data-"+base+"-0", "cleanup-secret-"+base+"-server-tls",
					"usage-persistentvolumeclaim-by-etcdcluster-data-"+base+"-0", "usage-secret-by-etcdcluster-"+base+"-server-tls")
				w.UsageOf = []string{"tenant-demo/data-" + base + "-0-used-by-etcdcluster: PersistentVolumeClaim/data-" + base + "-0 by EtcdCluster/" + base,
					"tenant-demo/" + base + "-server-tls-used-by-etcdcluster: Secret/" + base + "-server-tls by EtcdCluster/" + base}
				w.Clusters, w.Requirement = 0.0, req
			}),
		},
		"OnlyTenantClusterControlPlanes": {
			reason: "A KamajiControlPlane N on the Tenant's DataStore serves a cluster only when the TenantCluster N is its controller: not without owner references, with Cluster API's owner reference alone, with a TenantCluster N that is no controller, controlled by another TenantCluster, by a TenantCluster of another API group, or by an XKubernetesCluster (a claim's or a claimless XR's, the cluster a TenantCluster N yields to).",
			args: tenantCall{name: "tenant-demo", input: `{deletionOrder: None}`, required: map[string][]string{
				requiredTenantControlPlanes: {
					controlPlane("tenant-demo", "served", tenantDS),
					controlPlaneOf("tenant-demo", "orphan", tenantDS, kcpCreated),
					controlPlaneOf("tenant-demo", "capionly", tenantDS, kcpCreated, capiOwner("capionly")),
					controlPlaneOf("tenant-demo", "notcontroller", tenantDS, kcpCreated, controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.NamespacedKind, "notcontroller", false)),
					controlPlaneOf("tenant-demo", "othername", tenantDS, kcpCreated, controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.NamespacedKind, "served", true)),
					controlPlaneOf("tenant-demo", "othergroup", tenantDS, kcpCreated, controllerRef("example.com/v1alpha1", tkv1alpha1.NamespacedKind, "othergroup", true)),
					controlPlaneOf("tenant-demo", "claimed", tenantDS, kcpCreated, controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.CompositeKind, "claimed", true), capiOwner("claimed")),
				},
			}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.Clusters, w.Requirement = with("kcsi-clusterrolebinding-served"), []string{binding("served")}, 1.0, req
			}),
		},
		"ControlPlanesNotArrived": {
			reason: "Before Crossplane answers the list of KamajiControlPlanes, the per-cluster objects observed are kept and nothing new is composed for them.",
			args: tenantCall{name: "tenant-demo",
				observed: map[string]string{"usage-tenant-by-kamajicontrolplane-demo": `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: ` + base + `-tenant-used-by-demo, namespace: tenant-demo}, spec: {of: {kind: Tenant, resourceRef: {name: tenant-demo, namespace: ""}}, by: {kind: KamajiControlPlane, resourceRef: {name: demo}}}}`}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.UsageOf, w.Requirement = with("usage-tenant-by-kamajicontrolplane-demo"), usage("demo")[2:], req
			}),
		},
		"GoneClusterKeptWhileANewOneGetsItsUsages": {
			reason: "Cluster one is gone and cluster two gets its first Usages: one's observed Usages are kept this reconcile (its CSI binding goes), so the Usage of the etcd by one is not deleted in the reconcile that creates two's (the in-use label would be taken off); cluster three, served and observed, is composed as computed (its old binding replaced).",
			args: tenantCall{name: "tenant-demo",
				required: map[string][]string{requiredTenantControlPlanes: {controlPlane("tenant-demo", "two", tenantDS), controlPlane("tenant-demo", "three", tenantDS)}},
				observed: map[string]string{
					"kcsi-clusterrolebinding-three":                 `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: "tenantkube:kcsi-controller:tenant-demo.three"}, subjects: [{kind: ServiceAccount, name: three-kcsi-controller, namespace: tenant-demo}], roleRef: {name: old}}`,
					"usage-etcdcluster-by-kamajicontrolplane-three": `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: ` + base + `-used-by-three, namespace: tenant-demo}, spec: {of: {kind: EtcdCluster, resourceRef: {name: ` + base + `}}, by: {kind: KamajiControlPlane, resourceRef: {name: three}}}}`,
					"kcsi-clusterrolebinding-one":                   `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: "tenantkube:kcsi-controller:tenant-demo.one"}, subjects: [{kind: ServiceAccount, name: one-kcsi-controller, namespace: tenant-demo}], roleRef: {name: tenantkube:kcsi-persistentvolumes}}`,
					"usage-etcdcluster-by-kamajicontrolplane-one":   `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: ` + base + `-used-by-one, namespace: tenant-demo}, spec: {of: {kind: EtcdCluster, resourceRef: {name: ` + base + `}}, by: {kind: KamajiControlPlane, resourceRef: {name: one}}}}`,
				}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed = with(append(append([]string{"usage-etcdcluster-by-kamajicontrolplane-one"}, perCluster("two")...), perCluster("three")...)...)
				w.Bindings = []string{binding("three"), binding("two")}
				w.UsageOf = []string{usage("three")[0], usage("two")[0], usage("one")[1], usage("three")[1], usage("two")[1], usage("three")[2], usage("two")[2]}
				w.Clusters, w.Requirement = 2.0, req
			}),
		},
		"GoneClusterKeptUntilEveryUsageIsObserved": {
			reason: "Cluster two's etcd Usage is observed, its DataStore and Tenant Usages not yet (Crossplane stopped at an apply error): cluster one's Usages are kept.",
			args: tenantCall{name: "tenant-demo",
				required: map[string][]string{requiredTenantControlPlanes: {controlPlane("tenant-demo", "two", tenantDS)}},
				observed: map[string]string{
					"usage-tenant-by-kamajicontrolplane-one":      usageYAML("one", "Tenant", "tenant-demo"),
					"usage-etcdcluster-by-kamajicontrolplane-two": usageYAML("two", "EtcdCluster", base),
				}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.Clusters, w.Requirement = with(append([]string{"usage-tenant-by-kamajicontrolplane-one"}, perCluster("two")...)...), []string{binding("two")}, 1.0, req
				w.UsageOf = []string{usage("two")[0], usage("two")[1], "tenant-demo/u-one: Tenant/tenant-demo by KamajiControlPlane/one", usage("two")[2]}
			}),
		},
		"GoneClusterDropped": {
			reason: "Once every Usage of cluster two is observed, cluster one's objects go.",
			args: tenantCall{name: "tenant-demo",
				required: map[string][]string{requiredTenantControlPlanes: {controlPlane("tenant-demo", "two", tenantDS)}},
				observed: map[string]string{
					"usage-etcdcluster-by-kamajicontrolplane-one": usageYAML("one", "EtcdCluster", base),
					"usage-etcdcluster-by-kamajicontrolplane-two": usageYAML("two", "EtcdCluster", base),
					"usage-datastore-by-kamajicontrolplane-two":   usageYAML("two", "DataStore", tenantDS),
					"usage-tenant-by-kamajicontrolplane-two":      usageYAML("two", "Tenant", "tenant-demo"),
				}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.UsageOf, w.Clusters, w.Requirement = with(perCluster("two")...), []string{binding("two")}, usage("two"), 1.0, req
			}),
		},
		"ControlPlanesNotArrivedBindingKept": {
			reason: "Before the KamajiControlPlanes arrive, the bindings observed are kept too (never shrink).",
			args: tenantCall{name: "tenant-demo", observed: map[string]string{
				"kcsi-clusterrolebinding-demo":                 `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: "tenantkube:kcsi-controller:tenant-demo.demo"}, subjects: [{kind: ServiceAccount, name: demo-kcsi-controller, namespace: tenant-demo}], roleRef: {name: tenantkube:kcsi-persistentvolumes}}`,
				"usage-etcdcluster-by-kamajicontrolplane-demo": `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: ` + base + `-used-by-demo, namespace: tenant-demo}, spec: {of: {kind: EtcdCluster, resourceRef: {name: ` + base + `}}, by: {kind: KamajiControlPlane, resourceRef: {name: demo}}}}`,
			}},
			want: with2(etcdDefaults, func(w *want) {
				w.Composed, w.Bindings, w.UsageOf, w.Requirement = with("kcsi-clusterrolebinding-demo", "usage-etcdcluster-by-kamajicontrolplane-demo"), []string{binding("demo")}, usage("demo")[1:2], req
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run(fn, tc.args.request(t))
			if err != nil {
				t.Fatal(err)
			}
			fntest.NoFatal(t, rsp)
			if d := cmp.Diff(tc.want, summarize(t, rsp)); d != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestTenantBadInputIsFatal: a name that is no namespace and a bad spec
// are one Fatal result naming every field path and value at once.
func TestTenantBadInputIsFatal(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   tenantCall
		want   []string
	}{
		"BadName": {
			reason: "The Tenant's name is its namespace: a DNS label.",
			args:   tenantCall{name: "Tenant_Demo"},
			want:   []string{"metadata.name", `"Tenant_Demo"`},
		},
		"NameTooLong": {
			reason: "A namespace has at most 63 characters.",
			args:   tenantCall{name: strings.Repeat("a", 64)},
			want:   []string{"metadata.name", "must be at most 63 characters (is 64)"},
		},
		"EverySpecProblem": {
			reason: "Every bad field is named at once, with the name.",
			args:   tenantCall{name: "Bad_Name", spec: `{etcd: {replicas: 8, storageSize: 9Gi, storageClassName: Bad_Class}}`},
			want: []string{"metadata.name", "spec.etcd.replicas", "Invalid value: 8", "between 1 and 7", "spec.etcd.storageSize", `"9Gi"`, "at most 8Gi",
				"spec.etcd.storageClassName", `"Bad_Class"`},
		},
		"ZeroSize": {
			reason: "A member needs a volume.",
			args:   tenantCall{name: "tenant-demo", spec: `{etcd: {storageSize: "0"}}`},
			want:   []string{"spec.etcd.storageSize", `"0"`, "greater than zero"},
		},
		"EtcdDecrease": {
			reason: "The running etcd has 5 members of 8Gi: fewer members or smaller volumes are refused, naming the field, the new and the running value.",
			args:   tenantCall{name: "tenant-demo", spec: `{etcd: {replicas: 3, storageSize: 4Gi}}`, observed: map[string]string{nameEtcdCluster: runningEtcd(5, "8Gi")}},
			want:   []string{"spec.etcd.replicas", "Invalid value: 3", "running etcd's 5 members", "spec.etcd.storageSize", `"4Gi"`, "running etcd's 8Gi"},
		},
		"EtcdDecreaseInOtherUnits": {
			reason: "8000Mi is less than the running 8Gi (8192Mi): quantities are compared, not strings.",
			args:   tenantCall{name: "tenant-demo", spec: `{etcd: {replicas: 5, storageSize: 8000Mi}}`, observed: map[string]string{nameEtcdCluster: runningEtcd(5, "8Gi")}},
			want:   []string{"spec.etcd.storageSize", `"8000Mi"`, "running etcd's 8Gi"},
		},
		"EtcdDecreaseCozystack": {
			reason: "The same rule against a running etcd-operator.cozystack.io/v1alpha2 EtcdCluster (spec.storage.size).",
			args: tenantCall{name: "tenant-demo", spec: `{etcd: {replicas: 3, storageSize: 4Gi}}`, input: cozystackInput,
				observed: map[string]string{nameEtcdCluster: runningCozystackEtcd(5, "8Gi")}},
			want: []string{"spec.etcd.replicas", "Invalid value: 3", "running etcd's 5 members", "spec.etcd.storageSize", `"4Gi"`, "running etcd's 8Gi"},
		},
		"EtcdMoved": {
			reason: "The Tenant's etcd runs on etcd.aenix.io/v1alpha1: the setting naming the other operator is refused, naming the Tenant, the EtcdCluster and both operators.",
			args:   tenantCall{name: "tenant-demo", input: cozystackInput, observed: map[string]string{nameEtcdCluster: runningEtcd(3, "4Gi")}},
			want: []string{"input.etcd.operator", `"etcd-operator.cozystack.io/v1alpha2"`, "Tenant tenant-demo", "EtcdCluster tenant-demo/" + tenantEtcdBase,
				"on the etcd.aenix.io/v1alpha1 operator", "not moved to etcd-operator.cozystack.io/v1alpha2"},
		},
		"EtcdMovedBack": {
			reason: "The other way round: an etcd on the cozystack operator is not moved by the default setting.",
			args:   tenantCall{name: "tenant-demo", observed: map[string]string{nameEtcdCluster: runningCozystackEtcd(3, "4Gi")}},
			want:   []string{"input.etcd.operator", `"etcd.aenix.io/v1alpha1"`, "Tenant tenant-demo", "on the etcd-operator.cozystack.io/v1alpha2 operator", "not moved to etcd.aenix.io/v1alpha1"},
		},
		"WrongType": {
			reason: "replicas is a number.",
			args:   tenantCall{name: "tenant-demo", spec: `{etcd: {replicas: three}}`},
			want:   []string{"spec.etcd.replicas", `"three"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run(fn, tc.args.request(t))
			if err != nil {
				t.Fatal(err)
			}
			msg := fntest.FatalMessage(rsp)
			if msg == "" {
				t.Fatalf("%s\nno Fatal result", tc.reason)
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%s\na Fatal result desires %d composed resources, want the request's none", tc.reason, n)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s\nFatal %q does not mention %q", tc.reason, msg, w)
				}
			}
		})
	}
}

// runningEtcd is an observed EtcdCluster with replicas members of size.
func runningEtcd(replicas int, size string) string {
	return fmt.Sprintf(`{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, metadata: {name: x}, spec: {replicas: %d, storage: {volumeClaimTemplate: {spec: {resources: {requests: {storage: %s}}}}}}}`, replicas, size)
}

// runningCozystackEtcd is an observed etcd-operator.cozystack.io/v1alpha2
// EtcdCluster with replicas members of size.
func runningCozystackEtcd(replicas int, size string) string {
	return fmt.Sprintf(`{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: x}, spec: {version: 3.6.11, replicas: %d, storage: {size: %s}}}`, replicas, size)
}

// cozystackInput selects the etcd-operator.cozystack.io/v1alpha2 operator.
const cozystackInput = `{apiVersion: fn.tenantkube.io/v1alpha1, kind: ControlPlaneInput, etcd: {operator: etcd-operator.cozystack.io/v1alpha2}}`

// TestTenantEtcdMayGrow: the same or larger values than the running etcd's
// are no decrease.
func TestTenantEtcdMayGrow(t *testing.T) {
	for name, spec := range map[string]string{"Same": `{etcd: {replicas: 3, storageSize: 4Gi}}`, "SameInOtherUnits": `{etcd: {replicas: 3, storageSize: 4096Mi}}`, "Larger": `{etcd: {replicas: 5, storageSize: 8Gi}}`} {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run(fn, tenantCall{name: "tenant-demo", spec: spec, observed: map[string]string{nameEtcdCluster: runningEtcd(3, "4Gi")}}.request(t))
			if err != nil {
				t.Fatal(err)
			}
			fntest.NoFatal(t, rsp)
		})
	}
}

// TestTenantClusterFindsTheTenantsDataStore: the DataStore a TenantCluster
// requires is the one the Tenant of its namespace composes.
func TestTenantClusterFindsTheTenantsDataStore(t *testing.T) {
	cluster := fntest.Call{Namespaced: true, Namespace: "tenant-demo", Name: "demo"}.Run(t, fn)
	required := cluster.GetRequirements().GetResources()[requiredTenantDataStore].GetMatchName()
	tenant, err := fntest.Run(fn, tenantCall{name: "tenant-demo"}.request(t))
	if err != nil {
		t.Fatal(err)
	}
	composed := fntest.Get(fntest.DesiredObject(t, tenant, nameDataStore), "metadata", "name")
	if required == "" || composed != required {
		t.Errorf("the TenantCluster requires DataStore %q, the Tenant composes %v", required, composed)
	}
}

// TestTenantDataStoreCondition: DataStoreReady follows the observed etcd,
// then the DataStore.
func TestTenantDataStoreCondition(t *testing.T) {
	etcd := func(s string) string {
		return `{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, metadata: {name: x}, status: {conditions: [{type: Ready, status: "` + s + `"}]}}`
	}
	cases := map[string]struct {
		reason   string
		observed map[string]string
		want     string
	}{
		"Nothing":      {reason: "Nothing observed: etcd first.", want: "False " + tkv1alpha1.ReasonWaitingForEtcd},
		"EtcdReady":    {reason: "etcd ready, the DataStore not.", observed: map[string]string{nameEtcdCluster: etcd("True")}, want: "False " + tkv1alpha1.ReasonWaitingForDataStore},
		"BothReady":    {reason: "Both ready.", observed: map[string]string{nameEtcdCluster: etcd("True"), nameDataStore: `{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, metadata: {name: x}, status: {ready: true}}`}, want: "True " + tkv1alpha1.ReasonDataStoreAvailable},
		"EtcdNotReady": {reason: "etcd reports not ready.", observed: map[string]string{nameEtcdCluster: etcd("False")}, want: "False " + tkv1alpha1.ReasonWaitingForEtcd},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run(fn, tenantCall{name: "tenant-demo", observed: tc.observed}.request(t))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, c := range rsp.GetConditions() {
				if c.GetType() == tkv1alpha1.ConditionDataStoreReady {
					got = strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + " " + c.GetReason()
				}
			}
			if d := cmp.Diff(strings.ToUpper(tc.want[:1])+tc.want[1:], titleStatus(got)); d != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, d)
			}
		})
	}
}

// titleStatus turns "TRUE Reason" into "True Reason".
func titleStatus(s string) string {
	st, reason, _ := strings.Cut(s, " ")
	if st == "" {
		return s
	}
	return st[:1] + strings.ToLower(st[1:]) + " " + reason
}

// TestTenantCleanupSelectsTheTenantsObjects: the leftovers of a Tenant's
// etcd are looked for by the Tenant's labels in NS, not by a cluster's.
func TestTenantCleanupSelectsTheTenantsObjects(t *testing.T) {
	rsp, err := fntest.Run(fn, tenantCall{name: "tenant-demo"}.request(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/namespace": "tenant-demo"}
	for _, key := range []string{"cleanup-secret", "cleanup-persistentvolumeclaim"} {
		sel := rsp.GetRequirements().GetResources()[key]
		if sel == nil {
			t.Errorf("no requirement %s", key)
			continue
		}
		if d := cmp.Diff(want, sel.GetMatchLabels().GetLabels()); d != "" || sel.GetNamespace() != "tenant-demo" {
			t.Errorf("%s: namespace %q, labels -want, +got:\n%s", key, sel.GetNamespace(), d)
		}
	}
}

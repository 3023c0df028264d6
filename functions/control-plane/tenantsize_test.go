package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime/schema"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// tenantRequiredKinds are the kinds a Tenant's function may ask for, none
// a tenant writes: the platform's settings, the KamajiControlPlanes the
// control-plane step composed, and for the etcd's cleanup and backups the
// platform's and Kamaji's objects (Secrets and PersistentVolumeClaims of
// the etcd, PKI Secrets, the recipient ConfigMap, the Namespace, the
// EtcdSnapshots).
var tenantRequiredKinds = []string{
	"apiextensions.crossplane.io/v1beta1 EnvironmentConfig",
	"controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane",
	"v1 Secret", "v1 PersistentVolumeClaim", "v1 ConfigMap", "v1 Namespace",
	"etcd-operator.cozystack.io/v1alpha2 EtcdSnapshot",
	// The platform's APIs, by name (function.RequirePlatformAPIs).
	"apiregistration.k8s.io/v1 APIService", "apiextensions.k8s.io/v1 CustomResourceDefinition",
}

// tenantConverge calls fn with req as Crossplane does: each requirement
// of the response is answered (answer: the objects of a key, nil for
// none) and fn called again until the requirements stop changing. It
// returns the last request and response, every selector asked for and
// the size of the largest request sent.
func tenantConverge(t *testing.T, fn fntest.Runner, req *fnv1.RunFunctionRequest, answer func(key string, sel *fnv1.ResourceSelector) []*structpb.Struct) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, map[string]*fnv1.ResourceSelector, int) {
	t.Helper()
	asked := map[string]*fnv1.ResourceSelector{}
	peak := 0
	for range 10 {
		peak = max(peak, proto.Size(req))
		rsp, err := fntest.Run(fn, req)
		if err != nil {
			t.Fatal(err)
		}
		fntest.NoFatal(t, rsp)
		sels := rsp.GetRequirements().GetResources()
		maps.Copy(asked, sels)
		if slices.Equal(slices.Sorted(maps.Keys(sels)), slices.Sorted(maps.Keys(req.GetRequiredResources()))) {
			return req, rsp, asked, peak
		}
		next := proto.Clone(req).(*fnv1.RunFunctionRequest)
		next.RequiredResources = map[string]*fnv1.Resources{}
		for key, sel := range sels {
			items := &fnv1.Resources{}
			for _, o := range answer(key, sel) {
				items.Items = append(items.Items, &fnv1.Resource{Resource: o})
			}
			next.RequiredResources[key] = items
		}
		req = next
	}
	t.Fatal("the Tenant's requirements did not settle in 10 calls")
	return nil, nil, nil, 0
}

// checkTenantKinds fails t when a selector of asked is of a tenantkube.io
// kind or of a kind outside tenantRequiredKinds.
func checkTenantKinds(t *testing.T, asked map[string]*fnv1.ResourceSelector) {
	t.Helper()
	for key, sel := range asked {
		gv, err := schema.ParseGroupVersion(sel.GetApiVersion())
		if err != nil {
			t.Errorf("requirement %s: %v", key, err)
			continue
		}
		if gv.Group == tkv1alpha1.GroupVersion.Group {
			t.Errorf("requirement %s asks for %s %s: a Tenant reads no tenantkube.io object (tenant-written specs)", key, sel.GetApiVersion(), sel.GetKind())
		}
		if k := sel.GetApiVersion() + " " + sel.GetKind(); !slices.Contains(tenantRequiredKinds, k) {
			t.Errorf("requirement %s asks for %s, not among %v", key, k, tenantRequiredKinds)
		}
	}
}

// TestTenantRequiresNoTenantkubeKind: whatever has arrived, with or
// without clusters and backups, the Tenant's function asks for no
// TenantCluster, claim, XR or other tenantkube.io object, only
// tenantRequiredKinds.
func TestTenantRequiresNoTenantkubeKind(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	for name, c := range map[string]tenantCall{
		"NothingArrived":    {name: "tenant-demo"},
		"Serving":           {name: "tenant-demo", required: map[string][]string{requiredTenantControlPlanes: {controlPlane("tenant-demo", "demo", tenantDS)}}},
		"BackupsNoPKI":      tenantBackupCall(key),
		"BackupsPKIArrived": tenantBackupCall(key, "a", "b"),
	} {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run(fnAtBackupNow, c.request(t))
			if err != nil {
				t.Fatal(err)
			}
			fntest.NoFatal(t, rsp)
			if rsp.GetRequirements().GetResources()[requiredTenantControlPlanes] == nil {
				t.Error("no requirement of the KamajiControlPlanes")
			}
			checkTenantKinds(t, rsp.GetRequirements().GetResources())
		})
	}
}

// observedTenantKCP is the KamajiControlPlane of the TenantCluster n in
// tenant-demo with spec as the API server returns it to Crossplane: the
// object the control-plane step composes (fn, the function the render
// runs), with the metadata the API server, Crossplane and Cluster API
// add (Crossplane's controller reference, managedFields of Crossplane's
// apply and Kamaji's status update) and a ready status.
func observedTenantKCP(t *testing.T, n, spec string) *structpb.Struct {
	t.Helper()
	ds := `{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, metadata: {name: ` + tenantDS + `}, status: {ready: true}}`
	rsp := fntest.Call{Namespaced: true, Namespace: "tenant-demo", Name: n, Spec: spec, Required: map[string][]string{requiredTenantDataStore: {ds}}}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	composed := rsp.GetDesired().GetResources()[nameKamajiControlPlane]
	if composed == nil {
		t.Fatalf("the TenantCluster %s composes no KamajiControlPlane", n)
	}
	kcp := composed.GetResource().AsMap()
	spec0 := fieldsV1(map[string]any{"metadata": kcp["metadata"], "spec": kcp["spec"]})
	status := map[string]any{
		"ready": true, "version": "v1.35.1", "externalManagedControlPlane": true, "initialization": map[string]any{"controlPlaneInitialized": true},
		"replicas": 2.0, "readyReplicas": 2.0, "upToDateReplicas": 2.0, "availableReplicas": 2.0, "selector": "kamaji.clastix.io/name=" + n,
	}
	var conds []any
	for _, c := range []string{"Ready", "Available", "Initialized", "KamajiControlPlaneIsReady", "TenantControlPlaneCreated"} {
		conds = append(conds, map[string]any{"type": c, "status": "True", "reason": c, "message": "", "lastTransitionTime": "2026-12-03T10:05:00Z", "observedGeneration": 1.0})
	}
	status["conditions"] = conds
	kcp["status"] = status
	meta := kcp["metadata"].(map[string]any)
	meta["uid"], meta["resourceVersion"], meta["generation"], meta["creationTimestamp"] = "0a1b2c3d-0000-4000-8000-0000000000aa", "123456789", 1.0, kcpCreated
	meta["finalizers"] = []any{"kamaji.clastix.io/finalizer"}
	ann := map[string]any{}
	if a, ok := meta["annotations"].(map[string]any); ok {
		ann = a
	}
	ann["crossplane.io/composition-resource-name"] = nameKamajiControlPlane
	meta["annotations"] = ann
	meta["ownerReferences"] = []any{
		map[string]any{"apiVersion": tkv1alpha1.GroupVersion.String(), "kind": tkv1alpha1.NamespacedKind, "name": n, "uid": "0a1b2c3d-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true},
		map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": n, "uid": "0a1b2c3d-0000-4000-8000-000000000002"},
	}
	meta["managedFields"] = []any{
		map[string]any{"manager": "apiextensions.crossplane.io/composed/" + strings.Repeat("0123456789abcdef", 4), "operation": "Apply", "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2",
			"time": "2026-12-03T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": spec0},
		map[string]any{"manager": "manager", "operation": "Update", "subresource": "status", "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2",
			"time": "2026-12-03T10:05:00Z", "fieldsType": "FieldsV1", "fieldsV1": fieldsV1(map[string]any{"status": status})},
	}
	s, err := structpb.NewStruct(kcp)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fieldsV1 is the managedFields set of the fields of o ("f:<key>" per
// map key; lists atomic).
func fieldsV1(o map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range o {
		if m, ok := v.(map[string]any); ok {
			f := fieldsV1(m)
			f["."] = map[string]any{}
			out["f:"+k] = f
			continue
		}
		out["f:"+k] = map[string]any{}
	}
	return out
}

// largestAPIServerSpec is a TenantCluster spec whose KamajiControlPlane
// carries the most the XRD allows a tenant to write into it:
// spec.controlPlane.apiServer with 64 extraArgs of 1024 characters, 16
// extraVolumes with 253-character Secret names and 16 mounts of
// 256-character paths.
func largestAPIServerSpec() string {
	var b strings.Builder
	b.WriteString("{controlPlane: {apiServer: {extraArgs: [")
	for i := range tkv1alpha1.MaxExtraArgs {
		flag := fmt.Sprintf("--x%02d-flag=", i)
		fmt.Fprintf(&b, "%q, ", flag+strings.Repeat("v", 1024-len(flag)))
	}
	b.WriteString("], extraVolumes: [")
	for i := range 16 {
		fmt.Fprintf(&b, "{name: v%02d%s, secret: {secretName: s%02d%s}}, ", i, strings.Repeat("a", 60), i, strings.Repeat("b", 250))
	}
	b.WriteString("], extraVolumeMounts: [")
	for i := range 16 {
		fmt.Fprintf(&b, "{name: v%02d%s, mountPath: /m%02d%s}, ", i, strings.Repeat("a", 60), i, strings.Repeat("c", 252))
	}
	b.WriteString("]}}}")
	return b.String()
}

// TestTenantRequestSizePerCluster: a Tenant's request grows, per cluster
// it serves, by what tenantkube composed and bounds, never by a
// tenant-written spec: the cluster's KamajiControlPlane, the Tenant's
// CSI binding and Usages observed, and with backups the cluster's three
// PKI Secrets and its PKI object. The add-ons' valuesOverride (each
// object up to etcd's 1.5 MiB) is in no requirement: a TenantCluster
// with one composes the same KamajiControlPlane as one without. Measured
// as Crossplane calls the function: requirements answered until they
// settle, on a first reconcile and on the next (the desired state
// observed), the largest request counted. 80 clusters as the example
// composes them fit gRPC's 4 MiB with backups, and so do the quota of
// docs/platform-guide.md (Tenant namespaces), 15 TenantClusters and 15
// claims, at the XRD's bounds (largestAPIServerSpec: a claim's
// KamajiControlPlane is received, nothing else of it).
func TestTenantRequestSizePerCluster(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	const example = `{}`
	big := `{addons: {certManager: {enabled: true, valuesOverride: {blob: "` + strings.Repeat("x", 1<<20) + `"}}}}`
	if a, b := observedTenantKCP(t, "demo", example), observedTenantKCP(t, "demo", big); !proto.Equal(a, b) {
		t.Fatal("an add-on's valuesOverride changes the KamajiControlPlane: the Tenant would receive it")
	}
	pki := func(n, role string) *structpb.Struct {
		// Kamaji's PKI Secrets: a PEM certificate and key (RSA 2048),
		// about 1.2 and 1.7 KB.
		return fntest.YAMLStruct(t, secretYAML(n+"-"+role, map[string]string{"crt": strings.Repeat("c", 1200), "key": strings.Repeat("k", 1700)}))
	}
	// size is the largest request of a Tenant serving clusters whose
	// TenantClusters have spec.
	size := func(t *testing.T, clusters int, spec string, backups bool) int {
		kcp := observedTenantKCP(t, "c0000", spec).AsMap()
		c := tenantCall{name: "tenant-demo", spec: `{}`, uid: tenantUID, created: kcpCreated}
		if backups {
			c.input = backupInput
		}
		other := tenantBackupCall(key).required
		answer := func(k string, sel *fnv1.ResourceSelector) []*structpb.Struct {
			var out []*structpb.Struct
			switch {
			case sel.GetKind() == "APIService" || sel.GetKind() == "CustomResourceDefinition":
				// A platform serving every API.
				out = append(out, fntest.YAMLStruct(t, "apiVersion: "+sel.GetApiVersion()+"\nkind: "+sel.GetKind()+"\nmetadata:\n  name: "+sel.GetMatchName()+"\n"))
			case k == requiredTenantControlPlanes:
				for i := range clusters {
					n := fmt.Sprintf("c%04d", i)
					meta := kcp["metadata"].(map[string]any)
					meta["name"] = n
					meta["ownerReferences"].([]any)[0].(map[string]any)["name"] = n
					o, err := structpb.NewStruct(kcp)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, o)
				}
			case strings.HasPrefix(k, backup.RequiredBackupSourcePrefix):
				n, role, _ := strings.Cut(strings.TrimPrefix(k, backup.RequiredBackupSourcePrefix), ".")
				out = append(out, pki(n, role))
			default:
				for _, y := range other[k] {
					out = append(out, fntest.YAMLStruct(t, y))
				}
			}
			return out
		}
		req, rsp, asked, peak := tenantConverge(t, fnAtBackupNow, c.request(t), answer)
		checkTenantKinds(t, asked)
		// The next reconcile observes what was applied.
		req = proto.Clone(req).(*fnv1.RunFunctionRequest)
		req.Observed.Resources = rsp.GetDesired().GetResources()
		_, rsp, asked, next := tenantConverge(t, fnAtBackupNow, req, answer)
		checkTenantKinds(t, asked)
		if got := fntest.Get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "clusters"); got != float64(clusters) {
			t.Fatalf("status.clusters %v, want %d", got, clusters)
		}
		return max(peak, next)
	}
	const (
		many  = 80
		quota = 15 // of each kind, docs/platform-guide.md
	)
	for _, tc := range []struct {
		name    string
		spec    string
		backups bool
		// fits: many clusters fit; quota: the quota's clusters fit.
		fits, quota bool
	}{
		{"Example", example, false, true, true},
		{"ExampleWithBackups", example, true, true, true},
		{"LargestAPIServer", largestAPIServerSpec(), false, false, true},
		{"LargestAPIServerWithBackups", largestAPIServerSpec(), true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, eleven := size(t, 1, tc.spec, tc.backups), size(t, 11, tc.spec, tc.backups)
			per, kcp := (eleven-one)/10, proto.Size(observedTenantKCP(t, "c0000", tc.spec))
			total, quotaTotal := one+(many-1)*per, one+(quota-1)*per+quota*kcp
			t.Logf("largest request with 1 cluster: %d bytes; per cluster: %d bytes, of which its KamajiControlPlane %d; %d clusters: about %d bytes; %d TenantClusters and %d claims: about %d bytes",
				one, per, kcp, many, total, quota, quota, quotaTotal)
			if tc.fits && total > 4<<20 {
				t.Errorf("%d clusters: about %d bytes, over gRPC's 4 MiB", many, total)
			}
			if tc.quota && quotaTotal > 4<<20 {
				t.Errorf("%d TenantClusters and %d claims: about %d bytes, over gRPC's 4 MiB", quota, quota, quotaTotal)
			}
			if bound := 128 << 10; per > bound {
				t.Errorf("per cluster %d bytes, want at most %d", per, bound)
			}
		})
	}
}

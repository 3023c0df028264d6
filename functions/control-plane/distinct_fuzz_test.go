package main

import (
	"maps"
	"testing"
	"time"

	"filippo.io/age"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// FuzzTwoTenantsNeverShareNames: for any two distinct clusters (NS, N) the
// function accepts, as claims and as TenantClusters, nothing either
// composes outside its namespace has the other's name — cluster-scoped
// objects, the etcd prefix and SQL user in a (shared) DataStore — their
// default hosts on the shared ingress differ, and so do the upstream names
// ingress-nginx derives from the Ingresses of its class, those composed and
// the one Kamaji builds from the KamajiControlPlane (fntest.ReadAsNginx,
// fntest.KamajiIngress). Judged on the composed objects, whatever formula
// names them.
func FuzzTwoTenantsNeverShareNames(f *testing.F) {
	for _, s := range [][4]string{
		{"prod", "team-a", "prod-team", "a"},
		{"a-b", "c", "a", "b-c"},
		{"tenant-demo", "demo", "tenant", "demo-demo"},
		{"x", "y", "x", "y"},
		{"n", "nn", "nn", "n"},
		{"tenant-a", "demo", "tenant-b", "demo"},
		{"team", "a-prod", "team-a", "prod"},
		{"team-a", "api-palshf35yaol7elrqnhhx3go7i", "team-a-api", "palshf35yaol7elrqnhhx3go7i"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ns1, n1, ns2, n2 string) {
		if ns1 == ns2 && n1 == n2 {
			return
		}
		for _, namespaced := range []bool{false, true} {
			a, okA := outsideNames(t, ns1, n1, namespaced)
			b, okB := outsideNames(t, ns2, n2, namespaced)
			if !okA || !okB {
				return
			}
			if namespaced && ns1 != ns2 {
				// Each namespace's Tenant, serving the TenantCluster, with
				// its backups: its names are its namespace's.
				maps.Copy(a, tenantOutsideNames(t, ns1, n1))
				maps.Copy(b, tenantOutsideNames(t, ns2, n2))
			}
			for name := range a {
				if b[name] {
					t.Fatalf("(%q, %q) and (%q, %q) (namespaced %v) share %s", ns1, n1, ns2, n2, namespaced, name)
				}
			}
		}
	})
}

// fnAtBackupNow is the function with its clock at backupNow, where the
// fuzzed backups' slots are worked out.
var fnAtBackupNow fntest.Runner = newServer(nil, func() time.Time { return backupNow }).RunFunction

// fuzzBackupKey is the platform's age key of the fuzzed backups.
var fuzzBackupKey = func() *age.X25519Identity {
	k, err := age.GenerateX25519Identity()
	if err != nil {
		panic(err)
	}
	return k
}()

// backupAnswers are the required resources of cluster id's backup on
// backupInput: its PKI Secrets by role key (keyed as key+role) and the
// recipient.
func backupAnswers(t *testing.T, id function.Identity, key string, roles []backup.PKIRole) map[string]*fnv1.Resources {
	t.Helper()
	out := map[string]*fnv1.Resources{}
	add := func(k string, obj map[string]any) {
		s, err := fntest.Struct(obj)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: s}}}
	}
	for _, role := range roles {
		add(backup.RequiredBackupSourcePrefix+key+role.Role, map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": role.Secret(id), "namespace": id.Namespace}, "data": map[string]any{"k": "dg=="}})
	}
	add(backup.RequiredBackupRecipient, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "etcd-backup-recipient", "namespace": "tenantkube-system"}, "data": map[string]any{"recipient": fuzzBackupKey.Recipient().String()}})
	add(backup.RequiredBackupCredentials, map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "etcd-backup-s3", "namespace": id.Namespace, "labels": map[string]any{"tenantkube.io/backup-credentials-for": id.Namespace}}})
	out[backup.RequiredNamespaceBackups] = &fnv1.Resources{}
	return out
}

// tenantOutsideNames runs the function for the Tenant ns serving the
// TenantCluster n, with backups and n's PKI answered, and returns what it
// names outside ns (kind-qualified), nil when it refuses the identity.
func tenantOutsideNames(t *testing.T, ns, n string) map[string]bool {
	t.Helper()
	id := function.Identity{Namespace: ns, Name: n}
	req := fntest.Call{Spec: `{}`, Input: backupInput}.Request(t)
	xr, err := fntest.Struct(map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "Tenant", "metadata": map[string]any{"name": ns, "uid": tenantUID}, "spec": map[string]any{}})
	if err != nil {
		return nil
	}
	req.Observed.Composite.Resource = xr
	req.Observed.Resources = nil
	req.RequiredResources = backupAnswers(t, id, n+".", backup.ControlPlanePKI)
	for key, obj := range map[string]map[string]any{
		requiredTenantControlPlanes: {"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "metadata": map[string]any{"name": n, "namespace": ns,
			"creationTimestamp": "2026-12-03T10:00:00Z", "ownerReferences": []any{map[string]any{
				"apiVersion": tkv1alpha1.GroupVersion.String(), "kind": tkv1alpha1.NamespacedKind, "name": n, "uid": tenantUID, "controller": true, "blockOwnerDeletion": true}}},
			"spec": map[string]any{"dataStoreName": id.TenantDataStoreName()}},
		function.RequirementNamespace: {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "uid": tenantDemoUID}},
	} {
		o, err := fntest.Struct(obj)
		if err != nil {
			return nil
		}
		req.RequiredResources[key] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: o}}}
	}
	rsp, err := fntest.Run(fnAtBackupNow, req)
	if err != nil {
		t.Fatal(err)
	}
	if fntest.FatalMessage(rsp) != "" {
		return nil
	}
	out := map[string]bool{}
	for _, r := range rsp.GetDesired().GetResources() {
		obj := r.GetResource().AsMap()
		if objNS, _ := fntest.Get(obj, "metadata", "namespace").(string); objNS == "" {
			out[obj["kind"].(string)+" "+fntest.Get(obj, "metadata", "name").(string)] = true
		}
	}
	if !out["EnvironmentConfig "+ns+"."+backup.Name("", backup.IncarnationDigest(tenantUID), backup.SlotStart(function.Identity{Namespace: ns, Name: tenantEtcdBase}, 24*time.Hour, backupNow))] {
		t.Fatalf("Tenant %q serving %q: no backup bundle among %v", ns, n, out)
	}
	return out
}

// outsideNames runs the function for claim n of namespace ns (or the
// TenantCluster n in ns), once on a dedicated (or the tenant's) and once on
// a shared DataStore, with its Namespace answered, and returns what it
// names outside ns (kind-qualified; in another namespace, namespace and
// name), or false when the function refuses
// the identity.
func outsideNames(t *testing.T, ns, n string, namespaced bool) (map[string]bool, bool) {
	t.Helper()
	out := map[string]bool{}
	for _, input := range []string{`{}`, cozystackInput, `{dataStoreName: shared}`, backupInput} {
		req := fntest.Call{Spec: `{}`, Input: input}.Request(t)
		x := fntest.TenantXR(ns, n, map[string]any{})
		if namespaced {
			x = fntest.NamespacedXR(ns, n, map[string]any{})
		}
		xr, err := fntest.Struct(x)
		if err != nil {
			return nil, false
		}
		req.Observed.Composite.Resource = xr
		nsObj, err := fntest.Struct(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "uid": tenantDemoUID}})
		if err != nil {
			return nil, false
		}
		req.RequiredResources = map[string]*fnv1.Resources{function.RequirementNamespace: {Items: []*fnv1.Resource{{Resource: nsObj}}}}
		if input == backupInput && !namespaced {
			// The claim's backup, with its bundle: a cluster-scoped name.
			maps.Copy(req.RequiredResources, backupAnswers(t, function.Identity{Namespace: ns, Name: n}, "", backupPKI))
		}
		if namespaced {
			id := function.Identity{Namespace: ns, Name: n}
			ds, err := fntest.Struct(map[string]any{"apiVersion": "kamaji.clastix.io/v1alpha1", "kind": "DataStore",
				"metadata": map[string]any{"name": id.TenantDataStoreName()}, "status": map[string]any{"ready": true}})
			if err != nil {
				return nil, false
			}
			req.RequiredResources[requiredTenantDataStore] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: ds}}}
		}
		rsp, err := fntest.Run(fnAtBackupNow, req)
		if err != nil {
			t.Fatal(err)
		}
		if fntest.FatalMessage(rsp) != "" {
			return nil, false
		}
		for name, r := range rsp.GetDesired().GetResources() {
			obj := r.GetResource().AsMap()
			switch objNS, _ := fntest.Get(obj, "metadata", "namespace").(string); objNS {
			case "":
				out[obj["kind"].(string)+" "+fntest.Get(obj, "metadata", "name").(string)] = true
			case ns:
			default: // the claim's management namespace
				out[obj["kind"].(string)+" "+objNS+"/"+fntest.Get(obj, "metadata", "name").(string)] = true
			}
			if name == "kamajicontrolplane" {
				for _, f := range []string{"dataStoreSchema", "dataStoreUsername"} {
					if v, _ := fntest.Get(obj, "spec", f).(string); v != "" {
						out["DataStore account "+v] = true
					}
				}
				out["host "+fntest.Get(obj, "spec", "network", "ingress", "hostname").(string)] = true
			}
		}
		if input == backupInput && !namespaced {
			bundle := "EnvironmentConfig " + ns + "." + backup.Name(n, backup.IncarnationDigest(fntest.XRUID), backup.SlotStart(function.Identity{Namespace: ns, Name: n}, 24*time.Hour, backupNow))
			if !out[bundle] {
				t.Fatalf("(%q, %q): no %s composed", ns, n, bundle)
			}
		}
		if _, ok := rsp.GetDesired().GetResources()[nameKamajiControlPlane]; !ok {
			t.Fatalf("(%q, %q) namespaced %v input %s: no KamajiControlPlane composed", ns, n, namespaced, input)
		}
		nginx := fntest.ReadAsNginx(cpinput.DefaultIngressClassName, fntest.SharedIngresses(rsp))
		if len(nginx.Upstreams) == 0 {
			t.Fatalf("(%q, %q): no upstream on the shared ingress class", ns, n)
		}
		for up := range nginx.Upstreams {
			out["upstream "+up] = true
		}
	}
	return out, true
}

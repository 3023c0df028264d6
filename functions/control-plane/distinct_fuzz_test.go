package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// FuzzTwoTenantsNeverShareNames: for any two distinct claims (NS, N) the
// function accepts, nothing either composes outside its namespace has the
// other's name — cluster-scoped objects, the etcd prefix and SQL user in a
// (shared) DataStore — and their default hosts on the shared ingress
// differ. Judged on the composed objects, whatever formula names them.
func FuzzTwoTenantsNeverShareNames(f *testing.F) {
	for _, s := range [][4]string{
		{"prod", "team-a", "prod-team", "a"},
		{"a-b", "c", "a", "b-c"},
		{"tenant-demo", "demo", "tenant", "demo-demo"},
		{"x", "y", "x", "y"},
		{"n", "nn", "nn", "n"},
		{"tenant-a", "demo", "tenant-b", "demo"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ns1, n1, ns2, n2 string) {
		if ns1 == ns2 && n1 == n2 {
			return
		}
		a, okA := outsideNames(t, ns1, n1)
		b, okB := outsideNames(t, ns2, n2)
		if !okA || !okB {
			return
		}
		for name := range a {
			if b[name] {
				t.Fatalf("(%q, %q) and (%q, %q) share %s", ns1, n1, ns2, n2, name)
			}
		}
	})
}

// outsideNames runs the function for claim n of namespace ns, once on a
// dedicated and once on a shared DataStore, with its Namespace answered,
// and returns what it names outside ns (kind-qualified), or false when the
// function refuses the identity.
func outsideNames(t *testing.T, ns, n string) (map[string]bool, bool) {
	t.Helper()
	out := map[string]bool{}
	for _, input := range []string{`{}`, cozystackInput, `{dataStoreName: shared}`} {
		req := fntest.Call{Spec: `{}`, Input: input}.Request(t)
		xr, err := fntest.Struct(fntest.TenantXR(ns, n, map[string]any{}))
		if err != nil {
			return nil, false
		}
		req.Observed.Composite.Resource = xr
		nsObj, err := fntest.Struct(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
		if err != nil {
			return nil, false
		}
		req.RequiredResources = map[string]*fnv1.Resources{function.RequirementNamespace: {Items: []*fnv1.Resource{{Resource: nsObj}}}}
		rsp, err := fntest.Run(fn, req)
		if err != nil {
			t.Fatal(err)
		}
		if fntest.FatalMessage(rsp) != "" {
			return nil, false
		}
		for name, r := range rsp.GetDesired().GetResources() {
			obj := r.GetResource().AsMap()
			if fntest.Get(obj, "metadata", "namespace") == nil {
				out[obj["kind"].(string)+" "+fntest.Get(obj, "metadata", "name").(string)] = true
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
	}
	return out, true
}

package function

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// movedRequest is a request whose observed XR has the given metadata and
// spec.namespace and whose observed composed resources live in the given
// namespaces ("" for a cluster-scoped one), named r0, r1, ….
func movedRequest(t testing.TB, meta map[string]any, specNS string, observed ...string) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster", "metadata": meta, "spec": map[string]any{}}
	if specNS != "" {
		xr["spec"] = map[string]any{"namespace": specNS}
	}
	s, err := structpb.NewStruct(xr)
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}, Resources: map[string]*fnv1.Resource{}}}
	for i, ns := range observed {
		m := map[string]any{"name": fmt.Sprintf("obj-%d", i)}
		if ns != "" {
			m["namespace"] = ns
		}
		o, err := structpb.NewStruct(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m})
		if err != nil {
			t.Fatal(err)
		}
		req.Observed.Resources[fmt.Sprintf("r%d", i)] = &fnv1.Resource{Resource: o}
	}
	return req
}

func claimMeta(name, ns string) map[string]any {
	return map[string]any{"name": name + "-x7k2p", "labels": map[string]any{LabelClaimName: name, LabelClaimNamespace: ns}}
}

// TestClusterNeverMoves: a cluster whose observed composed resources live
// in one namespace and whose XR now resolves to another (a claim bound the
// XR, or its spec.namespace was rewritten) is refused, naming the field,
// both namespaces and a composed resource of the old one.
func TestClusterNeverMoves(t *testing.T) {
	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		want []string // substrings of the error; nil: no error
	}{
		"ClaimRebound": {
			req:  movedRequest(t, claimMeta("demo", "tenant-attacker"), "", "tenant-demo", "tenant-demo"),
			want: []string{`metadata.labels[crossplane.io/claim-namespace]`, `"tenant-attacker"`, `namespace "tenant-demo"`, `composed resource "r0"`},
		},
		"ClaimlessRepointed": {
			req:  movedRequest(t, map[string]any{"name": "victim"}, "tenant-attacker", "", "tenant-victim"),
			want: []string{"spec.namespace", `"tenant-attacker"`, `namespace "tenant-victim"`, `composed resource "r1"`},
		},
		"ClaimlessTakenByClaim": {
			// The claim's labels and spec.namespace both name the new
			// namespace, as Crossplane's binding writes them.
			req:  movedRequest(t, claimMeta("x", "tenant-attacker"), "tenant-attacker", "tenant-victim"),
			want: []string{"tenant-attacker", `namespace "tenant-victim"`},
		},
		"OneStrayAmongMany": {
			req:  movedRequest(t, claimMeta("demo", "tenant-demo"), "", "tenant-demo", "", "tenant-demo", "tenant-b"),
			want: []string{`"tenant-demo"`, `namespace "tenant-b"`, `composed resource "r3"`},
		},
		"Same":              {req: movedRequest(t, claimMeta("demo", "tenant-demo"), "", "tenant-demo", "", "tenant-demo")},
		"ClusterScopedOnly": {req: movedRequest(t, claimMeta("demo", "tenant-demo"), "", "", "")},
		"NothingObserved":   {req: movedRequest(t, claimMeta("demo", "tenant-attacker"), "")},
		"NamespacedXR": {
			req:  movedRequest(t, map[string]any{"name": "demo", "namespace": "tenant-a"}, "", "tenant-b"),
			want: []string{"metadata.namespace", `"tenant-a"`, `namespace "tenant-b"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readCluster(tc.req)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("readCluster: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("readCluster accepted a cluster that moved")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %s:\n%v", w, err)
				}
			}
		})
	}
}

// managementNamespaces are the management namespaces of cluster demo in
// tenant-a, tenant-b and tenant-c (Python, as in
// TestManagementNamespaceValues).
var managementNamespaces = map[string]string{
	"tenant-a": "tenantkube-zcqgaminjhsvcnivxtexmvnn6i",
	"tenant-b": "tenantkube-mn2agvuopcy6gazoxdol6b6h5e",
	"tenant-c": "tenantkube-fnzr6idesrofyo3esxcemxp4rm",
}

// TestClusterNeverMovesProperty: over generated XRs and observed states,
// readCluster accepts exactly when every namespaced observed composed
// resource lives in the namespace the XR resolves to or in the management
// namespace of that namespace's cluster, by an independent count of the
// generated namespaces.
func TestClusterNeverMovesProperty(t *testing.T) {
	namespaces := []string{"", "tenant-a", "tenant-b", "tenant-c",
		managementNamespaces["tenant-a"], managementNamespaces["tenant-b"], managementNamespaces["tenant-c"]}
	r := rand.New(rand.NewPCG(28, 2))
	for i := range 2000 {
		ns := namespaces[1+r.IntN(3)]
		var meta map[string]any
		specNS := ""
		switch r.IntN(3) {
		case 0:
			meta = claimMeta("demo", ns)
		case 1:
			meta, specNS = map[string]any{"name": "demo"}, ns
		default:
			meta = map[string]any{"name": "demo", "namespace": ns}
		}
		observed := make([]string, r.IntN(5))
		stray := 0
		for j := range observed {
			observed[j] = namespaces[r.IntN(len(namespaces))]
			if observed[j] != "" && observed[j] != ns && observed[j] != managementNamespaces[ns] {
				stray++
			}
		}
		_, err := readCluster(movedRequest(t, meta, specNS, observed...))
		if (err == nil) != (stray == 0) {
			t.Fatalf("case %d: XR in %s, observed in %q: readCluster error %v, want an error: %v", i, ns, observed, err, stray > 0)
		}
	}
}

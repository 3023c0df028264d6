package function_test

import (
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Values computed outside Go (Python: "tenantkube-" +
// base64.b32encode(hashlib.sha256(f"mgmt/{ns}/{n}".encode()).digest()[:16])
// .decode().rstrip("=").lower()).
func TestManagementNamespaceValues(t *testing.T) {
	for _, c := range []struct{ ns, n, want string }{
		{"tenant-demo", "demo", "tenantkube-s2kzg26tu36kdlxgdpetdiewsm"},
		{"team", "a-prod", "tenantkube-vidjflonttrixacinmakxjcnnu"},
		{"team-a", "prod", "tenantkube-duk36pt7fzfzyru2sbs3wwro3y"},
		{"default", "demo", "tenantkube-5t2n5as5jbpx7kcr3xz6ot7djq"},
	} {
		id := function.Identity{Namespace: c.ns, Name: c.n}
		if got := id.ManagementNamespace(); got != c.want {
			t.Errorf("(%s, %s): %s, want %s", c.ns, c.n, got, c.want)
		}
		want := map[string]string{
			"app.kubernetes.io/managed-by":       "tenantkube",
			"tenantkube.io/cluster":              c.n,
			"tenantkube.io/namespace":            c.ns,
			"tenantkube.io/management-namespace": "true",
		}
		got := id.ManagementNamespaceLabels()
		if len(got) != len(want) {
			t.Errorf("(%s, %s) labels %v, want %v", c.ns, c.n, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("(%s, %s) label %s = %q, want %q", c.ns, c.n, k, got[k], v)
			}
		}
	}
}

// managementNamespaceShape is "tenantkube-" and 26 characters of base32's
// lower-case alphabet (26*5 >= 128 bits).
var managementNamespaceShape = regexp.MustCompile(`^tenantkube-[a-z2-7]{26}$`)

// FuzzManagementNamespaceInjective: for any two distinct (NS, N) with valid
// NS and N, the management namespaces are DNS labels of at most 63
// characters, "tenantkube-<26 base32 characters>", and differ; none is a
// tenant namespace that names a cluster of its own with the same digest
// (the shape holds whatever NS is).
func FuzzManagementNamespaceInjective(f *testing.F) {
	for _, s := range [][4]string{
		{"team", "a-prod", "team-a", "prod"},
		{"tenant-demo", "demo", "tenant-demo", "demo2"},
		{"a", "b", "b", "a"},
		{strings.Repeat("n", 63), strings.Repeat("c", 32), "tenantkube-s2kzg26tu36kdlxgdpetdiewsm", "demo"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ns1, n1, ns2, n2 string) {
		valid := func(ns, n string) bool {
			return len(n) <= function.MaxClusterNameLength && len(validation.IsDNS1123Label(n)) == 0 && len(validation.IsDNS1123Label(ns)) == 0
		}
		if !valid(ns1, n1) || !valid(ns2, n2) || (ns1 == ns2 && n1 == n2) {
			return
		}
		a := function.Identity{Namespace: ns1, Name: n1}.ManagementNamespace()
		b := function.Identity{Namespace: ns2, Name: n2}.ManagementNamespace()
		for _, name := range []string{a, b} {
			if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
				t.Fatalf("%q: %v", name, msgs)
			}
			if !managementNamespaceShape.MatchString(name) {
				t.Fatalf("%q: not tenantkube-<26 base32 characters>", name)
			}
		}
		if a == b {
			t.Fatalf("(%s, %s) and (%s, %s) share the management namespace %s", ns1, n1, ns2, n2, a)
		}
	})
}

// An object in the management namespace is composed once the Namespace is
// observed; before, only one already observed stays (kept, with its
// readiness), and a new one waits.
func TestAddInManagementNamespace(t *testing.T) {
	obj := &structpb.Struct{Fields: map[string]*structpb.Value{"kind": structpb.NewStringValue("Deployment")}}
	observed := func(names ...string) *function.Request {
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: &structpb.Struct{}},
			Resources: map[string]*fnv1.Resource{}}}
		for _, n := range names {
			req.Observed.Resources[n] = &fnv1.Resource{Resource: obj}
		}
		return function.NewRequest(req)
	}
	ready := func(*function.Request, string) fnv1.Ready { return fnv1.Ready_READY_TRUE }
	type want struct {
		Composed []string
		Kept     []function.Kept
	}
	for name, c := range map[string]struct {
		r    *function.Request
		want want
	}{
		"NamespaceObserved":          {observed(function.ManagementNamespaceResourceName), want{Composed: []string{"kccm"}}},
		"NamespaceAndObjectObserved": {observed(function.ManagementNamespaceResourceName, "kccm"), want{Composed: []string{"kccm"}}},
		"OnlyObjectObserved":         {observed("kccm"), want{Kept: []function.Kept{{Name: "kccm", Ready: fnv1.Ready_READY_TRUE}}}},
		"NothingObserved":            {observed(), want{}},
	} {
		t.Run(name, func(t *testing.T) {
			p := &function.Plan{}
			p.AddInManagementNamespace(c.r, "kccm", obj, ready)
			got := want{Kept: p.Kept}
			for _, x := range p.Composed {
				got.Composed = append(got.Composed, x.Name)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("AddInManagementNamespace: -want, +got:\n%s", diff)
			}
		})
	}
}

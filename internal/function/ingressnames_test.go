package function_test

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Values computed outside Go (Python: "-".join([n, role,
// base64.b32encode(hashlib.sha256(f"{role}/{ns}/{n}".encode()).digest()[:16])
// .decode().rstrip("=").lower()])).
func TestIngressBackendNameValues(t *testing.T) {
	for _, c := range []struct{ role, ns, n, want string }{
		{function.IngressRoleApps, "tenant-demo", "demo", "demo-app-rqqefm5jthbbytoacbu6cqnmim"},
		{function.IngressRoleAPIServer, "tenant-demo", "demo", "demo-api-palshf35yaol7elrqnhhx3go7i"},
		{function.IngressRoleAPIServer, "team", "a-prod", "a-prod-api-uyxqli7owss57ednngmkytepki"},
		{function.IngressRoleAPIServer, "team-a", "prod", "prod-api-swc2edv64kfraz7kiauhh72wk4"},
		{function.IngressRoleApps, "team", "a-prod", "a-prod-app-sai3kv7us4vqzgmuhv2ifhbb4m"},
		{function.IngressRoleApps, "team-a", "prod", "prod-app-bpgksxxlvszbm6ogpk3366p6sq"},
	} {
		if got := (function.Identity{Namespace: c.ns, Name: c.n}).IngressBackendName(c.role); got != c.want {
			t.Errorf("(%s, %s, %s): %s, want %s", c.role, c.ns, c.n, got, c.want)
		}
	}
}

// digestTail is what follows N-<role>- : 26 characters of base32's
// lower-case alphabet (26*5 >= 128 bits), no '-'.
var digestTail = regexp.MustCompile(`^[a-z2-7]{26}$`)

// FuzzIngressBackendNamesInjective: for any two distinct (role, NS, N, port)
// with valid NS and N, the backend names are DNS labels of at most 63
// characters ending in a 128-bit digest, and the upstream names
// ingress-nginx derives from them (<NS>-<service>-<port>, modelled by
// fntest.NginxUpstream) differ; so do the names of one cluster's roles.
func FuzzIngressBackendNamesInjective(f *testing.F) {
	for _, s := range []struct {
		ns1, n1, ns2, n2 string
		r1, r2           bool
		p1, p2           uint16
	}{
		{"team", "a-prod", "team-a", "prod", false, false, 80, 80},
		{"team", "a-prod", "team-a", "prod", true, true, 6443, 6443},
		{"team-a", "api-palshf35yaol7elrqnhhx3go7i", "team-a-api", "palshf35yaol7elrqnhhx3go7i", true, true, 6443, 6443},
		{"x", "y", "x", "y", true, false, 443, 443},
		{strings.Repeat("n", 63), strings.Repeat("c", 32), "a", "b", false, true, 80, 6443},
	} {
		f.Add(s.ns1, s.n1, s.ns2, s.n2, s.r1, s.r2, s.p1, s.p2)
	}
	role := func(api bool) string {
		if api {
			return function.IngressRoleAPIServer
		}
		return function.IngressRoleApps
	}
	f.Fuzz(func(t *testing.T, ns1, n1, ns2, n2 string, r1, r2 bool, p1, p2 uint16) {
		valid := func(ns, n string) bool {
			return len(n) <= function.MaxClusterNameLength && len(validation.IsDNS1123Label(n)) == 0 && len(validation.IsDNS1123Label(ns)) == 0
		}
		if !valid(ns1, n1) || !valid(ns2, n2) || (ns1 == ns2 && n1 == n2 && r1 == r2) {
			return
		}
		a := function.Identity{Namespace: ns1, Name: n1}.IngressBackendName(role(r1))
		b := function.Identity{Namespace: ns2, Name: n2}.IngressBackendName(role(r2))
		for _, c := range []struct{ name, n, role string }{{a, n1, role(r1)}, {b, n2, role(r2)}} {
			if msgs := validation.IsDNS1123Label(c.name); len(msgs) > 0 {
				t.Fatalf("%q: %v", c.name, msgs)
			}
			if tail, ok := strings.CutPrefix(c.name, c.n+"-"+c.role+"-"); !ok || !digestTail.MatchString(tail) {
				t.Fatalf("%q: not %s-%s-<26 base32 characters>", c.name, c.n, c.role)
			}
		}
		if a == b {
			t.Fatalf("(%s, %s, %s) and (%s, %s, %s) share the Service name %s", role(r1), ns1, n1, role(r2), ns2, n2, a)
		}
		if ua, ub := fntest.NginxUpstream(ns1, a, p1), fntest.NginxUpstream(ns2, b, p2); ua == ub {
			t.Fatalf("(%s, %s, %s, %d) and (%s, %s, %s, %d) share the upstream %s", role(r1), ns1, n1, p1, role(r2), ns2, n2, p2, ua)
		}
	})
}

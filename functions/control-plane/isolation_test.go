package main

import (
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// trickyNames are namespaces and cluster names chosen to collide under a
// naive join: hyphens at the joins, one name a prefix or suffix of another,
// the longest allowed (63 and 32 characters).
func trickyNames() (namespaces, clusters []string) {
	namespaces = []string{"prod", "prod-team", "prod-team-a", "a", "a-b", "team", "team-a", "x",
		strings.Repeat("n", 63), strings.Repeat("n", 62) + "m", strings.Repeat("n", 31)}
	clusters = []string{"a", "team-a", "b-a", "team", "demo", "a-team", "x",
		strings.Repeat("c", 32), strings.Repeat("c", 31) + "d", strings.Repeat("n", 32)}
	return namespaces, clusters
}

// TestNamesOutsideTheNamespaceAreInjective: for every pair of tricky (NS, N), the cluster-scoped DataStore name, the
// CSI controller's ClusterRoleBinding name (workers function) and the
// default host on the shared ingress are valid and belong to that pair
// alone. Joined by "-" ("NS-N", "N.<baseDomain>"), (prod, team-a) and
// (prod-team, a) would share the DataStore prod-team-a, and every
// namespace's "demo" the host demo.<baseDomain>.
func TestNamesOutsideTheNamespaceAreInjective(t *testing.T) {
	namespaces, clusters := trickyNames()
	dataStores, hosts, bindings := map[string]function.Identity{}, map[string]function.Identity{}, map[string]function.Identity{}
	schemas := map[[2]string]function.Identity{}
	for _, ns := range namespaces {
		for _, n := range clusters {
			id := function.Identity{Name: n, Namespace: ns}
			ds := DataStoreName(id)
			if msgs := validation.IsDNS1123Subdomain(ds); len(msgs) > 0 {
				t.Errorf("DataStore name %q of %v: %v", ds, id, msgs)
			}
			if prev, ok := dataStores[ds]; ok {
				t.Errorf("%v and %v share the DataStore %q", prev, id, ds)
			}
			dataStores[ds] = id
			acct := dataStoreAccounts(t, ns, n)
			for _, v := range []string{acct[0], acct[1]} {
				// An etcd key prefix, an unquoted SQL identifier and a MySQL
				// user name (at most 32 characters, MySQL 8.0 manual,
				// "User Names and Passwords").
				if len(v) == 0 || len(v) > 32 || v[0] < 'a' || v[0] > 'z' || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
					t.Errorf("schema or user %q of %v: not a short lower-case identifier", v, id)
				}
			}
			if prev, ok := schemas[acct]; ok {
				t.Errorf("%v and %v share the DataStore schema and user %v", prev, id, acct)
			}
			schemas[acct] = id
			crb := id.ClusterRoleBindingName("kcsi-controller")
			if msgs := path.IsValidPathSegmentName(crb); len(msgs) > 0 || !strings.HasPrefix(crb, "tenantkube:kcsi-controller:") {
				t.Errorf("ClusterRoleBinding name %q of %v: %v", crb, id, msgs)
			}
			if prev, ok := bindings[crb]; ok {
				t.Errorf("%v and %v share the ClusterRoleBinding %q", prev, id, crb)
			}
			bindings[crb] = id
			host := function.HostPolicy{TenantHost: ns + "." + strings.Repeat("b", function.MaxBaseDomainLength)}.ClusterHost(id)
			if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
				t.Errorf("host %q of %v: %v", host, id, msgs)
			}
			if prev, ok := hosts[host]; ok {
				t.Errorf("%v and %v share the host %q", prev, id, host)
			}
			hosts[host] = id
		}
	}
	if want := len(namespaces) * len(clusters); len(dataStores) != want || len(hosts) != want || len(schemas) != want || len(bindings) != want {
		t.Errorf("%d DataStore names, %d schemas, %d ClusterRoleBinding names and %d hosts for %d pairs", len(dataStores), len(schemas), len(bindings), len(hosts), want)
	}
	// The collision of finding 2, by hand.
	if got := dataStoreAccounts(t, "prod", "team-a"); got == dataStoreAccounts(t, "prod-team", "a") {
		t.Errorf("(prod, team-a) and (prod-team, a) share the DataStore schema and user %v", got)
	}
	if DataStoreName(function.Identity{Namespace: "prod", Name: "team-a"}) == DataStoreName(function.Identity{Namespace: "prod-team", Name: "a"}) {
		t.Error("(prod, team-a) and (prod-team, a) share a DataStore")
	}
	if got := (function.Identity{Namespace: "prod", Name: "team-a"}).ClusterRoleBindingName("kcsi-controller"); got != "tenantkube:kcsi-controller:prod.team-a" {
		t.Errorf("ClusterRoleBinding of (prod, team-a): %q", got)
	}
}

// dataStoreAccounts runs the function for claim n in namespace ns on the
// shared DataStore of the input and returns the composed
// KamajiControlPlane's dataStoreSchema and dataStoreUsername.
func dataStoreAccounts(t *testing.T, ns, n string) [2]string {
	t.Helper()
	rsp := fntest.Call{Namespace: ns, Name: n, Spec: `{}`, Input: `{dataStoreName: shared}`}.Run(t, fn)
	if f := fntest.FatalMessage(rsp); f != "" {
		t.Fatalf("(%s, %s): %s", ns, n, f)
	}
	kcp := fntest.DesiredObject(t, rsp, "kamajicontrolplane")
	schema, _ := fntest.Get(kcp, "spec", "dataStoreSchema").(string)
	user, _ := fntest.Get(kcp, "spec", "dataStoreUsername").(string)
	return [2]string{schema, user}
}

// longTenantHost is a 221-character DNS name under the default base domain.
var longTenantHost = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 9) + ".tenants.example.com"

// namespaceAnswer answers the Namespace requirement with the Namespace ns
// of the given annotations (nil: the namespace does not exist).
func namespaceAnswer(t *testing.T, ns string, annotations map[string]any) map[string][]string {
	t.Helper()
	if annotations == nil {
		return map[string][]string{function.RequirementNamespace: nil}
	}
	y, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]string{function.RequirementNamespace: {string(y)}}
}

func hostname(t *testing.T, rsp *fnv1.RunFunctionResponse) any {
	t.Helper()
	return fntest.Get(fntest.DesiredObject(t, rsp, "kamajicontrolplane"), "spec", "network", "ingress", "hostname")
}

// TestTenantHost (finding 3): the default host is <N>.<tenant host>, the
// tenant host <NS>.<baseDomain> or the Namespace's annotation; an explicit
// spec.host must lie under the tenant host or an allowed suffix.
func TestTenantHost(t *testing.T) {
	for name, c := range map[string]struct {
		spec, input    string
		annotations    map[string]any
		otherNamespace bool   // the Namespace sent is tenant-other's
		want           string // hostname, or a substring of the Fatal message
		fatal          bool
	}{
		"default":                          {spec: `{}`, annotations: map[string]any{}, want: "demo.tenant-demo.tenants.example.com:443"},
		"namespace not found":              {spec: `{}`, want: "demo.tenant-demo.tenants.example.com:443"},
		"base domain":                      {spec: `{}`, input: `{baseDomain: k8s.example.org}`, annotations: map[string]any{}, want: "demo.tenant-demo.k8s.example.org:443"},
		"platform annotation":              {spec: `{}`, input: `{allowedTenantHostSuffixes: [example.com]}`, annotations: map[string]any{function.AnnotationTenantHost: "acme.example.com"}, want: "demo.acme.example.com:443"},
		"annotation under the base domain": {spec: `{}`, annotations: map[string]any{function.AnnotationTenantHost: "acme.tenants.example.com"}, want: "demo.acme.tenants.example.com:443"},
		"annotation outside the allowed domains": {spec: `{}`, annotations: map[string]any{function.AnnotationTenantHost: "victim.example.org"}, fatal: true,
			want: `namespace.tenant-demo.metadata.annotations[tenantkube.io/tenant-host]: Invalid value: "victim.example.org": a tenant host must lie under tenants.example.com`},
		"annotation the base domain itself": {spec: `{}`, annotations: map[string]any{function.AnnotationTenantHost: "tenants.example.com"}, fatal: true,
			want: `annotations[tenantkube.io/tenant-host]: Invalid value: "tenants.example.com"`},
		"annotation a look-alike of a suffix": {spec: `{}`, input: `{allowedTenantHostSuffixes: [example.com]}`, annotations: map[string]any{function.AnnotationTenantHost: "evilexample.com"}, fatal: true,
			want: `annotations[tenantkube.io/tenant-host]: Invalid value: "evilexample.com"`},
		// 221 characters: <N>.<tenant host> must fit in 253 for N of 32.
		"annotation too long": {spec: `{}`, annotations: map[string]any{function.AnnotationTenantHost: longTenantHost}, fatal: true,
			want: `annotations[tenantkube.io/tenant-host]: Invalid value: "` + longTenantHost[:64] + `...": must be at most 220 characters (is 221)`},
		"another namespace's annotation": {spec: `{}`, otherNamespace: true, annotations: map[string]any{function.AnnotationTenantHost: "victim.tenants.example.com"}, want: "demo.tenant-demo.tenants.example.com:443"},
		"suffix above the base domain": {spec: `{}`, input: `{allowedHostSuffixes: [example.com]}`, annotations: map[string]any{}, fatal: true,
			want: `input.allowedHostSuffixes[0]: Invalid value: "example.com": must not be, contain or lie under tenants.example.com`},
		"suffix the base domain": {spec: `{}`, input: `{allowedHostSuffixes: [tenants.example.com]}`, annotations: map[string]any{}, fatal: true,
			want: `input.allowedHostSuffixes[0]: Invalid value: "tenants.example.com"`},
		"suffix under the base domain": {spec: `{}`, input: `{allowedHostSuffixes: [example.net, tenant-other.tenants.example.com]}`, annotations: map[string]any{}, fatal: true,
			want: `input.allowedHostSuffixes[1]: Invalid value: "tenant-other.tenants.example.com"`},
		"suffix under a tenant-host suffix": {spec: `{}`, input: `{allowedTenantHostSuffixes: [corp.example], allowedHostSuffixes: [acme.corp.example]}`, annotations: map[string]any{}, fatal: true,
			want: `input.allowedHostSuffixes[0]: Invalid value: "acme.corp.example": must not be, contain or lie under corp.example`},
		"suffix a look-alike of the base domain": {spec: `{host: api.eviltenants.example.com}`, input: `{allowedHostSuffixes: [eviltenants.example.com]}`, annotations: map[string]any{}, want: "api.eviltenants.example.com:443"},
		"base domain too long": {spec: `{}`, input: `{baseDomain: ` + strings.Repeat("b", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("b", 30) + `}`, fatal: true,
			want: `input.baseDomain: Invalid value: "` + strings.Repeat("b", 63) + `....": must be at most 156 characters (is 158)`},
		"under the tenant host":   {spec: `{host: api.tenant-demo.tenants.example.com}`, annotations: map[string]any{}, want: "api.tenant-demo.tenants.example.com:443"},
		"the tenant host itself":  {spec: `{host: tenant-demo.tenants.example.com}`, annotations: map[string]any{}, want: "tenant-demo.tenants.example.com:443"},
		"under an allowed suffix": {spec: `{host: api.demo.example.net}`, input: `{allowedHostSuffixes: [example.net]}`, annotations: map[string]any{}, want: "api.demo.example.net:443"},
		"another tenant's host": {spec: `{host: demo.tenant-other.tenants.example.com}`, annotations: map[string]any{}, fatal: true,
			want: `spec.host: Forbidden: "demo.tenant-other.tenants.example.com": a host must be the tenant host or lie under tenant-demo.tenants.example.com`},
		"a suffix look-alike": {spec: `{host: eviltenant-demo.tenants.example.com}`, annotations: map[string]any{}, fatal: true, want: `spec.host: Forbidden: "eviltenant-demo.tenants.example.com"`},
		"a wildcard API host": {spec: `{host: "*.tenant-demo.tenants.example.com"}`, input: `{allowedHostSuffixes: [example.net]}`, annotations: map[string]any{}, fatal: true,
			// spec.host is a DNS name (the XRD's pattern, spec.Validate):
			// no wildcard, whatever the platform allows for ingress hosts.
			want: `spec.host: Invalid value: "*.tenant-demo.tenants.example.com": a lowercase RFC 1123 subdomain`},
		"the platform's host": {spec: `{host: tenants.example.com}`, annotations: map[string]any{}, fatal: true, want: `spec.host: Forbidden: "tenants.example.com"`},
		"under the default once annotated": {spec: `{host: api.tenant-demo.tenants.example.com}`, input: `{allowedTenantHostSuffixes: [example.com]}`, annotations: map[string]any{function.AnnotationTenantHost: "acme.example.com"}, fatal: true,
			want: `spec.host: Forbidden: "api.tenant-demo.tenants.example.com": a host must be the tenant host or lie under acme.example.com`},
		"bad annotation": {spec: `{}`, annotations: map[string]any{function.AnnotationTenantHost: "Not_A_Host"}, fatal: true,
			want: `namespace.tenant-demo.metadata.annotations[tenantkube.io/tenant-host]: Invalid value: "Not_A_Host"`},
	} {
		t.Run(name, func(t *testing.T) {
			ns := "tenant-demo"
			if c.otherNamespace {
				ns = "tenant-other"
			}
			rsp := fntest.Call{Spec: c.spec, Input: c.input, Required: namespaceAnswer(t, ns, c.annotations)}.Run(t, fn)
			msg := fntest.FatalMessage(rsp)
			switch {
			case c.fatal && !strings.Contains(msg, c.want):
				t.Errorf("Fatal %q, want one containing %q", msg, c.want)
			case c.fatal:
				if len(rsp.GetDesired().GetResources()) != 0 {
					t.Errorf("a Fatal response composes %v", fntest.DesiredNames(rsp))
				}
			case msg != "":
				t.Errorf("Fatal: %s", msg)
			case hostname(t, rsp) != c.want:
				t.Errorf("hostname %v, want %s", hostname(t, rsp), c.want)
			}
		})
	}
}

// TestHostBeforeTheNamespaceArrives: the first call of a reconcile, without
// the Namespace, asks for it and composes the default; an explicit host is
// not held against a tenant host it does not know yet (a Fatal result
// would end Crossplane's requirements loop before the Namespace came).
func TestHostBeforeTheNamespaceArrives(t *testing.T) {
	rsp := fntest.Call{Spec: `{host: api.acme.example.com}`}.Run(t, fn)
	if msg := fntest.FatalMessage(rsp); msg != "" {
		t.Fatalf("Fatal before the Namespace arrived: %s", msg)
	}
	sel := rsp.GetRequirements().GetResources()[function.RequirementNamespace]
	if sel.GetKind() != "Namespace" || sel.GetMatchName() != "tenant-demo" {
		t.Errorf("Namespace requirement %v", sel)
	}
	rsp = fntest.Call{Spec: `{host: api.acme.example.com}`, Input: `{allowedTenantHostSuffixes: [acme.example.com]}`,
		Required: namespaceAnswer(t, "tenant-demo", map[string]any{function.AnnotationTenantHost: "acme.example.com"})}.Run(t, fn)
	if msg := fntest.FatalMessage(rsp); msg != "" || hostname(t, rsp) != "api.acme.example.com:443" {
		t.Errorf("with the annotation: Fatal %q, hostname %v", msg, hostname(t, rsp))
	}
}

// TestSameClusterNameInTwoNamespaces (findings 2, 3): two tenants' clusters
// called demo compose no name outside their namespaces in common.
func TestSameClusterNameInTwoNamespaces(t *testing.T) {
	outside := func(ns string) map[string]bool {
		rsp := fntest.Call{Namespace: ns, Spec: `{}`, Required: namespaceAnswer(t, ns, map[string]any{})}.Run(t, fn)
		if msg := fntest.FatalMessage(rsp); msg != "" {
			t.Fatal(msg)
		}
		out := map[string]bool{hostname(t, rsp).(string): true}
		for name, r := range rsp.GetDesired().GetResources() {
			obj := r.GetResource().AsMap()
			if ns2, _ := fntest.Get(obj, "metadata", "namespace").(string); ns2 == "" {
				out[obj["kind"].(string)+"/"+fntest.Get(obj, "metadata", "name").(string)] = true
			} else if ns2 != ns {
				t.Errorf("%s lands in %s, not %s", name, ns2, ns)
			}
		}
		return out
	}
	a, b := outside("tenant-a"), outside("tenant-b")
	for k := range a {
		if b[k] {
			t.Errorf("tenant-a/demo and tenant-b/demo share %s", k)
		}
	}
	if !a["DataStore/tenant-a.demo"] || !a["demo.tenant-a.tenants.example.com:443"] {
		t.Errorf("tenant-a/demo outside its namespace: %v", a)
	}
}

// TestComponentResourceBounds (finding 4): a control-plane component runs
// in the management cluster; its explicit resources stop at the largest
// preset's, 32 CPUs and 256Gi.
func TestComponentResourceBounds(t *testing.T) {
	for spec, want := range map[string]string{
		`{controlPlane: {apiServer: {resources: {cpu: 32, memory: 256Gi}}}}`:     "",
		`{controlPlane: {apiServer: {resources: {cpu: 32001m}}}}`:                `spec.controlPlane.apiServer.resources.cpu: Invalid value: "32001m": resources.cpu must be at most 32`,
		`{controlPlane: {scheduler: {resources: {memory: 256Gi}}}}`:              "",
		`{controlPlane: {konnectivity: {server: {resources: {memory: 257Gi}}}}}`: `spec.controlPlane.konnectivity.server.resources.memory: Invalid value: "257Gi": resources.memory must be at most 256Gi`,
	} {
		msg := fntest.FatalMessage(fntest.Call{Spec: spec}.Run(t, fn))
		if (want == "" && msg != "") || !strings.Contains(msg, want) {
			t.Errorf("%s: Fatal %q, want %q", spec, msg, want)
		}
	}
}

// TestDottedNamesNeverReachTheDataStore: (a, b.c) and (a.b, c) would both
// be "a.b.c"; a claim name or namespace with a dot (Kubernetes allows dots
// in object names) is refused before anything is named.
func TestDottedNamesNeverReachTheDataStore(t *testing.T) {
	for _, c := range []struct{ ns, n, field string }{
		{"a", "b.c", "crossplane.io/claim-name"},
		{"a.b", "c", "crossplane.io/claim-namespace"},
		{"tenant-demo", "team.a", "crossplane.io/claim-name"},
	} {
		rsp := fntest.Call{Namespace: c.ns, Name: c.n, Spec: `{}`}.Run(t, fn)
		val := c.n
		if c.field == "crossplane.io/claim-namespace" {
			val = c.ns
		}
		if msg := fntest.FatalMessage(rsp); !strings.Contains(msg, `metadata.labels[`+c.field+`]: Invalid value: "`+val+`"`) {
			t.Errorf("(%s, %s): Fatal %q", c.ns, c.n, msg)
		}
		if len(rsp.GetDesired().GetResources()) != 0 {
			t.Errorf("(%s, %s): composed %v", c.ns, c.n, fntest.DesiredNames(rsp))
		}
	}
}

// TestSharedDataStoreNameHasNoDot: a shared DataStore cannot be named like
// a tenant's dedicated one.
func TestSharedDataStoreNameHasNoDot(t *testing.T) {
	if msg := fntest.FatalMessage(fntest.Call{Spec: `{}`, Input: `{dataStoreName: tenant-demo.demo}`}.Run(t, fn)); !strings.Contains(msg, `input.dataStoreName: Invalid value: "tenant-demo.demo"`) {
		t.Errorf("Fatal %q", msg)
	}
}

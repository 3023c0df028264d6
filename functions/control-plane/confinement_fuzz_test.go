package main

import (
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// FuzzTenantConfinement: whatever the claim's namespace, name,
// spec and the Namespace's tenant-host annotation, every composed
// namespaced object lands in NS or the cluster's management namespace,
// the cluster-scoped objects (the DataStore, the management Namespace) are
// named "<NS>.<N>" and "tenantkube-<digest of NS, N>" — so each names one
// tenant only — and the
// tenant API server's host lies under the tenant host.
func FuzzTenantConfinement(f *testing.F) {
	for _, s := range [][4]string{
		{"tenant-demo", "demo", `{}`, ""},
		{"prod", "team-a", `{"host":"api.prod.tenants.example.com"}`, ""},
		{"prod-team", "a", `{"host":"x.other.tenants.example.com"}`, ""},
		{"prod", "team.a", `{}`, ""},
		{"a.b", "c", `{}`, ""},
		{strings.Repeat("n", 63), strings.Repeat("c", 32), `{"controlPlane":{"replicas":7}}`, "acme.example.com"},
		{"tenant-demo", "demo", `{"host":"api.acme.example.com"}`, "acme.example.com"},
		{"tenant-demo", "demo", `{}`, "Bad_Host"},
		{"", "", `[]`, ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ns, n, spec, annotation string) {
		var specV any
		_ = json.Unmarshal([]byte(spec), &specV)
		xr, err := fntest.Struct(fntest.TenantXR(ns, n, specV))
		if err != nil {
			return
		}
		nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
		if annotation != "" {
			nsObj["metadata"].(map[string]any)["annotations"] = map[string]any{function.AnnotationTenantHost: annotation}
		}
		nsStruct, err := fntest.Struct(nsObj)
		if err != nil {
			return
		}
		req := &fnv1.RunFunctionRequest{
			Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
			RequiredResources: map[string]*fnv1.Resources{function.RequirementNamespace: {Items: []*fnv1.Resource{{Resource: nsStruct}}}},
		}
		rsp, err := fntest.Run((&Function{}).RunFunction, req)
		if err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		if fntest.FatalMessage(rsp) != "" {
			return
		}
		if strings.Contains(ns, ".") || strings.Contains(n, ".") {
			t.Fatalf("ns=%q n=%q: a dotted identity was accepted", ns, n)
		}
		if err := fntest.CheckConfined(rsp, nil, ns, n, true, fntest.ClusterScoped{
			"kamaji.clastix.io/DataStore": func(ns, n string) string { return ns + "." + n },
			"/Namespace":                  fntest.ManagementNamespace,
		}); err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		tenantHost := ns + ".tenants.example.com"
		if annotation != "" {
			tenantHost = annotation
		}
		host := strings.TrimSuffix(fntest.Get(rsp.GetDesired().GetResources()["kamajicontrolplane"].GetResource().AsMap(), "spec", "network", "ingress", "hostname").(string), ":443")
		if host != tenantHost && !strings.HasSuffix(host, "."+tenantHost) {
			t.Fatalf("ns=%q n=%q spec=%s: host %q is not under the tenant host %q", ns, n, spec, host, tenantHost)
		}
		// What the shared ingress controller reads: only this host, only
		// to a Service of NS.
		v := fntest.ReadAsNginx(cpinput.DefaultIngressClassName, fntest.SharedIngresses(rsp))
		for h, r := range v.Routes {
			if h != host || r.HTTPSTo.Namespace != ns {
				t.Fatalf("ns=%q n=%q spec=%s: the shared ingress routes %s to %+v; want only %s to a Service of %s", ns, n, spec, h, r.HTTPSTo, host, ns)
			}
		}
		if len(v.Routes) != 1 {
			t.Fatalf("ns=%q n=%q spec=%s: %d hosts routed, want 1", ns, n, spec, len(v.Routes))
		}
	})
}

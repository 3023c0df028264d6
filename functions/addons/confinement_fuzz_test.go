package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// FuzzTenantConfinement: whatever the claim's namespace, name
// and spec, every composed object lands in NS (the add-ons compose nothing
// cluster-scoped), every host of the proxied Ingresses lies under the tenant
// host, and an earlier step's desired object is kept.
func FuzzTenantConfinement(f *testing.F) {
	for _, s := range [][3]string{
		{"tenant-demo", "demo", everything},
		{"prod", "team-a", `addons: {ingressNginx: {enabled: true, hosts: [a.prod.tenants.example.com]}}`},
		{"prod-team", "a", `addons: {ingressNginx: {enabled: true, hosts: [a.prod.tenants.example.com]}}`},
		{"x", "y", `addons: {ingressNginx: {enabled: true, hosts: ["*.x.tenants.example.com"]}}`},
		{"x", "y.z", ``},
		{"x", "y", `addons: {cilium: {valuesOverride: {a: {b: [1, 2]}}}}`},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ns, n, spec string) {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
			return
		}
		x, err := fntest.Struct(fntest.TenantXR(ns, n, m))
		if err != nil {
			return
		}
		nsObj, err := fntest.Struct(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
		if err != nil {
			return
		}
		earlier, _ := fntest.Struct(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"})
		req := &fnv1.RunFunctionRequest{
			Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: x}},
			Desired:           &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier-step": {Resource: earlier}}},
			RequiredResources: map[string]*fnv1.Resources{function.RequirementNamespace: {Items: []*fnv1.Resource{{Resource: nsObj}}}},
		}
		rsp, err := fntest.Run(runFn, req)
		if err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		if _, ok := rsp.GetDesired().GetResources()["earlier-step"]; !ok {
			t.Fatal("an earlier step's desired object was dropped")
		}
		if err := fntest.CheckConfined(rsp, map[string]bool{"earlier-step": true}, ns, n, false, nil); err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		tenantHost := ns + ".tenants.example.com"
		for _, ing := range fntest.SharedIngresses(rsp) {
			rules, _ := fntest.Get(ing, "spec", "rules").([]any)
			for _, r := range rules {
				h := r.(map[string]any)["host"].(string)
				if h != tenantHost && !strings.HasSuffix(h, "."+tenantHost) {
					t.Fatalf("ns=%q spec=%s: host %q outside the tenant host %q", ns, spec, h, tenantHost)
				}
			}
		}
	})
}

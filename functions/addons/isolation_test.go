package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// withNamespace is c with the tenant's Namespace answered, its tenant-host
// annotation set to tenantHost unless that is "".
func withNamespace(c fntest.Call, tenantHost string) fntest.Call {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: tenant-demo"
	if tenantHost != "" {
		ns += ", annotations: {" + function.AnnotationTenantHost + ": " + tenantHost + "}"
	}
	if c.Required == nil {
		c.Required = map[string][]string{}
	}
	c.Required[function.RequirementNamespace] = []string{ns + "}"}
	return c
}

// TestIngressHosts: the hosts a tenant publishes on
// the shared management ingress lie under its tenant host (or a suffix the
// platform allows); wildcards only where the platform allows them.
func TestIngressHosts(t *testing.T) {
	const p = "spec.addons.ingressNginx.hosts"
	hosts := func(h ...string) string {
		return "addons: {ingressNginx: {enabled: true, hosts: [" + strings.Join(h, ", ") + "]}}"
	}
	for _, c := range []struct {
		spec, input string
		tenantHost  string
		fatal       string
	}{
		{spec: hosts("tenant-demo.tenants.example.com", "a.b.tenant-demo.tenants.example.com")},
		{spec: hosts("demo.tenant-other.tenants.example.com"), fatal: p + `[0]: Forbidden: "demo.tenant-other.tenants.example.com": a host must be the tenant host or lie under tenant-demo.tenants.example.com`},
		{spec: hosts("tenants.example.com"), fatal: p + `[0]: Forbidden: "tenants.example.com"`},
		{spec: hosts("example.org"), fatal: p + `[0]: Forbidden: "example.org"`},
		{spec: hosts("example.org"), input: "allowedHostSuffixes: [example.org]"},
		{spec: hosts("shop.example.org"), input: "allowedHostSuffixes: [example.org]"},
		{spec: hosts("'*.tenant-demo.tenants.example.com'"), fatal: p + `[0]: Forbidden: "*.tenant-demo.tenants.example.com": wildcard hosts are not allowed on this platform`},
		{spec: hosts("'*.tenant-demo.tenants.example.com'"), input: "allowWildcardHosts: true"},
		{spec: hosts("'*.tenants.example.com'"), input: "allowWildcardHosts: true", fatal: p + `[0]: Forbidden: "*.tenants.example.com"`},
		{spec: hosts("'*.com'"), input: "allowWildcardHosts: true", fatal: p + `[0]: Forbidden: "*.com"`},
		{spec: hosts("shop.acme.example"), input: "allowedTenantHostSuffixes: [acme.example]", tenantHost: "acme.example"},
		{spec: hosts("shop.tenant-demo.tenants.example.com"), input: "allowedTenantHostSuffixes: [acme.example]", tenantHost: "acme.example", fatal: p + `[0]: Forbidden`},
		// The annotation is held against the platform's domains too.
		{spec: hosts("shop.victim.example"), tenantHost: "victim.example",
			fatal: `namespace.tenant-demo.metadata.annotations[tenantkube.io/tenant-host]: Invalid value: "victim.example": a tenant host must lie under tenants.example.com`},
		{spec: hosts("shop.a.tenants.example.com"), tenantHost: "a.tenants.example.com"},
		// Allowed suffixes never open tenants' own hosts to all tenants.
		{spec: hosts("example.org"), input: "allowedHostSuffixes: [example.com]", fatal: `input.allowedHostSuffixes[0]: Invalid value: "example.com": must not be, contain or lie under tenants.example.com`},
		{spec: hosts("example.org"), input: "allowedHostSuffixes: [tenant-other.tenants.example.com]", fatal: `input.allowedHostSuffixes[0]: Invalid value: "tenant-other.tenants.example.com"`},
		{spec: hosts("example.org"), input: "{allowedTenantHostSuffixes: [corp.example], allowedHostSuffixes: [corp.example]}", fatal: `input.allowedHostSuffixes[0]: Invalid value: "corp.example"`},
		// Checked whatever the expose method: a LoadBalancer switched back
		// to Proxied publishes them.
		{spec: "addons: {ingressNginx: {enabled: true, exposeMethod: LoadBalancer, hosts: [example.org]}}", fatal: p + `[0]: Forbidden: "example.org"`},
	} {
		rsp := withNamespace(fntest.Call{Spec: c.spec, Input: c.input}, c.tenantHost).Run(t, runFn)
		msg := fntest.FatalMessage(rsp)
		switch {
		case c.fatal == "" && msg != "":
			t.Errorf("%s (%s): Fatal %s", c.spec, c.input, msg)
		case c.fatal != "" && !strings.Contains(msg, c.fatal):
			t.Errorf("%s (%s): Fatal %q, want one containing %q", c.spec, c.input, msg, c.fatal)
		case c.fatal != "" && len(rsp.GetDesired().GetResources()) != 0:
			t.Errorf("%s: a Fatal response composes %d objects", c.spec, len(rsp.GetDesired().GetResources()))
		}
	}
}

// TestAddonBounds: at most 32 hosts; a valuesOverride of at
// most 64 top-level keys; all overrides together at most
// input.maxValuesOverrideBytes of JSON (64 KiB). Each at the edge and past it.
func TestAddonBounds(t *testing.T) {
	hostList := func(n int) string {
		var h []string
		for i := 0; i < n; i++ {
			h = append(h, fmt.Sprintf("h%d.tenant-demo.tenants.example.com", i))
		}
		return "addons: {ingressNginx: {enabled: true, hosts: [" + strings.Join(h, ", ") + "]}}"
	}
	keys := func(n int) string {
		var kv []string
		for i := 0; i < n; i++ {
			kv = append(kv, fmt.Sprintf("k%d: 1", i))
		}
		return "addons: {cilium: {valuesOverride: {" + strings.Join(kv, ", ") + "}}}"
	}
	// {"a":"<n x's>"} is n+8 bytes of JSON.
	sized := func(release string, n int) string {
		return fmt.Sprintf(`%s: {valuesOverride: {a: "%s"}}`, release, strings.Repeat("x", n-8))
	}
	for _, c := range []struct{ spec, input, fatal string }{
		{spec: hostList(32)},
		// 254 characters, under the tenant host.
		{spec: "addons: {ingressNginx: {enabled: true, hosts: [" + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 30) + ".tenant-demo.tenants.example.com]}}",
			fatal: `spec.addons.ingressNginx.hosts[0]: Invalid value: "` + strings.Repeat("a", 63) + `....": must be at most 253 characters (is 254)`},
		{spec: hostList(33), fatal: "spec.addons.ingressNginx.hosts: Too many: 33: must have at most 32 items"},
		{spec: keys(64)},
		{spec: keys(65), fatal: "spec.addons.cilium.valuesOverride: Too many: 65: must have at most 64 items"},
		{spec: "addons: {" + sized("cilium", 65536) + "}"},
		{spec: "addons: {" + sized("cilium", 65537) + "}", fatal: `spec.addons.cilium.valuesOverride: Invalid value: "<65537 bytes of JSON>": Too long: all valuesOverride together may be at most 65536 bytes`},
		{spec: "addons: {" + sized("cilium", 32768) + ", " + sized("coredns", 32768) + "}"},
		{spec: "addons: {" + sized("cilium", 32768) + ", " + sized("coredns", 32769) + "}", fatal: "65537 with the overrides before it"},
		{spec: "addons: {" + sized("cilium", 1024) + "}", input: "maxValuesOverrideBytes: 1024"},
		{spec: "addons: {" + sized("cilium", 1025) + "}", input: "maxValuesOverrideBytes: 1024", fatal: `spec.addons.cilium.valuesOverride: Invalid value: "<1025 bytes of JSON>": Too long: all valuesOverride together may be at most 1024 bytes`},
	} {
		rsp := withNamespace(fntest.Call{Spec: c.spec, Input: c.input}, "").Run(t, runFn)
		msg := fntest.FatalMessage(rsp)
		switch {
		case c.fatal == "" && msg != "":
			t.Errorf("%.80s (%s): Fatal %.300s", c.spec, c.input, msg)
		case c.fatal != "" && !strings.Contains(msg, c.fatal):
			t.Errorf("%.80s (%s): Fatal %.300q, want one containing %q", c.spec, c.input, msg, c.fatal)
		}
		if len(msg) > 2048 {
			t.Errorf("%.80s: the Fatal message is %d bytes: it must name the size, not repeat the value", c.spec, len(msg))
		}
	}
}

package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// targetPort follows a backend to the Service port it names and returns
// that port's targetPort and appProtocol.
func targetPort(svc *corev1.Service, b fntest.Backend) (int32, string) {
	if b.Service != svc.Name || b.Namespace != svc.Namespace {
		return 0, ""
	}
	for _, p := range svc.Spec.Ports {
		if b.Port == int64(p.Port) || b.Port == p.Name {
			proto := ""
			if p.AppProtocol != nil {
				proto = *p.AppProtocol
			}
			return p.TargetPort.IntVal, proto
		}
	}
	return 0, ""
}

// Read as ingress-nginx reads them (fntest.ReadAsNginx), the Proxied
// Ingresses send each host's TLS to the tenant's HTTPS node port (30001)
// and its plain HTTP (ACME HTTP-01, redirects) to the tenant's HTTP node
// port (30000), the node ports the tenant's ingress-nginx listens on, with
// no snippet annotation (which would need allow-snippet-annotations on the
// shared controller).
func TestProxiedIngressRoutesBothSchemes(t *testing.T) {
	rsp := fntest.Call{Spec: "addons: {ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com, '*.apps.tenant-demo.tenants.example.com', tenant-demo.tenants.example.com]}}",
		Input: "allowWildcardHosts: true"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	var svc corev1.Service
	decodeObject(t, rsp.GetDesired().GetResources()[composedProxyService].GetResource().AsMap(), &svc)
	ings := fntest.SharedIngresses(rsp)
	if len(ings) != 2 {
		t.Fatalf("%d Ingresses, want 2", len(ings))
	}
	for _, ing := range ings {
		if n := len(fntest.Get(ing, "spec", "rules").([]any)); n != 2 {
			t.Errorf("%v: %d rules, want one per distinct host", fntest.Get(ing, "metadata", "name"), n)
		}
	}
	v := fntest.ReadAsNginx("nginx", ings)
	if len(v.Snippets) > 0 {
		t.Errorf("snippet annotations %v", v.Snippets)
	}
	for _, host := range []string{"tenant-demo.tenants.example.com", "*.apps.tenant-demo.tenants.example.com"} {
		r, ok := v.Routes[host]
		if !ok {
			t.Errorf("%s: not routed", host)
			continue
		}
		if !r.Passthrough {
			t.Errorf("%s: TLS not passed through", host)
		}
		for scheme, w := range map[string]struct {
			to    fntest.Backend
			port  int32
			proto string
		}{"https": {r.HTTPSTo, 30001, "https"}, "http": {r.HTTPTo, 30000, "http"}} {
			port, proto := targetPort(&svc, w.to)
			if port != w.port || proto != w.proto {
				t.Errorf("%s: %s reaches %+v, target port %d (appProtocol %q), want %d (%q)", host, scheme, w.to, port, proto, w.port, w.proto)
			}
		}
	}
	// <namespace>-<service>-80, the service demo-app- and 128 bits of
	// sha256("app/tenant-demo/demo") in base32 (Python hashlib, base64).
	if d := cmp.Diff("tenant-demo-demo-app-rqqefm5jthbbytoacbu6cqnmim-80", ProxyHTTPUpstream(function.Identity{Name: "demo", Namespace: "tenant-demo"})); d != "" {
		t.Errorf("HTTP upstream (-want +got):\n%s", d)
	}
}

func decodeObject(t *testing.T, m map[string]any, out any) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
}

// The proxy Service follows the add-on and its expose method, not hosts;
// the Ingress needs hosts too (the Cozystack chart's ingress_proxied_gate
// test, with hosts this tenant may claim).
func TestProxiedServiceGate(t *testing.T) {
	cases := map[string]struct {
		spec          string
		service, ingr bool
	}{
		"Disabled":            {"{}", false, false},
		"ProxiedNoHosts":      {"addons: {ingressNginx: {enabled: true, exposeMethod: Proxied, hosts: []}}", true, false},
		"ProxiedWithHosts":    {"addons: {ingressNginx: {enabled: true, exposeMethod: Proxied, hosts: [app.tenant-demo.tenants.example.com]}}", true, true},
		"DisabledWithHosts":   {"addons: {ingressNginx: {enabled: false, exposeMethod: Proxied, hosts: [app.tenant-demo.tenants.example.com]}}", false, false},
		"LoadBalancerNoHosts": {"addons: {ingressNginx: {enabled: true, exposeMethod: LoadBalancer}}", false, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Call{Spec: c.spec}.Run(t, runFn)
			fntest.NoFatal(t, rsp)
			res := rsp.GetDesired().GetResources()
			if _, ok := res[composedProxyService]; ok != c.service {
				t.Errorf("proxy Service composed: %v, want %v", ok, c.service)
			}
			if _, ok := res[composedProxyIngress]; ok != c.ingr {
				t.Errorf("proxy Ingress composed: %v, want %v", ok, c.ingr)
			}
		})
	}
}

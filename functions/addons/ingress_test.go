package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// nginxView is how ingress-nginx reads one host of an Ingress: the upstream
// of its location "/" (the first path "/" wins; a later one only adds its
// upstream), every upstream the paths create, named
// <namespace>-<service>-<port as written>, and the upstream a request of
// each scheme ends at.
type nginxView struct {
	location  string
	upstreams map[string]networkingv1.IngressServiceBackend
	byScheme  map[string]string
}

// snippetPattern is the configuration snippet's switch of the upstream for
// plain HTTP.
var snippetPattern = regexp.MustCompile(`^if \(\$scheme = http\) \{\n\s*set \$proxy_upstream_name "([^"]+)";\n\s*set \$proxy_host \$proxy_upstream_name;\n\}\n$`)

func readAsNginx(t *testing.T, ing *networkingv1.Ingress, host string) nginxView {
	t.Helper()
	v := nginxView{upstreams: map[string]networkingv1.IngressServiceBackend{}, byScheme: map[string]string{}}
	for _, r := range ing.Spec.Rules {
		if r.Host != host {
			continue
		}
		for _, p := range r.HTTP.Paths {
			b := p.Backend.Service
			port := fmt.Sprint(b.Port.Number)
			if b.Port.Number == 0 {
				port = b.Port.Name
			}
			name := ing.Namespace + "-" + b.Name + "-" + port
			v.upstreams[name] = *b
			if p.Path == "/" && v.location == "" {
				v.location = name
			}
		}
	}
	a := ing.Annotations
	// TLS is passed through by SNI to the host's location "/" upstream.
	if a["nginx.ingress.kubernetes.io/ssl-passthrough"] == "true" {
		v.byScheme["https"] = v.location
	}
	// Plain HTTP is proxied to location "/"; unless redirected to HTTPS,
	// the snippet may switch the upstream, and AUTO_HTTP keeps the
	// request's scheme towards it.
	if a["nginx.ingress.kubernetes.io/ssl-redirect"] == "false" && a["nginx.ingress.kubernetes.io/backend-protocol"] == "AUTO_HTTP" {
		v.byScheme["http"] = v.location
		if m := snippetPattern.FindStringSubmatch(a["nginx.ingress.kubernetes.io/configuration-snippet"]); m != nil {
			v.byScheme["http"] = m[1]
		}
	}
	return v
}

// targetPort follows an upstream to the Service port it names and returns
// that port's targetPort and appProtocol.
func targetPort(svc *corev1.Service, b networkingv1.IngressServiceBackend) (int32, string) {
	if b.Name != svc.Name {
		return 0, ""
	}
	for _, p := range svc.Spec.Ports {
		if (b.Port.Number != 0 && p.Port == b.Port.Number) || (b.Port.Name != "" && p.Name == b.Port.Name) {
			proto := ""
			if p.AppProtocol != nil {
				proto = *p.AppProtocol
			}
			return p.TargetPort.IntVal, proto
		}
	}
	return 0, ""
}

// Read as ingress-nginx reads it, the Proxied Ingress
// sends each host's TLS to the tenant's HTTPS node port (30001) and its
// plain HTTP (ACME HTTP-01, redirects) to the tenant's HTTP node port
// (30000), the node ports the tenant's ingress-nginx listens on.
func TestProxiedIngressRoutesBothSchemes(t *testing.T) {
	rsp := fntest.Call{Spec: "addons: {ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com, '*.apps.tenant-demo.tenants.example.com', tenant-demo.tenants.example.com]}}",
		Input: "allowWildcardHosts: true"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	var svc corev1.Service
	var ing networkingv1.Ingress
	decodeObject(t, rsp.GetDesired().GetResources()[composedProxyService].GetResource().AsMap(), &svc)
	decodeObject(t, rsp.GetDesired().GetResources()[composedProxyIngress].GetResource().AsMap(), &ing)
	if len(ing.Spec.Rules) != 2 {
		t.Errorf("%d rules, want one per distinct host", len(ing.Spec.Rules))
	}
	for _, host := range []string{"tenant-demo.tenants.example.com", "*.apps.tenant-demo.tenants.example.com"} {
		v := readAsNginx(t, &ing, host)
		want := map[string]struct {
			port  int32
			proto string
		}{"https": {30001, "https"}, "http": {30000, "http"}}
		for scheme, w := range want {
			up, ok := v.byScheme[scheme]
			if !ok {
				t.Errorf("%s: nginx routes no %s", host, scheme)
				continue
			}
			b, ok := v.upstreams[up]
			if !ok {
				t.Errorf("%s: %s goes to upstream %q, which no path creates (have %v)", host, scheme, up, v.upstreams)
				continue
			}
			port, proto := targetPort(&svc, b)
			if port != w.port || proto != w.proto {
				t.Errorf("%s: %s reaches target port %d (appProtocol %q), want %d (%q)", host, scheme, port, proto, w.port, w.proto)
			}
		}
	}
	if got, want := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number, int32(443); got != want {
		t.Errorf("first path port %d, want %d", got, want)
	}
	if d := cmp.Diff("tenant-demo-demo-ingress-nginx-80", ProxyHTTPUpstream(function.Identity{Name: "demo", Namespace: "tenant-demo"})); d != "" {
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

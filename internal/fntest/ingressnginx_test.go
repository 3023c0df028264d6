package fntest

import "testing"

// The API server's objects, read through client-go's unstructured decoder,
// carry int64 numbers; rendered YAML carries float64. Both name the same
// upstream: "<namespace>-<service>-<port>".
func TestReadAsNginxPortNumbers(t *testing.T) {
	ingress := func(name string, port any, ann map[string]any) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name, "namespace": "team", "annotations": ann},
			"spec": map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{
				"host": "a.example", "http": map[string]any{"paths": []any{map[string]any{
					"path": "/", "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": "svc", "port": map[string]any{"number": port}}},
				}}},
			}}},
		}
	}
	for _, tc := range []struct {
		name      string
		tls, http any
	}{
		{"float64 (YAML)", 443.0, 80.0},
		{"int64 (API server)", int64(443), int64(80)},
		{"int", 443, 80},
	} {
		v := ReadAsNginx("nginx", []map[string]any{
			ingress("svc", tc.tls, map[string]any{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}),
			ingress("svc-http", tc.http, map[string]any{"nginx.ingress.kubernetes.io/canary": "true", "nginx.ingress.kubernetes.io/canary-weight": "100"}),
		})
		r := v.Routes["a.example"]
		if r.HTTPS != "team-svc-443" || r.HTTP != "team-svc-80" || !r.Canary || !r.Passthrough {
			t.Errorf("%s: route %+v, want HTTPS team-svc-443 passed through, HTTP team-svc-80 by the canary", tc.name, r)
		}
		if want := (Backend{Namespace: "team", Service: "svc", Port: int64(80)}); r.HTTPTo != want {
			t.Errorf("%s: HTTP backend %+v, want %+v", tc.name, r.HTTPTo, want)
		}
	}
}

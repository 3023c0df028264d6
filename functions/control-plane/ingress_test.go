package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// Read as ingress-nginx reads the Ingresses of its class (those composed
// and the one Kamaji builds from the KamajiControlPlane), the cluster's
// host passes TLS through to port 6443 of a Service selecting the
// control-plane pods Kamaji labels kamaji.clastix.io/name: N, and nothing
// else claims the host or names an upstream: Kamaji's own Ingress (upstream
// <NS>-<N>-6443) is of a class no controller serves.
func TestAPIServerIngressRoutesToControlPlane(t *testing.T) {
	const host = "demo.tenant-demo.tenants.example.com"
	// demo-api- and 128 bits of sha256("api/tenant-demo/demo") in base32
	// (Python hashlib, base64).
	const svcName = "demo-api-palshf35yaol7elrqnhhx3go7i"
	for _, class := range []string{"", "haproxy"} {
		input := `{}`
		served := "nginx"
		if class != "" {
			input, served = `{ingressClassName: `+class+`}`, class
		}
		rsp := fntest.Call{Spec: `{}`, Input: input}.Run(t, fn)
		fntest.NoFatal(t, rsp)
		v := fntest.ReadAsNginx(served, fntest.SharedIngresses(rsp))
		want := fntest.Nginx{
			Upstreams: map[string]fntest.Backend{"tenant-demo-" + svcName + "-6443": {Namespace: "tenant-demo", Service: svcName, Port: int64(6443)}},
			Made:      map[string][]string{"tenant-demo/" + svcName: {"tenant-demo-" + svcName + "-6443"}},
			Routes: map[string]fntest.Route{host: {
				HTTPS: "tenant-demo-" + svcName + "-6443", HTTP: "tenant-demo-" + svcName + "-6443", Passthrough: true,
				HTTPSTo: fntest.Backend{Namespace: "tenant-demo", Service: svcName, Port: int64(6443)},
				HTTPTo:  fntest.Backend{Namespace: "tenant-demo", Service: svcName, Port: int64(6443)},
			}},
		}
		if d := cmp.Diff(want, v); d != "" {
			t.Errorf("class %q: nginx view (-want +got):\n%s", served, d)
		}
		svc := fntest.DesiredObject(t, rsp, nameAPIServerService)
		wantSvc := map[string]any{
			"type":     "ClusterIP",
			"selector": map[string]any{"kamaji.clastix.io/name": "demo"},
			"ports":    []any{map[string]any{"name": "kube-apiserver", "protocol": "TCP", "port": 6443.0, "targetPort": 6443.0}},
		}
		if d := cmp.Diff(wantSvc, fntest.Get(svc, "spec")); d != "" {
			t.Errorf("Service spec (-want +got):\n%s", d)
		}
		if got := fntest.Get(svc, "metadata", "name"); got != svcName {
			t.Errorf("Service name %v", got)
		}
		kcp := fntest.DesiredObject(t, rsp, nameKamajiControlPlane)
		if got := fntest.Get(kcp, "spec", "network", "ingress", "className"); got != "tenantkube-unserved" {
			t.Errorf("Kamaji's Ingress class %v", got)
		}
		if got := fntest.Get(kcp, "spec", "network", "ingress", "hostname"); got != host+":443" {
			t.Errorf("Kamaji's Ingress hostname %v (the API server certificate's SAN and Cluster API's endpoint)", got)
		}
	}
}

package fntest

import (
	"fmt"
	"net"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// This file models, for tests, how the shared controllers of the
// management cluster name and route what tenantkube composes:
//
//   - ingress-nginx (controller v1.15,
//     https://github.com/kubernetes/ingress-nginx): an upstream is named
//     "<namespace>-<service>-<port number or name>"
//     (internal/ingress/controller/util.go upstreamName); the first
//     Ingress to name an upstream makes it (Ingresses in creation order);
//     a host's location "/" comes from the first non-canary Ingress with
//     that host; with ssl-passthrough, TLS goes at layer 4 to the Service
//     of that location; a canary Ingress (canary: "true") for the same
//     host, path and path type with canary-weight 100 (of the default
//     total 100) gets every request nginx proxies at layer 7
//     (controller.go mergeAlternativeBackends, lua/balancer.lua).
//   - Kamaji (TenantControlPlane controller,
//     https://github.com/clastix/kamaji internal/resources
//     k8s_service_resource.go, k8s_ingress_resource.go) and its Cluster API
//     provider (controllers/kamajicontrolplane_controller_tcp.go): the
//     TenantControlPlane is named as the KamajiControlPlane; its Service and
//     its Ingress are named as the TenantControlPlane, the Ingress's one
//     path "/" (Prefix) to the Service's port 6443, with the
//     KamajiControlPlane's spec.network.ingress class, host and annotations.

// NginxUpstream is ingress-nginx's upstream name of a Service backend.
func NginxUpstream(namespace, service string, port any) string {
	return fmt.Sprintf("%s-%s-%v", namespace, service, port)
}

// Backend is where an upstream leads: a Service port in a namespace.
type Backend struct {
	Namespace, Service string
	Port               any // int64 number or string name
}

// Route is how ingress-nginx routes one host: per scheme the upstream and
// its backend.
type Route struct {
	HTTPS, HTTP         string
	HTTPSTo, HTTPTo     Backend
	Passthrough, Canary bool
}

// Nginx is ingress-nginx's view of the Ingresses of its class.
type Nginx struct {
	// Upstreams maps each upstream name to the backend of the first
	// Ingress that named it.
	Upstreams map[string]Backend
	// Made lists, per Ingress ("<namespace>/<name>"), the upstream names
	// its paths produce.
	Made map[string][]string
	// Routes maps each host to its route.
	Routes map[string]Route
	// Snippets lists "<namespace>/<name> <annotation>" of every snippet
	// annotation.
	Snippets []string
}

// ReadAsNginx reads ingresses (JSON-like Ingress objects, oldest first) as
// ingress-nginx does for ingress class class; Ingresses of other classes
// are ignored.
func ReadAsNginx(class string, ingresses []map[string]any) Nginx {
	v := Nginx{Upstreams: map[string]Backend{}, Made: map[string][]string{}, Routes: map[string]Route{}}
	type path struct{ host, path, pathType, upstream string }
	var primaries, canaries [][]path
	var passthrough []bool
	for _, ing := range ingresses {
		if c, _ := Get(ing, "spec", "ingressClassName").(string); c != class {
			continue
		}
		ns, _ := Get(ing, "metadata", "namespace").(string)
		name, _ := Get(ing, "metadata", "name").(string)
		ann, _ := Get(ing, "metadata", "annotations").(map[string]any)
		for k := range ann {
			if strings.HasSuffix(k, "-snippet") || strings.HasSuffix(k, "-snippets") {
				v.Snippets = append(v.Snippets, ns+"/"+name+" "+k)
			}
		}
		var paths []path
		rules, _ := Get(ing, "spec", "rules").([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			host, _ := rule["host"].(string)
			ps, _ := Get(rule, "http", "paths").([]any)
			for _, p := range ps {
				pm, _ := p.(map[string]any)
				svc, _ := Get(pm, "backend", "service", "name").(string)
				var port any = Get(pm, "backend", "service", "port", "name")
				if n := portNumber(Get(pm, "backend", "service", "port", "number")); n > 0 {
					port = n
				}
				up := NginxUpstream(ns, svc, port)
				if _, ok := v.Upstreams[up]; !ok {
					v.Upstreams[up] = Backend{Namespace: ns, Service: svc, Port: port}
				}
				v.Made[ns+"/"+name] = append(v.Made[ns+"/"+name], up)
				pp, _ := pm["path"].(string)
				pt, _ := pm["pathType"].(string)
				paths = append(paths, path{host, pp, pt, up})
			}
		}
		if ann["nginx.ingress.kubernetes.io/canary"] == "true" {
			if ann["nginx.ingress.kubernetes.io/canary-weight"] == "100" {
				canaries = append(canaries, paths)
			}
			continue
		}
		primaries = append(primaries, paths)
		passthrough = append(passthrough, ann["nginx.ingress.kubernetes.io/ssl-passthrough"] == "true")
	}
	location := map[string]string{}
	pathType := map[string]string{}
	for i, paths := range primaries {
		for _, p := range paths {
			r := v.Routes[p.host]
			r.Passthrough = r.Passthrough || passthrough[i]
			v.Routes[p.host] = r
			if _, ok := location[p.host]; !ok && p.path == "/" {
				location[p.host], pathType[p.host] = p.upstream, p.pathType
			}
		}
	}
	alternative := map[string]string{}
	for _, paths := range canaries {
		for _, p := range paths {
			if loc, ok := location[p.host]; ok && p.path == "/" && p.pathType == pathType[p.host] && p.upstream != loc {
				if _, seen := alternative[p.host]; !seen {
					alternative[p.host] = p.upstream
				}
			}
		}
	}
	for host, r := range v.Routes {
		loc := location[host]
		r.HTTP = loc
		if alt, ok := alternative[host]; ok {
			r.HTTP, r.Canary = alt, true
		}
		r.HTTPTo = v.Upstreams[r.HTTP]
		if r.Passthrough {
			r.HTTPS, r.HTTPSTo = loc, v.Upstreams[loc]
		}
		v.Routes[host] = r
	}
	sort.Strings(v.Snippets)
	return v
}

// portNumber reads a JSON number as decoded from YAML (float64) or from
// the API server by client-go's unstructured decoder (int64); 0 if none.
func portNumber(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

// KamajiIngress is the Ingress Kamaji builds for a KamajiControlPlane
// (JSON-like), or nil when it sets no spec.network.ingress.
func KamajiIngress(kcp map[string]any) map[string]any {
	ing, _ := Get(kcp, "spec", "network", "ingress").(map[string]any)
	if ing == nil {
		return nil
	}
	name, _ := Get(kcp, "metadata", "name").(string)
	hostPort, _ := ing["hostname"].(string)
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": name, "namespace": Get(kcp, "metadata", "namespace"), "annotations": ing["extraAnnotations"]},
		"spec": map[string]any{
			"ingressClassName": ing["className"],
			"rules": []any{map[string]any{"host": host, "http": map[string]any{"paths": []any{map[string]any{
				"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": 6443.0}}},
			}}}}},
		},
	}
}

// SharedIngresses returns, sorted by name, the Ingresses a response
// composes and those Kamaji builds from a composed KamajiControlPlane.
func SharedIngresses(rsp *fnv1.RunFunctionResponse) []map[string]any {
	var out []map[string]any
	for _, name := range DesiredNames(rsp) {
		obj := rsp.GetDesired().GetResources()[name].GetResource().AsMap()
		switch obj["kind"] {
		case "Ingress":
			out = append(out, obj)
		case "KamajiControlPlane":
			if ing := KamajiIngress(obj); ing != nil {
				out = append(out, ing)
			}
		}
	}
	return out
}

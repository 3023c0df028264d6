package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/test/schema"
)

// xr returns an observed XR of the claim tenant-demo/demo with spec (YAML).
func xr(t *testing.T, spec string) *fnv1.Resource {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster",
		"metadata": map[string]any{"name": "demo-x7k2p", "labels": map[string]any{
			"crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "tenant-demo"}},
		"spec": m,
	}
	s, err := structpb.NewStruct(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.Resource{Resource: s}
}

func toStruct(t *testing.T, yml string) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(yml), &m); err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type run struct {
	spec     string
	input    string
	observed map[string]string // composed name → YAML
}

func (r run) do(t *testing.T) *fnv1.RunFunctionResponse {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: xr(t, r.spec)},
		Desired:  &fnv1.State{},
	}
	if r.input != "" {
		req.Input = toStruct(t, r.input)
	}
	if len(r.observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for n, y := range r.observed {
			req.Observed.Resources[n] = &fnv1.Resource{Resource: toStruct(t, y)}
		}
	}
	rsp, err := fntest.RunAsServed((&Function{}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	return rsp
}

func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

func mustOK(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if m := fatal(rsp); m != "" {
		t.Fatalf("unexpected Fatal: %s", m)
	}
}

// releases returns the composed HelmReleases by release name.
func releases(rsp *fnv1.RunFunctionResponse) map[string]map[string]any {
	out := map[string]map[string]any{}
	for n, r := range rsp.GetDesired().GetResources() {
		if rel, ok := strings.CutPrefix(n, "addon-"); ok {
			out[rel] = r.GetResource().AsMap()
		}
	}
	return out
}

func names(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func get(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

var baseReleases = []string{"cilium", "coredns", "csi", "metrics-server", "prometheus-operator-crds", "vsnap-crd"}

const everything = `
addons:
  certManager: {enabled: true}
  gatewayAPI: {enabled: true}
  ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com, apps.tenant-demo.tenants.example.com]}
  gpuOperator: {enabled: true}
  hami: {enabled: true}
  fluxcd: {enabled: true}
  monitoringAgents: {enabled: true}
  velero: {enabled: true}
  ouroboros: {enabled: true}
`

// Acceptance (issue 4): the default spec renders exactly the base add-ons,
// each N-<release> with the tenant kubeconfig; RetryOnFailure everywhere.
func TestDefaultSpec(t *testing.T) {
	rsp := run{spec: "{}"}.do(t)
	mustOK(t, rsp)
	hrs := releases(rsp)
	if d := cmp.Diff(baseReleases, names(hrs)); d != "" {
		t.Fatalf("releases (-want +got):\n%s", d)
	}
	for rel, hr := range hrs {
		want := map[string]any{
			"name": "demo-" + rel, "namespace": "tenant-demo",
			"secretRef":       map[string]any{"name": "demo-admin-kubeconfig", "key": "super-admin.svc"},
			"installStrategy": "RetryOnFailure", "upgradeStrategy": "RetryOnFailure",
			"createNamespace": true, "force": true, "interval": "5m0s", "timeout": "10m0s",
			"releaseName": rel, "storage": get(hr, "spec", "targetNamespace"),
		}
		got := map[string]any{
			"name": get(hr, "metadata", "name"), "namespace": get(hr, "metadata", "namespace"),
			"secretRef":       get(hr, "spec", "kubeConfig", "secretRef"),
			"installStrategy": get(hr, "spec", "install", "strategy", "name"),
			"upgradeStrategy": get(hr, "spec", "upgrade", "strategy", "name"),
			"createNamespace": get(hr, "spec", "install", "createNamespace"),
			"force":           get(hr, "spec", "upgrade", "force"),
			"interval":        get(hr, "spec", "interval"), "timeout": get(hr, "spec", "timeout"),
			"releaseName": get(hr, "spec", "releaseName"), "storage": get(hr, "spec", "storageNamespace"),
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", rel, d)
		}
		if get(hr, "spec", "install", "remediation") != nil || get(hr, "spec", "upgrade", "remediation") != nil {
			t.Errorf("%s: remediation set; RetryOnFailure only (docs/spec.md §5.3)", rel)
		}
	}
}

func TestRetryOnFailureEverywhere(t *testing.T) {
	rsp := run{spec: everything}.do(t)
	mustOK(t, rsp)
	hrs := releases(rsp)
	if len(hrs) != 20 {
		t.Errorf("%d releases with everything enabled, want 20: %v", len(hrs), names(hrs))
	}
	for rel, hr := range hrs {
		for _, a := range []string{"install", "upgrade"} {
			if got := get(hr, "spec", a, "strategy", "name"); got != "RetryOnFailure" {
				t.Errorf("%s: %s strategy %v", rel, a, got)
			}
		}
	}
}

func TestValues(t *testing.T) {
	cases := map[string]struct {
		spec, input, release string
		path                 []string
		want                 any
	}{
		"cilium MTU override": {
			spec: "addons: {cilium: {valuesOverride: {MTU: 1450}}}", release: "cilium",
			path: nil,
			want: map[string]any{"MTU": 1450.0, "k8sServiceHost": "demo.tenant-demo.svc", "k8sServicePort": 6443.0,
				"routingMode": "tunnel", "enableIPv4Masquerade": true, "kubeProxyReplacement": true},
		},
		"cilium Wrapped layout nests defaults; override in wrapped layout": {
			spec:    "addons: {cilium: {valuesOverride: {cilium: {MTU: 1450}}}}",
			input:   "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {cilium: {valuesLayout: Wrapped}}",
			release: "cilium",
			want: map[string]any{"cilium": map[string]any{"MTU": 1450.0, "k8sServiceHost": "demo.tenant-demo.svc", "k8sServicePort": 6443.0,
				"routingMode": "tunnel", "enableIPv4Masquerade": true, "kubeProxyReplacement": true}},
		},
		"cilium gateway API": {
			spec: "addons: {gatewayAPI: {enabled: true}}", release: "cilium", path: []string{"gatewayAPI"},
			want: map[string]any{"enabled": true},
		},
		"coredns 10th address default": {
			spec: "{}", release: "coredns", path: []string{"service", "clusterIP"}, want: "10.95.0.10",
		},
		"coredns 10th address from input": {
			spec: "{}", input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nserviceCIDR: 10.96.0.0/12",
			release: "coredns", path: []string{"service", "clusterIP"}, want: "10.96.0.10",
		},
		"csi storage class": {
			spec: "storageClass: fast", release: "csi", path: []string{"storageClass"}, want: "fast",
		},
		"ingress-nginx Proxied node ports": {
			spec: "addons: {ingressNginx: {enabled: true}}", release: "ingress-nginx", path: []string{"controller", "service"},
			want: map[string]any{"type": "NodePort", "nodePorts": map[string]any{"http": 30000.0, "https": 30001.0}},
		},
		"ingress-nginx LoadBalancer leaves the service to the chart": {
			spec: "addons: {ingressNginx: {enabled: true, exposeMethod: LoadBalancer}}", release: "ingress-nginx",
			path: []string{"controller", "service"}, want: nil,
		},
		"ingress-nginx without cert-manager": {
			spec: "addons: {ingressNginx: {enabled: true}}", release: "ingress-nginx",
			path: []string{"controller", "admissionWebhooks", "certManager", "enabled"}, want: false,
		},
		"ingress-nginx with cert-manager": {
			spec: "addons: {certManager: {enabled: true}, ingressNginx: {enabled: true}}", release: "ingress-nginx",
			path: []string{"controller", "admissionWebhooks"}, want: nil,
		},
		"ingress-nginx DaemonSet on role nodes": {
			spec: "addons: {ingressNginx: {enabled: true}}", release: "ingress-nginx",
			path: []string{"controller", "nodeSelector"}, want: map[string]any{"node-role.kubernetes.io/ingress-nginx": ""},
		},
		"gpu-operator with hami: device plugin off": {
			spec: "addons: {gpuOperator: {enabled: true}, hami: {enabled: true}}", release: "gpu-operator",
			path: []string{"devicePlugin", "enabled"}, want: false,
		},
		"cert-manager gateway API": {
			spec: "addons: {certManager: {enabled: true}, gatewayAPI: {enabled: true}}", release: "cert-manager",
			path: []string{"config", "enableGatewayAPI"}, want: true,
		},
		"monitoring labelled with cluster and tenant": {
			spec: "addons: {monitoringAgents: {enabled: true}}", release: "monitoring-agents",
			path: []string{"vmagent", "externalLabels"}, want: map[string]any{"cluster": "demo", "tenant": "tenant-demo"},
		},
		"ouroboros mirrors gateway API": {
			spec: "addons: {ingressNginx: {enabled: true}, ouroboros: {enabled: true}}", release: "ouroboros",
			path: []string{"controller"}, want: map[string]any{"mode": "coredns-import", "gatewayApi": map[string]any{"enabled": false}, "clusterDomain": "cluster.local"},
		},
		"override replaces a nested default and adds a key": {
			spec:    "addons: {ingressNginx: {enabled: true, valuesOverride: {controller: {nodeSelector: {pool: edge}, replicaCount: 3}}}}",
			release: "ingress-nginx", path: []string{"controller"},
			want: map[string]any{"kind": "DaemonSet", "nodeSelector": map[string]any{"node-role.kubernetes.io/ingress-nginx": "", "pool": "edge"},
				"replicaCount": 3.0, "admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": false}},
				"service": map[string]any{"type": "NodePort", "nodePorts": map[string]any{"http": 30000.0, "https": 30001.0}}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run{spec: c.spec, input: c.input}.do(t)
			mustOK(t, rsp)
			hr := releases(rsp)[c.release]
			if hr == nil {
				t.Fatalf("no release %s", c.release)
			}
			got := get(hr, append([]string{"spec", "values"}, c.path...)...)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("values.%s (-want +got):\n%s", strings.Join(c.path, "."), d)
			}
		})
	}
}

func TestFatal(t *testing.T) {
	cases := map[string]struct{ spec, input, want string }{
		"hami without gpu-operator": {
			spec: "addons: {hami: {enabled: true}}", want: "spec.addons.hami.enabled",
		},
		"ouroboros without ingress-nginx": {
			spec: "addons: {ouroboros: {enabled: true}}", want: "spec.addons.ouroboros.enabled",
		},
		"bad exposeMethod": {
			spec: "addons: {ingressNginx: {enabled: true, exposeMethod: NodePort}}", want: "spec.addons.ingressNginx.exposeMethod",
		},
		"bad host": {
			spec: "addons: {ingressNginx: {enabled: true, hosts: [Example.ORG]}}", want: "spec.addons.ingressNginx.hosts[0]",
		},
		"every spec problem at once": {
			spec: "addons: {hami: {enabled: true}, ouroboros: {enabled: true}}",
			want: "[spec.addons.hami.enabled: Invalid value: true: hami requires addons.gpuOperator.enabled: true (HAMi runs on top of the NVIDIA GPU operator), " +
				"spec.addons.ouroboros.enabled: Invalid value: true: ouroboros requires addons.ingressNginx.enabled: true (it fixes hairpin NAT for the tenant's ingress-nginx)]",
		},
		"override not an object": {
			spec: "addons: {cilium: {valuesOverride: [1, 2]}}", want: "spec.addons.cilium.valuesOverride",
		},
		"input: bad service CIDR": {
			spec: "{}", input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nserviceCIDR: 10.95.0.0/30", want: "input.serviceCIDR",
		},
		"input: ExternalArtifact with url": {
			spec: "{}", input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {csi: {url: 'https://x.example'}}", want: "input.charts.csi.url",
		},
		"input: Wrapped without key": {
			spec: "{}", input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {vsnapCRD: {valuesLayout: Wrapped}}", want: "input.charts.vsnapCRD.wrapperKey",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run{spec: c.spec, input: c.input}.do(t)
			msg := fatal(rsp)
			if !strings.Contains(msg, c.want) {
				t.Fatalf("Fatal %q does not name %s", msg, c.want)
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%d desired resources alongside a Fatal result", n)
			}
		})
	}
}

// Every YAML/Helm truthy spelling of the ouroboros Gateway API switch is
// caught without addons.gatewayAPI; falsy ones pass; with gatewayAPI on, all
// pass.
func TestOuroborosGatewayTruthy(t *testing.T) {
	truthy := []string{"true", `"true"`, `"True"`, `"TRUE"`, `"yes"`, `"Yes"`, `"on"`, `"ON"`, `"y"`, `"Y"`, "1", `"1"`}
	falsy := []string{"false", `"false"`, `"no"`, "0", `"off"`, `""`, "2"}
	spec := func(v string, gw bool) string {
		return "addons: {gatewayAPI: {enabled: " + map[bool]string{true: "true", false: "false"}[gw] +
			"}, ingressNginx: {enabled: true}, ouroboros: {enabled: true, valuesOverride: {controller: {gatewayApi: {enabled: " + v + "}}}}}"
	}
	for _, v := range truthy {
		if msg := fatal(run{spec: spec(v, false)}.do(t)); !strings.Contains(msg, "spec.addons.ouroboros.valuesOverride.controller.gatewayApi.enabled") {
			t.Errorf("%s: want Fatal naming the override, got %q", v, msg)
		}
		if msg := fatal(run{spec: spec(v, true)}.do(t)); msg != "" {
			t.Errorf("%s with gatewayAPI: unexpected Fatal %q", v, msg)
		}
	}
	for _, v := range falsy {
		if msg := fatal(run{spec: spec(v, false)}.do(t)); msg != "" {
			t.Errorf("%s: unexpected Fatal %q", v, msg)
		}
	}
	// Wrapped layout: the switch is read under the wrapper key.
	in := "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {ouroboros: {valuesLayout: Wrapped, wrapperKey: ouroboros}}"
	wrapped := "addons: {ingressNginx: {enabled: true}, ouroboros: {enabled: true, valuesOverride: {ouroboros: {controller: {gatewayApi: {enabled: on}}}}}}"
	if msg := fatal(run{spec: wrapped, input: in}.do(t)); !strings.Contains(msg, "spec.addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled") {
		t.Errorf("wrapped: got %q", msg)
	}
	if msg := fatal(run{spec: wrapped}.do(t)); msg != "" {
		t.Errorf("wrapped override with an Upstream source is not the switch; got Fatal %q", msg)
	}
}

func TestProxiedVsLoadBalancer(t *testing.T) {
	proxied := run{spec: "addons: {ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com, '*.tenant-demo.tenants.example.com']}}",
		input: "allowWildcardHosts: true"}.do(t)
	mustOK(t, proxied)
	svc := proxied.GetDesired().GetResources()[composedProxyService].GetResource().AsMap()
	ing := proxied.GetDesired().GetResources()[composedProxyIngress].GetResource().AsMap()
	wantSvc := map[string]any{
		"selector": map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "node-role.kubernetes.io/ingress-nginx": ""},
		"type":     "ClusterIP",
		"ports": []any{
			map[string]any{"name": "http", "appProtocol": "http", "port": 80.0, "protocol": "TCP", "targetPort": 30000.0},
			map[string]any{"name": "https", "appProtocol": "https", "port": 443.0, "protocol": "TCP", "targetPort": 30001.0},
		},
	}
	if d := cmp.Diff(wantSvc, get(svc, "spec")); d != "" {
		t.Errorf("Service spec (-want +got):\n%s", d)
	}
	if got := get(svc, "metadata", "name"); got != "demo-ingress-nginx" {
		t.Errorf("Service name %v", got)
	}
	// The seed chart's annotations; the snippet names the upstream of the
	// Service's port 80 as ingress-nginx names it: <namespace>-<service>-80.
	wantAnn := map[string]any{
		"nginx.ingress.kubernetes.io/ssl-passthrough":  "true",
		"nginx.ingress.kubernetes.io/backend-protocol": "AUTO_HTTP",
		"nginx.ingress.kubernetes.io/ssl-redirect":     "false",
		"nginx.ingress.kubernetes.io/configuration-snippet": "if ($scheme = http) {\n" +
			"  set $proxy_upstream_name \"tenant-demo-demo-ingress-nginx-80\";\n" +
			"  set $proxy_host $proxy_upstream_name;\n}\n",
	}
	if d := cmp.Diff(wantAnn, get(ing, "metadata", "annotations")); d != "" {
		t.Errorf("Ingress annotations (-want +got):\n%s", d)
	}
	wantPaths := []any{
		map[string]any{"path": "/", "pathType": "ImplementationSpecific", "backend": map[string]any{"service": map[string]any{"name": "demo-ingress-nginx", "port": map[string]any{"number": 443.0}}}},
		map[string]any{"path": "/", "pathType": "ImplementationSpecific", "backend": map[string]any{"service": map[string]any{"name": "demo-ingress-nginx", "port": map[string]any{"number": 80.0}}}},
	}
	for _, r := range get(ing, "spec", "rules").([]any) {
		if d := cmp.Diff(wantPaths, get(r.(map[string]any), "http", "paths")); d != "" {
			t.Errorf("paths of %v (-want +got):\n%s", r.(map[string]any)["host"], d)
		}
	}
	if got := get(ing, "spec", "ingressClassName"); got != "nginx" {
		t.Errorf("ingress class %v", got)
	}
	var hosts []string
	for _, r := range get(ing, "spec", "rules").([]any) {
		hosts = append(hosts, r.(map[string]any)["host"].(string))
		if b := get(r.(map[string]any), "http"); !strings.Contains(mustJSON(t, b), `"name":"demo-ingress-nginx"`) {
			t.Errorf("rule backend %s", mustJSON(t, b))
		}
	}
	if d := cmp.Diff([]string{"tenant-demo.tenants.example.com", "*.tenant-demo.tenants.example.com"}, hosts); d != "" {
		t.Errorf("hosts (-want +got):\n%s", d)
	}

	for name, spec := range map[string]string{
		"LoadBalancer":      "addons: {ingressNginx: {enabled: true, exposeMethod: LoadBalancer, hosts: [example.org]}}",
		"Proxied, no hosts": "addons: {ingressNginx: {enabled: true}}",
		"disabled":          "addons: {ingressNginx: {hosts: [example.org]}}",
	} {
		rsp := run{spec: spec}.do(t)
		mustOK(t, rsp)
		for _, n := range []string{composedProxyService, composedProxyIngress} {
			if _, ok := rsp.GetDesired().GetResources()[n]; ok {
				t.Errorf("%s: %s emitted", name, n)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The dependency graph has no cycle and names only releases of the same
// render, for the defaults, everything enabled and each conditional edge.
func TestDependencyGraph(t *testing.T) {
	for name, spec := range map[string]string{
		"defaults":                       "{}",
		"everything":                     everything,
		"monitoring without certmanager": "addons: {monitoringAgents: {enabled: true}}",
		"ouroboros without gateway":      "addons: {ingressNginx: {enabled: true}, ouroboros: {enabled: true}}",
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run{spec: spec}.do(t)
			mustOK(t, rsp)
			hrs := releases(rsp)
			graph := map[string][]string{}
			for rel, hr := range hrs {
				deps, _ := get(hr, "spec", "dependsOn").([]any)
				for _, d := range deps {
					dn := strings.TrimPrefix(d.(map[string]any)["name"].(string), "demo-")
					if _, ok := hrs[dn]; !ok {
						t.Errorf("%s depends on %s, not in this render", rel, dn)
					}
					graph[rel] = append(graph[rel], dn)
				}
			}
			state := map[string]int{}
			var visit func(string, []string)
			visit = func(n string, stack []string) {
				switch state[n] {
				case 1:
					t.Fatalf("cycle: %v → %s", stack, n)
				case 2:
					return
				}
				state[n] = 1
				for _, d := range graph[n] {
					visit(d, append(stack, n))
				}
				state[n] = 2
			}
			for n := range hrs {
				visit(n, nil)
			}
		})
	}
}

func TestDependsOnExact(t *testing.T) {
	deps := func(spec, rel string) []string {
		hr := releases(run{spec: spec}.do(t))[rel]
		var out []string
		for _, d := range get(hr, "spec", "dependsOn").([]any) {
			out = append(out, d.(map[string]any)["name"].(string))
		}
		return out
	}
	if d := cmp.Diff([]string(nil), func() []string {
		hr := releases(run{spec: "{}"}.do(t))["cilium"]
		if get(hr, "spec", "dependsOn") == nil {
			return nil
		}
		return []string{"set"}
	}()); d != "" {
		t.Errorf("cilium without gateway API has dependsOn: %s", d)
	}
	for _, c := range []struct {
		spec, rel string
		want      []string
	}{
		{"addons: {gatewayAPI: {enabled: true}}", "cilium", []string{"demo-gateway-api-crds"}},
		{"{}", "csi", []string{"demo-vsnap-crd", "demo-cilium"}},
		{"{}", "metrics-server", []string{"demo-cilium", "demo-prometheus-operator-crds"}},
		{"addons: {ingressNginx: {enabled: true}, ouroboros: {enabled: true}, gatewayAPI: {enabled: true}}", "ouroboros",
			[]string{"demo-cilium", "demo-coredns", "demo-ingress-nginx", "demo-gateway-api-crds"}},
		{"addons: {fluxcd: {enabled: true}}", "fluxcd", []string{"demo-cilium", "demo-fluxcd-operator"}},
		{"addons: {gpuOperator: {enabled: true}, hami: {enabled: true}}", "hami", []string{"demo-cilium", "demo-gpu-operator"}},
	} {
		if d := cmp.Diff(c.want, deps(c.spec, c.rel)); d != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.spec, c.rel, d)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a := run{spec: everything}.do(t)
	b := run{spec: everything}.do(t)
	ja, _ := json.Marshal(a.GetDesired().GetResources()["addon-cilium"].GetResource().AsMap())
	jb, _ := json.Marshal(b.GetDesired().GetResources()["addon-cilium"].GetResource().AsMap())
	if string(ja) != string(jb) {
		t.Fatal("two renders differ")
	}
	for n := range a.GetDesired().GetResources() {
		x, _ := json.Marshal(a.GetDesired().GetResources()[n].GetResource().AsMap())
		y, _ := json.Marshal(b.GetDesired().GetResources()[n].GetResource().AsMap())
		if string(x) != string(y) {
			t.Errorf("%s differs between two renders", n)
		}
	}
	// The values bytes themselves are sorted.
	objs, err := renderFor(t, everything)
	if err != nil {
		t.Fatal(err)
	}
	objs2, _ := renderFor(t, everything)
	if mustJSON(t, objs) != mustJSON(t, objs2) {
		t.Error("Render output differs byte-wise")
	}
}

// Every emitted Flux object validates against the upstream CRDs.
func TestSchema(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]string{"defaults": "{}", "everything": everything} {
		rsp := run{spec: spec}.do(t)
		mustOK(t, rsp)
		n := 0
		for cn, r := range rsp.GetDesired().GetResources() {
			u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
			if strings.HasPrefix(u.GetAPIVersion(), "v1") || strings.HasPrefix(u.GetAPIVersion(), "networking.k8s.io") {
				continue
			}
			n++
			if err := v.Validate(u); err != nil {
				t.Errorf("%s %s: %v", name, cn, err)
			}
		}
		if n == 0 {
			t.Errorf("%s: nothing validated", name)
		}
	}
}

func TestReadiness(t *testing.T) {
	ready := "status: {conditions: [{type: Ready, status: 'True', reason: InstallSucceeded, message: ok, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	failed := "status: {conditions: [{type: Ready, status: 'False', reason: InstallFailed, message: 'install retries exhausted', lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	obs := map[string]string{}
	for _, r := range baseReleases {
		obs["addon-"+r] = ready
	}
	rsp := run{spec: "{}", observed: obs}.do(t)
	mustOK(t, rsp)
	cond := rsp.GetConditions()
	if len(cond) != 1 || cond[0].GetType() != "AddonsReady" || cond[0].GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || cond[0].GetReason() != "AllAddonsReady" {
		t.Errorf("conditions %v", cond)
	}
	// An enabled optional add-on gates AddonsReady like a base one (issue
	// 16: cert-manager failed while the condition read True).
	rsp = run{spec: "addons: {velero: {enabled: true}}", observed: obs}.do(t)
	mustOK(t, rsp)
	cond = rsp.GetConditions()
	if len(cond) != 1 || cond[0].GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || cond[0].GetReason() != "WaitingForHelmRelease" ||
		cond[0].GetMessage() != "velero: HelmRelease not created yet" {
		t.Errorf("velero pending: conditions %v", cond)
	}
	cm := map[string]string{"addon-cert-manager-crds": ready, "addon-cert-manager": failed}
	for k, v := range obs {
		cm[k] = v
	}
	cond = run{spec: "addons: {certManager: {enabled: true}}", observed: cm}.do(t).GetConditions()
	if len(cond) != 1 || cond[0].GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || cond[0].GetReason() != "HelmReleaseFailed" ||
		cond[0].GetMessage() != "cert-manager: install retries exhausted" {
		t.Errorf("cert-manager failed: conditions %v", cond)
	}
	cm["addon-cert-manager"] = ready
	cond = run{spec: "addons: {certManager: {enabled: true}}", observed: cm}.do(t).GetConditions()
	if len(cond) != 1 || cond[0].GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || cond[0].GetReason() != "AllAddonsReady" {
		t.Errorf("cert-manager ready: conditions %v", cond)
	}
	if got := rsp.GetDesired().GetResources()["addon-cilium"].GetReady(); got != fnv1.Ready_READY_TRUE {
		t.Errorf("cilium ready %v", got)
	}
	if got := rsp.GetDesired().GetResources()["addon-velero"].GetReady(); got != fnv1.Ready_READY_FALSE {
		t.Errorf("velero ready %v", got)
	}
	st := get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "addons")
	if d := cmp.Diff(map[string]any{"ready": false, "message": "HelmRelease not created yet"}, get(st.(map[string]any), "velero")); d != "" {
		t.Errorf("velero status (-want +got):\n%s", d)
	}

	obs["addon-csi"] = failed
	rsp = run{spec: "{}", observed: obs}.do(t)
	cond = rsp.GetConditions()
	if len(cond) != 1 || cond[0].GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || cond[0].GetReason() != "HelmReleaseFailed" ||
		cond[0].GetMessage() != "csi: install retries exhausted" {
		t.Errorf("conditions %v", cond)
	}
	if cond[0].GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Errorf("condition target %v", cond[0].GetTarget())
	}
	// A failed release is named before the pending ones.
	delete(obs, "addon-coredns")
	cond = run{spec: "{}", observed: obs}.do(t).GetConditions()
	if len(cond) != 1 || cond[0].GetReason() != "HelmReleaseFailed" ||
		cond[0].GetMessage() != "csi: install retries exhausted; coredns: HelmRelease not created yet" {
		t.Errorf("conditions %v", cond)
	}
	// Nothing failed, something pending: waiting, not failed.
	obs["addon-csi"] = "status: {conditions: [{type: Ready, status: Unknown, reason: Progressing, message: 'installing', lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	cond = run{spec: "{}", observed: obs}.do(t).GetConditions()
	if len(cond) != 1 || cond[0].GetReason() != "WaitingForHelmRelease" ||
		cond[0].GetMessage() != "coredns: HelmRelease not created yet; csi: installing" {
		t.Errorf("conditions %v", cond)
	}
	// Nothing dropped because something was not observed.
	if d := cmp.Diff(baseReleases, names(releases(run{spec: "{}"}.do(t)))); d != "" {
		t.Error(d)
	}
}

// The desired state of earlier steps is kept, and the desired XR keeps its
// status fields.
func TestKeepsEarlierDesired(t *testing.T) {
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: xr(t, "{}")},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: toStruct(t, "apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nstatus: {version: v1.35.1}")},
			Resources: map[string]*fnv1.Resource{"cluster": {Resource: toStruct(t, "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster")}},
		},
	}
	rsp, err := fntest.RunAsServed((&Function{}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, rsp)
	if _, ok := rsp.GetDesired().GetResources()["cluster"]; !ok {
		t.Error("earlier composed resource dropped")
	}
	xr := rsp.GetDesired().GetComposite().GetResource().AsMap()
	if get(xr, "status", "version") != "v1.35.1" || get(xr, "status", "addons", "cilium") == nil {
		t.Errorf("desired XR status %v", get(xr, "status"))
	}
}

func TestManagedSources(t *testing.T) {
	rsp := run{spec: everything}.do(t)
	mustOK(t, rsp)
	var got []string
	for n, r := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(n, "helmrepository-") || strings.HasPrefix(n, "ocirepository-") {
			got = append(got, n+"="+get(r.GetResource().AsMap(), "metadata", "name").(string))
		}
	}
	sort.Strings(got)
	want := []string{
		"helmrepository-cilium=demo-cilium", "helmrepository-coredns=demo-coredns", "helmrepository-cowboysysop=demo-cowboysysop",
		"helmrepository-hami=demo-hami", "helmrepository-ingress-nginx=demo-ingress-nginx", "helmrepository-jetstack=demo-jetstack",
		"helmrepository-metrics-server=demo-metrics-server", "helmrepository-nvidia=demo-nvidia",
		"helmrepository-prometheus-community=demo-prometheus-community", "helmrepository-victoriametrics=demo-victoriametrics",
		"helmrepository-vmware-tanzu=demo-vmware-tanzu",
		"ocirepository-fluxcd-operator=demo-fluxcd-operator", "ocirepository-fluxcd=demo-fluxcd", "ocirepository-gateway-api-crds=demo-gateway-api-crds",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sources (-want +got):\n%s", d)
	}
	// Every HelmRelease's source is emitted or an explicit reference.
	res := rsp.GetDesired().GetResources()
	emitted := map[string]bool{}
	for _, r := range res {
		m := r.GetResource().AsMap()
		emitted[get(m, "kind").(string)+"/"+get(m, "metadata", "name").(string)] = true
	}
	for rel, hr := range releases(rsp) {
		var kind, name, ns string
		if ref, ok := get(hr, "spec", "chartRef").(map[string]any); ok {
			kind, name = ref["kind"].(string), ref["name"].(string)
			ns, _ = ref["namespace"].(string)
		} else {
			ref := get(hr, "spec", "chart", "spec", "sourceRef").(map[string]any)
			kind, name = ref["kind"].(string), ref["name"].(string)
			ns, _ = ref["namespace"].(string)
		}
		if ns == "" && !emitted[kind+"/"+name] {
			t.Errorf("%s refers to %s/%s in its own namespace, which is not emitted", rel, kind, name)
		}
		if ns != "" && kind != "ExternalArtifact" {
			t.Errorf("%s: unexpected cross-namespace default %s %s/%s", rel, kind, ns, name)
		}
	}
}

// The addons function requires no resources; with every composed resource
// of an earlier reconcile observed and nothing required, the desired state
// still holds each of them.
func TestDesiredIsSupersetOfObserved(t *testing.T) {
	spec := "addons: {certManager: {enabled: true}, ingressNginx: {enabled: true, hosts: [a.example.com]}, velero: {enabled: true}}"
	first := run{spec: spec}.do(t)
	mustOK(t, first)
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: xr(t, spec), Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{},
	}
	for name, r := range first.GetDesired().GetResources() {
		req.Observed.Resources[name] = &fnv1.Resource{Resource: r.GetResource()}
	}
	rsp, err := fntest.RunAsServed((&Function{}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, rsp)
	if len(req.Observed.Resources) < 10 {
		t.Fatalf("test setup: only %d observed resources", len(req.Observed.Resources))
	}
	for name := range req.Observed.Resources {
		if _, ok := rsp.GetDesired().GetResources()[name]; !ok {
			t.Errorf("observed %s is missing from the desired state", name)
		}
	}
}

// Platform settings come from the EnvironmentConfig: the service CIDR,
// which the control-plane function reads from the same key, gives CoreDNS
// its 10th address (10.200.0.0/16 → 10.200.0.10); a chart version merges
// into the default source; a bad value is Fatal naming its field there.
func TestPlatformSettings(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: xr(t, "{}")}, Desired: &fnv1.State{}}
	if err := fntest.WithPlatformSettings(req, "serviceCIDR: 10.200.0.0/16\ncharts: {cilium: {version: 1.18.5}}"); err != nil {
		t.Fatal(err)
	}
	rsp, err := fntest.RunAsServed((&Function{}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, rsp)
	rs := releases(rsp)
	if got := get(rs["coredns"], "spec", "values", "service", "clusterIP"); got != "10.200.0.10" {
		t.Errorf("coredns clusterIP = %v, want 10.200.0.10", got)
	}
	if got := get(rs["cilium"], "spec", "chart", "spec", "version"); got != "1.18.5" {
		t.Errorf("cilium chart version = %v, want 1.18.5", got)
	}
	if got := get(rs["cilium"], "spec", "chart", "spec", "chart"); got != "cilium" {
		t.Errorf("cilium chart = %v, want cilium (the default source's)", got)
	}

	bad := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: xr(t, "{}")}, Desired: &fnv1.State{}}
	if err := fntest.WithPlatformSettings(bad, "serviceCIDR: 10.95.0.0/30"); err != nil {
		t.Fatal(err)
	}
	rsp, err = fntest.RunAsServed((&Function{}).RunFunction, bad)
	if err != nil {
		t.Fatal(err)
	}
	if msg := fatal(rsp); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.serviceCIDR: Invalid value: "10.95.0.0/30"`) {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.serviceCIDR and the value", msg)
	}
}

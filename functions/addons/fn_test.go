package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/schema"
)

// runFn is the function's RunFunction, as Crossplane calls it.
var runFn fntest.Runner = (&Function{}).RunFunction

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

// TestDefaultSpec: the default spec renders exactly the base add-ons,
// each N-<release> with the tenant kubeconfig; RetryOnFailure everywhere.
func TestDefaultSpec(t *testing.T) {
	rsp := fntest.Call{Spec: "{}"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	hrs := releases(rsp)
	if d := cmp.Diff(baseReleases, names(hrs)); d != "" {
		t.Fatalf("releases (-want +got):\n%s", d)
	}
	for rel, hr := range hrs {
		want := map[string]any{
			"name": "demo-" + rel, "namespace": "tenant-demo",
			"secretRef":       map[string]any{"name": "demo-admin-kubeconfig", "key": "super-admin.svc"},
			"installStrategy": "RetryOnFailure", "upgradeStrategy": "RetryOnFailure",
			"createNamespace": true, "force": nil, "interval": "5m0s", "timeout": "10m0s",
			"releaseName": rel, "storage": fntest.Get(hr, "spec", "targetNamespace"),
		}
		got := map[string]any{
			"name": fntest.Get(hr, "metadata", "name"), "namespace": fntest.Get(hr, "metadata", "namespace"),
			"secretRef":       fntest.Get(hr, "spec", "kubeConfig", "secretRef"),
			"installStrategy": fntest.Get(hr, "spec", "install", "strategy", "name"),
			"upgradeStrategy": fntest.Get(hr, "spec", "upgrade", "strategy", "name"),
			"createNamespace": fntest.Get(hr, "spec", "install", "createNamespace"),
			"force":           fntest.Get(hr, "spec", "upgrade", "force"),
			"interval":        fntest.Get(hr, "spec", "interval"), "timeout": fntest.Get(hr, "spec", "timeout"),
			"releaseName": fntest.Get(hr, "spec", "releaseName"), "storage": fntest.Get(hr, "spec", "storageNamespace"),
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", rel, d)
		}
		// The Cozystack chart sets remediation retries -1 beside RetryOnFailure.
		for _, a := range []string{"install", "upgrade"} {
			if got := fntest.Get(hr, "spec", a, "remediation"); !cmp.Equal(got, map[string]any{"retries": -1.0}) {
				t.Errorf("%s: %s remediation %v, want {retries: -1}", rel, a, got)
			}
		}
	}
}

func TestRetryOnFailureEverywhere(t *testing.T) {
	rsp := fntest.Call{Spec: everything}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	hrs := releases(rsp)
	if len(hrs) != 20 {
		t.Errorf("%d releases with everything enabled, want 20: %v", len(hrs), names(hrs))
	}
	for rel, hr := range hrs {
		for _, a := range []string{"install", "upgrade"} {
			if got := fntest.Get(hr, "spec", a, "strategy", "name"); got != "RetryOnFailure" {
				t.Errorf("%s: %s strategy %v", rel, a, got)
			}
			// Unset releaseRetryInterval leaves helm-controller's default,
			// but cilium and csi retry after 30s, as the chart's do.
			var want any
			if rel == "cilium" || rel == "csi" {
				want = "30s"
			}
			if got := fntest.Get(hr, "spec", a, "strategy", "retryInterval"); got != want {
				t.Errorf("%s: %s retryInterval %v without releaseRetryInterval, want %v", rel, a, got, want)
			}
		}
	}
}

// TestReleaseRetryInterval: the platform's releaseRetryInterval is the
// install and upgrade retryInterval of every release but cilium and csi,
// which keep the chart's 30s, in helm-controller's duration form.
func TestReleaseRetryInterval(t *testing.T) {
	rsp := fntest.Call{Spec: everything, Input: "releaseRetryInterval: 15s"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	for rel, hr := range releases(rsp) {
		want := "15s"
		if rel == "cilium" || rel == "csi" {
			want = "30s"
		}
		for _, a := range []string{"install", "upgrade"} {
			if got := fntest.Get(hr, "spec", a, "strategy", "retryInterval"); got != want {
				t.Errorf("%s: %s retryInterval %v, want %s", rel, a, got, want)
			}
		}
	}
	msg := fntest.FatalMessage(fntest.Call{Spec: everything, Input: "releaseRetryInterval: 5s"}.Run(t, runFn))
	if !strings.Contains(msg, "input.releaseRetryInterval") || !strings.Contains(msg, `"5s"`) {
		t.Errorf("releaseRetryInterval 5s: Fatal %q, want one naming input.releaseRetryInterval and \"5s\"", msg)
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
			want: map[string]any{"MTU": 1450.0, "k8sServiceHost": "demo.tenant-demo.svc.cluster.local", "k8sServicePort": 6443.0,
				"routingMode": "tunnel", "enableIPv4Masquerade": true, "kubeProxyReplacement": true},
		},
		"cilium Wrapped layout nests defaults; override in wrapped layout": {
			spec:    "addons: {cilium: {valuesOverride: {cilium: {MTU: 1450}}}}",
			input:   "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {cilium: {valuesLayout: Wrapped}}",
			release: "cilium",
			want: map[string]any{"cilium": map[string]any{"MTU": 1450.0, "k8sServiceHost": "demo.tenant-demo.svc.cluster.local", "k8sServicePort": 6443.0,
				"routingMode": "tunnel", "enableIPv4Masquerade": true, "kubeProxyReplacement": true}},
		},
		"cilium gateway API": {
			spec: "addons: {gatewayAPI: {enabled: true}}", release: "cilium", path: []string{"gatewayAPI"},
			// The chart's cilium_gateway_alpn test: ALPN h2 on the listener.
			want: map[string]any{"enabled": true, "enableAlpn": true},
		},
		"coredns 10th address default": {
			spec: "{}", release: "coredns", path: []string{"service", "clusterIP"}, want: "10.95.0.10",
		},
		"coredns 10th address from input": {
			spec: "{}", input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nserviceCIDR: 10.96.0.0/12",
			release: "coredns", path: []string{"service", "clusterIP"}, want: "10.96.0.10",
		},
		// Today's chart's defaults (its kubevirt-csi-node values): replicated,
		// the cluster's storageClass, the default class; kubevirt an alias of
		// it; storageClass for the chart that predates storageClasses.
		"csi storage classes by default": {
			spec: "{}", release: "csi", path: nil, want: map[string]any{
				"storageClass": "replicated",
				"storageClasses": map[string]any{
					"replicated": map[string]any{"infraStorageClass": "replicated", "default": true},
					"kubevirt":   map[string]any{"infraStorageClass": "replicated", "default": false},
				},
			},
		},
		// Every remote class of the platform under its own name; the
		// cluster's is the default and the alias follows it.
		"csi storage classes of the platform": {
			spec:    "storageClass: replicated-nvme",
			input:   "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nremoteStorageClasses: [replicated, replicated-nvme, linstor-r1]",
			release: "csi", path: nil, want: map[string]any{
				"storageClass": "replicated-nvme",
				"storageClasses": map[string]any{
					"replicated":      map[string]any{"infraStorageClass": "replicated", "default": false},
					"replicated-nvme": map[string]any{"infraStorageClass": "replicated-nvme", "default": true},
					"linstor-r1":      map[string]any{"infraStorageClass": "linstor-r1", "default": false},
					"kubevirt":        map[string]any{"infraStorageClass": "replicated-nvme", "default": false},
				},
			},
		},
		// metrics-server's README (Requirements): kubelet certificates
		// signed by the cluster CA, or --kubelet-insecure-tls; kubeadm and
		// Talos kubelets serve self-signed ones.
		"metrics-server skips the kubelets' self-signed certificates": {
			spec: "{}", release: "metrics-server", path: nil, want: map[string]any{"args": []any{"--kubelet-insecure-tls"}},
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
		// The NVLink default of today's chart's gpu-operator release:
		// wrapper values kernelModuleConfig.create, the ConfigMap
		// nvidia-kernel-module-params with NVreg_NvLinkDisable=1, named by
		// gpu-operator.driver.kernelModuleConfig.name.
		"gpu-operator wrapped: NVLink disabled": {
			spec: "addons: {gpuOperator: {enabled: true}}", input: wrappedGPUOperator, release: "gpu-operator",
			path: nil, want: map[string]any{
				"kernelModuleConfig": map[string]any{"create": true, "content": "NVreg_NvLinkDisable=1\n"},
				"gpu-operator":       map[string]any{"driver": map[string]any{"kernelModuleConfig": map[string]any{"name": "nvidia-kernel-module-params"}}},
			},
		},
		"gpu-operator wrapped with hami": {
			spec: "addons: {gpuOperator: {enabled: true}, hami: {enabled: true}}", input: wrappedGPUOperator, release: "gpu-operator",
			path: []string{"gpu-operator"}, want: map[string]any{
				"devicePlugin": map[string]any{"enabled": false},
				"driver":       map[string]any{"kernelModuleConfig": map[string]any{"name": "nvidia-kernel-module-params"}},
			},
		},
		"gpu-operator wrapped: the user's ConfigMap name wins": {
			spec: "addons: {gpuOperator: {enabled: true, valuesOverride: {gpu-operator: {driver: {kernelModuleConfig: {name: my-kmc}}}}}}", input: wrappedGPUOperator,
			release: "gpu-operator", path: []string{"gpu-operator", "driver", "kernelModuleConfig", "name"}, want: "my-kmc",
		},
		"gpu-operator upstream: no ConfigMap named": {
			spec: "addons: {gpuOperator: {enabled: true}}", release: "gpu-operator", path: nil, want: nil,
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
			rsp := fntest.Call{Spec: c.spec, Input: c.input}.Run(t, runFn)
			fntest.NoFatal(t, rsp)
			hr := releases(rsp)[c.release]
			if hr == nil {
				t.Fatalf("no release %s", c.release)
			}
			got := fntest.Get(hr, append([]string{"spec", "values"}, c.path...)...)
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
			rsp := fntest.Call{Spec: c.spec, Input: c.input}.Run(t, runFn)
			msg := fntest.FatalMessage(rsp)
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
		if msg := fntest.FatalMessage(fntest.Call{Spec: spec(v, false)}.Run(t, runFn)); !strings.Contains(msg, "spec.addons.ouroboros.valuesOverride.controller.gatewayApi.enabled") {
			t.Errorf("%s: want Fatal naming the override, got %q", v, msg)
		}
		if msg := fntest.FatalMessage(fntest.Call{Spec: spec(v, true)}.Run(t, runFn)); msg != "" {
			t.Errorf("%s with gatewayAPI: unexpected Fatal %q", v, msg)
		}
	}
	for _, v := range falsy {
		if msg := fntest.FatalMessage(fntest.Call{Spec: spec(v, false)}.Run(t, runFn)); msg != "" {
			t.Errorf("%s: unexpected Fatal %q", v, msg)
		}
	}
	// Wrapped layout: the switch is read under the wrapper key.
	in := "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {ouroboros: {valuesLayout: Wrapped, wrapperKey: ouroboros}}"
	wrapped := "addons: {ingressNginx: {enabled: true}, ouroboros: {enabled: true, valuesOverride: {ouroboros: {controller: {gatewayApi: {enabled: on}}}}}}"
	if msg := fntest.FatalMessage(fntest.Call{Spec: wrapped, Input: in}.Run(t, runFn)); !strings.Contains(msg, "spec.addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled") {
		t.Errorf("wrapped: got %q", msg)
	}
	if msg := fntest.FatalMessage(fntest.Call{Spec: wrapped}.Run(t, runFn)); msg != "" {
		t.Errorf("wrapped override with an Upstream source is not the switch; got Fatal %q", msg)
	}
}

func TestProxiedVsLoadBalancer(t *testing.T) {
	proxied := fntest.Call{Spec: "addons: {ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com, '*.tenant-demo.tenants.example.com']}}",
		Input: "allowWildcardHosts: true"}.Run(t, runFn)
	fntest.NoFatal(t, proxied)
	svc := proxied.GetDesired().GetResources()[composedProxyService].GetResource().AsMap()
	ing := proxied.GetDesired().GetResources()[composedProxyIngress].GetResource().AsMap()
	canary := proxied.GetDesired().GetResources()[composedProxyHTTPIngress].GetResource().AsMap()
	wantSvc := map[string]any{
		"selector": map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "node-role.kubernetes.io/ingress-nginx": ""},
		"type":     "ClusterIP",
		"ports": []any{
			map[string]any{"name": "http", "appProtocol": "http", "port": 80.0, "protocol": "TCP", "targetPort": 30000.0},
			map[string]any{"name": "https", "appProtocol": "https", "port": 443.0, "protocol": "TCP", "targetPort": 30001.0},
		},
	}
	if d := cmp.Diff(wantSvc, fntest.Get(svc, "spec")); d != "" {
		t.Errorf("Service spec (-want +got):\n%s", d)
	}
	// demo-app- and the first 16 bytes of sha256("app/tenant-demo/demo")
	// in lower-case base32 (computed with Python's hashlib and base64).
	const name = "demo-app-rqqefm5jthbbytoacbu6cqnmim"
	for _, o := range []map[string]any{svc, ing} {
		if got := fntest.Get(o, "metadata", "name"); got != name {
			t.Errorf("%v name %v, want %s", o["kind"], got, name)
		}
	}
	if got := fntest.Get(canary, "metadata", "name"); got != name+"-http" {
		t.Errorf("canary Ingress name %v", got)
	}
	// ingress-nginx's annotations, none a snippet: TLS passed through by
	// the primary, plain HTTP all sent to the canary.
	for o, want := range map[*map[string]any]map[string]any{
		&ing:    {"nginx.ingress.kubernetes.io/ssl-passthrough": "true", "nginx.ingress.kubernetes.io/ssl-redirect": "false"},
		&canary: {"nginx.ingress.kubernetes.io/canary": "true", "nginx.ingress.kubernetes.io/canary-weight": "100"},
	} {
		if d := cmp.Diff(want, fntest.Get(*o, "metadata", "annotations")); d != "" {
			t.Errorf("%v annotations (-want +got):\n%s", fntest.Get(*o, "metadata", "name"), d)
		}
	}
	for o, port := range map[*map[string]any]float64{&ing: 443, &canary: 80} {
		wantPaths := []any{
			map[string]any{"path": "/", "pathType": "ImplementationSpecific", "backend": map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": port}}}},
		}
		var hosts []string
		for _, r := range fntest.Get(*o, "spec", "rules").([]any) {
			hosts = append(hosts, r.(map[string]any)["host"].(string))
			if d := cmp.Diff(wantPaths, fntest.Get(r.(map[string]any), "http", "paths")); d != "" {
				t.Errorf("paths of %v (-want +got):\n%s", r.(map[string]any)["host"], d)
			}
		}
		if d := cmp.Diff([]string{"tenant-demo.tenants.example.com", "*.tenant-demo.tenants.example.com"}, hosts); d != "" {
			t.Errorf("hosts (-want +got):\n%s", d)
		}
		if got := fntest.Get(*o, "spec", "ingressClassName"); got != "nginx" {
			t.Errorf("ingress class %v", got)
		}
	}

	for name, spec := range map[string]string{
		"LoadBalancer": "addons: {ingressNginx: {enabled: true, exposeMethod: LoadBalancer, hosts: [example.org]}}",
		"disabled":     "addons: {ingressNginx: {hosts: [example.org]}}",
	} {
		rsp := fntest.Call{Spec: spec}.Run(t, runFn)
		fntest.NoFatal(t, rsp)
		for _, n := range []string{composedProxyService, composedProxyIngress, composedProxyHTTPIngress} {
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
			rsp := fntest.Call{Spec: spec}.Run(t, runFn)
			fntest.NoFatal(t, rsp)
			hrs := releases(rsp)
			graph := map[string][]string{}
			for rel, hr := range hrs {
				deps, _ := fntest.Get(hr, "spec", "dependsOn").([]any)
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

func TestDeterministic(t *testing.T) {
	a := fntest.Call{Spec: everything}.Run(t, runFn)
	b := fntest.Call{Spec: everything}.Run(t, runFn)
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
	// The planned objects (values bytes included) encode identically.
	objects := func() string {
		p, _, err := planFor(t, fntest.Call{Spec: everything})
		if err != nil {
			t.Fatal(err)
		}
		var objs []any
		for _, c := range p.Composed {
			objs = append(objs, c.Name, c.Object)
		}
		return mustJSON(t, objs)
	}
	if objects() != objects() {
		t.Error("plan's objects differ byte-wise")
	}
}

// Every emitted Flux object validates against the upstream CRDs.
func TestSchema(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]string{"defaults": "{}", "everything": everything} {
		rsp := fntest.Call{Spec: spec}.Run(t, runFn)
		fntest.NoFatal(t, rsp)
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

// TestReadinessInTheResponse: what plan decides about readiness
// (TestPlanAddonsReady, TestPlanReadiness) reaches the response: each
// composed resource's readiness, status.addons in the desired XR, and
// AddonsReady on the XR and the claim. Nothing is dropped because it was
// not observed.
func TestReadinessInTheResponse(t *testing.T) {
	obs := map[string]string{}
	for _, r := range baseReleases {
		obs["addon-"+r] = readyTrue
	}
	rsp := fntest.Call{Spec: "addons: {velero: {enabled: true}}", Observed: obs}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	want := []*fnv1.Condition{{Type: "AddonsReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "WaitingForHelmRelease",
		Message: ptr("velero: HelmRelease not created yet"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}}
	if d := cmp.Diff(want, rsp.GetConditions(), protocmp.Transform()); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if got := rsp.GetDesired().GetResources()["addon-cilium"].GetReady(); got != fnv1.Ready_READY_TRUE {
		t.Errorf("cilium ready %v", got)
	}
	if got := rsp.GetDesired().GetResources()["addon-velero"].GetReady(); got != fnv1.Ready_READY_FALSE {
		t.Errorf("velero ready %v", got)
	}
	st := fntest.Get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "addons")
	if d := cmp.Diff(map[string]any{"ready": false, "message": "HelmRelease not created yet"}, fntest.Get(st.(map[string]any), "velero")); d != "" {
		t.Errorf("velero status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"ready": true}, fntest.Get(st.(map[string]any), "cilium")); d != "" {
		t.Errorf("cilium status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(baseReleases, names(releases(fntest.Call{Spec: "{}"}.Run(t, runFn)))); d != "" {
		t.Errorf("releases with nothing observed (-want +got):\n%s", d)
	}
}

// The desired state of earlier steps is kept, and the desired XR keeps its
// status fields.
func TestKeepsEarlierDesired(t *testing.T) {
	rsp := fntest.Call{
		Spec:      "{}",
		DesiredXR: "apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nstatus: {version: v1.35.1}",
		Desired:   map[string]string{"cluster": "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster"},
	}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	if _, ok := rsp.GetDesired().GetResources()["cluster"]; !ok {
		t.Error("earlier composed resource dropped")
	}
	xr := rsp.GetDesired().GetComposite().GetResource().AsMap()
	if fntest.Get(xr, "status", "version") != "v1.35.1" || fntest.Get(xr, "status", "addons", "cilium") == nil {
		t.Errorf("desired XR status %v", fntest.Get(xr, "status"))
	}
}

func TestManagedSources(t *testing.T) {
	rsp := fntest.Call{Spec: everything}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	var got []string
	for n, r := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(n, "helmrepository-") || strings.HasPrefix(n, "ocirepository-") {
			got = append(got, n+"="+fntest.Get(r.GetResource().AsMap(), "metadata", "name").(string))
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
		emitted[fntest.Get(m, "kind").(string)+"/"+fntest.Get(m, "metadata", "name").(string)] = true
	}
	for rel, hr := range releases(rsp) {
		var kind, name, ns string
		if ref, ok := fntest.Get(hr, "spec", "chartRef").(map[string]any); ok {
			kind, name = ref["kind"].(string), ref["name"].(string)
			ns, _ = ref["namespace"].(string)
		} else {
			ref := fntest.Get(hr, "spec", "chart", "spec", "sourceRef").(map[string]any)
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
	first := fntest.Call{Spec: spec}.Run(t, runFn)
	fntest.NoFatal(t, first)
	req := fntest.Call{Spec: spec}.Request(t)
	req.Observed.Resources = map[string]*fnv1.Resource{}
	for name, r := range first.GetDesired().GetResources() {
		req.Observed.Resources[name] = &fnv1.Resource{Resource: r.GetResource()}
	}
	rsp, err := fntest.Run(runFn, req)
	if err != nil {
		t.Fatal(err)
	}
	fntest.NoFatal(t, rsp)
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
	req := fntest.Call{Spec: "{}"}.Request(t)
	if err := fntest.WithPlatformSettings(req, "serviceCIDR: 10.200.0.0/16\ncharts: {cilium: {version: 1.18.5}}"); err != nil {
		t.Fatal(err)
	}
	rsp, err := fntest.Run(runFn, req)
	if err != nil {
		t.Fatal(err)
	}
	fntest.NoFatal(t, rsp)
	rs := releases(rsp)
	if got := fntest.Get(rs["coredns"], "spec", "values", "service", "clusterIP"); got != "10.200.0.10" {
		t.Errorf("coredns clusterIP = %v, want 10.200.0.10", got)
	}
	if got := fntest.Get(rs["cilium"], "spec", "chart", "spec", "version"); got != "1.18.5" {
		t.Errorf("cilium chart version = %v, want 1.18.5", got)
	}
	if got := fntest.Get(rs["cilium"], "spec", "chart", "spec", "chart"); got != "cilium" {
		t.Errorf("cilium chart = %v, want cilium (the default source's)", got)
	}

	bad := fntest.Call{Spec: "{}"}.Request(t)
	if err := fntest.WithPlatformSettings(bad, "serviceCIDR: 10.95.0.0/30"); err != nil {
		t.Fatal(err)
	}
	rsp, err = fntest.Run(runFn, bad)
	if err != nil {
		t.Fatal(err)
	}
	if msg := fntest.FatalMessage(rsp); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.serviceCIDR: Invalid value: "10.95.0.0/30"`) {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.serviceCIDR and the value", msg)
	}
}

// wrappedGPUOperator is an addons input whose gpu-operator chart is a
// wrapper chart of the platform's (an ExternalArtifact), upstream values
// under gpu-operator.
const wrappedGPUOperator = "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ncharts: {gpuOperator: {kind: ExternalArtifact, name: gpu-operator, namespace: flux-system, valuesLayout: Wrapped, wrapperKey: gpu-operator}}"

// The cluster's storageClass must be one of the platform's remote classes
// (the EnvironmentConfig's remoteStorageClasses): the csi release would
// otherwise make a class the platform does not allow the tenant's default.
// The refusal names the field, the value and the classes allowed.
func TestStorageClassOfThePlatform(t *testing.T) {
	for _, c := range []struct {
		spec, settings, fatal string
	}{
		{spec: "storageClass: local", fatal: `spec.storageClass: Unsupported value: "local": supported values: "replicated"`},
		{spec: "storageClass: local", settings: "remoteStorageClasses: [replicated, replicated-nvme]",
			fatal: `spec.storageClass: Unsupported value: "local": supported values: "replicated", "replicated-nvme"`},
		{spec: "storageClass: replicated-nvme", settings: "remoteStorageClasses: [replicated, replicated-nvme]"},
		{spec: "{}", settings: "remoteStorageClasses: [replicated, replicated]",
			fatal: `EnvironmentConfig(tenantkube).data.remoteStorageClasses[1]: Duplicate value: "replicated"`},
	} {
		req := fntest.Call{Spec: c.spec}.Request(t)
		if c.settings != "" {
			if err := fntest.WithPlatformSettings(req, c.settings); err != nil {
				t.Fatal(err)
			}
		}
		rsp, err := fntest.Run(runFn, req)
		if err != nil {
			t.Fatal(err)
		}
		if c.fatal == "" {
			fntest.NoFatal(t, rsp)
			continue
		}
		if msg := fntest.FatalMessage(rsp); !strings.Contains(msg, c.fatal) {
			t.Errorf("%s with %q: Fatal %q, want one containing %q", c.spec, c.settings, msg, c.fatal)
		}
	}
}

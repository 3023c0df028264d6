package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

func releaseOf(t *testing.T, r fntest.Call, release string) map[string]any {
	t.Helper()
	rsp := r.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	res, ok := rsp.GetDesired().GetResources()[ComposedReleaseName(release)]
	if !ok {
		t.Fatalf("no HelmRelease for %s", release)
	}
	return res.GetResource().AsMap()
}

// cozystackDomain is the input of a platform with Cozystack's cluster
// domain, cozy.local, which the seed chart writes into its endpoints.
const cozystackDomain = "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nclusterDomain: cozy.local"

// With the default destinations and Cozystack's cluster domain the agents
// ship to the seed chart's endpoints of tenant-root's monitoring stack;
// the release keeps the chart's name cozy-monitoring-agents.
func TestMonitoringAgentsShipToPlatform(t *testing.T) {
	hr := releaseOf(t, fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true}}", Input: cozystackDomain}, "monitoring-agents")
	if got := fntest.Get(hr, "spec", "releaseName"); got != "cozy-monitoring-agents" {
		t.Errorf("releaseName %v, want cozy-monitoring-agents", got)
	}
	if got := fntest.Get(hr, "metadata", "name"); got != "demo-monitoring-agents" {
		t.Errorf("name %v", got)
	}
	v := fntest.Get(hr, "spec", "values").(map[string]any)
	if d := cmp.Diff(map[string]any{
		"externalLabels": map[string]any{"cluster": "demo", "tenant": "tenant-demo"},
		"remoteWrite":    map[string]any{"url": "http://vminsert-shortterm.tenant-root.svc.cozy.local:8480/insert/0/prometheus"},
	}, fntest.Get(v, "vmagent")); d != "" {
		t.Errorf("vmagent (-want +got):\n%s", d)
	}
	wantOut := "[OUTPUT]\n    Name http\n    Match kube.*\n" +
		"    Host vlinsert-generic.tenant-root.svc.cozy.local\n    Port 9481\n" +
		"    URI /insert/jsonline?_stream_fields=stream,kubernetes_pod_name,kubernetes_container_name,kubernetes_namespace_name&_msg_field=log&_time_field=date\n" +
		"    Compress gzip\n    Format json_lines\n    Json_date_format iso8601\n" +
		"    Header AccountID 0\n    Header ProjectID 0\n"
	if d := cmp.Diff(wantOut, fntest.Get(v, "fluent-bit", "config", "outputs")); d != "" {
		t.Errorf("fluent-bit outputs (-want +got):\n%s", d)
	}
	filters := fntest.Get(v, "fluent-bit", "config", "filters").(string)
	for _, want := range []string{"Name nest\n", "Operation lift\n", "Nested_under kubernetes\n", "Add_prefix kubernetes_\n", "Add tenant tenant-demo\n", "Add cluster demo\n"} {
		if !strings.Contains(filters, want) {
			t.Errorf("fluent-bit filters lack %q:\n%s", want, filters)
		}
	}
	// The tenant's override still wins.
	hr = releaseOf(t, fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true, valuesOverride: {vmagent: {remoteWrite: {url: 'http://mine:8428/api/v1/write'}}}}}"}, "monitoring-agents")
	if got := fntest.Get(hr, "spec", "values", "vmagent", "remoteWrite", "url"); got != "http://mine:8428/api/v1/write" {
		t.Errorf("overridden url %v", got)
	}
}

// Per-tenant destinations: {namespace} and {name} in the input's URLs, TLS
// for https, the default port of the scheme, headers in key order.
func TestMonitoringDestinationsPerTenant(t *testing.T) {
	in := `apiVersion: fn.tenantkube.io/v1alpha1
kind: AddonsInput
monitoring:
  metricsWriteURL: https://vminsert.{namespace}.svc:8480/insert/{name}/prometheus
  metricsReadURL: http://vmselect.{namespace}.svc:8481/select/{name}/prometheus/
  logsURL: https://logs.example.net/insert/jsonline?tenant={namespace}
  logsHeaders: {X-Scope: "{namespace}", AccountID: "7"}`
	r := fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true}}", Input: in}
	v := fntest.Get(releaseOf(t, r, "monitoring-agents"), "spec", "values").(map[string]any)
	if got := fntest.Get(v, "vmagent", "remoteWrite", "url"); got != "https://vminsert.tenant-demo.svc:8480/insert/demo/prometheus" {
		t.Errorf("remoteWrite url %v", got)
	}
	out := fntest.Get(v, "fluent-bit", "config", "outputs").(string)
	for _, want := range []string{"    Host logs.example.net\n    Port 443\n    URI /insert/jsonline?tenant=tenant-demo\n    tls On\n", "    Header AccountID 7\n    Header X-Scope {namespace}\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("outputs lack %q:\n%s", want, out)
		}
	}
	vpa := fntest.Get(releaseOf(t, r, "vertical-pod-autoscaler"), "spec", "values", "recommender", "extraArgs", "prometheus-address")
	if vpa != "http://vmselect.tenant-demo.svc:8481/select/demo/prometheus/" {
		t.Errorf("VPA prometheus-address %v", vpa)
	}
	for bad, want := range map[string]string{
		"monitoring: {logsURL: 'ftp://x/y'}":                        "input.monitoring.logsURL: Invalid value: \"ftp://x/y\"",
		"monitoring: {metricsWriteURL: 'http:///nohost'}":           "input.monitoring.metricsWriteURL",
		"monitoring: {metricsReadURL: \"http://a/b\\n[OUTPUT]\"}":   "input.monitoring.metricsReadURL",
		"monitoring: {logsHeaders: {'Bad Header': x}}":              "input.monitoring.logsHeaders: Invalid value: \"Bad Header\"",
		"monitoring: {logsHeaders: {X-A: \"1\\n    Name stdout\"}}": "input.monitoring.logsHeaders[X-A]",
	} {
		rsp := fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true}}", Input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\n" + bad}.Run(t, runFn)
		if msg := fntest.FatalMessage(rsp); !strings.Contains(msg, want) {
			t.Errorf("%s: Fatal %q, want one containing %q", bad, msg, want)
		}
	}
}

// The VPA recommender reads Prometheus, as the seed chart
// configures it.
func TestVPARecommenderReadsPrometheus(t *testing.T) {
	v := fntest.Get(releaseOf(t, fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true}}", Input: cozystackDomain}, "vertical-pod-autoscaler"), "spec", "values")
	want := map[string]any{"recommender": map[string]any{
		"extraArgs": map[string]any{
			"container-name-label":         "container",
			"container-namespace-label":    "namespace",
			"container-pod-name-label":     "pod",
			"storage":                      "prometheus",
			"memory-saver":                 true,
			"pod-label-prefix":             "label_",
			"metric-for-pod-labels":        `kube_pod_labels{job="kube-state-metrics", tenant="tenant-demo", cluster="demo"}[8d]`,
			"pod-name-label":               "pod",
			"pod-namespace-label":          "namespace",
			"prometheus-address":           "http://vmselect-shortterm.tenant-root.svc.cozy.local:8481/select/0/prometheus/",
			"prometheus-cadvisor-job-name": "cadvisor",
		},
		"resources": map[string]any{"limits": map[string]any{"memory": "1600Mi"}, "requests": map[string]any{"cpu": "100m", "memory": "1600Mi"}},
	}}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("VPA values (-want +got):\n%s", d)
	}
}

// Every release that installs the tenant's CRDs
// annotates them helm.sh/resource-policy: keep through a post-renderer;
// no other release has one.
func TestCRDReleasesKeepCRDs(t *testing.T) {
	rsp := fntest.Call{Spec: everything}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	keep := []string{"cert-manager-crds", "gateway-api-crds", "prometheus-operator-crds", "vertical-pod-autoscaler-crds", "vsnap-crd"}
	wantPR := []any{map[string]any{"kustomize": map[string]any{"patches": []any{map[string]any{
		"patch":  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: any\n  annotations:\n    helm.sh/resource-policy: keep\n",
		"target": map[string]any{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"},
	}}}}}
	seen := 0
	for name, r := range rsp.GetDesired().GetResources() {
		release, ok := strings.CutPrefix(name, "addon-")
		if !ok || fntest.Get(r.GetResource().AsMap(), "kind") != "HelmRelease" {
			continue
		}
		pr := fntest.Get(r.GetResource().AsMap(), "spec", "postRenderers")
		if slices.Contains(keep, release) {
			seen++
			if d := cmp.Diff(wantPR, pr); d != "" {
				t.Errorf("%s postRenderers (-want +got):\n%s", release, d)
			}
		} else if pr != nil {
			t.Errorf("%s has postRenderers %v", release, pr)
		}
	}
	if seen != len(keep) {
		t.Errorf("%d of the %d CRD releases rendered", seen, len(keep))
	}
}

// The default destinations follow the platform's cluster domain, so a
// tenant node, which resolves without the management cluster's search
// path, reaches them: cluster.local by default.
func TestMonitoringFollowsClusterDomain(t *testing.T) {
	for input, want := range map[string]string{
		"": "cluster.local",
		"apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\nclusterDomain: tenants.example.net": "tenants.example.net",
	} {
		call := fntest.Call{Spec: "addons: {monitoringAgents: {enabled: true}}", Input: input}
		agents := fntest.Get(releaseOf(t, call, "monitoring-agents"), "spec", "values").(map[string]any)
		if got := fntest.Get(agents, "vmagent", "remoteWrite", "url"); got != "http://vminsert-shortterm.tenant-root.svc."+want+":8480/insert/0/prometheus" {
			t.Errorf("%s: vmagent remoteWrite.url %v", want, got)
		}
		if got := fntest.Get(agents, "fluent-bit", "config", "outputs").(string); !strings.Contains(got, "    Host vlinsert-generic.tenant-root.svc."+want+"\n") {
			t.Errorf("%s: fluent-bit outputs %q", want, got)
		}
		vpa := fntest.Get(releaseOf(t, call, "vertical-pod-autoscaler"), "spec", "values").(map[string]any)
		if got := fntest.Get(vpa, "recommender", "extraArgs", "prometheus-address"); got != "http://vmselect-shortterm.tenant-root.svc."+want+":8481/select/0/prometheus/" {
			t.Errorf("%s: prometheus-address %v", want, got)
		}
	}
}

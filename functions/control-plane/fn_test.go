package main

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/test/schema"
)

// newRequest returns an observed-XR request for claim demo in tenant-demo with the
// given spec (YAML) and input (YAML, may be empty).
func newRequest(t *testing.T, specYAML, inputYAML string) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1",
		"kind":       "XKubernetesCluster",
		"metadata": map[string]any{
			"name": "demo-x7k2p",
			"labels": map[string]any{
				"crossplane.io/claim-name":      "demo",
				"crossplane.io/claim-namespace": "tenant-demo",
			},
		},
	}
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		t.Fatal(err)
	}
	xr["spec"] = spec
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructObject(&unstructured.Unstructured{Object: xr})}},
	}
	if inputYAML != "" {
		in := map[string]any{}
		if err := yaml.Unmarshal([]byte(inputYAML), &in); err != nil {
			t.Fatal(err)
		}
		req.Input = mustStruct(t, in)
	}
	return req
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
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

func desired(t *testing.T, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired composed resource %q; have %v", name, keys(rsp))
	}
	return r.GetResource().AsMap()
}

func keys(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for k := range rsp.GetDesired().GetResources() {
		out = append(out, k)
	}
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

func TestDefaultClusterObjects(t *testing.T) {
	rsp := run(t, newRequest(t, `{}`, ""))
	if msg := fatal(rsp); msg != "" {
		t.Fatalf("unexpected Fatal: %s", msg)
	}
	wantNames := []string{
		"cluster", "datastore", "etcd-ca", "etcd-ca-issuer", "etcd-client-cert", "etcd-peer-ca", "etcd-peer-ca-issuer",
		"etcd-peer-cert", "etcd-selfsigned-issuer", "etcd-server-cert", "etcdcluster", "kamajicontrolplane", "kubevirtcluster",
		"usage-etcdcluster-by-kamajicontrolplane", "usage-kamajicontrolplane-by-nodegroup-md0",
	}
	got := keys(rsp)
	if d := cmp.Diff(wantNames, got, cmpSorted); d != "" {
		t.Errorf("composed resources (-want +got):\n%s", d)
	}
	kcp := desired(t, rsp, "kamajicontrolplane")
	for path, want := range map[string]any{
		"spec.version":                                                     "v1.35.1",
		"spec.replicas":                                                    float64(2),
		"spec.dataStoreName":                                               "tenant-demo.demo",
		"spec.addons.konnectivity.server.port":                             float64(8132),
		"spec.addons.konnectivity.server.version":                          "v0.34.0",
		"spec.addons.konnectivity.agent.version":                           "v0.34.0",
		"spec.network.serviceType":                                         "ClusterIP",
		"spec.network.ingress.hostname":                                    "demo.tenant-demo.tenants.example.com:443",
		"spec.network.ingress.className":                                   "nginx",
		"spec.kubelet.cgroupfs":                                            "systemd",
		"spec.apiServer.resources.limits.cpu":                              "2",
		"spec.apiServer.resources.limits.memory":                           "2Gi",
		"spec.apiServer.resources.requests.cpu":                            "200m",
		"spec.scheduler.resources.limits.memory":                           "256Mi",
		"metadata.labels.cluster\\.x-k8s\\.io/role":                        "control-plane",
		"metadata.annotations.kamaji\\.clastix\\.io/kubeconfig-secret-key": "super-admin.svc",
	} {
		if got := get(kcp, splitPath(path)...); !cmp.Equal(got, want) {
			t.Errorf("KamajiControlPlane %s = %v, want %v", path, got, want)
		}
	}
	etcd := desired(t, rsp, "etcdcluster")
	for path, want := range map[string]any{
		"spec.replicas":                                                    float64(3),
		"spec.options.quota-backend-bytes":                                 "4080218931",
		"spec.options.auto-compaction-mode":                                "periodic",
		"spec.options.auto-compaction-retention":                           "5m",
		"spec.options.snapshot-count":                                      "10000",
		"spec.storage.volumeClaimTemplate.spec.resources.requests.storage": "4Gi",
		"spec.storage.volumeClaimTemplate.spec.storageClassName":           "replicated",
		"spec.security.tls.clientSecret":                                   "demo-etcd-client-tls",
	} {
		if got := get(etcd, splitPath(path)...); !cmp.Equal(got, want) {
			t.Errorf("EtcdCluster %s = %v, want %v", path, got, want)
		}
	}
	if got := get(desired(t, rsp, "datastore"), "spec", "endpoints"); !cmp.Equal(got, []any{"demo-etcd.tenant-demo.svc:2379"}) {
		t.Errorf("DataStore endpoints = %v", got)
	}
	if spec, ok := desired(t, rsp, "kubevirtcluster")["spec"]; ok {
		t.Errorf("KubevirtCluster has a spec %v; Kamaji writes its endpoint", spec)
	}
	if ns := get(desired(t, rsp, "datastore"), "metadata", "namespace"); ns != nil {
		t.Errorf("cluster-scoped DataStore has namespace %v", ns)
	}
	status := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	if d := cmp.Diff(map[string]any{
		"controlPlane":     map[string]any{"endpoint": "https://demo.tenant-demo.tenants.example.com:443"},
		"kubeconfigSecret": "demo-admin-kubeconfig",
	}, status); d != "" {
		t.Errorf("XR status (-want +got):\n%s", d)
	}
}

func splitPath(p string) []string {
	var out []string
	cur := ""
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			cur += string(p[i+1])
			i++
		case p[i] == '.':
			out = append(out, cur)
			cur = ""
		default:
			cur += string(p[i])
		}
	}
	return append(out, cur)
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// The acceptance line of issue 2: v1.33, 3 replicas, s1.large API server.
func TestVersionReplicasAndPreset(t *testing.T) {
	rsp := run(t, newRequest(t, `{version: v1.33, controlPlane: {replicas: 3, apiServer: {resourcesPreset: s1.large}}}`, ""))
	kcp := desired(t, rsp, "kamajicontrolplane")
	want := map[string]any{
		"version":  "v1.33.8",
		"replicas": float64(3),
		"apiServer": map[string]any{"resources": map[string]any{
			"limits":   map[string]any{"cpu": "4", "memory": "8Gi", "ephemeral-storage": "2Gi"},
			"requests": map[string]any{"cpu": "400m", "memory": "8Gi", "ephemeral-storage": "53687091"}, // int(2Gi / 40) bytes, as the seed chart
		}},
	}
	spec := kcp["spec"].(map[string]any)
	got := map[string]any{"version": spec["version"], "replicas": spec["replicas"], "apiServer": spec["apiServer"]}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("KamajiControlPlane (-want +got):\n%s", d)
	}
	if v := get(kcp, "spec", "addons", "konnectivity", "server", "version"); v != nil {
		t.Errorf("v1.33 has no konnectivity override, got %v", v)
	}
}

func TestExplicitResourcesOverridePresetPerKey(t *testing.T) {
	rsp := run(t, newRequest(t, `{controlPlane: {scheduler: {resourcesPreset: c1.medium, resources: {memory: 3Gi}}, controllerManager: {resources: {cpu: 1500m, memory: 1Gi}}}}`, ""))
	kcp := desired(t, rsp, "kamajicontrolplane")
	for path, want := range map[string]any{
		"spec.scheduler.resources.limits.cpu":              "2",
		"spec.scheduler.resources.limits.memory":           "3Gi",
		"spec.controllerManager.resources.limits.cpu":      "1500m",
		"spec.controllerManager.resources.requests.cpu":    "150m",
		"spec.controllerManager.resources.limits.memory":   "1Gi",
		"spec.controllerManager.resources.requests.memory": "1Gi",
	} {
		if got := get(kcp, splitPath(path)...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}

func TestSharedDataStore(t *testing.T) {
	rsp := run(t, newRequest(t, `{}`, `{apiVersion: fn.tenantkube.io/v1alpha1, kind: ControlPlaneInput, dataStoreName: shared-etcd, baseDomain: k8s.corp.test}`))
	if msg := fatal(rsp); msg != "" {
		t.Fatalf("unexpected Fatal: %s", msg)
	}
	if d := cmp.Diff([]string{"cluster", "kamajicontrolplane", "kubevirtcluster", "usage-kamajicontrolplane-by-nodegroup-md0"}, keys(rsp), cmpSorted); d != "" {
		t.Errorf("with a shared DataStore no etcd objects are emitted (-want +got):\n%s", d)
	}
	kcp := desired(t, rsp, "kamajicontrolplane")
	if got := get(kcp, "spec", "dataStoreName"); got != "shared-etcd" {
		t.Errorf("dataStoreName = %v", got)
	}
	if got := get(kcp, "spec", "network", "ingress", "hostname"); got != "demo.tenant-demo.k8s.corp.test:443" {
		t.Errorf("hostname = %v", got)
	}
}

func TestHostOverride(t *testing.T) {
	rsp := run(t, newRequest(t, `{host: api.demo.example.net}`, ""))
	if got := get(desired(t, rsp, "kamajicontrolplane"), "spec", "network", "ingress", "hostname"); got != "api.demo.example.net:443" {
		t.Errorf("hostname = %v", got)
	}
}

func TestBadInputIsFatalNamingTheField(t *testing.T) {
	cases := map[string]struct {
		spec, input string
		want        []string
	}{
		"unknown version": {spec: `{version: v1.29}`, want: []string{"spec.version", `"v1.29"`}},
		"unknown preset":  {spec: `{controlPlane: {apiServer: {resourcesPreset: x9.huge}}}`, want: []string{"spec.controlPlane.apiServer.resourcesPreset", `"x9.huge"`, "c1.medium"}},
		"bad quantity":    {spec: `{controlPlane: {scheduler: {resources: {cpu: abc}}}}`, want: []string{"spec.controlPlane.scheduler.resources.cpu", `"abc"`}},
		"zero memory":     {spec: `{controlPlane: {konnectivity: {server: {resources: {memory: "0"}}}}}`, want: []string{"spec.controlPlane.konnectivity.server.resources.memory", "greater than zero"}},
		"replicas zero":   {spec: `{controlPlane: {replicas: 0}}`, want: []string{"spec.controlPlane.replicas"}},
		"other namespace": {spec: `{namespace: tenant-other}`, want: []string{"spec.namespace", "tenant-other", "tenant-demo"}},
		"bad host":        {spec: `{host: "Not_A_Host"}`, want: []string{"spec.host", "Not_A_Host"}},
		"wrong type":      {spec: `{controlPlane: {replicas: "two"}}`, want: []string{"spec.controlPlane.replicas"}},
		"every spec problem at once": {spec: `{storageClass: Fast_SSD, controlPlane: {replicas: 8}, nodeGroups: {md0: {diskSize: -1Gi}}}`,
			want: []string{`spec.storageClass: Invalid value: "Fast_SSD"`, "spec.controlPlane.replicas: Invalid value: 8: must be between 1 and 7", `spec.nodeGroups[md0].diskSize: Invalid value: "-1Gi": must be greater than zero`}},
		"bad input CIDR":    {spec: `{}`, input: `{podCIDR: 10.0.0.0}`, want: []string{"input.podCIDR", "10.0.0.0"}},
		"bad input storage": {spec: `{}`, input: `{etcd: {storageSize: lots}}`, want: []string{"input.etcd.storageSize", "lots"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			prior := &fnv1.State{Resources: map[string]*fnv1.Resource{"from-earlier-step": {Resource: mustStruct(t, map[string]any{"kind": "ConfigMap"})}}}
			req := newRequest(t, c.spec, c.input)
			req.Desired = proto.Clone(prior).(*fnv1.State)
			rsp := run(t, req)
			msg := fatal(rsp)
			if msg == "" {
				t.Fatalf("no Fatal result; desired %v", keys(rsp))
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Fatal %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestUpgradeRule(t *testing.T) {
	cases := map[string]struct {
		desired, running, spec string
		fatal                  []string
	}{
		"same minor":               {desired: "v1.33.8", spec: "v1.33"},
		"next minor":               {desired: "v1.33.8", running: "v1.33.8", spec: "v1.34"},
		"skip a minor":             {desired: "v1.33.8", running: "v1.33.8", spec: "v1.35", fatal: []string{"spec.version", "runs v1.33.8", "allowed next: v1.33 or v1.34", "cannot be skipped"}},
		"downgrade":                {desired: "v1.34.4", running: "v1.34.4", spec: "v1.33", fatal: []string{"spec.version", "allowed next: v1.34 or v1.35", "downgrades"}},
		"newest, no next":          {desired: "v1.35.1", spec: "v1.30", fatal: []string{"allowed next: v1.35"}},
		"mid-upgrade, same target": {desired: "v1.34.4", running: "v1.33.8", spec: "v1.34"},
		"mid-upgrade, next again":  {desired: "v1.34.4", running: "v1.33.8", spec: "v1.35", fatal: []string{"runs v1.33.8 (upgrading to v1.34.4)", "allowed next: v1.34"}},
		"mid-upgrade, back down":   {desired: "v1.34.4", running: "v1.33.8", spec: "v1.33", fatal: []string{"downgrades"}},
		"status only":              {running: "v1.32.12", spec: "v1.34", fatal: []string{"allowed next: v1.32 or v1.33"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, `{version: `+c.spec+`}`, "")
			kcp := map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane"}
			if c.desired != "" {
				kcp["spec"] = map[string]any{"version": c.desired}
			}
			if c.running != "" {
				kcp["status"] = map[string]any{"version": c.running}
			}
			req.Observed.Resources = map[string]*fnv1.Resource{"kamajicontrolplane": {Resource: mustStruct(t, kcp)}}
			msg := fatal(run(t, req))
			if len(c.fatal) == 0 && msg != "" {
				t.Fatalf("unexpected Fatal: %s", msg)
			}
			if len(c.fatal) > 0 && msg == "" {
				t.Fatal("upgrade was accepted")
			}
			for _, w := range c.fatal {
				if !strings.Contains(msg, w) {
					t.Errorf("Fatal %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestKeepsEarlierDesiredAndIsDeterministic(t *testing.T) {
	mk := func() *fnv1.RunFunctionRequest {
		req := newRequest(t, `{version: v1.34}`, "")
		req.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{
			"from-earlier-step": {Resource: mustStruct(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap"})},
		}}
		return req
	}
	a, b := run(t, mk()), run(t, mk())
	if _, ok := a.GetDesired().GetResources()["from-earlier-step"]; !ok {
		t.Error("dropped a composed resource an earlier step desired")
	}
	ma, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a.GetDesired())
	mb, _ := proto.MarshalOptions{Deterministic: true}.Marshal(b.GetDesired())
	if string(ma) != string(mb) {
		t.Error("same input gave different desired state")
	}
}

func TestReadinessAndStatusFromObserved(t *testing.T) {
	req := newRequest(t, `{}`, "")
	req.Observed.Resources = map[string]*fnv1.Resource{
		"kamajicontrolplane": {Resource: mustStruct(t, map[string]any{"spec": map[string]any{"version": "v1.35.1"},
			"status": map[string]any{"ready": true, "version": "v1.35.1"}})},
		"etcdcluster": {Resource: mustStruct(t, map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"}}}})},
		"cluster": {Resource: mustStruct(t, map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": "False"}}}})},
	}
	rsp := run(t, req)
	ready := map[string]fnv1.Ready{}
	for k, r := range rsp.GetDesired().GetResources() {
		ready[k] = r.GetReady()
	}
	for name, want := range map[string]fnv1.Ready{
		"kamajicontrolplane": fnv1.Ready_READY_TRUE, "etcdcluster": fnv1.Ready_READY_TRUE,
		"cluster": fnv1.Ready_READY_FALSE, "datastore": fnv1.Ready_READY_FALSE, "etcd-ca": fnv1.Ready_READY_FALSE,
	} {
		if ready[name] != want {
			t.Errorf("%s readiness = %v, want %v", name, ready[name], want)
		}
	}
	if v := get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "version"); v != "v1.35.1" {
		t.Errorf("status.version = %v", v)
	}
	var cond *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == ConditionControlPlaneReady {
			cond = c
		}
	}
	if cond == nil || cond.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
		t.Errorf("ControlPlaneReady = %v", cond)
	}
}

func TestWaitingForEtcdCondition(t *testing.T) {
	rsp := run(t, newRequest(t, `{}`, ""))
	for _, c := range rsp.GetConditions() {
		if c.GetType() == ConditionControlPlaneReady {
			if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "WaitingForEtcd" {
				t.Errorf("ControlPlaneReady = %v %v", c.GetStatus(), c.GetReason())
			}
			return
		}
	}
	t.Error("no ControlPlaneReady condition")
}

func TestConnectionDetailsFromKubeconfigSecret(t *testing.T) {
	req := newRequest(t, `{}`, "")
	req.RequiredResources = map[string]*fnv1.Resources{requiredKubeconfig: {Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "demo-admin-kubeconfig", "namespace": "tenant-demo"},
		"data": map[string]any{"admin.conf": "YWRtaW4=", "super-admin.svc": "c3VwZXI=", "other": "eA=="},
	})}}}}
	rsp := run(t, req)
	got := map[string]string{}
	for k, v := range rsp.GetDesired().GetComposite().GetConnectionDetails() {
		got[k] = string(v)
	}
	if d := cmp.Diff(map[string]string{"admin.conf": "admin", "super-admin.svc": "super"}, got); d != "" {
		t.Errorf("connection details (-want +got):\n%s", d)
	}
	sel := rsp.GetRequirements().GetResources()[requiredKubeconfig]
	if sel.GetMatchName() != "demo-admin-kubeconfig" || sel.GetNamespace() != "tenant-demo" || sel.GetKind() != "Secret" {
		t.Errorf("kubeconfig requirement = %v", sel)
	}
}

func TestEveryObjectPassesUpstreamSchema(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{`{}`, `{version: v1.30, controlPlane: {replicas: 1, apiServer: {resources: {cpu: 8, memory: 16Gi}}}}`} {
		rsp := run(t, newRequest(t, spec, ""))
		for name, r := range rsp.GetDesired().GetResources() {
			if err := v.Validate(&unstructured.Unstructured{Object: r.GetResource().AsMap()}); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func TestBuilders(t *testing.T) {
	if got := DataStoreName(identity("demo", "tenant-demo")); got != "tenant-demo.demo" {
		t.Errorf("DataStoreName = %s", got)
	}
	if d := cmp.Diff([]string{
		"demo-etcd-0.demo-etcd-headless.ns.svc", "demo-etcd-1.demo-etcd-headless.ns.svc", "*.demo-etcd-headless.ns.svc",
	}, etcdMemberNames(namesOfEtcd(identity("demo", "ns")), "ns", 2)); d != "" {
		t.Errorf("member names (-want +got):\n%s", d)
	}
}

func TestEtcdOutlivesControlPlane(t *testing.T) {
	rsp := run(t, newRequest(t, `{}`, ""))
	u := desired(t, rsp, "usage-etcdcluster-by-kamajicontrolplane")
	want := map[string]any{
		"of":             map[string]any{"apiVersion": "etcd.aenix.io/v1alpha1", "kind": "EtcdCluster", "resourceRef": map[string]any{"name": "demo-etcd"}},
		"by":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
		"reason":         "Kamaji cleans the tenant's keys out of etcd when its control plane is deleted",
		"replayDeletion": true,
	}
	if d := cmp.Diff(want, u["spec"]); d != "" {
		t.Errorf("Usage spec (-want +got):\n%s", d)
	}
	if got := get(u, "metadata", "namespace"); got != "tenant-demo" {
		t.Errorf("Usage namespace = %v", got)
	}
	for _, input := range []string{`{deletionOrder: None}`, `{dataStoreName: shared}`} {
		rsp := run(t, newRequest(t, `{}`, input))
		if _, ok := rsp.GetDesired().GetResources()["usage-etcdcluster-by-kamajicontrolplane"]; ok {
			t.Errorf("input %s: unexpected etcd Usage", input)
		}
	}
}

func TestNodeGroupsGoBeforeControlPlane(t *testing.T) {
	rsp := run(t, newRequest(t, `{nodeGroups: {a: {}, gpu: {}}}`, ""))
	for _, g := range []string{"a", "gpu"} {
		u := desired(t, rsp, "usage-kamajicontrolplane-by-nodegroup-"+g)
		want := map[string]any{
			"of":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
			"by":             map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "resourceRef": map[string]any{"name": "demo-" + g}},
			"reason":         "node group " + g + " is drained through the tenant API server before the control plane goes",
			"replayDeletion": true,
		}
		if d := cmp.Diff(want, u["spec"]); d != "" {
			t.Errorf("Usage of group %s (-want +got):\n%s", g, d)
		}
	}
	if _, ok := rsp.GetDesired().GetResources()["usage-kamajicontrolplane-by-nodegroup-md0"]; ok {
		t.Error("a Usage for the default group md0, which the spec replaced")
	}
	rsp = run(t, newRequest(t, `{}`, `{deletionOrder: None}`))
	for k := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(k, "usage-") {
			t.Errorf("deletionOrder None still emits %s", k)
		}
	}
}

// A request whose required resources (the kubeconfig Secret) have not
// arrived returns a desired state that still holds every observed composed
// resource: nothing is deleted for want of an observation.
func TestDesiredIsSupersetOfObservedWithoutRequiredResources(t *testing.T) {
	first := run(t, newRequest(t, `{nodeGroups: {md0: {}, gpu: {}}}`, ""))
	req := newRequest(t, `{nodeGroups: {md0: {}, gpu: {}}}`, "")
	req.Observed.Resources = map[string]*fnv1.Resource{}
	for name, r := range first.GetDesired().GetResources() {
		req.Observed.Resources[name] = &fnv1.Resource{Resource: r.GetResource()}
	}
	if req.RequiredResources != nil {
		t.Fatal("test setup: required resources present")
	}
	rsp := run(t, req)
	for name := range req.Observed.Resources {
		if _, ok := rsp.GetDesired().GetResources()[name]; !ok {
			t.Errorf("observed %s is missing from the desired state", name)
		}
	}
}

// Platform settings come from the EnvironmentConfig, over the step's
// input; a bad one is Fatal naming the EnvironmentConfig's field.
func TestPlatformSettings(t *testing.T) {
	req := newRequest(t, `{}`, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: ControlPlaneInput\nbaseDomain: from.composition.test\nserviceCIDR: 10.96.0.0/16")
	if err := fntest.WithPlatformSettings(req, "baseDomain: k8s.corp.test\netcd: {storageSize: 8Gi}"); err != nil {
		t.Fatal(err)
	}
	rsp := run(t, req)
	if msg := fatal(rsp); msg != "" {
		t.Fatal(msg)
	}
	if got := get(desired(t, rsp, "kamajicontrolplane"), "spec", "network", "ingress", "hostname"); got != "demo.tenant-demo.k8s.corp.test:443" {
		t.Errorf("hostname = %v, want demo.tenant-demo.k8s.corp.test:443 (<N>.<NS>.<baseDomain of the EnvironmentConfig>)", got)
	}
	// Not in the EnvironmentConfig: the Composition's input stays.
	if got := get(desired(t, rsp, "cluster"), "spec", "clusterNetwork", "services", "cidrBlocks"); fmt.Sprint(got) != "[10.96.0.0/16]" {
		t.Errorf("service CIDR blocks = %v, want [10.96.0.0/16] (the step's input)", got)
	}

	bad := newRequest(t, `{}`, "")
	if err := fntest.WithPlatformSettings(bad, "baseDomain: Not_A_Domain"); err != nil {
		t.Fatal(err)
	}
	if msg := fatal(run(t, bad)); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.baseDomain: Invalid value: "Not_A_Domain"`) {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.baseDomain and the value", msg)
	}
}

// An input field checked while planning (etcd.storageSize) is named in the
// EnvironmentConfig too.
func TestPlatformSettingCheckedWhilePlanning(t *testing.T) {
	req := newRequest(t, `{}`, "")
	if err := fntest.WithPlatformSettings(req, "etcd: {storageSize: lots}"); err != nil {
		t.Fatal(err)
	}
	if msg := fatal(run(t, req)); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.etcd.storageSize`) || !strings.Contains(msg, "lots") {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.etcd.storageSize and the value", msg)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/schema"
)

// fn is the function under test, as served.
var fn fntest.Runner = newServer(nil, nil).RunFunction

// earlierStep is a composed resource an earlier pipeline step desired.
var earlierStep = map[string]string{"from-earlier-step": `{apiVersion: v1, kind: ConfigMap}`}

func TestBadInputIsFatalNamingTheField(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   fntest.Call
		want   []string
	}{
		"UnknownVersion":  {reason: "v1.29 is not in the version table.", args: fntest.Call{Spec: `{version: v1.29}`}, want: []string{"spec.version", `"v1.29"`}},
		"UnknownPreset":   {reason: "The Fatal lists the allowed presets.", args: fntest.Call{Spec: `{controlPlane: {apiServer: {resourcesPreset: x9.huge}}}`}, want: []string{"spec.controlPlane.apiServer.resourcesPreset", `"x9.huge"`, "c1.medium"}},
		"BadQuantity":     {reason: "abc is no quantity.", args: fntest.Call{Spec: `{controlPlane: {scheduler: {resources: {cpu: abc}}}}`}, want: []string{"spec.controlPlane.scheduler.resources.cpu", `"abc"`}},
		"ZeroMemory":      {reason: "A component needs some memory.", args: fntest.Call{Spec: `{controlPlane: {konnectivity: {server: {resources: {memory: "0"}}}}}`}, want: []string{"spec.controlPlane.konnectivity.server.resources.memory", "greater than zero"}},
		"ReplicasZero":    {reason: "1 to 7 replicas.", args: fntest.Call{Spec: `{controlPlane: {replicas: 0}}`}, want: []string{"spec.controlPlane.replicas"}},
		"OtherNamespace":  {reason: "A claim cannot name another namespace.", args: fntest.Call{Spec: `{namespace: tenant-other}`}, want: []string{"spec.namespace", "tenant-other", "tenant-demo"}},
		"BadHost":         {reason: "A host is a DNS name.", args: fntest.Call{Spec: `{host: "Not_A_Host"}`}, want: []string{"spec.host", "Not_A_Host"}},
		"WrongType":       {reason: "replicas is a number.", args: fntest.Call{Spec: `{controlPlane: {replicas: "two"}}`}, want: []string{"spec.controlPlane.replicas"}},
		"BadInputCIDR":    {reason: "The input's pod CIDR needs a prefix length.", args: fntest.Call{Spec: `{}`, Input: `{podCIDR: 10.0.0.0}`}, want: []string{"input.podCIDR", "10.0.0.0"}},
		"BadInputStorage": {reason: "The input's etcd size is a quantity.", args: fntest.Call{Spec: `{}`, Input: `{etcd: {storageSize: lots}}`}, want: []string{"input.etcd.storageSize", "lots"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.args.Desired = earlierStep
			rsp := tc.args.Run(t, fn)
			msg := fntest.FatalMessage(rsp)
			if msg == "" {
				t.Fatalf("\n%s\nno Fatal result; desired %v", tc.reason, fntest.DesiredNames(rsp))
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("\n%s\nFatal %q does not mention %q", tc.reason, msg, w)
				}
			}
		})
	}
}

func TestUpgradeRule(t *testing.T) {
	type args struct{ desired, running, spec string }
	cases := map[string]struct {
		reason string
		args   args
		want   []string // substrings of the Fatal message; none: accepted
	}{
		"SameMinor":            {reason: "Staying is allowed.", args: args{desired: "v1.33.8", spec: "v1.33"}},
		"NextMinor":            {reason: "One minor up is allowed.", args: args{desired: "v1.33.8", running: "v1.33.8", spec: "v1.34"}},
		"SkipAMinor":           {reason: "kubeadm upgrades one minor at a time.", args: args{desired: "v1.33.8", running: "v1.33.8", spec: "v1.35"}, want: []string{"spec.version", "runs v1.33.8", "allowed next: v1.33 or v1.34", "cannot be skipped"}},
		"Downgrade":            {reason: "kubeadm cannot downgrade.", args: args{desired: "v1.34.4", running: "v1.34.4", spec: "v1.33"}, want: []string{"spec.version", "allowed next: v1.34 or v1.35", "downgrades"}},
		"NewestNoNext":         {reason: "Only supported minors are offered.", args: args{desired: "v1.35.6", spec: "v1.31"}, want: []string{"allowed next: v1.35"}},
		"MidUpgradeSameTarget": {reason: "Asking again for the target of an upgrade in progress.", args: args{desired: "v1.34.4", running: "v1.33.8", spec: "v1.34"}},
		"MidUpgradeNextAgain":  {reason: "Not two minors above what runs.", args: args{desired: "v1.34.4", running: "v1.33.8", spec: "v1.35"}, want: []string{"runs v1.33.8 (upgrading to v1.34.4)", "allowed next: v1.34"}},
		"MidUpgradeBackDown":   {reason: "Not below what was asked for.", args: args{desired: "v1.34.4", running: "v1.33.8", spec: "v1.33"}, want: []string{"downgrades"}},
		"StatusOnly":           {reason: "Only status.version observed.", args: args{running: "v1.32.12", spec: "v1.34"}, want: []string{"allowed next: v1.32 or v1.33"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kcp := `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane`
			if tc.args.desired != "" {
				kcp += `, spec: {version: ` + tc.args.desired + `}`
			}
			if tc.args.running != "" {
				kcp += `, status: {version: ` + tc.args.running + `}`
			}
			msg := fntest.FatalMessage(fntest.Call{Spec: `{version: ` + tc.args.spec + `}`, Observed: map[string]string{"kamajicontrolplane": kcp + `}`}}.Run(t, fn))
			if len(tc.want) == 0 && msg != "" {
				t.Fatalf("\n%s\nunexpected Fatal: %s", tc.reason, msg)
			}
			if len(tc.want) > 0 && msg == "" {
				t.Fatalf("\n%s\nupgrade was accepted", tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("\n%s\nFatal %q does not mention %q", tc.reason, msg, w)
				}
			}
		})
	}
}

func TestKeepsEarlierDesiredAndIsDeterministic(t *testing.T) {
	c := fntest.Call{Spec: `{version: v1.34}`, Desired: earlierStep}
	a, b := c.Run(t, fn), c.Run(t, fn)
	if _, ok := a.GetDesired().GetResources()["from-earlier-step"]; !ok {
		t.Error("dropped a composed resource an earlier step desired")
	}
	ma, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a.GetDesired())
	mb, _ := proto.MarshalOptions{Deterministic: true}.Marshal(b.GetDesired())
	if string(ma) != string(mb) {
		t.Error("same input gave different desired state")
	}
}

// TestResponse: the plan reaches the response — readiness, status, the
// ControlPlaneReady condition, the kubeconfig requirement and connection
// details (function.Write).
func TestResponse(t *testing.T) {
	rsp := fntest.Call{
		Spec: `{}`,
		Observed: map[string]string{
			"kamajicontrolplane": `{spec: {version: v1.35.6}, status: {ready: true, version: v1.35.1}}`,
			"cluster":            `{status: {conditions: [{type: Available, status: "False"}]}}`,
		},
		Required: map[string][]string{requiredKubeconfig: {`{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo},
			data: {admin.conf: YWRtaW4=, super-admin.svc: c3VwZXI=, other: eA==}}`}},
	}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	ready := map[string]fnv1.Ready{}
	for _, name := range []string{"kamajicontrolplane", "cluster"} {
		ready[name] = rsp.GetDesired().GetResources()[name].GetReady()
	}
	if diff := cmp.Diff(map[string]fnv1.Ready{"kamajicontrolplane": fnv1.Ready_READY_TRUE, "cluster": fnv1.Ready_READY_FALSE}, ready); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{
		"controlPlane":     map[string]any{"endpoint": "https://demo.tenant-demo.tenants.example.com:443"},
		"kubeconfigSecret": "demo-admin-kubeconfig", "version": "v1.35.1",
	}, rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]); diff != "" {
		t.Errorf("XR status (-want +got):\n%s", diff)
	}
	var conditions []string
	for _, c := range rsp.GetConditions() {
		conditions = append(conditions, c.GetType()+"="+c.GetStatus().String()+" "+c.GetReason()+": "+c.GetMessage())
	}
	if diff := cmp.Diff([]string{tkv1alpha1.ConditionControlPlaneReady + "=STATUS_CONDITION_TRUE Available: the tenant API server answers at https://demo.tenant-demo.tenants.example.com:443"}, conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	details := map[string]string{}
	for k, v := range rsp.GetDesired().GetComposite().GetConnectionDetails() {
		details[k] = string(v)
	}
	if diff := cmp.Diff(map[string]string{"admin.conf": "admin", "super-admin.svc": "super"}, details); diff != "" {
		t.Errorf("connection details (-want +got):\n%s", diff)
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
	for _, input := range []string{"", cozystackInput} {
		for _, spec := range []string{`{}`, `{version: v1.31, controlPlane: {replicas: 1, apiServer: {resources: {cpu: 8, memory: 16Gi}}}}`} {
			rsp := fntest.Call{Spec: spec, Input: input}.Run(t, fn)
			for name, r := range rsp.GetDesired().GetResources() {
				u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
				if u.GetAPIVersion() == "v1" || u.GroupVersionKind().Group == "networking.k8s.io" {
					continue // built-in kinds: no CRD
				}
				if err := v.Validate(u); err != nil {
					t.Errorf("input %q, %s: %v", input, name, err)
				}
			}
		}
	}
}

// TestCozystackEtcd: with the etcd-operator.cozystack.io/v1alpha2 operator
// the claim's etcd is that API's EtcdCluster with the same sizing and
// flags as typed options, TLS from the same cert-manager Secrets, the
// cluster's labels on what the operator creates, and the operator's
// Service names (v0.5.4: client Service <cluster>-client, headless
// <cluster>, members <cluster>-<random>) in the DataStore and the
// certificates; the Usage and readiness follow that API.
func TestCozystackEtcd(t *testing.T) {
	rsp := fntest.Call{Spec: `{storageClass: replicated}`, Input: cozystackInput}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	labels := map[string]any{"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo"}
	etcd := fntest.DesiredObject(t, rsp, nameEtcdCluster)
	want := map[string]any{
		"apiVersion": "etcd-operator.cozystack.io/v1alpha2", "kind": "EtcdCluster",
		"metadata": map[string]any{"name": "demo-etcd", "namespace": "tenant-demo", "labels": labels},
		"spec": map[string]any{
			"version":  "3.6.11",
			"replicas": float64(3),
			// 95% of 4Gi = 0.95 * 4294967296 = 4080218931.2, rounded down.
			"options": map[string]any{"quotaBackendBytes": float64(4080218931), "autoCompactionMode": "periodic", "autoCompactionRetention": "5m", "snapshotCount": float64(10000)},
			"storage": map[string]any{"size": "4Gi", "storageClassName": "replicated"},
			"tls": map[string]any{
				"client": map[string]any{"serverSecretRef": map[string]any{"name": "demo-etcd-server-tls"}, "operatorClientSecretRef": map[string]any{"name": "demo-etcd-client-tls"}},
				"peer":   map[string]any{"secretRef": map[string]any{"name": "demo-etcd-peer-tls"}},
			},
			"additionalMetadata": map[string]any{"labels": labels},
		},
	}
	if d := cmp.Diff(want, etcd); d != "" {
		t.Errorf("EtcdCluster (-want +got):\n%s", d)
	}
	ds := fntest.DesiredObject(t, rsp, nameDataStore)
	if d := cmp.Diff([]any{"demo-etcd-client.tenant-demo.svc:2379"}, fntest.Get(ds, "spec", "endpoints")); d != "" {
		t.Errorf("DataStore endpoints (-want +got):\n%s", d)
	}
	sans := []any{"demo-etcd-client", "demo-etcd-client.tenant-demo", "demo-etcd-client.tenant-demo.svc", "*.demo-etcd.tenant-demo.svc", "localhost"}
	if d := cmp.Diff(sans, fntest.Get(fntest.DesiredObject(t, rsp, "etcd-server-cert"), "spec", "dnsNames")); d != "" {
		t.Errorf("etcd-server-cert dnsNames (-want +got):\n%s", d)
	}
	// The peer certificate's names: TestEtcdPeerCertificate.
	u := fntest.DesiredObject(t, rsp, nameEtcdUsage)
	if d := cmp.Diff(map[string]any{"apiVersion": "etcd-operator.cozystack.io/v1alpha2", "kind": "EtcdCluster", "resourceRef": map[string]any{"name": "demo-etcd"}}, fntest.Get(u, "spec", "of")); d != "" {
		t.Errorf("Usage of (-want +got):\n%s", d)
	}
}

// TestCozystackEtcdReadiness: the cozystack operator reports quorum as
// condition Available (its Ready-less status): the EtcdCluster is ready
// on it and ControlPlaneReady stops waiting for etcd.
func TestCozystackEtcdReadiness(t *testing.T) {
	observed := func(cond string) map[string]string {
		return map[string]string{nameEtcdCluster: `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: demo-etcd, namespace: tenant-demo},
			status: {conditions: [{type: ` + cond + `, status: "True", reason: QuorumHealthy, message: m, lastTransitionTime: "2026-01-02T03:04:05Z"}]}}`}
	}
	for cond, want := range map[string]fnv1.Ready{"Available": fnv1.Ready_READY_TRUE, "Ready": fnv1.Ready_READY_FALSE} {
		rsp := fntest.Call{Spec: `{}`, Input: cozystackInput, Observed: observed(cond)}.Run(t, fn)
		fntest.NoFatal(t, rsp)
		if got := rsp.GetDesired().GetResources()[nameEtcdCluster].GetReady(); got != want {
			t.Errorf("condition %s True: EtcdCluster ready = %v, want %v", cond, got, want)
		}
		waiting := false
		for _, c := range rsp.GetConditions() {
			if c.GetType() == tkv1alpha1.ConditionControlPlaneReady && c.GetReason() == tkv1alpha1.ReasonWaitingForEtcd {
				waiting = true
			}
		}
		if waiting != (cond != "Available") {
			t.Errorf("condition %s True: ControlPlaneReady waits for etcd = %v", cond, waiting)
		}
	}
}

// TestEtcdNeverMoved: a claim whose EtcdCluster runs on one operator is
// refused while the setting names the other, with a Fatal naming the
// setting, the cluster, its EtcdCluster and both operators, and no
// desired state (nothing composed is removed).
func TestEtcdNeverMoved(t *testing.T) {
	aenix := `{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, metadata: {name: demo-etcd, namespace: tenant-demo}}`
	cozystack := `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: demo-etcd, namespace: tenant-demo}}`
	for name, c := range map[string]struct {
		input, observed, running, setting string
	}{
		"ToCozystack": {cozystackInput, aenix, "etcd.aenix.io/v1alpha1", "etcd-operator.cozystack.io/v1alpha2"},
		"ToAenix":     {"", cozystack, "etcd-operator.cozystack.io/v1alpha2", "etcd.aenix.io/v1alpha1"},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Call{Spec: `{}`, Input: c.input, Observed: map[string]string{nameEtcdCluster: c.observed}}.Run(t, fn)
			msg := fntest.FatalMessage(rsp)
			for _, w := range []string{"input.etcd.operator", `"` + c.setting + `"`, "cluster tenant-demo/demo", "EtcdCluster tenant-demo/demo-etcd", "on the " + c.running + " operator", "not moved to " + c.setting} {
				if !strings.Contains(msg, w) {
					t.Errorf("Fatal %q does not mention %q", msg, w)
				}
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("a Fatal result desires %d composed resources, want the request's none", n)
			}
		})
	}
	// The same API as the setting is no move.
	rsp := fntest.Call{Spec: `{}`, Input: cozystackInput, Observed: map[string]string{nameEtcdCluster: cozystack}}.Run(t, fn)
	fntest.NoFatal(t, rsp)
}

func TestEtcdNames(t *testing.T) {
	if got := DataStoreName(function.Identity{Name: "demo", Namespace: "tenant-demo"}); got != "tenant-demo.demo" {
		t.Errorf("DataStoreName = %s", got)
	}
	id := function.Identity{Name: "demo", Namespace: "ns"}
	if d := cmp.Diff([]string{
		"demo-etcd-0.demo-etcd-headless.ns.svc", "demo-etcd-1.demo-etcd-headless.ns.svc", "*.demo-etcd-headless.ns.svc",
	}, etcdMemberNames(clusterEtcdSite(id, aenixEtcd{}), 2)); d != "" {
		t.Errorf("etcd.aenix.io member names (-want +got):\n%s", d)
	}
	// The cozystack operator v0.5.4 names its headless Service after the
	// cluster and its members <cluster>-<random>.
	if d := cmp.Diff([]string{"*.demo-etcd.ns.svc"}, etcdMemberNames(clusterEtcdSite(id, cozystackEtcd{}), 2)); d != "" {
		t.Errorf("etcd-operator.cozystack.io member names (-want +got):\n%s", d)
	}
}

func TestEtcdOutlivesControlPlane(t *testing.T) {
	rsp := fntest.Call{Spec: `{}`}.Run(t, fn)
	u := fntest.DesiredObject(t, rsp, "usage-etcdcluster-by-kamajicontrolplane")
	want := map[string]any{
		"of":             map[string]any{"apiVersion": "etcd.aenix.io/v1alpha1", "kind": "EtcdCluster", "resourceRef": map[string]any{"name": "demo-etcd"}},
		"by":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
		"reason":         "Kamaji cleans the tenant's keys out of etcd when its control plane is deleted",
		"replayDeletion": true,
	}
	if d := cmp.Diff(want, u["spec"]); d != "" {
		t.Errorf("Usage spec (-want +got):\n%s", d)
	}
	if got := fntest.Get(u, "metadata", "namespace"); got != "tenant-demo" {
		t.Errorf("Usage namespace = %v", got)
	}
}

func TestNodeGroupsGoBeforeControlPlane(t *testing.T) {
	rsp := fntest.Call{Spec: `{nodeGroups: {a: {}, gpu: {}}}`}.Run(t, fn)
	for _, g := range []string{"a", "gpu"} {
		u := fntest.DesiredObject(t, rsp, "usage-kamajicontrolplane-by-nodegroup-"+g)
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
}

// A request whose required resources (the kubeconfig Secret) have not
// arrived returns a desired state that still holds every observed composed
// resource: nothing is deleted for want of an observation.
func TestDesiredIsSupersetOfObservedWithoutRequiredResources(t *testing.T) {
	c := fntest.Call{Spec: `{nodeGroups: {md0: {}, gpu: {}}}`}
	first := c.Run(t, fn)
	c.Observed = map[string]string{}
	for name, r := range first.GetDesired().GetResources() {
		y, err := json.Marshal(r.GetResource().AsMap())
		if err != nil {
			t.Fatal(err)
		}
		c.Observed[name] = string(y) // JSON is YAML
	}
	rsp := c.Run(t, fn)
	for name := range c.Observed {
		if _, ok := rsp.GetDesired().GetResources()[name]; !ok {
			t.Errorf("observed %s is missing from the desired state", name)
		}
	}
}

// Platform settings come from the EnvironmentConfig, over the step's
// input; a bad one is Fatal naming the EnvironmentConfig's field.
func TestPlatformSettings(t *testing.T) {
	settings := func(data string) map[string][]string {
		return map[string][]string{"platform-settings": {`{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenantkube}, data: ` + data + `}`}}
	}
	rsp := fntest.Call{Spec: `{}`, Input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: ControlPlaneInput\nbaseDomain: from.composition.test\nserviceCIDR: 10.96.0.0/16",
		Required: settings(`{baseDomain: k8s.corp.test, etcd: {storageSize: 8Gi}}`)}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	if got := fntest.Get(fntest.DesiredObject(t, rsp, "kamajicontrolplane"), "spec", "network", "ingress", "hostname"); got != "demo.tenant-demo.k8s.corp.test:443" {
		t.Errorf("hostname = %v, want demo.tenant-demo.k8s.corp.test:443 (<N>.<NS>.<baseDomain of the EnvironmentConfig>)", got)
	}
	// Not in the EnvironmentConfig: the Composition's input stays.
	if d := cmp.Diff([]any{"10.96.0.0/16"}, fntest.Get(fntest.DesiredObject(t, rsp, "cluster"), "spec", "clusterNetwork", "services", "cidrBlocks")); d != "" {
		t.Errorf("service CIDR blocks, want the step's input (-want +got):\n%s", d)
	}
	if msg := fntest.FatalMessage(fntest.Call{Spec: `{}`, Required: settings(`{baseDomain: Not_A_Domain}`)}.Run(t, fn)); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.baseDomain: Invalid value: "Not_A_Domain"`) {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.baseDomain and the value", msg)
	}
	// An input field checked while planning (etcd.storageSize) is named in
	// the EnvironmentConfig too.
	if msg := fntest.FatalMessage(fntest.Call{Spec: `{}`, Required: settings(`{etcd: {storageSize: lots}}`)}.Run(t, fn)); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.etcd.storageSize`) || !strings.Contains(msg, "lots") {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.etcd.storageSize and the value", msg)
	}
	// A tenant group pattern two namespaces can share is Fatal naming it,
	// for every cluster, whatever its oidc.mode.
	gate := `{oidc: {issuerURL: "https://id.corp.test", groupsClaim: groups, tenantGroups: ["tenant:{namespace}:view", "{namespace}-admin"]}}`
	if msg := fntest.FatalMessage(fntest.Call{Spec: `{}`, Required: settings(gate)}.Run(t, fn)); !strings.Contains(msg, `EnvironmentConfig(tenantkube).data.oidc.tenantGroups[1]: Invalid value: "{namespace}-admin"`) {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.oidc.tenantGroups[1] and the value", msg)
	}
}

// TestBadEtcdSettingsAreFatal: an operator that is neither API and a
// version the v1alpha2 CRD's pattern (^\d+\.\d+\.\d+$) refuses are Fatal,
// naming the field and the value.
func TestBadEtcdSettingsAreFatal(t *testing.T) {
	for input, want := range map[string][]string{
		`{etcd: {operator: etcd.example/v1}}`: {"input.etcd.operator", `"etcd.example/v1"`, `"etcd.aenix.io/v1alpha1"`, `"etcd-operator.cozystack.io/v1alpha2"`},
		`{etcd: {version: v3.6.11}}`:          {"input.etcd.version", `"v3.6.11"`},
		`{etcd: {version: "3.6"}}`:            {"input.etcd.version", `"3.6"`},
	} {
		rsp := fntest.Call{Spec: `{}`, Input: input}.Run(t, fn)
		msg := fntest.FatalMessage(rsp)
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("input %s: Fatal %q does not mention %q", input, msg, w)
			}
		}
	}
}

package main

import (
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// The seed chart's container resources of the three controllers:
// requests 125m / 128Mi, limits 512m / 512Mi.
var seedControllerResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("512m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
}

func allContainers(d *corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container{}, d.InitContainers...), d.Containers...)
}

func mounts(c corev1.Container) []string {
	var out []string
	for _, m := range c.VolumeMounts {
		out = append(out, m.Name+":"+m.MountPath)
	}
	return out
}

// Every container of the three controllers has requests
// and limits and a locked-down security context; the pods do not link
// services, tolerate the chart's taints, and only the containers that call
// the management API hold a ServiceAccount token.
func TestControllersHardened(t *testing.T) {
	in := defaultInput()
	for _, c := range []struct {
		ctl      controller
		token    []string // containers with the management-API token
		tmp      []string // containers with a writable /tmp
		priority string
	}{
		{buildClusterAutoscaler(testID, in, "busybox"), []string{"cluster-autoscaler"}, []string{"cluster-autoscaler"}, ""},
		{buildCloudControllerManager(testID, in, "busybox"), []string{"kccm"}, []string{"kccm"}, ""},
		{buildCSIController(testID, in, "busybox"), []string{"csi-driver"}, nil, "system-cluster-critical"},
	} {
		pod := c.ctl.Deployment.Spec.Template.Spec
		name := c.ctl.Deployment.Name
		if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
			t.Errorf("%s: enableServiceLinks %v, want false", name, pod.EnableServiceLinks)
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken %v, want false", name, pod.AutomountServiceAccountToken)
		}
		if sa := c.ctl.ServiceAccount.AutomountServiceAccountToken; sa == nil || *sa {
			t.Errorf("%s: ServiceAccount automountServiceAccountToken %v, want false", name, sa)
		}
		if pod.PriorityClassName != c.priority {
			t.Errorf("%s: priorityClassName %q, want %q", name, pod.PriorityClassName, c.priority)
		}
		wantTol := []corev1.Toleration{
			{Key: "CriticalAddonsOnly", Operator: "Exists"},
			{Key: "node-role.kubernetes.io/control-plane", Operator: "Exists", Effect: "NoSchedule"},
		}
		if d := cmp.Diff(wantTol, pod.Tolerations); d != "" {
			t.Errorf("%s: tolerations (-want +got):\n%s", name, d)
		}
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 ||
			psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod security context %+v", name, psc)
		}
		var withToken, withTmp []string
		for _, ctr := range allContainers(&pod) {
			if d := cmp.Diff(seedControllerResources, ctr.Resources); d != "" {
				t.Errorf("%s/%s: resources (-want +got):\n%s", name, ctr.Name, d)
			}
			sc := ctr.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.Capabilities == nil || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
				sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Errorf("%s/%s: security context %+v", name, ctr.Name, sc)
			}
			ms := mounts(ctr)
			if slices.Contains(ms, "management-api-token:/var/run/secrets/kubernetes.io/serviceaccount") {
				withToken = append(withToken, ctr.Name)
			}
			if slices.Contains(ms, "tmp:/tmp") {
				withTmp = append(withTmp, ctr.Name)
			}
		}
		if d := cmp.Diff(c.token, withToken); d != "" {
			t.Errorf("%s: containers with the management API token (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(c.tmp, withTmp); d != "" {
			t.Errorf("%s: containers with /tmp (-want +got):\n%s", name, d)
		}
		var token *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == "management-api-token" {
				token = &pod.Volumes[i]
			}
		}
		if token == nil || token.Projected == nil || len(token.Projected.Sources) != 3 ||
			token.Projected.Sources[0].ServiceAccountToken == nil || token.Projected.Sources[0].ServiceAccountToken.Path != "token" ||
			token.Projected.Sources[1].ConfigMap == nil || token.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
			token.Projected.Sources[2].DownwardAPI == nil || token.Projected.Sources[2].DownwardAPI.Items[0].Path != "namespace" {
			t.Errorf("%s: token volume %+v", name, token)
		}
	}
}

// The input overrides one container's resources, and bad settings are
// Fatal results naming the input field.
func TestControllerSettingsFromInput(t *testing.T) {
	in := `apiVersion: fn.tenantkube.io/v1alpha1
kind: WorkersInput
controllers:
  resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {cpu: "1", memory: 1Gi}}
  containerResources:
    csi-snapshotter: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 64Mi}}
  runAsUser: 1000
  csiPriorityClassName: platform-critical`
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithInput(mustStruct(t, in))))
	mustNoFatal(t, rsp)
	d := desired(t, rsp, managementPrefix+nameCSIDeployment)
	byName := map[string]any{}
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		byName[get(c, "name").(string)] = get(c, "resources")
	}
	if diff := cmp.Diff(map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"}, "limits": map[string]any{"memory": "64Mi"}}, byName["csi-snapshotter"]); diff != "" {
		t.Errorf("csi-snapshotter resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "1", "memory": "1Gi"}}, byName["csi-driver"]); diff != "" {
		t.Errorf("csi-driver resources (-want +got):\n%s", diff)
	}
	if got := get(d, "spec", "template", "spec", "priorityClassName"); got != "platform-critical" {
		t.Errorf("priorityClassName %v", got)
	}
	if got := get(d, "spec", "template", "spec", "securityContext", "runAsUser"); got != 1000.0 {
		t.Errorf("runAsUser %v", got)
	}

	for bad, want := range map[string]string{
		`controllers: {containerResources: {sidecar: {}}}`:                                            `input.controllers.containerResources: Unsupported value: "sidecar"`,
		`controllers: {resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}`:                        `input.controllers.resources.requests[cpu]: Invalid value: "2"`,
		`controllers: {containerResources: {kccm: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}}`: `input.controllers.containerResources[kccm].requests[memory]`,
		`controllers: {loadBalancerMode: Magic}`:                                                      `input.controllers.loadBalancerMode: Unsupported value: "Magic"`,
		`controllers: {csiPriorityClassName: "Not Valid"}`:                                            `input.controllers.csiPriorityClassName`,
		`controllers: {runAsUser: -1}`:                                                                `input.controllers.runAsUser: Invalid value: -1`,
	} {
		rsp := run(t, newRequest(t, ``, fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\n"+bad))))
		f := fatals(rsp)
		if len(f) != 1 || !strings.Contains(f[0], want) {
			t.Errorf("%s: Fatal %v, want one containing %q", bad, f, want)
		}
		if len(rsp.GetDesired().GetResources()) != 0 {
			t.Errorf("%s: composed %v despite the Fatal result", bad, desiredNames(rsp))
		}
	}
}

// The CSI controller runs the chart's
// csi-snapshotter and snapshot-controller against the tenant cluster, with
// the chart's infra-cluster label and retry interval.
func TestCSIControllerSnapshotsAndChartSettings(t *testing.T) {
	in := defaultInput()
	ctl := buildCSIController(testID, in, "busybox")
	pod := ctl.Deployment.Spec.Template.Spec
	var names []string
	byName := map[string]corev1.Container{}
	for _, c := range pod.Containers {
		names = append(names, c.Name)
		byName[c.Name] = c
	}
	if d := cmp.Diff([]string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "snapshot-controller", "csi-liveness-probe"}, names); d != "" {
		t.Errorf("containers (-want +got):\n%s", d)
	}
	kubeconfig := "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc"
	for name, want := range map[string]struct {
		image  string
		args   []string
		mounts []string
	}{
		"csi-snapshotter": {"registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0",
			[]string{"--csi-address=/csi/csi.sock", kubeconfig, "--v=2", "--timeout=1m", "--worker-threads=10", "--kube-api-qps=100", "--kube-api-burst=200"},
			[]string{"socket-dir:/csi", "kubeconfig:/etc/kubernetes/kubeconfig"}},
		"snapshot-controller": {"registry.k8s.io/sig-storage/snapshot-controller:v8.3.0",
			[]string{kubeconfig, "--worker-threads=10", "--v=2", "--kube-api-qps=100", "--kube-api-burst=200"},
			[]string{"kubeconfig:/etc/kubernetes/kubeconfig"}},
	} {
		c := byName[name]
		if c.Image != want.image {
			t.Errorf("%s: image %q, want %q", name, c.Image, want.image)
		}
		if d := cmp.Diff(want.args, c.Args); d != "" {
			t.Errorf("%s: args (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(want.mounts, mounts(c)); d != "" {
			t.Errorf("%s: mounts (-want +got):\n%s", name, d)
		}
	}
	for _, name := range []string{"csi-provisioner", "csi-attacher"} {
		if !slices.Contains(byName[name].Args, "--retry-interval-max=1m") {
			t.Errorf("%s: args %v lack --retry-interval-max=1m", name, byName[name].Args)
		}
	}
	if a := byName["csi-driver"].Args; !slices.Contains(a, "--infra-cluster-labels=tenantkube.io/cluster=demo,cluster.x-k8s.io/cluster-name=demo") {
		t.Errorf("csi-driver args %v lack both infra-cluster labels", a)
	}
}

// Selectorless (the default, the seed chart's) runs the
// cloud controller's EndpointSlice controller (its ClusterRole
// tenantkube:kccm has the EndpointSlice rights); Selector turns both off in
// the cloud-config.
func TestLoadBalancerMode(t *testing.T) {
	in := defaultInput()
	if in.Controllers.LoadBalancerMode != inputv1alpha1.LoadBalancerSelectorless {
		t.Errorf("default mode %q, want Selectorless", in.Controllers.LoadBalancerMode)
	}
	rsp := run(t, newRequest(t, ``, withMachineSets(t), withInstancetypes(t, "u1.medium"),
		fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncontrollers: {loadBalancerMode: Selector}"))))
	mustNoFatal(t, rsp)
	cfg := get(desired(t, rsp, managementPrefix+nameCCMCloudConfig), "data", "cloud-config").(string)
	if !strings.Contains(cfg, "  selectorless: false\n") || !strings.Contains(cfg, "  enableEPSController: false\n") {
		t.Errorf("Selector cloud-config:\n%s", cfg)
	}
}

// instanceType "" written explicitly is no instance type
// (the seed's documented case): no requirement, no instancetype on the VM,
// the minimum reservations (256Mi, 50m), no capacity annotations, and a
// kubelet memory or CPU override rejected. Only an absent field is
// u1.medium.
func TestEmptyInstanceTypeMeansNone(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: ""}}`, withMachineSets(t)))
	mustNoFatal(t, rsp)
	for _, r := range rsp.GetRequirements().GetResources() {
		if r.GetKind() == instancetypeKind {
			t.Errorf("instance type required: %v", r)
		}
	}
	tmpl := oneTemplate(t, rsp, "md0")
	if it := get(tmpl, "spec", "template", "spec", "virtualMachineTemplate", "spec", "instancetype"); it != nil {
		t.Errorf("instancetype %v, want none", it)
	}
	args := kubeletArgs(t, rsp, "md0")
	if got := args["system-reserved"]; got != "memory=256Mi,cpu=50m" {
		t.Errorf("system-reserved %q, want memory=256Mi,cpu=50m", got)
	}
	ann := annotations(t, desired(t, rsp, machineDeploymentResourceName("md0")))
	for _, k := range []string{annotationCapacityMemory, annotationCapacityCPU} {
		if v, ok := ann[k]; ok {
			t.Errorf("%s = %v, want none", k, v)
		}
	}
	for _, kubelet := range []string{"systemReservedMemory: 1Gi", "kubeReservedCpu: 100m"} {
		rsp := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: "", kubelet: {`+kubelet+`}}}`, withMachineSets(t)))
		f := fatals(rsp)
		if len(f) == 0 || !strings.Contains(f[0], "spec.nodeGroups[md0].kubelet.") {
			t.Errorf("%s without a size: Fatal %v, want one naming the kubelet field", kubelet, f)
		}
	}
	absent := run(t, newRequest(t, `nodeGroups: {md0: {minReplicas: 1}}`, withMachineSets(t), withInstancetypes(t, "u1.medium")))
	mustNoFatal(t, absent)
	if got := get(oneTemplate(t, absent, "md0"), "spec", "template", "spec", "virtualMachineTemplate", "spec", "instancetype", "name"); got != "u1.medium" {
		t.Errorf("absent instanceType: instancetype %v, want u1.medium", got)
	}
}

// A machine template a MachineSet of this cluster still
// uses is kept under whatever composed-resource name it was observed;
// one only another cluster's MachineSet uses is not.
func TestReferencedTemplateKeptWhateverItsComposedName(t *testing.T) {
	spec := `nodeGroups: {md0: {instanceType: u1.large}}`
	kmt := func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate",
			"metadata": map[string]any{"name": name, "namespace": testNS},
			"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{}}},
		}
	}
	observed := map[string]*structpb.Struct{
		"legacy-template":  mustStructOf(t, kmt("demo-md0-aaaaaa")),
		"other-cluster-ms": mustStructOf(t, kmt("demo-md0-bbbbbb")),
		"unreferenced":     mustStructOf(t, kmt("demo-md0-cccccc")),
	}
	ms := func(name, cluster string) *structpb.Struct {
		return mustStruct(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata: {name: ms-`+name+`, namespace: `+testNS+`, labels: {cluster.x-k8s.io/cluster-name: `+testN+`}}
spec:
  clusterName: `+cluster+`
  template: {spec: {clusterName: `+cluster+`, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: KubevirtMachineTemplate, name: `+name+`}}}`)
	}
	withSets := func(items ...*structpb.Struct) fntest.RequestOption {
		return fntest.WithRequired(requirementMachineSets, items...)
	}
	rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), fntest.WithObserved(observed),
		withSets(ms("demo-md0-aaaaaa", testN), ms("demo-md0-bbbbbb", "other"))))
	mustNoFatal(t, rsp)
	got := rsp.GetDesired().GetResources()
	if r, ok := got["legacy-template"]; !ok || r.GetReady() != fnv1.Ready_READY_TRUE {
		t.Errorf("template used by this cluster's MachineSet: %v, want kept and ready", r)
	} else if d := cmp.Diff(observed["legacy-template"].AsMap(), r.GetResource().AsMap()); d != "" {
		t.Errorf("kept template changed (-observed +desired):\n%s", d)
	}
	for _, n := range []string{"other-cluster-ms", "unreferenced"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s kept", n)
		}
	}
	pending := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), fntest.WithObserved(observed)))
	mustNoFatal(t, pending)
	for n := range observed {
		if _, ok := pending.GetDesired().GetResources()[n]; !ok {
			t.Errorf("MachineSets not fetched: %s dropped", n)
		}
	}
}

// GPUs without the GPU operator give a Warning.
func TestGPUWithoutOperatorWarns(t *testing.T) {
	spec := `nodeGroups: {gpu: {instanceType: u1.large, gpus: [{name: nvidia.com/AD102GL_L40S}]}}`
	warnings := func(rsp *fnv1.RunFunctionResponse) []string {
		var out []string
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetReason() == v1alpha1.ReasonGPUOperatorDisabled {
				out = append(out, r.GetMessage())
			}
		}
		return out
	}
	off := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	mustNoFatal(t, off)
	if w := warnings(off); len(w) != 1 || !strings.Contains(w[0], "node group gpu attaches 1 GPUs but addons.gpuOperator.enabled is false") {
		t.Errorf("warnings %v", w)
	}
	on := run(t, newRequest(t, spec+"\naddons: {gpuOperator: {enabled: true}}", withInstancetypes(t, "u1.large"), withMachineSets(t)))
	mustNoFatal(t, on)
	if w := warnings(on); len(w) != 0 {
		t.Errorf("with the GPU operator: warnings %v", w)
	}
}

func mustStructOf(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

package main

import (
	"github.com/tenantkube/tenantkube/internal/fntest"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// templateName returns the single machine-template composed-resource name
// of group g in rsp.
func templateNames(rsp *fnv1.RunFunctionResponse, g string) []string {
	var out []string
	for _, n := range desiredNames(rsp) {
		if tg, ok := machineTemplateGroup(n); ok && tg == g {
			out = append(out, n)
		}
	}
	return out
}

func TestMachineTemplateGroup(t *testing.T) {
	cases := map[string]string{
		"nodegroup-md0-machinetemplate-0a1b2c":                 "md0",
		"nodegroup-gpu-a-machinetemplate-ffffff":               "gpu-a",
		"nodegroup-x-machinetemplate-y-machinetemplate-abcdef": "x-machinetemplate-y",
		"nodegroup-md0-machinetemplate-0A1B2C":                 "",
		"nodegroup-md0-machinetemplate-0a1b2":                  "",
		"nodegroup--machinetemplate-0a1b2c":                    "",
		"nodegroup-md0-machinedeployment":                      "",
		"cluster":                                              "",
	}
	for name, want := range cases {
		got, ok := machineTemplateGroup(name)
		if got != want || ok != (want != "") {
			t.Errorf("machineTemplateGroup(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func oneTemplate(t *testing.T, rsp *fnv1.RunFunctionResponse, g string) map[string]any {
	t.Helper()
	names := templateNames(rsp, g)
	if len(names) != 1 {
		t.Fatalf("want one machine template of %s, got %v", g, names)
	}
	return desired(t, rsp, names[0])
}

// observedFrom turns rsp's desired composed resources into observed ones
// (as if Crossplane had applied them), adding status when given.
func observedFrom(rsp *fnv1.RunFunctionResponse, status map[string]string) map[string]*structpb.Struct {
	out := map[string]*structpb.Struct{}
	for n, r := range rsp.GetDesired().GetResources() {
		s := proto.Clone(r.GetResource()).(*structpb.Struct)
		if y, ok := status[n]; ok {
			m := map[string]any{}
			_ = yamlInto(y, &m)
			v, _ := structpb.NewValue(m)
			s.Fields["status"] = v
		}
		out[n] = s
	}
	return out
}

func kubeletArgs(t *testing.T, rsp *fnv1.RunFunctionResponse, g string) map[string]string {
	t.Helper()
	args := get(desired(t, rsp, bootstrapResourceName(g)), "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs").([]any)
	out := map[string]string{}
	for _, a := range args {
		m := a.(map[string]any)
		out[m["name"].(string)] = m["value"].(string)
	}
	return out
}

func annotations(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	a, _ := get(obj, "metadata", "annotations").(map[string]any)
	delete(a, annotationTenantInputs) // TestMaintenance* check it
	return a
}

// TestAcceptanceU1Large: md0 {instanceType: u1.large} gets the reservations,
// capacity annotations and VM the seed's formula gives for 2 CPUs and 8Gi.
func TestAcceptanceU1Large(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	mustNoFatal(t, rsp)
	args := kubeletArgs(t, rsp, "md0")
	if got := args["system-reserved"]; got != "memory=409Mi,cpu=100m" {
		t.Errorf("system-reserved = %q, want memory=409Mi,cpu=100m", got)
	}
	if got := args["kube-reserved"]; got != "memory=409Mi,cpu=100m" {
		t.Errorf("kube-reserved = %q, want memory=409Mi,cpu=100m", got)
	}
	md := desired(t, rsp, machineDeploymentResourceName("md0"))
	ann := annotations(t, md)
	want := map[string]any{
		annotationCapacityMemory:       "6800Mi",
		annotationCapacityCPU:          "1800m",
		annotationAutoscalerMin:        "0",
		annotationAutoscalerMax:        "10",
		annotationMaxNodeProvisionTime: "30m",
	}
	if d := cmp.Diff(want, ann); d != "" {
		t.Errorf("MachineDeployment annotations (-want +got):\n%s", d)
	}
	if _, ok := get(md, "spec").(map[string]any)["replicas"]; ok {
		t.Error("MachineDeployment has spec.replicas")
	}
	tmpl := oneTemplate(t, rsp, "md0")
	if got := get(tmpl, "spec", "template", "spec", "virtualMachineTemplate", "spec", "instancetype", "name"); got != "u1.large" {
		t.Errorf("instancetype = %v, want u1.large", got)
	}
	if got := get(md, "spec", "template", "spec", "infrastructureRef", "name"); got != get(tmpl, "metadata", "name") {
		t.Errorf("MachineDeployment refers to %v, template is %v", got, get(tmpl, "metadata", "name"))
	}
	if got := get(md, "spec", "template", "spec", "version"); got != "v1.35.6" {
		t.Errorf("version = %v, want v1.35.6", got)
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()
	if d := cmp.Diff(map[string]any{"cpu": "1800m", "memory": "6800Mi"}, get(st, "status", "nodeGroups", "md0", "allocatable")); d != "" {
		t.Errorf("status allocatable (-want +got):\n%s", d)
	}
}

// TestAcceptanceExplicitResources: resources {cpu: 4, memory: 16Gi} size
// the VM without an instance type.
func TestAcceptanceExplicitResources(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {resources: {cpu: 4, memory: 16Gi}}}`, withMachineSets(t)))
	mustNoFatal(t, rsp)
	vm := get(oneTemplate(t, rsp, "md0"), "spec", "template", "spec", "virtualMachineTemplate", "spec").(map[string]any)
	if _, ok := vm["instancetype"]; ok {
		t.Errorf("VM has an instancetype: %v", vm["instancetype"])
	}
	domain := get(vm, "template", "spec", "domain")
	if d := cmp.Diff(map[string]any{"cores": 4.0, "threads": 1.0, "sockets": 1.0}, get(domain, "cpu")); d != "" {
		t.Errorf("domain.cpu (-want +got):\n%s", d)
	}
	if got := get(domain, "memory", "guest"); got != "16Gi" {
		t.Errorf("memory.guest = %v, want 16Gi", got)
	}
	if _, ok := rsp.GetRequirements().GetResources()[requirementInstancetypeKey("u1.medium")]; ok {
		t.Error("an instance type is required although resources are explicit")
	}
	// 16Gi → 5% = 819Mi; 4 cores → 200m; 16384 − 1638 − 1146.88 = 13599.12.
	ann := annotations(t, desired(t, rsp, machineDeploymentResourceName("md0")))
	if ann[annotationCapacityMemory] != "13599Mi" || ann[annotationCapacityCPU] != "3600m" {
		t.Errorf("capacity = %v/%v, want 13599Mi/3600m", ann[annotationCapacityMemory], ann[annotationCapacityCPU])
	}
}

// TestAcceptanceFatal: each bad input fails naming the node group and field.
func TestAcceptanceFatal(t *testing.T) {
	cases := map[string]struct {
		spec string
		want []string
	}{
		"hard above soft": {`nodeGroups: {md0: {instanceType: u1.large, kubelet: {evictionHardMemory: "10%", evictionSoftMemory: "5%"}}}`,
			[]string{"spec.nodeGroups[md0].kubelet.evictionHardMemory", `"10%"`}},
		"cpu not a quantity": {`nodeGroups: {md0: {instanceType: u1.large, kubelet: {systemReservedCpu: abc}}}`,
			[]string{"spec.nodeGroups[md0].kubelet.systemReservedCpu", `"abc"`}},
		"cpu alone": {`nodeGroups: {md0: {resources: {cpu: 2}}}`,
			[]string{"spec.nodeGroups[md0].resources.memory", `"2"`}},
		"no such instance type": {`nodeGroups: {md0: {instanceType: no.such}}`,
			[]string{"spec.nodeGroups[md0].instanceType", `"no.such"`}},
		"min above max": {`nodeGroups: {md0: {minReplicas: 4, maxReplicas: 2}}`,
			[]string{"spec.nodeGroups[md0].minReplicas"}},
		"bad version":              {`version: v1.29`, []string{"spec.version", "v1.29"}},
		"claim namespace mismatch": {`namespace: other`, []string{"spec.namespace"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, c.spec, withInstancetypes(t, "u1.large", "u1.medium", "no.such"), withMachineSets(t)))
			f := fatals(rsp)
			if len(f) == 0 {
				t.Fatal("no Fatal result")
			}
			all := strings.Join(f, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("Fatal %q does not contain %q", all, w)
				}
			}
		})
	}
}

// TestAcceptanceScaleFromZero: a GPU group at minReplicas 0 carries the
// capacity annotations cluster-autoscaler scales it up from.
func TestAcceptanceScaleFromZero(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {gpu: {minReplicas: 0, instanceType: gn1.xlarge, roles: [ingress-nginx], gpus: [{name: nvidia.com/AD102GL_L40S}]}}`,
		withInstancetypes(t, "gn1.xlarge"), withMachineSets(t)))
	mustNoFatal(t, rsp)
	md := desired(t, rsp, machineDeploymentResourceName("gpu"))
	ann := annotations(t, md)
	want := map[string]any{
		annotationAutoscalerMin:        "0",
		annotationAutoscalerMax:        "10",
		annotationCapacityMemory:       "13599Mi",
		annotationCapacityCPU:          "3600m",
		annotationCapacityLabels:       "gpu=on,node-role.kubernetes.io/ingress-nginx=",
		annotationCapacityGPU:          "nvidia.com/gpu",
		annotationCapacityGPUs:         "1",
		annotationMaxNodeProvisionTime: "30m",
	}
	if d := cmp.Diff(want, ann); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if got := get(md, "spec", "template", "metadata", "labels", "node-role.kubernetes.io/ingress-nginx"); got != "" {
		t.Errorf("template role label = %v, want \"\"", got)
	}
	gpus := get(oneTemplate(t, rsp, "gpu"), "spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "spec", "domain", "devices", "gpus")
	if d := cmp.Diff([]any{map[string]any{"name": "gpu1", "deviceName": "nvidia.com/AD102GL_L40S"}}, gpus); d != "" {
		t.Errorf("gpus (-want +got):\n%s", d)
	}
}

// TestMinMaxChangeKeepsTemplate: min/max changes touch only the
// MachineDeployment.
func TestMinMaxChangeKeepsTemplate(t *testing.T) {
	a := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 0, maxReplicas: 10}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	b := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 5}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	mustNoFatal(t, a)
	mustNoFatal(t, b)
	if d := cmp.Diff(desiredNames(a), desiredNames(b)); d != "" {
		t.Fatalf("composed resources differ (-a +b):\n%s", d)
	}
	for _, n := range desiredNames(a) {
		if n == machineDeploymentResourceName("md0") {
			continue
		}
		if d := cmp.Diff(desired(t, a, n), desired(t, b, n)); d != "" {
			t.Errorf("%s changed with min/max (-a +b):\n%s", n, d)
		}
	}
	mdA, mdB := desired(t, a, machineDeploymentResourceName("md0")), desired(t, b, machineDeploymentResourceName("md0"))
	for _, m := range []map[string]any{mdA, mdB} {
		delete(m["metadata"].(map[string]any), "annotations")
		// docs/architecture.md: maxSurge = maxReplicas follows max.
		delete(get(m, "spec", "rollout", "strategy", "rollingUpdate").(map[string]any), "maxSurge")
		if _, ok := m["spec"].(map[string]any)["replicas"]; ok {
			t.Error("spec.replicas written")
		}
	}
	if d := cmp.Diff(mdA, mdB); d != "" {
		t.Errorf("MachineDeployment changed beyond annotations and maxSurge (-a +b):\n%s", d)
	}
}

// A change to the VM (disk size) gives a new template name.
func TestVMChangeRenamesTemplate(t *testing.T) {
	a := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	b := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, diskSize: 30Gi}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	c := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, kubelet: {evictionHardMemory: "5%"}}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	na, nb, nc := templateNames(a, "md0"), templateNames(b, "md0"), templateNames(c, "md0")
	if len(na) != 1 || len(nb) != 1 || len(nc) != 1 || na[0] == nb[0] || na[0] == nc[0] {
		t.Errorf("template names: base %v, diskSize change %v, kubelet change %v; want three distinct single names", na, nb, nc)
	}
}

// The same input renders byte-identically.
func TestDeterministic(t *testing.T) {
	spec := `nodeGroups:
  a: {instanceType: u1.large, roles: [x, b, a]}
  b: {resources: {cpu: 2, memory: 4Gi}, gpus: [{name: nvidia.com/A}, {name: nvidia.com/B}]}
  c: {instanceType: u1.medium, storageClass: fast}`
	var first []byte
	for i := 0; i < 5; i++ {
		rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large", "u1.medium"), withMachineSets(t), withRemoteClasses(t, "fast")))
		mustNoFatal(t, rsp)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
			continue
		}
		if string(b) != string(first) {
			t.Fatalf("run %d differs from run 0", i)
		}
	}
}

// Old templates stay while a MachineSet refers to them, and leave after.
func TestOldTemplates(t *testing.T) {
	old := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	observed := observedFrom(old, nil)
	oldKey := templateNames(old, "md0")[0]
	oldName := get(desired(t, old, oldKey), "metadata", "name").(string)
	newSpec := `nodeGroups: {md0: {instanceType: u1.large, diskSize: 40Gi}}`

	t.Run("referenced by a MachineSet", func(t *testing.T) {
		rsp := run(t, newRequest(t, newSpec, withInstancetypes(t, "u1.large"), withMachineSets(t, oldName), fntest.WithObserved(observed)))
		mustNoFatal(t, rsp)
		names := templateNames(rsp, "md0")
		if len(names) != 2 {
			t.Fatalf("templates %v, want the old and the new", names)
		}
		if d := cmp.Diff(observed[oldKey].AsMap(), desired(t, rsp, oldKey)); d != "" {
			t.Errorf("old template changed (-observed +desired):\n%s", d)
		}
		if got := get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "template", "spec", "infrastructureRef", "name"); got == oldName {
			t.Error("MachineDeployment still refers to the old template")
		}
	})
	t.Run("no longer referenced", func(t *testing.T) {
		// The observed MachineDeployment already points at the new template.
		next := run(t, newRequest(t, newSpec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
		obs := observedFrom(next, nil)
		obs[oldKey] = observed[oldKey]
		newName := get(oneTemplate(t, next, "md0"), "metadata", "name").(string)
		rsp := run(t, newRequest(t, newSpec, withInstancetypes(t, "u1.large"), withMachineSets(t, newName), fntest.WithObserved(obs)))
		mustNoFatal(t, rsp)
		if names := templateNames(rsp, "md0"); len(names) != 1 || names[0] == oldKey {
			t.Errorf("templates %v, want only the new one", names)
		}
	})
	t.Run("machine sets not fetched yet", func(t *testing.T) {
		rsp := run(t, newRequest(t, newSpec, withInstancetypes(t, "u1.large"), fntest.WithObserved(observed)))
		mustNoFatal(t, rsp)
		if names := templateNames(rsp, "md0"); len(names) != 2 {
			t.Errorf("templates %v, want the old one kept while MachineSets are unknown", names)
		}
	})
}

// TestInstancetypePendingKeepsObserved: instance type not yet provided →
// observed state intact.
func TestInstancetypePendingKeepsObserved(t *testing.T) {
	spec := `nodeGroups: {md0: {instanceType: u1.large}, md1: {resources: {cpu: 2, memory: 4Gi}}}`
	full := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	mustNoFatal(t, full)
	observed := observedFrom(full, map[string]string{
		machineDeploymentResourceName("md0"): "replicas: 3\nreadyReplicas: 3\nobservedGeneration: 1",
	})
	rsp := run(t, newRequest(t, spec, fntest.WithObserved(observed)))
	mustNoFatal(t, rsp)
	for name, obs := range observed {
		got, ok := rsp.GetDesired().GetResources()[name]
		if !ok {
			t.Errorf("observed %s missing from the desired state", name)
			continue
		}
		want := proto.Clone(obs).(*structpb.Struct)
		delete(want.Fields, "status")
		if d := cmp.Diff(want, got.GetResource(), protocmp.Transform()); d != "" {
			t.Errorf("%s changed (-observed +desired):\n%s", name, d)
		}
	}
	var warned bool
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && strings.Contains(r.GetMessage(), "md0") && strings.Contains(r.GetMessage(), "u1.large") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no Warning naming md0 and u1.large in %v", rsp.GetResults())
	}
	if _, ok := rsp.GetRequirements().GetResources()[requirementInstancetypeKey("u1.large")]; !ok {
		t.Error("the instance type requirement is not emitted")
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()
	if got := get(st, "status", "nodeGroups", "md0", "readyReplicas"); got != 3.0 {
		t.Errorf("status readyReplicas of the pending group = %v, want 3", got)
	}
}

// A node group removed from spec removes its objects; the earlier steps'
// desired state is kept.
func TestRemovedGroupAndEarlierSteps(t *testing.T) {
	both := run(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}, md1: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	req := newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithObserved(observedFrom(both, nil)))
	req.Desired.Resources = map[string]*fnv1.Resource{"control-plane": {Resource: mustStruct(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}")}}
	req.Desired.Composite = &fnv1.Resource{Resource: mustStruct(t, "status: {version: v1.35.1}")}
	rsp := run(t, req)
	mustNoFatal(t, rsp)
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, "nodegroup-md1-") {
			t.Errorf("%s of the removed group is still desired", n)
		}
	}
	if _, ok := rsp.GetDesired().GetResources()["control-plane"]; !ok {
		t.Error("an earlier step's composed resource was dropped")
	}
	if got := get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "version"); got != "v1.35.1" {
		t.Errorf("an earlier step's status.version was dropped: %v", got)
	}
}

// Workers move to a new patch only after the observed control plane reports it.
func TestWorkerVersionFollowsControlPlane(t *testing.T) {
	old := run(t, newRequest(t, `version: v1.34
nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	for _, c := range []struct {
		cp, wantVersion, wantDisk string
	}{
		{"v1.34.9", "v1.34.9", "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.34-v1.5.2"},
		{"v1.35.6", "v1.35.6", "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.35-v1.5.2"},
	} {
		obs := observedFrom(old, nil)
		obs["kamaji-control-plane"] = mustStruct(t, "apiVersion: controlplane.cluster.x-k8s.io/v1alpha2\nkind: KamajiControlPlane\nmetadata: {name: demo}\nstatus: {version: "+c.cp+"}")
		rsp := run(t, newRequest(t, `version: v1.35
nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithObserved(obs)))
		mustNoFatal(t, rsp)
		if got := get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "template", "spec", "version"); got != c.wantVersion {
			t.Errorf("control plane at %s: workers at %v, want %s", c.cp, got, c.wantVersion)
		}
		var disks []string
		for _, n := range templateNames(rsp, "md0") {
			disks = append(disks, get(desired(t, rsp, n), "spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "spec", "volumes", 0, "containerDisk", "image").(string))
		}
		if !contains(disks, c.wantDisk) {
			t.Errorf("control plane at %s: container disks %v, want %s", c.cp, disks, c.wantDisk)
		}
	}
}

// Readiness and status come from observed state only.
func TestReadinessFromObserved(t *testing.T) {
	spec := `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2}}`
	first := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
	for n, r := range first.GetDesired().GetResources() {
		if r.GetReady() != fnv1.Ready_READY_FALSE {
			t.Errorf("%s is %v before it exists", n, r.GetReady())
		}
	}
	for _, c := range []struct {
		status string
		want   fnv1.Ready
	}{
		{"replicas: 2\nreadyReplicas: 1\nobservedGeneration: 1", fnv1.Ready_READY_FALSE},
		{"replicas: 2\nreadyReplicas: 2\nobservedGeneration: 1", fnv1.Ready_READY_TRUE},
	} {
		obs := observedFrom(first, map[string]string{
			machineDeploymentResourceName("md0"):        c.status,
			managementPrefix + nameAutoscalerDeployment: "conditions: [{type: Available, status: 'True'}]",
		})
		rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithObserved(obs)))
		if got := rsp.GetDesired().GetResources()[machineDeploymentResourceName("md0")].GetReady(); got != c.want {
			t.Errorf("status %q: MachineDeployment %v, want %v", c.status, got, c.want)
		}
		if got := rsp.GetDesired().GetResources()[bootstrapResourceName("md0")].GetReady(); got != fnv1.Ready_READY_TRUE {
			t.Errorf("observed bootstrap template is %v", got)
		}
		if got := rsp.GetDesired().GetResources()[managementPrefix+nameAutoscalerDeployment].GetReady(); got != fnv1.Ready_READY_TRUE {
			t.Errorf("Available autoscaler is %v", got)
		}
		if got := rsp.GetDesired().GetResources()[managementPrefix+nameCSIDeployment].GetReady(); got != fnv1.Ready_READY_FALSE {
			t.Errorf("CSI controller without status is %v", got)
		}
	}
}

// The wait-for-kubeconfig image comes from spec.images, else the input.
func TestWaitForKubeconfigImage(t *testing.T) {
	for _, c := range []struct{ spec, input, want string }{
		{``, ``, "docker.io/library/busybox:1.37.0"},
		{``, `images: {waitForKubeconfig: mirror.example/busybox:1}`, "mirror.example/busybox:1"},
		{`images: {waitForKubeconfig: tenant.example/busybox:2}`, "images: {waitForKubeconfig: mirror.example/busybox:1}\nallowedImageRegistries: [tenant.example]", "tenant.example/busybox:2"},
		{`images: {waitForKubeconfig: "busybox:1.36"}`, ``, "docker.io/library/busybox:1.36"},
	} {
		in := mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\n"+c.input)
		rsp := run(t, newRequest(t, c.spec, withInstancetypes(t, "u1.medium"), withMachineSets(t), fntest.WithInput(in)))
		mustNoFatal(t, rsp)
		for _, n := range []string{managementPrefix + nameAutoscalerDeployment, managementPrefix + nameCCMDeployment, managementPrefix + nameCSIDeployment} {
			if got := get(desired(t, rsp, n), "spec", "template", "spec", "initContainers", 0, "image"); got != c.want {
				t.Errorf("%s: %s init image = %v, want %s", c.spec+c.input, n, got, c.want)
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// Platform settings come from the EnvironmentConfig, merged over the
// step's input object by object; a bad one is Fatal naming its field there.
func TestPlatformSettings(t *testing.T) {
	in := mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\nimages: {waitForKubeconfig: mirror.example/busybox:1}")
	req := newRequest(t, ``, withInstancetypes(t, "u1.medium"), withMachineSets(t), fntest.WithInput(in))
	if err := fntest.WithPlatformSettings(req, "images: {clusterAutoscaler: mirror.example/cluster-autoscaler:v1.35.1}"); err != nil {
		t.Fatal(err)
	}
	rsp := run(t, req)
	mustNoFatal(t, rsp)
	dep := desired(t, rsp, managementPrefix+nameAutoscalerDeployment)
	if got := get(dep, "spec", "template", "spec", "containers", 0, "image"); got != "mirror.example/cluster-autoscaler:v1.35.1" {
		t.Errorf("cluster-autoscaler image = %v, want the EnvironmentConfig's", got)
	}
	if got := get(dep, "spec", "template", "spec", "initContainers", 0, "image"); got != "mirror.example/busybox:1" {
		t.Errorf("init image = %v, want the step input's (images merge key by key)", got)
	}

	bad := newRequest(t, ``, withInstancetypes(t, "u1.medium"), withMachineSets(t))
	if err := fntest.WithPlatformSettings(bad, "maxCleanupObjects: -1"); err != nil {
		t.Fatal(err)
	}
	msgs := fatals(run(t, bad))
	if len(msgs) == 0 || !strings.Contains(msgs[0], "EnvironmentConfig(tenantkube).data.maxCleanupObjects: Invalid value: -1") {
		t.Errorf("Fatal = %q, want it to name EnvironmentConfig(tenantkube).data.maxCleanupObjects and -1", msgs)
	}
}

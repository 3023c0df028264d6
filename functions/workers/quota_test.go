package main

import (
	"bytes"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// quotaObject is a ResourceQuota called name in tenant-foo with spec
// (YAML flow) and status.used (YAML flow, "" for none).
func quotaObject(t testing.TB, name, spec, used string) *structpb.Struct {
	t.Helper()
	y := "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: " + name + ", namespace: " + testNS + "}\nspec: " + spec
	if used != "" {
		y += "\nstatus: {used: " + used + "}"
	}
	return mustStruct(t, y)
}

// withQuotas answers the ResourceQuota requirement with quotas.
func withQuotas(quotas ...*structpb.Struct) fntest.RequestOption {
	return fntest.WithRequired(requirementResourceQuotas, quotas...)
}

// withXRCondition gives the observed XR the condition typ with status and
// reason in status.conditions.
func withXRCondition(t testing.TB, typ, status, reason string) fntest.RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		c, err := structpb.NewStruct(map[string]any{"type": typ, "status": status, "reason": reason})
		if err != nil {
			t.Fatal(err)
		}
		r.Observed.Composite.Resource.Fields["status"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"conditions": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStructValue(c)}}),
		}})
	}
}

// TestPerVMDemand checks what one VM counts against a quota, worked by
// hand from KubeVirt's virt-launcher pod (x86_64, KubeVirt's defaults:
// pkg/virt-controller/services/renderresources.go, template.go,
// serialconsolelog.go, pkg/container-disk/container-disk.go,
// pkg/hypervisor/kvm/hypervisorbackend.go):
//   - compute container: CPU request vCPUs/ratio unless set, CPU limit one
//     per vCPU unless set; memory guest + 280Mi + 8Mi per vCPU + guest/512,
//     limit twice that; ephemeral storage 2Gi/40 = 53687091 bytes + 50M
//     request, 2Gi + 50M = 2197483648 limit;
//   - container disk: requests 1m, 1M, 50M ephemeral; limits 10m, 40M;
//   - guest-console-log: requests 5m, 35M; limits 15m, 60M;
//   - init containers (the larger counts): 10m, 1M, 50M ephemeral
//     requested, 100m, 40M limits, below the containers' sums here.
//
// So CPU request = compute + 6m, CPU limit = compute + 25m, memory
// request = compute + 36M (36000000), memory limit = 2 × compute + 100M,
// ephemeral request 53687091 + 50M + 50M = 153687091.
func TestPerVMDemand(t *testing.T) {
	one := resource.MustParse("1")
	eph := map[corev1.ResourceName]string{
		"ephemeral-storage": "153687091", "requests.ephemeral-storage": "153687091", "limits.ephemeral-storage": "2197483648",
		"pods": "1", "count/pods": "1", "persistentvolumeclaims": "1", "count/persistentvolumeclaims": "1",
		// One of each object a machine adds (Cluster API, CAPK, KubeVirt, CDI).
		"count/machines.cluster.x-k8s.io": "1", "count/kubevirtmachines.infrastructure.cluster.x-k8s.io": "1",
		"count/kubeadmconfigs.bootstrap.cluster.x-k8s.io": "1", "count/virtualmachines.kubevirt.io": "1",
		"count/virtualmachineinstances.kubevirt.io": "1", "count/datavolumes.cdi.kubevirt.io": "1",
	}
	with := func(extra map[corev1.ResourceName]string) map[corev1.ResourceName]string {
		out := map[corev1.ResourceName]string{}
		for k, v := range eph {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := map[string]struct {
		reason string
		group  v1alpha1.NodeGroup
		sizing Sizing
		ratio  int64
		want   map[corev1.ResourceName]string
	}{
		"InstanceType": {
			reason: "u1.large (2 vCPUs, 8Gi), ratio 10: CPU 2/10 = 200m + 6m = 206m, limit 2 + 25m = 2025m; " +
				"memory 8Gi + 280Mi + 2 × 8Mi + 8Gi/512 = 16Mi → 8917090304 + 36M = 8953090304, limit 2 × 8917090304 + 100M = 17934180608; one 20Gi claim.",
			group:  v1alpha1.NodeGroup{DiskSize: "20Gi", InstanceType: ptr("u1.large")},
			sizing: InstancetypeSizing(2, ptr(resource.MustParse("8Gi"))),
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "206m", "requests.cpu": "206m", "limits.cpu": "2025m",
				"memory": "8953090304", "requests.memory": "8953090304", "limits.memory": "17934180608", "requests.storage": "20Gi",
			}),
		},
		"RatioRoundsUp": {
			reason: "1 core, ratio 3: 1000m/3 = 333.3m, rounded up to 334m (never below what KubeVirt requests) + 6m = 340m; limit 1025m; " +
				"memory 1Gi + 280Mi + 8Mi + 2Mi = 1377828864 + 36M = 1413828864, limit 2 × 1377828864 + 100M = 2855657728.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi"},
			sizing: Sizing{CPU: &one, Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  3,
			want: with(map[corev1.ResourceName]string{
				"cpu": "340m", "requests.cpu": "340m", "limits.cpu": "1025m",
				"memory": "1413828864", "requests.memory": "1413828864", "limits.memory": "2855657728", "requests.storage": "10Gi",
			}),
		},
		"PodCPULimit": {
			reason: "podCpuLimit 6 on 4 cores is the limit, and KubeVirt copies it into the unset request: 6 + 6m, 6 + 25m; " +
				"memory 1Gi + 280Mi + 32Mi + 2Mi = 1402994688 + 36M = 1438994688, limit 2 × 1402994688 + 100M = 2905989376.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPULimit: "6"},
			sizing: Sizing{CPU: ptr(resource.MustParse("4")), Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "6006m", "requests.cpu": "6006m", "limits.cpu": "6025m",
				"memory": "1438994688", "requests.memory": "1438994688", "limits.memory": "2905989376", "requests.storage": "10Gi",
			}),
		},
		"PodCPUPair": {
			reason: "podCpuLimit 6 and podCpuRequest 1500m replace 4 cores' 400m and 4: 1500m + 6m, 6 + 25m.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPULimit: "6", PodCPURequest: "1500m"},
			sizing: Sizing{CPU: ptr(resource.MustParse("4")), Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "1506m", "requests.cpu": "1506m", "limits.cpu": "6025m",
				"memory": "1438994688", "requests.memory": "1438994688", "limits.memory": "2905989376", "requests.storage": "10Gi",
			}),
		},
		"PodCPURequestUnknownSize": {
			reason: "podCpuRequest 500m on a VM without a known size (instanceType \"\"): KubeVirt's topology gives ⌈500m⌉ = 1 socket, so the " +
				"auto limit is 1 (+ 25m); the request is 500m + 6m; no memory (KubeVirt refuses a VM without one).",
			group: v1alpha1.NodeGroup{DiskSize: "10Gi", InstanceType: ptr(""), PodCPURequest: "500m"},
			ratio: 10,
			want:  with(map[corev1.ResourceName]string{"cpu": "506m", "requests.cpu": "506m", "limits.cpu": "1025m", "requests.storage": "10Gi"}),
		},
		"PodCPULimitUnknownSize": {
			reason: "podCpuLimit 1500m without a size: ⌈1.5⌉ = 2 sockets; the limit is also the request: 1500m + 6m, 1500m + 25m.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", InstanceType: ptr(""), PodCPULimit: "1500m"},
			ratio:  10,
			want:   with(map[corev1.ResourceName]string{"cpu": "1506m", "requests.cpu": "1506m", "limits.cpu": "1525m", "requests.storage": "10Gi"}),
		},
		"InitContainerLimitCounts": {
			reason: "podCpuLimit and podCpuRequest 10m (a platform that allows it): the containers' limits sum to 10m + 25m = 35m, below " +
				"the container-disk-binary init container's 100m, which is the pod's CPU limit; the request 10m + 6m = 16m is above the init's 10m.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPULimit: "10m", PodCPURequest: "10m"},
			sizing: Sizing{CPU: &one, Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "16m", "requests.cpu": "16m", "limits.cpu": "100m",
				"memory": "1413828864", "requests.memory": "1413828864", "limits.memory": "2855657728", "requests.storage": "10Gi",
			}),
		},
		"DedicatedCPUs": {
			reason: "An instance type of 4 dedicated vCPUs, 16Gi, isolated emulator thread: CPU 4 + 1 = 5 requested and limited, support " +
				"containers at their limits (10m + 15m); memory 16Gi + 280Mi + 32Mi + 32Mi + 100Mi = 17645436928 + 40M + 60M = 17745436928, " +
				"limit the same; the init containers (10m, 40M) are below the sums.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", InstanceType: ptr("cx1.xlarge")},
			sizing: Sizing{CPU: ptr(resource.MustParse("4")), Memory: ptr(resource.MustParse("16Gi")), DedicatedCPUs: true, IsolateEmulatorThread: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "5025m", "requests.cpu": "5025m", "limits.cpu": "5025m",
				"memory": "17745436928", "requests.memory": "17745436928", "limits.memory": "17745436928", "requests.storage": "10Gi",
			}),
		},
		"StorageClassAndGPUs": {
			reason: "Unknown size: one vCPU by KubeVirt's default topology, 100m + 6m requested, 1 + 25m limit, no memory; a storage class " +
				"adds its per-class storage and claim; two GPUs of one device count 2.",
			group: v1alpha1.NodeGroup{DiskSize: "50Gi", StorageClass: "fast", InstanceType: ptr(""),
				GPUs: []v1alpha1.GPU{{Name: "nvidia.com/GA102"}, {Name: "nvidia.com/GA102"}}},
			ratio: 10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "106m", "requests.cpu": "106m", "limits.cpu": "1025m",
				"requests.storage": "50Gi", "fast.storageclass.storage.k8s.io/requests.storage": "50Gi",
				"fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1", "requests.nvidia.com/GA102": "2",
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := perVMDemand(nodeGroupPlan{Name: "md0", Group: tc.group, Sizing: tc.sizing, StorageClass: tc.group.StorageClass}, tc.ratio)
			got := map[corev1.ResourceName]string{}
			for k, q := range d {
				got[k] = q.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nperVMDemand: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCapacityPreflight checks the capacity pre-flight (README "Capacity
// pre-flight") on the plan: its condition, warnings and Fatal result,
// worked by hand. md0 is u1.large (2 vCPUs, 8Gi), 2..4 replicas; per VM
// (TestPerVMDemand's arithmetic) 206m CPU requested, 2025m limit,
// 8953090304 bytes of memory requested, one 20Gi claim. md1 (4 cores,
// 16Gi) limits 4025m CPU.
func TestCapacityPreflight(t *testing.T) {
	const md0 = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 4}}`
	const twoGroups = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 4}, md1: {resources: {cpu: "4", memory: 16Gi}, minReplicas: 1, maxReplicas: 2, storageClass: fast}}`
	observedMD := func(replicas int) map[string]*structpb.Struct {
		return map[string]*structpb.Struct{machineDeploymentResourceName("md0"): observedMD0(t, 1, `{observedGeneration: 1, replicas: `+itoa(replicas)+`, readyReplicas: `+itoa(replicas)+`}`)}
	}
	type want struct {
		Fatal      string
		Warnings   []function.Warning
		Conditions []function.Condition
	}
	cases := map[string]struct {
		reason    string
		spec      string
		instances []string
		quotas    []*structpb.Struct // nil: not arrived
		observed  map[string]*structpb.Struct
		// xrCondition is the reason of a CapacityFits=False condition
		// the observed XR carries ("" for none).
		xrCondition string
		want        want
	}{
		"Fits": {
			reason: "At maxReplicas 4 × 206m = 824m of the 2 − 500m = 1500m left, 4 × 8953090304 = 35812361216 of 64Gi = 68719476736, 4 pods of 10: CapacityFits True, no warning.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.cpu: "2", requests.memory: 64Gi, pods: "10"}}`, `{requests.cpu: 500m}`)},
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "QuotaFits"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
			}},
		},
		"MaxExceeds": {
			reason: "minReplicas 2 × 8953090304 = 17906180608 fits 24Gi = 25769803776, maxReplicas 4 × 8953090304 = 35812361216 does not: a Warning naming the limit, CapacityFits False.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 24Gi}}`, "")},
			want: want{
				Warnings: []function.Warning{{Reason: "MaximumExceedsQuota",
					Message: "node groups at maxReplicas need requests.memory 35812361216 (md0 (4 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need requests.memory 35812361216 (md0 (4 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
				},
			},
		},
		"MaxExceedsStorageClass": {
			reason: "md1's storage class quota: 1 × 20Gi fits 30Gi at minReplicas, 2 × 20Gi = 40Gi does not at maxReplicas; md0 (no class) is not counted there.",
			spec:   twoGroups, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "storage", `{hard: {fast.storageclass.storage.k8s.io/requests.storage: 30Gi}}`, "")},
			want: want{
				Warnings: []function.Warning{{Reason: "MaximumExceedsQuota",
					Message: "node groups at maxReplicas need fast.storageclass.storage.k8s.io/requests.storage 40Gi (md1 (2 × 20Gi)), but ResourceQuota tenant-foo/storage leaves this cluster 30Gi (hard 30Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"}, neverRemediatedAtOne("md1")},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need fast.storageclass.storage.k8s.io/requests.storage 40Gi (md1 (2 × 20Gi)), but ResourceQuota tenant-foo/storage leaves this cluster 30Gi (hard 30Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet; md1: MachineDeployment not created yet"},
				},
			},
		},
		"MinExceedsOnCreation": {
			reason: "Nothing of the cluster observed (creation); limits.cpu at minReplicas 2 × 2025m + 1 × 4025m = 8075m > 6 − 1 = 5 left: Fatal naming both groups and the quota.",
			spec:   twoGroups, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "6"}}`, `{limits.cpu: "1"}`)},
			want:   want{Fatal: "spec.nodeGroups: Forbidden: node groups at minReplicas need limits.cpu 8075m (md0 (2 × 2025m), md1 (1 × 4025m)), but ResourceQuota tenant-foo/compute leaves this cluster 5 (hard 6, used 1, of which this cluster's machines 0): the cluster is not created (MinimumExceedsQuota)"},
		},
		"MinExceedsExisting": {
			reason: "The quota was lowered below what is used: 12Gi hard, 17906180608 used, all md0's 2 observed machines (2 × 8953090304), so 12Gi is left and minReplicas needs 17906180608: a Warning, no Fatal.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, `{requests.memory: "17906180608"}`)},
			observed: observedMD(2),
			want: want{
				Warnings: []function.Warning{{Reason: "MinimumExceedsQuota",
					Message: "node groups at minReplicas need requests.memory 17906180608 (md0 (2 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 17906180608, of which this cluster's machines 17906180608): a machine that is replaced may not come back; nothing running is changed"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MinimumExceedsQuota", Message: "node groups at minReplicas need requests.memory 17906180608 (md0 (2 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 17906180608, of which this cluster's machines 17906180608): a machine that is replaced may not come back; nothing running is changed"},
					{Type: "WorkersReady", True: true, Reason: "NodeGroupsReady"},
				},
			},
		},
		"MinExceedsGroupAddedToRunningCluster": {
			reason: "A running cluster (its KamajiControlPlane observed) without node groups adds md0: limits.cpu at minReplicas 2 × 2025m = 4050m > 3 left; md0 has no MachineDeployment, so it is refused (Fatal), as on creation.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "3"}}`, "")},
			observed: map[string]*structpb.Struct{"kamajicontrolplane": mustStruct(t,
				"apiVersion: controlplane.cluster.x-k8s.io/v1alpha1\nkind: KamajiControlPlane\nmetadata: {name: foo, namespace: "+testNS+"}")},
			want: want{Fatal: "spec.nodeGroups: Forbidden: node groups at minReplicas need limits.cpu 4050m (md0 (2 × 2025m)), but ResourceQuota tenant-foo/compute leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): node groups without a MachineDeployment yet (md0) are not created and nothing is changed (MinimumExceedsQuota)"},
		},
		"MinExceedsGroupAddedBesideExisting": {
			reason: "md0 runs 2 machines (2 × 2025m = 4050m of limits.cpu, all of the 4050m used); md1 is added: 4050m + 1 × 4025m = 8075m > 6 − 4050m + 4050m = 6 left. md1 has no MachineDeployment: refused, naming md1 only.",
			spec:   twoGroups, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "6"}}`, `{limits.cpu: 4050m}`)},
			observed: observedMD(2),
			want:     want{Fatal: "spec.nodeGroups: Forbidden: node groups at minReplicas need limits.cpu 8075m (md0 (2 × 2025m), md1 (1 × 4025m)), but ResourceQuota tenant-foo/compute leaves this cluster 6 (hard 6, used 4050m, of which this cluster's machines 4050m): node groups without a MachineDeployment yet (md1) are not created and nothing is changed (MinimumExceedsQuota)"},
		},
		"MinExceedsExistingGroupAddedAtZero": {
			reason: "The quota was lowered below md0's 2 running machines (12Gi left, 17906180608 needed) and md1 is added with minReplicas 0: md1 needs nothing at its minimum, so only the existing group's Warning, no Fatal.",
			spec:   `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 2}, md1: {instanceType: u1.large, minReplicas: 0, maxReplicas: 2}}`, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, `{requests.memory: "17906180608"}`)},
			observed: observedMD(2),
			want: want{
				Warnings: []function.Warning{{Reason: "MinimumExceedsQuota",
					Message: "node groups at minReplicas need requests.memory 17906180608 (md0 (2 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 17906180608, of which this cluster's machines 17906180608): a machine that is replaced may not come back; nothing running is changed"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MinimumExceedsQuota", Message: "node groups at minReplicas need requests.memory 17906180608 (md0 (2 × 8953090304)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 17906180608, of which this cluster's machines 17906180608): a machine that is replaced may not come back; nothing running is changed"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md1: MachineDeployment not created yet (0 machines until it scales from zero on demand)"},
				},
			},
		},
		"QuotasByName": {
			reason: "Two quotas exceeded at maxReplicas, listed z before a: the messages follow the names (a, then z), not the list.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{
				quotaObject(t, "z", `{hard: {requests.memory: 24Gi}}`, ""),
				quotaObject(t, "a", `{hard: {pods: "3"}}`, ""),
			},
			want: want{
				Warnings: []function.Warning{
					{Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need pods 4 (md0 (4 × 1)), but ResourceQuota tenant-foo/a leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need requests.memory 35812361216 (md0 (4 × 8953090304)), but ResourceQuota tenant-foo/z leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
				},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need pods 4 (md0 (4 × 1)), but ResourceQuota tenant-foo/a leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit; node groups at maxReplicas need requests.memory 35812361216 (md0 (4 × 8953090304)), but ResourceQuota tenant-foo/z leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
				},
			},
		},
		"OwnMachinesNotCountedTwice": {
			reason: "4 × 8953090304 = 35812361216 of as much used, all by md0's 4 machines: hard − used + own = 35812361216 left, which maxReplicas 4 fits.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: "35812361216"}}`, `{requests.memory: "35812361216"}`)},
			observed: observedMD(4),
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "QuotaFits"},
				{Type: "WorkersReady", True: true, Reason: "NodeGroupsReady"},
			}},
		},
		"QuotaNotArrived": {
			reason: "The quotas have not been fetched: no condition, no warning, no Fatal.",
			spec:   md0, instances: []string{"u1.large"},
			want: want{Conditions: []function.Condition{
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
			}},
		},
		"InstanceTypeNotArrived": {
			reason: "md1 alone (1 × 4025m CPU limit) exceeds 2, but md0's instance type is pending: no check until every size is known.",
			spec:   twoGroups,
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "2"}}`, "")},
			want: want{
				Warnings: []function.Warning{{Reason: "InstanceTypePending",
					Message: `node group md0: instance type "u1.large" has not been fetched yet; keeping its 0 observed objects unchanged`}, neverRemediatedAtOne("md1")},
				Conditions: []function.Condition{{Type: "WorkersReady", Reason: "InstanceTypePending", Message: "waiting for the instance types of node groups md0"}},
			},
		},
		"NoQuota": {
			reason: "The namespace has no ResourceQuota: no condition.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{},
			want: want{Conditions: []function.Condition{
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
			}},
		},
		"QuotaRemoved": {
			reason: "The last quota is gone but the XR still has the CapacityFits condition it left (Crossplane keeps it): replaced by True, NoResourceQuota.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:      []*structpb.Struct{},
			xrCondition: "MaximumExceedsQuota",
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "NoResourceQuota", Message: "no ResourceQuota of the namespace applies to the node groups"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
			}},
		},
		"Scopes": {
			reason: "A Terminating quota counts no VM (ignored); a NotTerminating one counts CPU (4 × 206m = 824m of 1 fits) but not claims (its 1 PVC is not compared).",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{
				quotaObject(t, "jobs", `{scopes: [Terminating], hard: {requests.cpu: 100m}}`, ""),
				quotaObject(t, "long", `{scopes: [NotTerminating], hard: {requests.cpu: "1", persistentvolumeclaims: "1"}}`, ""),
			},
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "QuotaFits"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: md0: MachineDeployment not created yet"},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := []fntest.RequestOption{withInstancetypes(t, tc.instances...), withMachineSets(t), fntest.WithObserved(tc.observed)}
			if len(tc.observed) == 0 { // creation: nothing observed, the management namespace neither
				opts = append(opts, fntest.WithoutManagementNamespace())
			}
			if tc.quotas != nil {
				opts = append(opts, withQuotas(tc.quotas...))
			}
			if tc.xrCondition != "" {
				opts = append(opts, withXRCondition(t, "CapacityFits", "False", tc.xrCondition))
			}
			r := function.NewRequest(newRequest(t, tc.spec, opts...))
			tenant, err := r.Cluster()
			if err != nil {
				t.Fatal(err)
			}
			in := defaultInput()
			in.RemoteStorageClasses = append(in.RemoteStorageClasses, "fast") // md1's disks
			p, errs := plan(tenant, in, r, testClock)
			got := want{}
			if len(errs) > 0 {
				got.Fatal = errs.ToAggregate().Error()
			} else {
				got.Warnings, got.Conditions = p.Warnings, p.Conditions
				if p.Requirements[requirementResourceQuotas] == nil {
					t.Errorf("%s\nthe ResourceQuotas are not required", tc.reason)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCapacityPreflightResponse checks the pre-flight through RunFunction:
// the Fatal on creation sets WorkersReady False with reason
// MinimumExceedsQuota and composes nothing; on an existing cluster the
// desired state is byte-identical to the one without any quota; the
// requirement selects every ResourceQuota of NS.
func TestCapacityPreflightResponse(t *testing.T) {
	const spec = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 4}}`
	tooSmall := quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, `{requests.memory: 16Gi}`)

	t.Run("Creation", func(t *testing.T) {
		rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t),
			withQuotas(quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, "")), fntest.WithoutManagementNamespace()))
		if f := fatals(rsp); len(f) != 1 || !strings.Contains(f[0], "need requests.memory 17906180608 (md0 (2 × 8953090304))") {
			t.Errorf("want one Fatal naming md0 and requests.memory, got %v", f)
		}
		if n := len(rsp.GetDesired().GetResources()); n != 0 {
			t.Errorf("Fatal response composes %d resources, want 0", n)
		}
		var reason string
		for _, c := range rsp.GetConditions() {
			if c.GetType() == v1alpha1.ConditionWorkersReady {
				reason = c.GetReason()
			}
		}
		if reason != v1alpha1.ReasonMinimumExceedsQuota {
			t.Errorf("WorkersReady reason %q, want %s", reason, v1alpha1.ReasonMinimumExceedsQuota)
		}
	})

	t.Run("ExistingUnchanged", func(t *testing.T) {
		// An existing cluster: render once without quotas, feed the
		// desired state back as observed (with md0's MachineDeployment
		// holding 2 machines), then compare with and without the quota.
		first := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t), withQuotas()))
		mustNoFatal(t, first)
		observed := map[string]*structpb.Struct{}
		for name, r := range first.GetDesired().GetResources() {
			observed[name] = r.GetResource()
		}
		observed[machineDeploymentResourceName("md0")] = observedMD0(t, 1, `{observedGeneration: 1, replicas: 2, readyReplicas: 2}`)
		render := func(quotas ...*structpb.Struct) *fnv1.RunFunctionResponse {
			rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithObserved(observed), withQuotas(quotas...)))
			mustNoFatal(t, rsp)
			return rsp
		}
		without, with := render(), render(tooSmall)
		a, errA := proto.MarshalOptions{Deterministic: true}.Marshal(without.GetDesired())
		b, errB := proto.MarshalOptions{Deterministic: true}.Marshal(with.GetDesired())
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("desired state changed by the quota (-without +with):\n%s", cmp.Diff(without.GetDesired(), with.GetDesired(), protocmp.Transform()))
		}
		var warned bool
		for _, r := range with.GetResults() {
			warned = warned || r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetReason() == v1alpha1.ReasonMinimumExceedsQuota
		}
		if !warned {
			t.Error("no MinimumExceedsQuota warning on the existing cluster")
		}
	})

	t.Run("Requirement", func(t *testing.T) {
		rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
		want := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "ResourceQuota", Namespace: ptr(testNS),
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}}
		if diff := cmp.Diff(want, rsp.GetRequirements().GetResources()[requirementResourceQuotas], protocmp.Transform()); diff != "" {
			t.Errorf("ResourceQuota requirement: -want, +got:\n%s", diff)
		}
	})
}

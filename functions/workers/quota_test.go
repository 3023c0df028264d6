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
// hand from KubeVirt's sizing of the virt-launcher pod (user-guide
// "Resources requests and limits": CPU request vCPUs/cpuAllocationRatio,
// CPU limit 1 per vCPU, memory limit 2× the request) and the VM template
// (ephemeral storage 2Gi, request 2Gi/40 = 53687091.2 → 53687091 bytes).
func TestPerVMDemand(t *testing.T) {
	one := resource.MustParse("1")
	eph := map[corev1.ResourceName]string{
		"ephemeral-storage": "53687091", "requests.ephemeral-storage": "53687091", "limits.ephemeral-storage": "2Gi",
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
			reason: "u1.large (2 vCPUs, 8Gi), ratio 10: requests 2/10 = 200m CPU and 8Gi, limits 2 CPU and 16Gi; one 20Gi claim.",
			group:  v1alpha1.NodeGroup{DiskSize: "20Gi"},
			sizing: InstancetypeSizing(2, ptr(resource.MustParse("8Gi"))),
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "200m", "requests.cpu": "200m", "limits.cpu": "2",
				"memory": "8Gi", "requests.memory": "8Gi", "limits.memory": "16Gi", "requests.storage": "20Gi",
			}),
		},
		"RatioRoundsUp": {
			reason: "1 core, ratio 3: 1000m/3 = 333.3m, rounded up to 334m (never below what KubeVirt requests).",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi"},
			sizing: Sizing{CPU: &one, Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  3,
			want: with(map[corev1.ResourceName]string{
				"cpu": "334m", "requests.cpu": "334m", "limits.cpu": "1",
				"memory": "1Gi", "requests.memory": "1Gi", "limits.memory": "2Gi", "requests.storage": "10Gi",
			}),
		},
		"PodCPULimit": {
			reason: "podCpuLimit 6 on 4 cores is the limit, and KubeVirt copies it into the unset request (the chart's nodegroup_pod_cpu_limit test).",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPULimit: "6"},
			sizing: Sizing{CPU: ptr(resource.MustParse("4")), Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "6", "requests.cpu": "6", "limits.cpu": "6",
				"memory": "1Gi", "requests.memory": "1Gi", "limits.memory": "2Gi", "requests.storage": "10Gi",
			}),
		},
		"PodCPUPair": {
			reason: "podCpuLimit 6 and podCpuRequest 1500m replace 4 cores' 400m and 4.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPULimit: "6", PodCPURequest: "1500m"},
			sizing: Sizing{CPU: ptr(resource.MustParse("4")), Memory: ptr(resource.MustParse("1Gi")), Explicit: true},
			ratio:  10,
			want: with(map[corev1.ResourceName]string{
				"cpu": "1500m", "requests.cpu": "1500m", "limits.cpu": "6",
				"memory": "1Gi", "requests.memory": "1Gi", "limits.memory": "2Gi", "requests.storage": "10Gi",
			}),
		},
		"PodCPURequestUnknownSize": {
			reason: "podCpuRequest 500m on a VM without a known size (instanceType \"\") is its request; no limit is known.",
			group:  v1alpha1.NodeGroup{DiskSize: "10Gi", PodCPURequest: "500m"},
			ratio:  10,
			want:   with(map[corev1.ResourceName]string{"cpu": "500m", "requests.cpu": "500m", "requests.storage": "10Gi"}),
		},
		"StorageClassAndGPUs": {
			reason: "Unknown size (no CPU or memory counted); a storage class adds its per-class storage and claim; two GPUs of one device count 2.",
			group: v1alpha1.NodeGroup{DiskSize: "50Gi", StorageClass: "fast",
				GPUs: []v1alpha1.GPU{{Name: "nvidia.com/GA102"}, {Name: "nvidia.com/GA102"}}},
			ratio: 10,
			want: with(map[corev1.ResourceName]string{
				"requests.storage": "50Gi", "fast.storageclass.storage.k8s.io/requests.storage": "50Gi",
				"fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1", "requests.nvidia.com/GA102": "2",
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := perVMDemand(nodeGroupPlan{Name: "md0", Group: tc.group, Sizing: tc.sizing}, tc.ratio)
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

// TestCapacityPreflight checks the capacity pre-flight
// (docs/tenant-guide.md, Capacity) on the plan: its condition, warnings and Fatal result,
// worked by hand. md0 is u1.large (2 vCPUs, 8Gi: 200m CPU requested, 2
// CPU limit, 8Gi, one 20Gi claim per VM), 2..4 replicas.
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
			reason: "At maxReplicas 4 × 200m = 800m of the 2 − 500m = 1500m left, 4 × 8Gi = 32Gi of 64Gi, 4 pods of 10: CapacityFits True, no warning.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.cpu: "2", requests.memory: 64Gi, pods: "10"}}`, `{requests.cpu: 500m}`)},
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "QuotaFits"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
			}},
		},
		"MaxExceeds": {
			reason: "minReplicas 2 × 8Gi = 16Gi fits 24Gi, maxReplicas 4 × 8Gi = 32Gi does not: a Warning naming the limit, CapacityFits False.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 24Gi}}`, "")},
			want: want{
				Warnings: []function.Warning{{Reason: "MaximumExceedsQuota",
					Message: "node groups at maxReplicas need requests.memory 32Gi (md0 (4 × 8Gi)), but ResourceQuota tenant-foo/compute leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need requests.memory 32Gi (md0 (4 × 8Gi)), but ResourceQuota tenant-foo/compute leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
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
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0, md1"},
				},
			},
		},
		"MinExceedsOnCreation": {
			reason: "Nothing of the cluster observed (creation); limits.cpu at minReplicas 2 × 2 + 1 × 4 = 8 > 6 − 1 = 5 left: Fatal naming both groups and the quota.",
			spec:   twoGroups, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "6"}}`, `{limits.cpu: "1"}`)},
			want:   want{Fatal: "spec.nodeGroups: Forbidden: node groups at minReplicas need limits.cpu 8 (md0 (2 × 2), md1 (1 × 4)), but ResourceQuota tenant-foo/compute leaves this cluster 5 (hard 6, used 1, of which this cluster's machines 0): the cluster is not created (MinimumExceedsQuota)"},
		},
		"MinExceedsExisting": {
			reason: "The quota was lowered below what is used: 12Gi hard, 16Gi used, of which md0's 2 observed machines hold 2 × 8Gi = 16Gi, so 12Gi is left and minReplicas needs 16Gi: a Warning, no Fatal.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, `{requests.memory: 16Gi}`)},
			observed: observedMD(2),
			want: want{
				Warnings: []function.Warning{{Reason: "MinimumExceedsQuota",
					Message: "node groups at minReplicas need requests.memory 16Gi (md0 (2 × 8Gi)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 16Gi, of which this cluster's machines 16Gi): a machine that is replaced may not come back; nothing running is changed"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MinimumExceedsQuota", Message: "node groups at minReplicas need requests.memory 16Gi (md0 (2 × 8Gi)), but ResourceQuota tenant-foo/compute leaves this cluster 12Gi (hard 12Gi, used 16Gi, of which this cluster's machines 16Gi): a machine that is replaced may not come back; nothing running is changed"},
					{Type: "WorkersReady", True: true, Reason: "NodeGroupsReady"},
				},
			},
		},
		"MinExceedsGroupAddedToRunningCluster": {
			reason: "A running cluster (its KamajiControlPlane observed) without node groups adds md0: limits.cpu at minReplicas 2 × 2 = 4 > 3 left is a Warning, not a Fatal that would stop its whole pipeline.",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{quotaObject(t, "compute", `{hard: {limits.cpu: "3"}}`, "")},
			observed: map[string]*structpb.Struct{"kamajicontrolplane": mustStruct(t,
				"apiVersion: controlplane.cluster.x-k8s.io/v1alpha1\nkind: KamajiControlPlane\nmetadata: {name: foo, namespace: "+testNS+"}")},
			want: want{
				Warnings: []function.Warning{{Reason: "MinimumExceedsQuota",
					Message: "node groups at minReplicas need limits.cpu 4 (md0 (2 × 2)), but ResourceQuota tenant-foo/compute leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): a machine that is replaced may not come back; nothing running is changed"}},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MinimumExceedsQuota", Message: "node groups at minReplicas need limits.cpu 4 (md0 (2 × 2)), but ResourceQuota tenant-foo/compute leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): a machine that is replaced may not come back; nothing running is changed"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
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
					{Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need requests.memory 32Gi (md0 (4 × 8Gi)), but ResourceQuota tenant-foo/z leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
				},
				Conditions: []function.Condition{
					{Type: "CapacityFits", Reason: "MaximumExceedsQuota", Message: "node groups at maxReplicas need pods 4 (md0 (4 × 1)), but ResourceQuota tenant-foo/a leaves this cluster 3 (hard 3, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit; node groups at maxReplicas need requests.memory 32Gi (md0 (4 × 8Gi)), but ResourceQuota tenant-foo/z leaves this cluster 24Gi (hard 24Gi, used 0, of which this cluster's machines 0): cluster-autoscaler cannot scale past this limit"},
					{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
				},
			},
		},
		"OwnMachinesNotCountedTwice": {
			reason: "4 × 8Gi = 32Gi of 32Gi used, all by md0's 4 machines: 32Gi − 32Gi + 32Gi = 32Gi left, which maxReplicas 4 fits.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:   []*structpb.Struct{quotaObject(t, "compute", `{hard: {requests.memory: 32Gi}}`, `{requests.memory: 32Gi}`)},
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
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
			}},
		},
		"InstanceTypeNotArrived": {
			reason: "md1 alone (1 × 4 CPU limit) exceeds 2, but md0's instance type is pending: no check until every size is known.",
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
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
			}},
		},
		"QuotaRemoved": {
			reason: "The last quota is gone but the XR still has the CapacityFits condition it left (Crossplane keeps it): replaced by True, NoResourceQuota.",
			spec:   md0, instances: []string{"u1.large"},
			quotas:      []*structpb.Struct{},
			xrCondition: "MaximumExceedsQuota",
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "NoResourceQuota", Message: "no ResourceQuota of the namespace applies to the node groups"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
			}},
		},
		"Scopes": {
			reason: "A Terminating quota counts no VM (ignored); a NotTerminating one counts CPU (800m of 1 fits) but not claims (its 1 PVC is not compared).",
			spec:   md0, instances: []string{"u1.large"},
			quotas: []*structpb.Struct{
				quotaObject(t, "jobs", `{scopes: [Terminating], hard: {requests.cpu: 100m}}`, ""),
				quotaObject(t, "long", `{scopes: [NotTerminating], hard: {requests.cpu: "1", persistentvolumeclaims: "1"}}`, ""),
			},
			want: want{Conditions: []function.Condition{
				{Type: "CapacityFits", True: true, Reason: "QuotaFits"},
				{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups below their minimum of ready nodes: md0"},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := []fntest.RequestOption{withInstancetypes(t, tc.instances...), withMachineSets(t), fntest.WithObserved(tc.observed)}
			if tc.quotas != nil {
				opts = append(opts, withQuotas(tc.quotas...))
			}
			if tc.xrCondition != "" {
				opts = append(opts, withXRCondition(t, "CapacityFits", "False", tc.xrCondition))
			}
			p, errs, _ := planOf(t, newRequest(t, tc.spec, opts...))
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
			withQuotas(quotaObject(t, "compute", `{hard: {requests.memory: 12Gi}}`, ""))))
		if f := fatals(rsp); len(f) != 1 || !strings.Contains(f[0], "need requests.memory 16Gi (md0 (2 × 8Gi))") {
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

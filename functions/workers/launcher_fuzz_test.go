package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// launcherModel is an independent model of the virt-launcher pod KubeVirt
// creates for a VM of a composed KubevirtMachineTemplate, for the
// resources a ResourceQuota counts, on x86_64 with KubeVirt's defaults.
// Sources (kubevirt/kubevirt, main):
//   - pkg/defaults/defaults.go: a CPU limit without a CPU request is
//     copied into it; without a CPU topology the VM gets one core, one
//     thread and as many sockets as the CPU limit's, else the request's,
//     whole cores (rounded up), else one;
//   - pkg/virt-controller/services/renderresources.go and template.go:
//     without dedicated CPUs, a pod without a CPU request requests
//     vCPUs ÷ cpuAllocationRatio and, when a ResourceQuota of the
//     namespace has limits.cpu and the VM none, is limited to its vCPUs;
//     with dedicated CPUs, request = limit = vCPUs (+1 for an isolated
//     emulator thread) and the memory limit is the request; the memory
//     request is the guest memory plus the overhead, and a quota with
//     limits.memory makes the limit twice the request;
//   - pkg/hypervisor/kvm/hypervisorbackend.go: overhead = page tables of
//     the VMI's requests.memory (none here) ÷ 512 + 25Mi + 100Mi + 25Mi +
//     40Mi + 50Mi + 8Mi per vCPU + 8Mi IO thread + 32Mi video (+100Mi with
//     dedicated CPUs);
//   - pkg/container-disk/container-disk.go, serialconsolelog.go: one
//     container and one init container per containerDisk volume (1m/1M
//     requested, 10m/40M limits; 10m/40M both with dedicated CPUs), the
//     container-disk-binary init container (10m/1M, 100m/40M; 10m/40M
//     both), guest-console-log unless the VM turns it off (5m/35M,
//     15m/60M; 15m/60M both: KubeVirt's cluster default may enable it).
//
// A pod counts, per resource, the larger of its containers' sum and its
// largest init container (Kubernetes "Init containers").
type launcherModel struct {
	ratio         int64
	instancetypes map[string]instancetypev1beta1.VirtualMachineInstancetypeSpec
}

// pod returns the requests and limits (cpu, memory) of the virt-launcher
// pod of a VM of kmt, false when KubeVirt refuses the VM (no memory).
func (m launcherModel) pod(kmt *infrav1.KubevirtMachineTemplate) (req, lim corev1.ResourceList, ok bool) {
	vmi := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template.Spec
	res := vmi.Domain.Resources
	var vcpus int64
	var guest *resource.Quantity
	var dedicated, isolate bool
	if vmi.Domain.Memory != nil {
		guest = vmi.Domain.Memory.Guest
	}
	if c := vmi.Domain.CPU; c != nil {
		vcpus = int64(max(c.Cores, 1)) * int64(max(c.Sockets, 1)) * int64(max(c.Threads, 1))
	}
	if it := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Instancetype; it != nil {
		spec := m.instancetypes[it.Name]
		vcpus = int64(spec.CPU.Guest)
		g := spec.Memory.Guest.DeepCopy()
		guest = &g
		dedicated = spec.CPU.DedicatedCPUPlacement != nil && *spec.CPU.DedicatedCPUPlacement
		isolate = dedicated && spec.CPU.IsolateEmulatorThread != nil && *spec.CPU.IsolateEmulatorThread
	}
	if guest == nil || guest.Sign() <= 0 {
		return nil, nil, false
	}
	cpuReq, hasReq := res.Requests[corev1.ResourceCPU]
	cpuLim, hasLim := res.Limits[corev1.ResourceCPU]
	if hasLim && !cpuLim.IsZero() && (!hasReq || cpuReq.IsZero()) {
		cpuReq, hasReq = cpuLim.DeepCopy(), true
	}
	if vcpus == 0 {
		switch {
		case hasLim:
			vcpus = cpuLim.Value()
		case hasReq:
			vcpus = cpuReq.Value()
		default:
			vcpus = 1
		}
	}
	mi := func(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }
	overhead := mi(25 + 100 + 25 + 40 + 50 + 8*vcpus + 8 + 32)
	compute := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	if dedicated {
		n := vcpus
		if isolate {
			n++
		}
		compute.Requests[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
		compute.Limits[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
		overhead.Add(mi(100))
	} else {
		// vcpus ÷ ratio in nanocores, rounded up as a Quantity parses it.
		compute.Requests[corev1.ResourceCPU] = *resource.NewScaledQuantity((vcpus*1e9+m.ratio-1)/m.ratio, resource.Nano)
		if hasReq {
			compute.Requests[corev1.ResourceCPU] = cpuReq
		}
		compute.Limits[corev1.ResourceCPU] = *resource.NewQuantity(vcpus, resource.DecimalSI)
		if hasLim {
			compute.Limits[corev1.ResourceCPU] = cpuLim
		}
	}
	mem := guest.DeepCopy()
	mem.Add(overhead)
	compute.Requests[corev1.ResourceMemory] = mem
	memLim := mem.DeepCopy()
	if !dedicated {
		memLim.Add(mem)
	}
	compute.Limits[corev1.ResourceMemory] = memLim

	both := func(r, l corev1.ResourceList) corev1.ResourceRequirements {
		if dedicated {
			r = l
		}
		return corev1.ResourceRequirements{Requests: r, Limits: l}
	}
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	containers := []corev1.ResourceRequirements{compute}
	var inits []corev1.ResourceRequirements
	for _, v := range vmi.Volumes {
		if v.ContainerDisk != nil {
			containers = append(containers, both(list("1m", "1M"), list("10m", "40M")))
			inits = append(inits, both(list("1m", "1M"), list("10m", "40M")))
		}
	}
	if len(inits) > 0 {
		inits = append(inits, both(list("10m", "1M"), list("100m", "40M")))
	}
	if vmi.Domain.Devices.LogSerialConsole == nil || *vmi.Domain.Devices.LogSerialConsole {
		containers = append(containers, both(list("5m", "35M"), list("15m", "60M")))
	}
	total := func(pick func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			var sum resource.Quantity
			for _, c := range containers {
				sum.Add(pick(c)[r])
			}
			for _, c := range inits {
				if q := pick(c)[r]; q.Cmp(sum) > 0 {
					sum = q.DeepCopy()
				}
			}
			out[r] = sum
		}
		return out
	}
	return total(func(c corev1.ResourceRequirements) corev1.ResourceList { return c.Requests }),
		total(func(c corev1.ResourceRequirements) corev1.ResourceList { return c.Limits }), true
}

// fuzzInstancetypes are the instance types the property answers with:
// seed rows and a dedicated one with an isolated emulator thread.
var fuzzInstancetypes = []string{"u1.nano", "u1.medium", "u1.large", "u1.2xlarge", "cx1.test"}

func fuzzInstancetype(t testing.TB, name string) (*structpb.Struct, instancetypev1beta1.VirtualMachineInstancetypeSpec) {
	var s *structpb.Struct
	if name == "cx1.test" {
		s = fntest.MustYAML(t, `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: cx1.test}
spec: {cpu: {guest: 3, dedicatedCPUPlacement: true, isolateEmulatorThread: true}, memory: {guest: 6Gi}}`)
	} else {
		s = fntest.Instancetype(t, name)
	}
	var it instancetypev1beta1.VirtualMachineClusterInstancetype
	raw, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		t.Fatal(err)
	}
	return s, it.Spec
}

// FuzzPreflightCoversLaunchers: for any node groups (instance type or
// resources or neither, podCpuRequest/podCpuLimit, replicas) and any
// cpuAllocationRatio and request floor the function accepts, what the
// capacity pre-flight counts is at least what the virt-launcher pods of
// the composed KubevirtMachineTemplates request and limit (launcherModel).
// Checked without reading the pre-flight's figures: a quota of each
// resource one unit below the model's total at maxReplicas must be
// reported exceeded.
func FuzzPreflightCoversLaunchers(f *testing.F) {
	// Each seed: sizing mode (0 instance type, 1 resources, 2 neither), instance
	// type index, cores, memory MiB, request and limit millicores (0 unset),
	// min and max replicas, logSerialConsole, ratio, allow below ratio, floor
	// millicores, and a second group's mode.
	f.Add(uint8(1), uint8(0), uint16(256), uint32(1024), uint32(0), uint32(1), uint8(0), uint8(100), false, uint8(10), false, uint16(0), uint8(0))
	f.Add(uint8(1), uint8(0), uint16(4), uint32(8192), uint32(400), uint32(0), uint8(1), uint8(3), true, uint8(10), false, uint16(0), uint8(2))
	f.Add(uint8(1), uint8(0), uint16(8), uint32(4096), uint32(50), uint32(1500), uint8(2), uint8(2), false, uint8(3), true, uint16(10), uint8(2))
	f.Add(uint8(0), uint8(4), uint16(0), uint32(0), uint32(0), uint32(0), uint8(1), uint8(5), false, uint8(1), false, uint16(0), uint8(0))
	f.Add(uint8(0), uint8(2), uint16(1), uint32(1), uint32(1), uint32(0), uint8(1), uint8(100), false, uint8(1), false, uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, mode, itIdx uint8, cores uint16, memMi, reqM, limM uint32, minR, maxR uint8, console bool, ratio uint8, allow bool, floorM uint16, mode2 uint8) {
		if ratio == 0 {
			return
		}
		group := func(mode uint8) string {
			var b strings.Builder
			fmt.Fprintf(&b, "{minReplicas: %d, maxReplicas: %d", min(minR, maxR)%101, maxR%101)
			switch mode % 3 {
			case 0:
				fmt.Fprintf(&b, ", instanceType: %s", fuzzInstancetypes[int(itIdx)%len(fuzzInstancetypes)])
			case 1:
				fmt.Fprintf(&b, `, resources: {cpu: "%d", memory: %dMi}`, cores%257, memMi%(4<<20))
			case 2:
				b.WriteString(`, instanceType: ""`)
			}
			if mode%3 != 0 {
				if reqM > 0 {
					fmt.Fprintf(&b, ", podCpuRequest: %dm", reqM%256001)
				}
				if limM > 0 {
					fmt.Fprintf(&b, ", podCpuLimit: %dm", limM%256001)
				}
			}
			if console {
				b.WriteString(", logSerialConsole: true")
			}
			return b.String() + "}"
		}
		spec := "nodeGroups: {md0: " + group(mode) + ", md1: " + group(mode2) + "}"
		input := fntest.MustYAML(t, fmt.Sprintf("apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncpuAllocationRatio: %d\nallowPodCpuRequestBelowRatio: %v\nminPodCpuRequest: %dm",
			ratio, allow, max(floorM, 1)))
		model := launcherModel{ratio: int64(ratio), instancetypes: map[string]instancetypev1beta1.VirtualMachineInstancetypeSpec{}}
		answer := func(r *fnv1.RunFunctionRequest) {
			for _, n := range fuzzInstancetypes {
				s, _ := fuzzInstancetype(t, n)
				fntest.WithRequired(requirementInstancetypeKey(n), s)(r)
			}
			withMachineSets(t)(r)
			fntest.WithInput(input)(r)
		}
		for _, n := range fuzzInstancetypes {
			_, model.instancetypes[n] = fuzzInstancetype(t, n)
		}
		first := run(t, newRequest(t, spec, answer, withQuotas()))
		if len(fatals(first)) > 0 {
			return // refused: nothing runs
		}
		// The model's totals at maxReplicas, per quota resource.
		totals := map[corev1.ResourceName]*resource.Quantity{}
		for _, rn := range []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory} {
			totals[rn] = &resource.Quantity{}
		}
		for _, r := range first.GetDesired().GetResources() {
			if r.GetResource().GetFields()["kind"].GetStringValue() != "KubevirtMachineTemplate" {
				continue
			}
			raw, err := r.GetResource().MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			kmt := &infrav1.KubevirtMachineTemplate{}
			if err := json.Unmarshal(raw, kmt); err != nil {
				t.Fatal(err)
			}
			req, lim, ok := model.pod(kmt)
			if !ok {
				continue
			}
			g := kmt.Labels[labelNodeGroup]
			replicas := maxReplicasOf(t, spec, g)
			for rn, q := range map[corev1.ResourceName]resource.Quantity{
				corev1.ResourceRequestsCPU: req[corev1.ResourceCPU], corev1.ResourceLimitsCPU: lim[corev1.ResourceCPU],
				corev1.ResourceRequestsMemory: req[corev1.ResourceMemory], corev1.ResourceLimitsMemory: lim[corev1.ResourceMemory],
			} {
				totals[rn].Add(times(q, replicas))
			}
		}
		for rn, total := range totals {
			if total.Sign() <= 0 {
				continue
			}
			// One unit below the total: a nanocore, a byte.
			hard := total.DeepCopy()
			if rn == corev1.ResourceRequestsCPU || rn == corev1.ResourceLimitsCPU {
				hard.Sub(*resource.NewScaledQuantity(1, resource.Nano))
			} else {
				hard.Sub(*resource.NewQuantity(1, resource.BinarySI))
			}
			quota := quotaObject(t, "q", fmt.Sprintf("{hard: {%s: %q}}", rn, hard.String()), "")
			rsp := run(t, newRequest(t, spec, answer, withQuotas(quota)))
			var reported bool
			for _, res := range rsp.GetResults() {
				reported = reported || strings.Contains(res.GetMessage(), "need "+string(rn)+" ")
			}
			if !reported {
				t.Fatalf("spec %s, ratio %d: the virt-launcher pods at maxReplicas need %s %s (model), but a quota of %s was not reported exceeded",
					spec, ratio, rn, total.String(), hard.String())
			}
		}
	})
}

// maxReplicasOf is node group g's maxReplicas in spec (YAML).
func maxReplicasOf(t *testing.T, spec, g string) int32 {
	i := strings.Index(spec, g+": {")
	rest := spec[i:]
	j := strings.Index(rest, "maxReplicas: ") + len("maxReplicas: ")
	k := strings.IndexAny(rest[j:], ",}")
	n, err := strconv.Atoi(rest[j : j+k])
	if err != nil {
		t.Fatal(err)
	}
	return int32(n)
}

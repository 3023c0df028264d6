package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/quantity"
)

// Capacity pre-flight (docs/tenant-guide.md, Capacity): the node
// groups' VMs and disks at minReplicas and at maxReplicas against the
// ResourceQuotas of NS.

// requirementResourceQuotas is the required-resource key of every
// ResourceQuota in NS.
const requirementResourceQuotas = "resourcequotas"

// autoMemoryLimitsRatio is KubeVirt's memory limit of a virt-launcher pod
// as a multiple of its memory request, set when a quota of the namespace
// has limits.memory (AutoResourceLimits, GA in KubeVirt v1.5; a namespace
// label alpha.kubevirt.io/auto-memory-limits-ratio changes it and is not
// read here).
const autoMemoryLimitsRatio = 2

// KubeVirt's virt-launcher pod of one VM on x86_64 with KubeVirt's default
// settings (supportContainerResources, cpuRequest and
// additionalGuestMemoryOverheadRatio unset), from
// https://github.com/kubevirt/kubevirt/blob/main/pkg/hypervisor/kvm/hypervisorbackend.go
// (GetMemoryOverhead),
// https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-controller/services/renderresources.go,
// serialconsolelog.go and pkg/container-disk/container-disk.go.
var (
	// launcherMemoryOverhead is the compute container's fixed memory
	// overhead: virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd
	// 25Mi, virtqemud 40Mi, QEMU 50Mi, the IO thread 8Mi, video RAM 32Mi.
	launcherMemoryOverhead = resource.MustParse("280Mi")
	// launcherMemoryPerVCPU is the overhead per vCPU.
	launcherMemoryPerVCPU = resource.MustParse("8Mi")
	// launcherDedicatedMemoryOverhead is added with dedicated CPUs.
	launcherDedicatedMemoryOverhead = resource.MustParse("100Mi")
	// launcherEphemeralOverhead is added to the compute container's
	// ephemeral-storage request and limit.
	launcherEphemeralOverhead = resource.MustParse("50M")
)

// launcherSupport are the requests and limits of the virt-launcher pod's
// other containers: the system disk's container-disk container and the
// guest-console-log container (counted even when the group leaves
// logSerialConsole unset: KubeVirt's cluster setting may add it), with
// shared CPUs, and with dedicated CPUs (requests raised to the limits).
func launcherSupport(dedicated bool) (containers, inits []corev1.ResourceRequirements) {
	rl := func(cpu, mem, eph string) corev1.ResourceList {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		if eph != "" {
			l[corev1.ResourceEphemeralStorage] = resource.MustParse(eph)
		}
		return l
	}
	if dedicated {
		return []corev1.ResourceRequirements{
				{Requests: rl("10m", "40M", "50M"), Limits: rl("10m", "40M", "")}, // container disk
				{Requests: rl("15m", "60M", ""), Limits: rl("15m", "60M", "")},    // guest-console-log
			}, []corev1.ResourceRequirements{
				{Requests: rl("10m", "40M", ""), Limits: rl("10m", "40M", "")},    // container-disk-binary
				{Requests: rl("10m", "40M", "50M"), Limits: rl("10m", "40M", "")}, // container disk init
			}
	}
	return []corev1.ResourceRequirements{
			{Requests: rl("1m", "1M", "50M"), Limits: rl("10m", "40M", "")}, // container disk
			{Requests: rl("5m", "35M", ""), Limits: rl("15m", "60M", "")},   // guest-console-log
		}, []corev1.ResourceRequirements{
			{Requests: rl("10m", "1M", ""), Limits: rl("100m", "40M", "")},  // container-disk-binary
			{Requests: rl("1m", "1M", "50M"), Limits: rl("10m", "40M", "")}, // container disk init
		}
}

// resourceQuotaSelector selects every ResourceQuota in NS (empty labels
// match all).
func resourceQuotaSelector(id function.Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "ResourceQuota",
		Namespace:  ptr(id.Namespace),
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
	}
}

// vmDemand is what one VM of a node group counts against a quota, by
// quota resource name (requests.cpu, pods, <class>.storageclass.storage.k8s.io/requests.storage, …).
type vmDemand map[corev1.ResourceName]resource.Quantity

// perVMObjects are the objects (<plural>.<group>) each machine of a node
// group adds to NS, for object-count quotas (count/<plural>.<group>).
var perVMObjects = []string{
	"machines.cluster.x-k8s.io", "kubevirtmachines.infrastructure.cluster.x-k8s.io",
	"kubeadmconfigs.bootstrap.cluster.x-k8s.io", "virtualmachines.kubevirt.io",
	"virtualmachineinstances.kubevirt.io", "datavolumes.cdi.kubevirt.io",
}

// perVMDemand is what one VM of gp counts against a quota: its
// virt-launcher pod's requests and limits as KubeVirt renders them
// (launcherPod), one pod, one claim of diskSize (the disk-kubelet
// DataVolume), also per storage class when the group names one, and each
// GPU device. Memory counts only with a known guest memory (KubeVirt
// refuses a VM without one: it never gets a pod).
func perVMDemand(gp nodeGroupPlan, cpuAllocationRatio int64) vmDemand {
	d := vmDemand{
		corev1.ResourcePods:                   *resource.NewQuantity(1, resource.DecimalSI),
		"count/pods":                          *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourcePersistentVolumeClaims: *resource.NewQuantity(1, resource.DecimalSI),
		"count/persistentvolumeclaims":        *resource.NewQuantity(1, resource.DecimalSI),
	}
	for _, kind := range perVMObjects {
		d[corev1.ResourceName("count/"+kind)] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	req, lim := launcherPod(gp, cpuAllocationRatio)
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		q, ok := req[r]
		if !ok {
			continue
		}
		d[r], d[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+r)] = q, q.DeepCopy()
		if l, ok := lim[r]; ok {
			d[corev1.ResourceName("limits."+r)] = l
		}
	}
	if disk, err := gp.Group.DiskSize.Parse(); err == nil { // checked by checkSpec
		d[corev1.ResourceRequestsStorage] = disk
		if sc := gp.StorageClass; sc != "" {
			d[corev1.ResourceName(sc+".storageclass.storage.k8s.io/requests.storage")] = disk.DeepCopy()
			d[corev1.ResourceName(sc+".storageclass.storage.k8s.io/persistentvolumeclaims")] = *resource.NewQuantity(1, resource.DecimalSI)
		}
	}
	for _, gpu := range gp.Group.GPUs {
		name := corev1.ResourceName(corev1.DefaultResourceRequestsPrefix + gpu.Name)
		q := d[name]
		q.Add(*resource.NewQuantity(1, resource.DecimalSI))
		d[name] = q
	}
	return d
}

// launcherPod is the CPU, memory and ephemeral storage one VM's
// virt-launcher pod requests and limits, counted as a ResourceQuota counts
// a pod: per resource the larger of its containers' sum and its largest
// init container. The compute container:
//   - CPU request: podCpuRequest, else podCpuLimit (KubeVirt copies a
//     limit into a missing request), else vCPUs ÷ cpuAllocationRatio
//     rounded up to whole millicores; with dedicated CPUs, the vCPUs (one
//     more for an isolated emulator thread);
//   - CPU limit: podCpuLimit, else one per vCPU: KubeVirt writes that limit
//     when any ResourceQuota of the namespace has limits.cpu, the only case
//     a limit is compared (without one, a pod without a CPU limit counts
//     nothing against a quota that has no limits.cpu);
//   - memory: the guest memory plus KubeVirt's overhead (fixed, per vCPU,
//     and guest ÷ 512 for page tables), the limit autoMemoryLimitsRatio
//     times that (KubeVirt writes it when a quota has limits.memory), or
//     equal to it with dedicated CPUs;
//   - ephemeral storage: the VM template's plus launcherEphemeralOverhead.
func launcherPod(gp nodeGroupPlan, cpuAllocationRatio int64) (req, lim corev1.ResourceList) {
	g, s := gp.Group, gp.Sizing
	compute := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: quantity.DivideWholeBytes(vmEphemeralStorage, 40)},
		Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: vmEphemeralStorage.DeepCopy()},
	}
	for _, l := range []corev1.ResourceList{compute.Requests, compute.Limits} {
		e := l[corev1.ResourceEphemeralStorage]
		e.Add(launcherEphemeralOverhead)
		l[corev1.ResourceEphemeralStorage] = e
	}
	vcpus, known := launcherVCPUs(g, s)
	switch {
	case !known:
	case s.DedicatedCPUs:
		n := vcpus
		if s.IsolateEmulatorThread {
			n++
		}
		compute.Requests[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
		compute.Limits[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
	default:
		compute.Requests[corev1.ResourceCPU] = derivedCPURequest(vcpus, cpuAllocationRatio)
		compute.Limits[corev1.ResourceCPU] = *resource.NewQuantity(vcpus, resource.DecimalSI)
		if l, err := g.PodCPULimit.Parse(); g.PodCPULimit.IsSet() && err == nil { // checked by checkSpec
			compute.Limits[corev1.ResourceCPU], compute.Requests[corev1.ResourceCPU] = l, l.DeepCopy()
		}
		if r, err := g.PodCPURequest.Parse(); g.PodCPURequest.IsSet() && err == nil {
			compute.Requests[corev1.ResourceCPU] = r
		}
	}
	if s.Memory != nil && known {
		mem := s.Memory.DeepCopy()
		mem.Add(launcherMemoryOverhead)
		perVCPU := launcherMemoryPerVCPU.DeepCopy()
		perVCPU.Mul(vcpus)
		mem.Add(perVCPU)
		mem.Add(*resource.NewQuantity((s.Memory.Value()+511)/512, resource.BinarySI))
		if s.DedicatedCPUs {
			mem.Add(launcherDedicatedMemoryOverhead)
		}
		compute.Requests[corev1.ResourceMemory] = mem
		l := mem.DeepCopy()
		if !s.DedicatedCPUs {
			l.Mul(autoMemoryLimitsRatio)
		}
		compute.Limits[corev1.ResourceMemory] = l
	}
	containers, inits := launcherSupport(s.DedicatedCPUs)
	containers = append(containers, compute)
	return podTotal(containers, inits, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }),
		podTotal(containers, inits, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

// podTotal is, per resource the compute container (the last of
// containers) has, the larger of the containers' sum and the largest init
// container of list(containers) (Kubernetes "Init containers", resource
// sharing).
func podTotal(containers, inits []corev1.ResourceRequirements, list func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for r := range list(containers[len(containers)-1]) {
		var sum resource.Quantity
		for _, c := range containers {
			if q, ok := list(c)[r]; ok {
				sum.Add(q)
			}
		}
		for _, c := range inits {
			if q, ok := list(c)[r]; ok && q.Cmp(sum) > 0 {
				sum = q.DeepCopy()
			}
		}
		out[r] = sum
	}
	return out
}

// groupDemand is one node group's VMs counted against one quota resource.
type groupDemand struct {
	Group    string
	Replicas int32
	PerVM    resource.Quantity
}

// total is Replicas × PerVM.
func (g groupDemand) total() resource.Quantity { return times(g.PerVM, g.Replicas) }

func (g groupDemand) String() string {
	return fmt.Sprintf("%s (%d × %s)", g.Group, g.Replicas, g.PerVM.String())
}

// quotaViolation is one quota resource the node groups exceed.
type quotaViolation struct {
	Quota    string
	Resource corev1.ResourceName
	Hard     resource.Quantity
	Used     resource.Quantity
	// Own is what this cluster's observed machines hold of Used
	// (estimated: observed replicas × one VM's demand).
	Own resource.Quantity
	// Left is Hard − Used + Own: what the quota leaves this cluster.
	Left resource.Quantity
	// Demand is the node groups' total; Groups its parts.
	Demand resource.Quantity
	Groups []groupDemand
}

// message names the quota, the resource, hard, used, what is left to this
// cluster, the demand and the groups that make it up; bound is
// "minReplicas" or "maxReplicas".
func (v quotaViolation) message(ns, bound string) string {
	parts := make([]string, 0, len(v.Groups))
	for _, g := range v.Groups {
		parts = append(parts, g.String())
	}
	return fmt.Sprintf("node groups at %s need %s %s (%s), but ResourceQuota %s/%s leaves this cluster %s (hard %s, used %s, of which this cluster's machines %s)",
		bound, v.Resource, v.Demand.String(), strings.Join(parts, ", "), ns, v.Quota, v.Left.String(), v.Hard.String(), v.Used.String(), v.Own.String())
}

// capacityCheck is the outcome of the pre-flight: the quotas that apply,
// and the violations at minReplicas and at maxReplicas (a resource
// exceeded at minReplicas is not repeated at maxReplicas).
type capacityCheck struct {
	Quotas   int
	Min, Max []quotaViolation
}

// checkCapacity compares the node groups of groups (every group of names
// planned) at minReplicas and at maxReplicas with each applicable quota of
// quotas, resource by resource, against hard − used + own: own is what
// this cluster's machines already hold (status.replicas of each observed
// MachineDeployment × one VM's demand), which used includes. Resources a
// quota does not list, and resources no group demands, are not compared.
func checkCapacity(r *function.Request, quotas []*corev1.ResourceQuota, names []string, groups map[string]nodeGroupPlan, cpuAllocationRatio int64) capacityCheck {
	perVM, observed := map[string]vmDemand{}, map[string]int32{}
	for _, g := range names {
		perVM[g] = perVMDemand(groups[g], cpuAllocationRatio)
		if md, ok := observedMachineDeployment(r, g); ok && md.Replicas > 0 {
			observed[g] = md.Replicas
		}
	}
	var out capacityCheck
	for _, q := range quotas {
		compute, storage := quotaApplies(q)
		if !compute && !storage {
			continue
		}
		out.Quotas++
		for _, rn := range slices.Sorted(maps.Keys(q.Spec.Hard)) {
			if !compute && computeResource(rn) || !storage && !computeResource(rn) {
				continue
			}
			v := quotaViolation{Quota: q.Name, Resource: rn, Hard: q.Spec.Hard[rn], Used: q.Status.Used[rn]}
			var atMin, atMax []groupDemand
			for _, g := range names {
				one, ok := perVM[g][rn]
				if !ok || one.IsZero() {
					continue
				}
				ng := groups[g].Group
				atMin = append(atMin, groupDemand{g, deref(ng.MinReplicas), one})
				atMax = append(atMax, groupDemand{g, deref(ng.MaxReplicas), one})
				v.Own.Add(times(one, observed[g]))
			}
			if len(atMax) == 0 {
				continue
			}
			v.Left = v.Hard.DeepCopy()
			v.Left.Sub(v.Used)
			v.Left.Add(v.Own)
			if d := sumDemand(atMin); d.Sign() > 0 && d.Cmp(v.Left) > 0 {
				v.Demand, v.Groups = d, nonZero(atMin)
				out.Min = append(out.Min, v)
			} else if d := sumDemand(atMax); d.Sign() > 0 && d.Cmp(v.Left) > 0 {
				v.Demand, v.Groups = d, nonZero(atMax)
				out.Max = append(out.Max, v)
			}
		}
	}
	return out
}

// quotaApplies reports which of a quota's resources count the node
// groups' VMs (Kubernetes "Resource Quotas", quota scopes): an unscoped
// quota counts all; one scoped only by NotTerminating and NotBestEffort
// (virt-launcher pods have no deadline and request CPU and memory) counts
// the pods' compute resources, not claims; any other scope or a scope
// selector is not compared.
func quotaApplies(q *corev1.ResourceQuota) (compute, storage bool) {
	if q.Spec.ScopeSelector != nil && len(q.Spec.ScopeSelector.MatchExpressions) > 0 {
		return false, false
	}
	if len(q.Spec.Scopes) == 0 {
		return true, true
	}
	for _, s := range q.Spec.Scopes {
		if s != corev1.ResourceQuotaScopeNotTerminating && s != corev1.ResourceQuotaScopeNotBestEffort {
			return false, false
		}
	}
	return true, false
}

// computeResource reports whether a quota resource is counted on pods
// (CPU, memory, ephemeral storage, extended resources, the pod count)
// rather than on claims.
func computeResource(rn corev1.ResourceName) bool {
	s := string(rn)
	switch {
	case s == string(corev1.ResourcePersistentVolumeClaims), s == "count/persistentvolumeclaims",
		s == string(corev1.ResourceRequestsStorage), strings.Contains(s, ".storageclass.storage.k8s.io/"):
		return false
	}
	return true
}

// preflight runs the capacity pre-flight on the planned groups and reports
// it on p: no condition while the quotas have not arrived, while an
// instance type is pending, or when no quota applies (CapacityFits True,
// reason NoResourceQuota, when the XR has one from an earlier quota); CapacityFits True
// when everything fits; a Warning and CapacityFits False when maxReplicas
// does not fit, or when minReplicas does not fit for node groups that all
// exist (their MachineDeployments observed). When a group without a
// MachineDeployment takes part in a violation at minReplicas, it returns
// the violations (refuseNewGroups: a Fatal). It never changes the composed
// resources.
func preflight(p *function.Plan, r *function.Request, id function.Identity, names []string, groups map[string]nodeGroupPlan, in *inputv1alpha1.WorkersInput) field.ErrorList {
	quotas, arrived, err := function.Required[corev1.ResourceQuota](r, requirementResourceQuotas)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requirements", requirementResourceQuotas), err)}
	}
	if !arrived || len(groups) < len(names) {
		return nil
	}
	// The message text follows the quotas' order: by name, not as listed.
	quotas = slices.SortedFunc(slices.Values(quotas), func(a, b *corev1.ResourceQuota) int { return strings.Compare(a.Name, b.Name) })
	c := checkCapacity(r, quotas, names, groups, in.CPUAllocationRatio)
	if c.Quotas == 0 {
		// Crossplane keeps a condition until it is set again: replace one
		// an earlier quota left.
		if status, _, _ := r.CompositeCondition(v1alpha1.ConditionCapacityFits); status != "" {
			p.SetCondition(v1alpha1.ConditionCapacityFits, true, v1alpha1.ReasonNoResourceQuota, "no ResourceQuota of the namespace applies to the node groups")
		}
		return nil
	}
	if errs := refuseNewGroups(r, id, c.Min); len(errs) > 0 {
		return errs
	}
	var msgs []string
	for _, v := range c.Min {
		m := v.message(id.Namespace, "minReplicas") + ": a machine that is replaced may not come back; nothing running is changed"
		p.Warn(v1alpha1.ReasonMinimumExceedsQuota, m)
		msgs = append(msgs, m)
	}
	for _, v := range c.Max {
		m := v.message(id.Namespace, "maxReplicas") + ": cluster-autoscaler cannot scale past this limit"
		p.Warn(v1alpha1.ReasonMaximumExceedsQuota, m)
		msgs = append(msgs, m)
	}
	switch {
	case len(c.Min) > 0:
		p.SetCondition(v1alpha1.ConditionCapacityFits, false, v1alpha1.ReasonMinimumExceedsQuota, strings.Join(msgs, "; "))
	case len(c.Max) > 0:
		p.SetCondition(v1alpha1.ConditionCapacityFits, false, v1alpha1.ReasonMaximumExceedsQuota, strings.Join(msgs, "; "))
	default:
		p.SetCondition(v1alpha1.ConditionCapacityFits, true, v1alpha1.ReasonQuotaFits, "")
	}
	return nil
}

// refuseNewGroups returns a Fatal for each violation at minReplicas that a
// node group without an observed MachineDeployment takes part in: a group
// is not created where its minimum does not fit, on a new cluster (then
// the cluster is not created) as on a running one (then nothing changes,
// as with any Fatal). Violations of existing groups alone are left to
// Warnings: a lowered quota never stops a running cluster.
func refuseNewGroups(r *function.Request, id function.Identity, min []quotaViolation) field.ErrorList {
	created := anyComposedObserved(r)
	var errs field.ErrorList
	for _, v := range min {
		var added []string
		for _, g := range v.Groups {
			if _, ok := observedMachineDeployment(r, g.Group); !ok {
				added = append(added, g.Group)
			}
		}
		if len(added) == 0 {
			continue
		}
		outcome := "the cluster is not created"
		if created {
			outcome = fmt.Sprintf("node groups without a MachineDeployment yet (%s) are not created and nothing is changed", strings.Join(added, ", "))
		}
		errs = append(errs, field.Forbidden(field.NewPath("spec", "nodeGroups"),
			v.message(id.Namespace, "minReplicas")+": "+outcome+" ("+v1alpha1.ReasonMinimumExceedsQuota+")"))
	}
	return errs
}

// anyComposedObserved reports whether any composed resource of the XR has
// been observed: the cluster exists (a Fatal would stop its whole
// pipeline, control plane included), even one without node groups yet.
func anyComposedObserved(r *function.Request) bool {
	for range r.ObservedNames() {
		return true
	}
	return false
}

// times is q × n.
func times(q resource.Quantity, n int32) resource.Quantity {
	out := q.DeepCopy()
	out.Mul(int64(n))
	return out
}

// sumDemand is the total of ds.
func sumDemand(ds []groupDemand) resource.Quantity {
	var sum resource.Quantity
	for _, d := range ds {
		sum.Add(d.total())
	}
	return sum
}

// nonZero are the groups of ds with replicas.
func nonZero(ds []groupDemand) []groupDemand {
	return slices.DeleteFunc(slices.Clone(ds), func(d groupDemand) bool { return d.Replicas == 0 })
}

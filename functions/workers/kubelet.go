package main

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/quantity"
)

// Bounds of the automatic kubelet reservations (the seed's formula): 5% of the node's effective memory in MiB, clamped to [256, 1024]
// MiB; 5% of its effective millicores, clamped to [50, 500] millicores.
const (
	// reservationPercent is the share of the node reserved, in percent.
	reservationPercent = 5
	// minMemoryReservationMiB is the smallest automatic memory reservation, MiB.
	minMemoryReservationMiB = 256
	// maxMemoryReservationMiB is the largest automatic memory reservation, MiB.
	maxMemoryReservationMiB = 1024
	// minCPUReservationMilli is the smallest automatic CPU reservation, millicores.
	minCPUReservationMilli = 50
	// maxCPUReservationMilli is the largest automatic CPU reservation, millicores.
	maxCPUReservationMilli = 500
)

// Sizing is the effective size of one node of a group: from
// resources.memory/resources.cpu when set, otherwise from the instance
// type's spec.memory.guest/spec.cpu.guest. A nil field is unknown.
type Sizing struct {
	// Memory in bytes, or nil when unknown.
	Memory *resource.Quantity
	// CPU in cores, or nil when unknown.
	CPU *resource.Quantity
	// Explicit is true when both resources.cpu and resources.memory are
	// set: the VM then gets explicit cores and guest memory and no
	// instancetype.
	Explicit bool
	// DedicatedCPUs and IsolateEmulatorThread are the instance type's
	// spec.cpu.dedicatedCPUPlacement and isolateEmulatorThread.
	DedicatedCPUs, IsolateEmulatorThread bool
}

// reservations are the kubelet reservations and eviction thresholds of a
// node group, ready for kubelet flags, plus the allocatable capacity they
// leave (docs/architecture.md, "What each step composes", MachineDeployment;
// the seed's "Capacity Annotation").
type reservations struct {
	// SystemMemory and KubeMemory are the memory reservations as written in
	// kubelet flags: the user's text, or whole MiB such as "409Mi".
	SystemMemory, KubeMemory string
	// SystemCPU and KubeCPU are the CPU reservations: the user's text, or
	// whole millicores such as "100m".
	SystemCPU, KubeCPU string
	// EvictionHard and EvictionSoft are the memory.available thresholds as
	// written ("7%", "500Mi").
	EvictionHard, EvictionSoft string
	// AllocatableMemory is floor((mem − system − kube − hard)/MiB) as "NMi",
	// or "" when the effective memory is unknown.
	AllocatableMemory string
	// AllocatableCPU is ceil(cpu − system − kube) in millicores as "Nm", or
	// "" when the effective CPU is unknown.
	AllocatableCPU string
}

// computeReservations checks a node group's kubelet settings against its
// effective sizing and computes its reservations, by the seed's formula. The
// rules that need no sizing (units, bounds, hard
// below soft) are Kubelet.Validate's, run first. base is the node group's
// field path (spec.nodeGroups[G]). It returns the first violation as a
// *field.Error naming the field and the value.
func computeReservations(base *field.Path, k v1alpha1.Kubelet, s Sizing) (reservations, error) {
	kp := base.Child("kubelet")
	hardText := orDefault(string(k.EvictionHardMemory), string(v1alpha1.DefaultEvictionHard))
	softText := orDefault(string(k.EvictionSoftMemory), string(v1alpha1.DefaultEvictionSoft))
	r := reservations{EvictionHard: hardText, EvictionSoft: softText}

	// Memory reservations (bytes).
	autoMem := int64(minMemoryReservationMiB)
	if s.Memory != nil {
		autoMem = clamp(quantity.FloorMiB(*s.Memory)*reservationPercent/100, minMemoryReservationMiB, maxMemoryReservationMiB)
	}
	var memRes [2]*big.Rat
	for i, f := range []struct {
		name string
		val  string
		out  *string
	}{{"systemReservedMemory", string(k.SystemReservedMemory), &r.SystemMemory}, {"kubeReservedMemory", string(k.KubeReservedMemory), &r.KubeMemory}} {
		if f.val == "" {
			*f.out = quantity.FormatMiB(autoMem)
			memRes[i] = big.NewRat(autoMem*quantity.MiB, 1)
			continue
		}
		q, err := quantity.ParseBoundedQuantity(kp.Child(f.name), f.val, v1alpha1.MaxNodeMemory)
		if err != nil {
			return reservations{}, err
		}
		if s.Memory == nil {
			return reservations{}, field.Invalid(kp.Child(f.name), f.val,
				"an explicit memory reservation needs the node's effective memory (resources.memory or the instance type's memory.guest), which is unknown")
		}
		*f.out = f.val
		memRes[i] = quantity.Rat(q)
	}

	// CPU reservations (millicores).
	autoCPU := int64(minCPUReservationMilli)
	if s.CPU != nil {
		autoCPU = clamp(quantity.Millicores(*s.CPU)*reservationPercent/100, minCPUReservationMilli, maxCPUReservationMilli)
	}
	var cpuRes [2]*big.Rat // in cores
	for i, f := range []struct {
		name string
		val  string
		out  *string
	}{{"systemReservedCpu", string(k.SystemReservedCPU), &r.SystemCPU}, {"kubeReservedCpu", string(k.KubeReservedCPU), &r.KubeCPU}} {
		if f.val == "" {
			*f.out = quantity.FormatMillicores(autoCPU)
			cpuRes[i] = big.NewRat(autoCPU, 1000)
			continue
		}
		q, err := quantity.ParseBoundedQuantity(kp.Child(f.name), f.val, v1alpha1.MaxNodeCPU)
		if err != nil {
			return reservations{}, err
		}
		if s.CPU == nil {
			return reservations{}, field.Invalid(kp.Child(f.name), f.val,
				"an explicit CPU reservation needs the node's effective CPU (resources.cpu or the instance type's cpu.guest), which is unknown")
		}
		*f.out = f.val
		cpuRes[i] = quantity.Rat(q)
	}

	// Eviction thresholds.
	hard, herr := v1alpha1.Threshold(hardText).Parse(kp.Child("evictionHardMemory"))
	if herr != nil {
		return reservations{}, herr
	}
	// Totals against the node's size.
	if s.Memory != nil {
		mem := quantity.Rat(*s.Memory)
		var hardBytes *big.Rat
		if hard.Percent {
			hardBytes = new(big.Rat).Mul(hard.Fraction, mem)
		} else {
			hardBytes = quantity.Rat(hard.Bytes)
		}
		left := new(big.Rat).Sub(mem, memRes[0])
		left.Sub(left, memRes[1])
		left.Sub(left, hardBytes)
		if left.Sign() <= 0 {
			return reservations{}, field.Invalid(kp, fmt.Sprintf("systemReservedMemory=%s kubeReservedMemory=%s evictionHardMemory=%s", r.SystemMemory, r.KubeMemory, hardText),
				fmt.Sprintf("system-reserved + kube-reserved + hard eviction must stay below the node's memory (%s)", s.Memory.String()))
		}
		r.AllocatableMemory = quantity.FormatMiB(quantity.FloorRat(left.Quo(left, big.NewRat(quantity.MiB, 1))))
	}
	if s.CPU != nil {
		cpu := quantity.Rat(*s.CPU)
		left := new(big.Rat).Sub(cpu, cpuRes[0])
		left.Sub(left, cpuRes[1])
		if left.Sign() <= 0 {
			return reservations{}, field.Invalid(kp, fmt.Sprintf("systemReservedCpu=%s kubeReservedCpu=%s", r.SystemCPU, r.KubeCPU),
				fmt.Sprintf("system-reserved + kube-reserved CPU must stay below the node's CPU (%s)", s.CPU.String()))
		}
		r.AllocatableCPU = quantity.FormatMillicores(quantity.CeilRat(left.Mul(left, big.NewRat(1000, 1))))
	}
	return r, nil
}

// KubeletExtraArgs returns the kubelet flags of a node group in the seed
// chart's order, as name → value pairs.
func (r reservations) KubeletExtraArgs() [][2]string {
	return [][2]string{
		{"system-reserved", "memory=" + r.SystemMemory + ",cpu=" + r.SystemCPU},
		{"kube-reserved", "memory=" + r.KubeMemory + ",cpu=" + r.KubeCPU},
		{"eviction-hard", "memory.available<" + r.EvictionHard + ",nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%"},
		{"eviction-soft", "memory.available<" + r.EvictionSoft + ",nodefs.available<15%,imagefs.available<20%"},
		{"eviction-soft-grace-period", "memory.available=1m30s,nodefs.available=1m30s,imagefs.available=1m30s"},
		{"eviction-minimum-reclaim", "memory.available=256Mi"},
		{"enforce-node-allocatable", "pods"},
	}
}

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

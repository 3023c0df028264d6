package main

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// NodeGroupPath returns the field path of node group G: spec.nodeGroups[G].
func NodeGroupPath(name string) *field.Path {
	return field.NewPath("spec", "nodeGroups").Key(name)
}

// validatePlatform checks a spec against the platform's bounds (the workers
// input): at most input.maxNodeGroups node groups, each group's
// minReplicas and maxReplicas at most input.maxReplicas, its virt-launcher
// CPU request at least the platform's floor (validatePodCPURequest), the
// wait-for-kubeconfig image from an allowed registry, and spec.storageClass
// and each group's storageClass (the class of its VMs' disks on the
// management cluster, diskStorageClass) one of input.remoteStorageClasses.
// Every rule that needs no input is spec.Validate's (apis/v1alpha1).
func validatePlatform(spec *v1alpha1.KubernetesClusterSpec, names []string, in *inputv1alpha1.WorkersInput) field.ErrorList {
	var errs field.ErrorList
	if err := checkClass(field.NewPath("spec", "storageClass"), spec.StorageClass, in); err != nil {
		errs = append(errs, err)
	}
	if len(spec.NodeGroups) > in.MaxNodeGroups {
		errs = append(errs, field.TooMany(field.NewPath("spec", "nodeGroups"), len(spec.NodeGroups), in.MaxNodeGroups))
	}
	for _, name := range names {
		g := spec.NodeGroups[name]
		p := NodeGroupPath(name)
		for _, r := range []struct {
			field string
			v     int32
		}{{"minReplicas", deref(g.MinReplicas)}, {"maxReplicas", deref(g.MaxReplicas)}} {
			if r.v > in.MaxReplicas {
				errs = append(errs, field.Invalid(p.Child(r.field), r.v, fmt.Sprintf("must be at most %d (the platform's ceiling)", in.MaxReplicas)))
			}
		}
		if err := validatePodCPURequest(p, g, in); err != nil {
			errs = append(errs, err)
		}
		if g.StorageClass != "" {
			if err := checkClass(p.Child("storageClass"), g.StorageClass, in); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if _, err := waitForKubeconfigImage(spec, in); err != nil {
		errs = append(errs, err)
	}
	return append(errs, validateFloors(spec, names, in)...)
}

// checkClass refuses a management class at path that is not one of the
// platform's remote classes, once the platform settings have arrived.
func checkClass(path *field.Path, class string, in *inputv1alpha1.WorkersInput) *field.Error {
	if in.SettingsPending {
		return nil
	}
	return storageclass.Check(path, class, in.RemoteStorageClasses)
}

// validateFloors checks the platform's switches and floors (the input):
// logSerialConsole only when input.allowSerialConsoleLog is on, and no
// health-check or provisioning timeout below input.healthCheckFloors. A
// value spec.Validate refuses is not reported again.
func validateFloors(spec *v1alpha1.KubernetesClusterSpec, names []string, in *inputv1alpha1.WorkersInput) field.ErrorList {
	var errs field.ErrorList
	type check struct {
		path     *field.Path
		v        v1alpha1.Duration
		lo       v1alpha1.Duration
		floor    string
		floorKey string
	}
	f := in.HealthCheckFloors
	hp := field.NewPath("spec", "nodeHealthCheck")
	checks := []check{
		{hp.Child("nodeStartupTimeout"), spec.NodeHealthCheck.NodeStartupTimeout, v1alpha1.MinNodeStartupTimeout, f.NodeStartupTimeout, "nodeStartupTimeout"},
		{hp.Child("readyUnknownTimeout"), spec.NodeHealthCheck.ReadyUnknownTimeout, v1alpha1.MinTimeout, f.ReadyUnknownTimeout, "readyUnknownTimeout"},
		{hp.Child("readyFalseTimeout"), spec.NodeHealthCheck.ReadyFalseTimeout, v1alpha1.MinTimeout, f.ReadyFalseTimeout, "readyFalseTimeout"},
		{field.NewPath("spec", "maxNodeProvisionTime"), spec.MaxNodeProvisionTime, v1alpha1.MinTimeout, f.MaxNodeProvisionTime, "maxNodeProvisionTime"},
	}
	for _, name := range names {
		g := spec.NodeGroups[name]
		p := NodeGroupPath(name)
		if g.LogSerialConsole && !in.AllowSerialConsoleLog {
			errs = append(errs, field.Invalid(p.Child("logSerialConsole"), true,
				"the platform keeps VM console output, which the tenant's node writes, out of the management cluster's logs (input allowSerialConsoleLog is off); remove it"))
		}
		if g.NodeStartupTimeout != "" {
			checks = append(checks, check{p.Child("nodeStartupTimeout"), g.NodeStartupTimeout, v1alpha1.MinNodeStartupTimeout, f.NodeStartupTimeout, "nodeStartupTimeout"})
		}
	}
	for _, c := range checks {
		v, err := c.v.Parse(c.path, c.lo, v1alpha1.MaxTimeout)
		floor, ferr := v1alpha1.Duration(c.floor).Parse(field.NewPath("input", "healthCheckFloors", c.floorKey), v1alpha1.MinTimeout, v1alpha1.MaxTimeout)
		if err != nil || ferr != nil || v >= floor {
			continue
		}
		errs = append(errs, field.Invalid(c.path, string(c.v),
			fmt.Sprintf("must be at least %s (the platform's floor, input healthCheckFloors.%s): a shorter one replaces VMs still booting or briefly unheard", c.floor, c.floorKey)))
	}
	return errs
}

// waitForKubeconfigImage is the wait-for-kubeconfig image the controllers
// run: the tenant's spec.images.waitForKubeconfig, fully qualified, when
// set and from an allowed registry; else the input's.
func waitForKubeconfigImage(spec *v1alpha1.KubernetesClusterSpec, in *inputv1alpha1.WorkersInput) (string, *field.Error) {
	img := spec.Images.WaitForKubeconfig
	if img == "" {
		return in.Images.WaitForKubeconfig, nil
	}
	if len(img) > v1alpha1.MaxImageLength {
		return "", nil // spec.Validate's Too long
	}
	return function.CheckImage(field.NewPath("spec", "images", "waitForKubeconfig"), img, in.AllowedImageRegistries)
}

// validatePodCPURequest checks the virt-launcher CPU request a node group
// sets, podCpuRequest or else podCpuLimit (KubeVirt copies a limit into a
// missing request:
// https://github.com/kubevirt/kubevirt/blob/main/pkg/defaults/defaults.go
// setDefaultResourceRequests), against the platform's floor: the VM's
// vCPUs ÷ input.cpuAllocationRatio, the request KubeVirt gives a pod
// without one; with input.allowPodCpuRequestBelowRatio, input.minPodCpuRequest
// instead. A value that does not parse is spec.Validate's.
func validatePodCPURequest(p *field.Path, g v1alpha1.NodeGroup, in *inputv1alpha1.WorkersInput) *field.Error {
	name, val := "podCpuRequest", g.PodCPURequest
	if !val.IsSet() {
		name, val = "podCpuLimit", g.PodCPULimit
	}
	if !val.IsSet() {
		return nil
	}
	req, err := val.Parse()
	if err != nil || req.Sign() <= 0 {
		return nil
	}
	vcpus, ok := launcherVCPUs(g, Sizing{})
	if !ok {
		return nil // an instance type: spec.Validate refuses pod CPU beside one
	}
	prefix := ""
	if name == "podCpuLimit" {
		prefix = "without podCpuRequest, podCpuLimit is also the pod's CPU request (KubeVirt copies it), which "
	}
	if in.AllowPodCPURequestBelowRatio {
		if req.Cmp(*in.MinPodCPURequest) < 0 {
			return field.Invalid(p.Child(name), string(val), fmt.Sprintf("%smust be at least %s (the platform's minPodCpuRequest)", prefix, in.MinPodCPURequest))
		}
		return nil
	}
	// req ≥ vcpus ÷ ratio, exactly: req × ratio ≥ vcpus.
	scaled := req.DeepCopy()
	scaled.Mul(in.CPUAllocationRatio)
	if scaled.Cmp(*resource.NewQuantity(vcpus, resource.DecimalSI)) < 0 {
		floor := derivedCPURequest(vcpus, in.CPUAllocationRatio)
		return field.Invalid(p.Child(name), string(val), fmt.Sprintf(
			"%smust be at least %s: the VM's %d vCPUs ÷ the platform's cpuAllocationRatio %d, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio",
			prefix, floor.String(), vcpus, in.CPUAllocationRatio))
	}
	return nil
}

// launcherVCPUs is the number of vCPUs of a node group's VM as KubeVirt
// counts them: s's CPUs (resources.cpu, whole cores, or the instance
// type's guest CPUs), resources.cpu when s has none, false for an
// instance type not fetched yet, or, with instanceType "" and no
// resources, KubeVirt's default topology of one core, one thread and as
// many sockets as the CPU limit's, else the CPU request's, whole cores
// rounded up, else one
// (https://github.com/kubevirt/kubevirt/blob/main/pkg/defaults/defaults.go
// SetDefaultGuestCPUTopology).
func launcherVCPUs(g v1alpha1.NodeGroup, s Sizing) (int64, bool) {
	switch {
	case s.CPU != nil:
		return s.CPU.Value(), true
	case explicit(g):
		cpu, err := g.Resources.CPU.Parse()
		if err != nil {
			return 0, false
		}
		return cpu.Value(), true
	case usesInstancetype(g):
		return 0, false
	}
	for _, v := range []v1alpha1.Quantity{g.PodCPULimit, g.PodCPURequest} {
		if q, err := v.Parse(); v.IsSet() && err == nil && q.Sign() > 0 {
			return q.Value(), true
		}
	}
	return 1, true
}

// derivedCPURequest is vcpus ÷ ratio rounded up to whole millicores: the
// CPU request KubeVirt gives a virt-launcher pod without one (it writes
// the exact quotient, which this bounds from above).
func derivedCPURequest(vcpus, ratio int64) resource.Quantity {
	return *resource.NewMilliQuantity((vcpus*1000+ratio-1)/ratio, resource.DecimalSI)
}

// usesInstancetype reports whether a node group is sized by an instance
// type: it names one and does not set both resources.cpu and
// resources.memory. With instanceType "" and no resources, the VM has no
// instancetype and its size is unknown.
func usesInstancetype(g v1alpha1.NodeGroup) bool {
	return !explicit(g) && g.InstanceTypeName() != ""
}

// explicit reports whether a node group sets both resources.cpu and
// resources.memory (its VM then has no instancetype).
func explicit(g v1alpha1.NodeGroup) bool {
	return g.Resources.CPU.IsSet() && g.Resources.Memory.IsSet()
}

// ExplicitSizing is the sizing of a group that sets both resources.cpu and
// resources.memory. It returns an error when either does not parse (checked
// by spec.Validate first).
func ExplicitSizing(g v1alpha1.NodeGroup) (Sizing, error) {
	cpu, err := g.Resources.CPU.Parse()
	if err != nil {
		return Sizing{}, err
	}
	mem, err := g.Resources.Memory.Parse()
	if err != nil {
		return Sizing{}, err
	}
	return Sizing{CPU: &cpu, Memory: &mem, Explicit: true}, nil
}

// InstancetypeSizing is the sizing given by an instance type's guest CPU
// count and guest memory; a zero value is unknown.
func InstancetypeSizing(guestCPUs uint32, guestMemory *resource.Quantity) Sizing {
	var s Sizing
	if guestCPUs > 0 {
		s.CPU = resource.NewQuantity(int64(guestCPUs), resource.DecimalSI)
	}
	if guestMemory != nil && guestMemory.Sign() > 0 {
		m := guestMemory.DeepCopy()
		s.Memory = &m
	}
	return s
}

// asFieldError returns err as a *field.Error, wrapping any other error as an
// internal error at path (never panics on an unexpected error type).
func asFieldError(err error, path *field.Path) *field.Error {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe
	}
	return field.InternalError(path, err)
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

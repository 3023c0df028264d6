package main

import (
	"errors"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// MaxNodeGroupNameLength is the longest node-group name G accepted, so that
// every name derived from N-G stays a DNS label (docs/spec.md §2, XRD rule).
const MaxNodeGroupNameLength = 16

// rolePattern is a node role (XRD items pattern): the name part of the
// label node-role.kubernetes.io/<role>.
var rolePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// NodeGroupPath returns the field path of node group G: spec.nodeGroups[G].
func NodeGroupPath(name string) *field.Path {
	return field.NewPath("spec", "nodeGroups").Key(name)
}

// ValidateNodeGroup re-checks every admission rule of the XRD for one
// defaulted node group (render and objects created before a rule existed
// skip admission; docs/spec.md §6): DNS-1123 name of at most 16 characters, role
// names, minReplicas <= maxReplicas (both >= 0), resources.cpu and
// resources.memory both or neither and each a positive quantity (cpu in
// millicores or decimal cores), diskSize a positive quantity, the removed
// ephemeralStorage, GPU names and the instanceType's form when it is used.
// Bounds: maxReplicas (and minReplicas) at most maxReplicas (the input's
// ceiling), at most 16 roles and GPUs, names at most 253 characters,
// resources.cpu at most 256 cores, resources.memory 4Ti, diskSize 64Ti.
// It returns every violation, each naming the field and the value.
func ValidateNodeGroup(name string, g v1alpha1.NodeGroup, maxReplicas int32) field.ErrorList {
	p := NodeGroupPath(name)
	var errs field.ErrorList
	if err := function.ValidateDNSLabel(p, name, MaxNodeGroupNameLength); err != nil {
		errs = append(errs, asFieldError(err, p))
	}
	if g.EphemeralStorage != nil {
		errs = append(errs, field.Invalid(p.Child("ephemeralStorage"), string(*g.EphemeralStorage),
			"ephemeralStorage was renamed to diskSize (persistent disk for kubelet and containerd data): set diskSize instead"))
	}
	if len(g.Roles) > v1alpha1.MaxRoles {
		errs = append(errs, field.TooMany(p.Child("roles"), len(g.Roles), v1alpha1.MaxRoles))
	}
	if len(g.GPUs) > v1alpha1.MaxGPUs {
		errs = append(errs, field.TooMany(p.Child("gpus"), len(g.GPUs), v1alpha1.MaxGPUs))
	}
	for i, role := range g.Roles {
		rp := p.Child("roles").Index(i)
		if len(role) > 63 {
			errs = append(errs, function.TooLong(rp, role, 63))
			continue
		}
		if !rolePattern.MatchString(role) {
			errs = append(errs, field.Invalid(rp, role, "must be a label name part: lower-case alphanumerics, '-' and '.', starting and ending alphanumeric"))
		}
	}
	minR, maxR := deref(g.MinReplicas), deref(g.MaxReplicas)
	if minR < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), minR, "must be >= 0"))
	}
	if maxR < 0 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), maxR, "must be >= 0"))
	}
	if maxR > maxReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), maxR, fmt.Sprintf("must be at most %d (the platform's ceiling)", maxReplicas)))
	}
	if minR > maxReplicas {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), minR, fmt.Sprintf("must be at most %d (the platform's ceiling)", maxReplicas)))
	}
	if minR > maxR {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), minR, fmt.Sprintf("must be less than or equal to maxReplicas (%d)", maxR)))
	}
	rp := p.Child("resources")
	switch {
	case g.Resources.CPU.IsSet() && !g.Resources.Memory.IsSet():
		errs = append(errs, field.Required(rp.Child("memory"),
			fmt.Sprintf("resources.cpu is set (%q): set resources.cpu and resources.memory together or neither", g.Resources.CPU)))
	case g.Resources.Memory.IsSet() && !g.Resources.CPU.IsSet():
		errs = append(errs, field.Required(rp.Child("cpu"),
			fmt.Sprintf("resources.memory is set (%q): set resources.cpu and resources.memory together or neither", g.Resources.Memory)))
	}
	if g.Resources.CPU.IsSet() {
		if !cpuPattern.MatchString(string(g.Resources.CPU)) {
			errs = append(errs, field.Invalid(rp.Child("cpu"), string(g.Resources.CPU), "must be whole millicores such as 4000m or decimal cores such as 4"))
		} else if q, err := function.ParseBoundedQuantity(rp.Child("cpu"), string(g.Resources.CPU), v1alpha1.MaxNodeCPU); err != nil {
			errs = append(errs, asFieldError(err, p))
		} else if _, err := wholeCores(q); err != nil && g.Resources.Memory.IsSet() {
			errs = append(errs, field.Invalid(rp.Child("cpu"), string(g.Resources.CPU), "a VM gets whole cores: must be a whole number of cores such as 4 or 4000m"))
		}
	}
	if g.Resources.Memory.IsSet() {
		if _, err := function.ParseBoundedQuantity(rp.Child("memory"), string(g.Resources.Memory), v1alpha1.MaxNodeMemory); err != nil {
			errs = append(errs, asFieldError(err, p))
		}
	}
	if _, err := function.ParseBoundedQuantity(p.Child("diskSize"), string(g.DiskSize), v1alpha1.MaxDiskSize); err != nil {
		errs = append(errs, asFieldError(err, p))
	}
	if g.StorageClass != "" {
		if len(g.StorageClass) > v1alpha1.MaxNameLength {
			errs = append(errs, function.TooLong(p.Child("storageClass"), g.StorageClass, v1alpha1.MaxNameLength))
		} else if msgs := validation.IsDNS1123Subdomain(g.StorageClass); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("storageClass"), g.StorageClass, msgs[0]))
		}
	}
	for i, gpu := range g.GPUs {
		switch {
		case gpu.Name == "":
			errs = append(errs, field.Required(p.Child("gpus").Index(i).Child("name"), "a GPU needs a device name such as nvidia.com/AD102GL_L40S"))
		case len(gpu.Name) > v1alpha1.MaxNameLength:
			errs = append(errs, function.TooLong(p.Child("gpus").Index(i).Child("name"), gpu.Name, v1alpha1.MaxNameLength))
		}
	}
	if usesInstancetype(g) {
		if msgs := validation.IsDNS1123Subdomain(g.InstanceTypeName()); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("instanceType"), g.InstanceTypeName(), msgs[0]))
		}
	}
	return errs
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
// by ValidateNodeGroup first).
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

package main

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// nodeGroupStatus is status.nodeGroups[G] of the XR.
type nodeGroupStatus = v1alpha1.NodeGroupStatus

// observedMD is what the function reads of an observed MachineDeployment
// (CAPI v1beta2 field paths in the comments).
type observedMD struct {
	Version           string // spec.template.spec.version
	InfrastructureRef string // spec.template.spec.infrastructureRef.name
	CapacityCPU       string // metadata.annotations[capacity.../cpu]
	CapacityMemory    string // metadata.annotations[capacity.../memory]
	Generation        int64  // metadata.generation
	ObservedGen       int64  // status.observedGeneration
	Replicas          int32  // status.replicas
	ReadyReplicas     int32  // status.readyReplicas
}

// observedMachineDeployment reads G's observed MachineDeployment field by
// field from the request (no JSON decoding of the whole object, which
// carries managedFields). It reports false when there is none.
func observedMachineDeployment(req *fnv1.RunFunctionRequest, g string) (observedMD, bool) {
	name := machineDeploymentResourceName(g)
	if !function.ObservedExists(req, name) {
		return observedMD{}, false
	}
	str := func(p ...string) string { return function.ObservedString(req, name, p...) }
	num := func(p ...string) int64 { return int64(function.ObservedNumber(req, name, p...)) }
	return observedMD{
		Version:           str("spec", "template", "spec", "version"),
		InfrastructureRef: str("spec", "template", "spec", "infrastructureRef", "name"),
		CapacityCPU:       str("metadata", "annotations", annotationCapacityCPU),
		CapacityMemory:    str("metadata", "annotations", annotationCapacityMemory),
		Generation:        num("metadata", "generation"),
		ObservedGen:       num("status", "observedGeneration"),
		Replicas:          int32(num("status", "replicas")),
		ReadyReplicas:     int32(num("status", "readyReplicas")),
	}, true
}

// ready reports whether the MachineDeployment is observed at its current
// generation with at least minReplicas ready machines.
func (md observedMD) ready(minReplicas int32) bool {
	return md.ObservedGen >= md.Generation && md.ReadyReplicas >= minReplicas
}

// observedControlPlaneVersion returns status.version of the observed
// KamajiControlPlane (composed by the control-plane step; the first by
// composed-resource name if there were several), and whether one was
// observed.
func observedControlPlaneVersion(req *fnv1.RunFunctionRequest) (string, bool) {
	// Found without sorting every name, reading two fields of each object.
	found, firstName := false, ""
	for name := range function.ObservedNames(req) {
		if (!found || name < firstName) &&
			function.ObservedString(req, name, "kind") == "KamajiControlPlane" &&
			strings.HasPrefix(function.ObservedString(req, name, "apiVersion"), "controlplane.cluster.x-k8s.io/") {
			found, firstName = true, name
		}
	}
	if !found {
		return "", false
	}
	return function.ObservedString(req, firstName, "status", "version"), true
}

// workerVersion is the patch version G's machines run (issue 5: the
// control plane is upgraded first). A new group, or one already at target,
// gets target; a group observed at another version moves to target only
// once the observed control plane reports target, and otherwise stays at its
// observed version.
func workerVersion(req *fnv1.RunFunctionRequest, g, target, cpVersion string, cpObserved bool) string {
	md, ok := observedMachineDeployment(req, g)
	if !ok || md.Version == "" || md.Version == target {
		return target
	}
	if cpObserved && normalizeVersion(cpVersion) == normalizeVersion(target) {
		return target
	}
	return md.Version
}

func normalizeVersion(v string) string { return "v" + strings.TrimPrefix(v, "v") }

// referencedMachineTemplates returns the names of the machine templates the
// MachineSets of cluster N in NS refer to (spec.template.spec
// .infrastructureRef.name of kind KubevirtMachineTemplate), and whether the
// MachineSets requirement has been answered. A MachineSet of another
// namespace or cluster (spec.clusterName) is ignored. It reads those fields
// of each MachineSet from the request, without decoding the rest (status,
// managedFields). It returns an error when the name is there but not a
// string.
func referencedMachineTemplates(req *fnv1.RunFunctionRequest, id function.Identity) (map[string]bool, bool, error) {
	required, arrived := req.GetRequiredResources()[requirementMachineSets]
	if !arrived {
		return nil, false, nil
	}
	out := map[string]bool{}
	for _, it := range required.GetItems() {
		ms := it.GetResource()
		if function.ValueAt(ms, "metadata", "namespace").GetStringValue() != id.Namespace ||
			function.ValueAt(ms, "spec", "clusterName").GetStringValue() != id.Name {
			continue
		}
		if k := function.ValueAt(ms, "spec", "template", "spec", "infrastructureRef", "kind").GetStringValue(); k != "" && k != machineTemplateKind {
			continue
		}
		ref := function.ValueAt(ms, "spec", "template", "spec", "infrastructureRef", "name")
		if _, isString := ref.GetKind().(*structpb.Value_StringValue); ref != nil && !isString {
			name := function.ValueAt(ms, "metadata", "name").GetStringValue()
			return nil, true, fmt.Errorf("cannot read MachineSet %s: spec.template.spec.infrastructureRef.name is not a string", name)
		}
		if n := ref.GetStringValue(); n != "" {
			out[n] = true
		}
	}
	return out, true, nil
}

const machineTemplateKind = "KubevirtMachineTemplate"

// keepReferencedTemplates keeps every observed KubevirtMachineTemplate in
// NS that is not in the desired state yet, whatever its composed-resource
// name (one observed under a name of an older release, or of a node group
// that left the spec), while a MachineSet of the cluster refers to it by
// object name, and all of them while the MachineSets have not been fetched.
func keepReferencedTemplates(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, id function.Identity, referenced map[string]bool, msArrived bool) {
	for _, name := range slices.Sorted(function.ObservedNames(req)) {
		if _, ok := rsp.GetDesired().GetResources()[name]; ok {
			continue
		}
		if function.ObservedString(req, name, "kind") != machineTemplateKind ||
			!strings.HasPrefix(function.ObservedString(req, name, "apiVersion"), "infrastructure.cluster.x-k8s.io/") ||
			function.ObservedString(req, name, "metadata", "namespace") != id.Namespace {
			continue
		}
		if msArrived && !referenced[function.ObservedString(req, name, "metadata", "name")] {
			continue
		}
		if function.KeepObserved(req, rsp, name) {
			rsp.Desired.Resources[name].Ready = fnv1.Ready_READY_TRUE
		}
	}
}

// keepObservedGroup copies every observed composed resource of node group
// g (its bootstrap template, MachineDeployment, health check and the
// observed machine templates templates) into the desired state unchanged.
// It returns how many it kept.
func keepObservedGroup(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, g string, templates []string) int {
	kept := 0
	for _, name := range append([]string{bootstrapResourceName(g), healthCheckResourceName(g)}, templates...) {
		if function.KeepObserved(req, rsp, name) {
			kept++
		}
	}
	// cluster-autoscaler owns the replicas (docs/spec.md §5.2): never write them.
	if function.KeepObserved(req, rsp, machineDeploymentResourceName(g), "spec.replicas") {
		kept++
	}
	return kept
}

// keepOldTemplates keeps each observed machine template of g (templates,
// sorted composed-resource names) other than current while a MachineSet of the cluster (or the observed
// MachineDeployment) still refers to it, and all of them while the
// MachineSets have not been fetched yet. The others leave the desired state
// and Crossplane deletes them.
func keepOldTemplates(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, current string, templates []string, referenced map[string]bool, msArrived bool, g string) {
	// In use: referenced by a MachineSet or by the observed
	// MachineDeployment (looked up, not copied: a copy per group made the
	// cost of all groups grow with the square of their number).
	mdRef, mdObserved := "", false
	if md, ok := observedMachineDeployment(req, g); ok {
		mdRef, mdObserved = md.InfrastructureRef, true
	}
	inUse := func(objName string) bool { return referenced[objName] || mdObserved && objName == mdRef }
	for _, name := range templates {
		if name == current {
			continue
		}
		objName := function.ObservedString(req, name, "metadata", "name")
		if !msArrived || inUse(objName) {
			function.KeepObserved(req, rsp, name)
			if r := rsp.Desired.Resources[name]; r != nil {
				r.Ready = fnv1.Ready_READY_TRUE
			}
		}
	}
}

// observedGroupStatus returns status.nodeGroups[G] from G's observed
// MachineDeployment and the computed reservations (or, when those are
// unknown, the observed capacity annotations), and whether the group is
// ready: its MachineDeployment observed at its current generation with at
// least minReplicas ready machines.
func observedGroupStatus(req *fnv1.RunFunctionRequest, g string, ng v1alpha1.NodeGroup, res reservations) (nodeGroupStatus, bool) {
	st := nodeGroupStatus{Allocatable: v1alpha1.Allocatable{CPU: res.AllocatableCPU, Memory: res.AllocatableMemory}}
	md, ok := observedMachineDeployment(req, g)
	if !ok {
		return st, false
	}
	if st.Allocatable.CPU == "" && st.Allocatable.Memory == "" {
		st.Allocatable = v1alpha1.Allocatable{CPU: md.CapacityCPU, Memory: md.CapacityMemory}
	}
	st.Replicas = md.Replicas
	st.ReadyReplicas = md.ReadyReplicas
	return st, md.ready(deref(ng.MinReplicas))
}

// machineDeploymentReady is READY_TRUE when node group g's observed
// MachineDeployment has at least minReplicas ready machines at its current
// generation.
func machineDeploymentReady(req *fnv1.RunFunctionRequest, g string, minReplicas int32) fnv1.Ready {
	md, ok := observedMachineDeployment(req, g)
	return function.ReadyIf(ok && md.ready(minReplicas))
}

// deploymentReady is READY_TRUE when the observed Deployment called name
// reports Available=True.
func deploymentReady(req *fnv1.RunFunctionRequest, name string) fnv1.Ready {
	return function.ReadyWhenConditionTrue(req, name, "Available")
}

// existsReady is READY_TRUE once the composed resource called name exists.
func existsReady(req *fnv1.RunFunctionRequest, name string) fnv1.Ready {
	return function.ReadyWhenObserved(req, name)
}

// writeStatus merges status.nodeGroups and status.nodes ("<ready>/<total>"
// machines over all groups) into the desired XR.
func writeStatus(rsp *fnv1.RunFunctionResponse, groups map[string]nodeGroupStatus) error {
	var ready, total int32
	for _, st := range groups {
		ready += st.ReadyReplicas
		total += st.Replicas
	}
	nodeGroups, err := function.ToValue(groups) // the statuses as JSON writes them
	if err != nil {
		return err
	}
	return function.SetCompositeStatus(rsp, map[string]any{
		"nodeGroups": nodeGroups,
		"nodes":      fmt.Sprintf("%d/%d", ready, total),
	})
}

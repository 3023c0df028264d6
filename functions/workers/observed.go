package main

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

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
// field (no decoding of the whole object, which carries managedFields). It
// reports false when there is none.
func observedMachineDeployment(r *function.Request, g string) (observedMD, bool) {
	name := machineDeploymentResourceName(g)
	if !r.ObservedExists(name) {
		return observedMD{}, false
	}
	str := func(p ...string) string { return r.ObservedString(name, p...) }
	num := func(p ...string) int64 { return int64(r.ObservedNumber(name, p...)) }
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
func observedControlPlaneVersion(r *function.Request) (string, bool) {
	// Found without sorting every name, reading two fields of each object.
	found, firstName := false, ""
	for name := range r.ObservedNames() {
		if (!found || name < firstName) &&
			r.ObservedString(name, "kind") == "KamajiControlPlane" &&
			strings.HasPrefix(r.ObservedString(name, "apiVersion"), "controlplane.cluster.x-k8s.io/") {
			found, firstName = true, name
		}
	}
	if !found {
		return "", false
	}
	return r.ObservedString(firstName, "status", "version"), true
}

// workerVersion is the patch version G's machines run (the control plane
// is upgraded first). A new group, or one already at target,
// gets target; a group observed at another version moves to target only
// once the observed control plane reports target, and otherwise stays at its
// observed version.
func workerVersion(r *function.Request, g, target, cpVersion string, cpObserved bool) string {
	md, ok := observedMachineDeployment(r, g)
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
// namespace or cluster (spec.clusterName) is ignored. It returns an error
// when a MachineSet does not decode.
func referencedMachineTemplates(r *function.Request, id function.Identity) (map[string]bool, bool, error) {
	sets, arrived, err := function.Required[capiObject](r, requirementMachineSets)
	if !arrived || err != nil {
		return nil, arrived, err
	}
	out := map[string]bool{}
	for _, ms := range sets {
		if ms.Metadata.Namespace != id.Namespace || ms.Spec.ClusterName != id.Name {
			continue
		}
		ref := ms.Spec.Template.Spec.InfrastructureRef
		if ref.Kind != "" && ref.Kind != machineTemplateKind {
			continue
		}
		if ref.Name != "" {
			out[ref.Name] = true
		}
	}
	return out, true, nil
}

const machineTemplateKind = "KubevirtMachineTemplate"

// keepReferencedTemplates keeps every observed KubevirtMachineTemplate in
// NS that is not in the desired state yet (of an earlier step, or of p),
// whatever its composed-resource name (one observed under a name of an
// older release, or of a node group that left the spec), while a
// MachineSet of the cluster refers to it by object name, and all of them
// while the MachineSets have not been fetched.
func keepReferencedTemplates(p *function.Plan, r *function.Request, id function.Identity, referenced map[string]bool, msArrived bool) {
	inPlan := map[string]bool{}
	for _, c := range p.Composed {
		inPlan[c.Name] = true
	}
	for _, k := range p.Kept {
		inPlan[k.Name] = true
	}
	for _, name := range slices.Sorted(r.ObservedNames()) {
		if inPlan[name] || r.DesiredExists(name) {
			continue
		}
		if r.ObservedString(name, "kind") != machineTemplateKind ||
			!strings.HasPrefix(r.ObservedString(name, "apiVersion"), "infrastructure.cluster.x-k8s.io/") ||
			r.ObservedString(name, "metadata", "namespace") != id.Namespace {
			continue
		}
		if msArrived && !referenced[r.ObservedString(name, "metadata", "name")] {
			continue
		}
		p.Kept = append(p.Kept, function.Kept{Name: name, Ready: fnv1.Ready_READY_TRUE})
	}
}

// keepObservedGroup keeps every observed composed resource of node group
// g (its bootstrap template, MachineDeployment, health check and the
// observed machine templates templates) unchanged. It returns how many it
// kept.
func keepObservedGroup(p *function.Plan, r *function.Request, g string, templates []string) int {
	kept := 0
	keep := func(k function.Kept) {
		if r.ObservedExists(k.Name) {
			p.Kept = append(p.Kept, k)
			kept++
		}
	}
	for _, name := range append([]string{bootstrapResourceName(g), talosBootstrapResourceName(g), healthCheckResourceName(g)}, templates...) {
		keep(function.Kept{Name: name})
	}
	// cluster-autoscaler owns the replicas: never write them.
	keep(function.Kept{Name: machineDeploymentResourceName(g), Omit: []string{"spec.replicas"}})
	return kept
}

// keepOldTemplates keeps each observed machine template of g (templates,
// sorted composed-resource names) other than current while a MachineSet
// of the cluster (or the observed MachineDeployment) still refers to it,
// and all of them while the MachineSets have not been fetched yet. The
// others leave the desired state and Crossplane deletes them.
func keepOldTemplates(p *function.Plan, r *function.Request, current string, templates []string, referenced map[string]bool, msArrived bool, g string) {
	// In use: referenced by a MachineSet or by the observed
	// MachineDeployment (looked up, not copied: a copy per group made the
	// cost of all groups grow with the square of their number).
	mdRef, mdObserved := "", false
	if md, ok := observedMachineDeployment(r, g); ok {
		mdRef, mdObserved = md.InfrastructureRef, true
	}
	inUse := func(objName string) bool { return referenced[objName] || mdObserved && objName == mdRef }
	for _, name := range templates {
		if name == current {
			continue
		}
		if !msArrived || inUse(r.ObservedString(name, "metadata", "name")) {
			p.Kept = append(p.Kept, function.Kept{Name: name, Ready: fnv1.Ready_READY_TRUE})
		}
	}
}

// observedGroupStatus returns status.nodeGroups[G] from G's observed
// MachineDeployment and the computed reservations (or, when those are
// unknown, the observed capacity annotations), and why the group is not
// ready (whyNotReady), "" when it is: its MachineDeployment observed at
// its current generation with at least minReplicas ready machines.
func observedGroupStatus(r *function.Request, g string, ng v1alpha1.NodeGroup, res reservations) (v1alpha1.NodeGroupStatus, string) {
	st := v1alpha1.NodeGroupStatus{Allocatable: v1alpha1.Allocatable{CPU: res.AllocatableCPU, Memory: res.AllocatableMemory}}
	md, ok := observedMachineDeployment(r, g)
	if !ok {
		return st, whyNotReady(g, md, false, deref(ng.MinReplicas))
	}
	if st.Allocatable.CPU == "" && st.Allocatable.Memory == "" {
		st.Allocatable = v1alpha1.Allocatable{CPU: md.CapacityCPU, Memory: md.CapacityMemory}
	}
	st.Replicas = md.Replicas
	st.ReadyReplicas = md.ReadyReplicas
	return st, whyNotReady(g, md, true, deref(ng.MinReplicas))
}

// whyNotReady says why node group g is not ready, by what is observed of its
// MachineDeployment md (observed: whether there is one), or "" when it is
// ready (md.ready). A group whose minReplicas is 0 waits for no machine.
func whyNotReady(g string, md observedMD, observed bool, minReplicas int32) string {
	switch {
	case observed && md.ready(minReplicas):
		return ""
	case !observed && minReplicas == 0:
		return g + ": MachineDeployment not created yet (0 machines until it scales from zero on demand)"
	case !observed:
		return g + ": MachineDeployment not created yet"
	case md.ObservedGen < md.Generation:
		return fmt.Sprintf("%s: MachineDeployment generation %d not observed yet (observed %d)", g, md.Generation, md.ObservedGen)
	default:
		return fmt.Sprintf("%s: %d of minReplicas %d machines ready", g, md.ReadyReplicas, minReplicas)
	}
}

// machineDeploymentReady is ready when node group g's observed
// MachineDeployment has at least minReplicas ready machines at its current
// generation.
func machineDeploymentReady(g string, minReplicas int32) function.Readiness {
	return func(r *function.Request, _ string) fnv1.Ready {
		md, ok := observedMachineDeployment(r, g)
		return function.ReadyIf(ok && md.ready(minReplicas))
	}
}

// deploymentReady: a Deployment is ready when it reports Available=True.
var deploymentReady = function.ReadyOnCondition("Available")

// nodesStatus is status.nodes: "<ready>/<total>" machines over all groups.
func nodesStatus(groups map[string]v1alpha1.NodeGroupStatus) string {
	var ready, total int32
	for _, st := range groups {
		ready += st.ReadyReplicas
		total += st.Replicas
	}
	return fmt.Sprintf("%d/%d", ready, total)
}

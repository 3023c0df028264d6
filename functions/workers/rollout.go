package main

import (
	"cmp"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// Node group rollout and kubelet versions in status.nodeGroups
// (docs/tenant-guide.md, Status).

// requirementMachines is the required-resource key of the Machines of
// cluster N in NS (not composed: CAPI's MachineSets create them).
const requirementMachines = "machines"

// maxObservedMachines is the most Machines the function asks Crossplane
// for: a cluster whose node groups may hold more (twice the sum of
// maxReplicas, as a roll surges by maxReplicas) reports no kubelet
// versions, so that a request stays far under gRPC's 4 MiB (a Machine
// with managedFields is a few KiB).
const maxObservedMachines = 200

// unknownKubeletVersion stands for a kubeletVersion that is not
// vMAJOR.MINOR.PATCH (the node, inside the tenant's VM, reports it).
const unknownKubeletVersion = "unknown"

// machinesSelector selects the Machines of cluster N in NS.
func machinesSelector(id function.Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: clusterv1.GroupVersion.String(),
		Kind:       "Machine",
		Namespace:  ptr(id.Namespace),
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{function.LabelCAPICluster: id.Name},
		}},
	}
}

// requireStatusInputs asks for the ResourceQuotas of NS (capacity
// pre-flight) and, when the cluster cannot hold more than
// maxObservedMachines, for its Machines.
func requireStatusInputs(p *function.Plan, id function.Identity, spec *v1alpha1.KubernetesClusterSpec) {
	p.Require(requirementResourceQuotas, resourceQuotaSelector(id))
	if machinesBounded(spec) {
		p.Require(requirementMachines, machinesSelector(id))
	}
}

// machinesBounded reports whether twice the sum of the node groups'
// maxReplicas is at most maxObservedMachines.
func machinesBounded(spec *v1alpha1.KubernetesClusterSpec) bool {
	var most int64
	for _, ng := range spec.NodeGroups {
		most += 2 * int64(deref(ng.MaxReplicas))
	}
	return most <= maxObservedMachines
}

// capiObject is what the function reads of a MachineSet or Machine.
type capiObject struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ClusterName string `json:"clusterName"`
		Template    struct {
			Spec struct {
				InfrastructureRef struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"infrastructureRef"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas *int32 `json:"replicas"`
		NodeInfo *struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// ofGroup reports whether o belongs to node group g of cluster N in NS:
// its namespace, spec.clusterName and deployment-name label N-G.
func (o *capiObject) ofGroup(id function.Identity, g string) bool {
	return o.Metadata.Namespace == id.Namespace && o.Spec.ClusterName == id.Name &&
		o.Metadata.Labels[labelDeploymentName] == id.Prefixed(g)
}

// addRolloutStatus adds to each group's status (in place) the roll in
// progress, from the observed MachineDeployment and the MachineSets, and
// the kubelet versions of its Machines. Nothing is added for what has not
// arrived.
func addRolloutStatus(r *function.Request, id function.Identity, status map[string]v1alpha1.NodeGroupStatus) *field.Error {
	sets, setsArrived, err := function.Required[capiObject](r, requirementMachineSets)
	if err != nil {
		return field.InternalError(field.NewPath("requirements", requirementMachineSets), err)
	}
	machines, machinesArrived, err := function.Required[capiObject](r, requirementMachines)
	if err != nil {
		return field.InternalError(field.NewPath("requirements", requirementMachines), err)
	}
	for _, g := range sortedKeys(status) {
		st := status[g]
		if setsArrived {
			st.Rollout = groupRollout(r, id, g, sets)
		}
		if machinesArrived {
			st.KubeletVersions = kubeletVersions(id, g, machines)
		}
		status[g] = st
	}
	return nil
}

// isTemplateName reports whether name is a KubevirtMachineTemplate name
// of group g: N-G-<templateHashLength lower-case hex>. Only such names
// reach status.nodeGroups.<g>.rollout.
func isTemplateName(id function.Identity, g, name string) bool {
	hash, ok := strings.CutPrefix(name, id.Prefixed(g)+"-")
	if !ok || len(hash) != templateHashLength {
		return false
	}
	for _, c := range hash {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// groupRollout is g's roll in progress: the machine templates of g's
// MachineSets that still have machines (status.replicas > 0) and are not
// the one the observed MachineDeployment refers to, rolled to that one;
// nil when there is none or no MachineDeployment is observed.
func groupRollout(r *function.Request, id function.Identity, g string, sets []*capiObject) *v1alpha1.NodeGroupRollout {
	md, ok := observedMachineDeployment(r, g)
	if !ok || !isTemplateName(id, g, md.InfrastructureRef) {
		return nil
	}
	var from []string
	for _, ms := range sets {
		ref := ms.Spec.Template.Spec.InfrastructureRef
		if !ms.ofGroup(id, g) || ref.Kind != machineTemplateKind || ref.Name == md.InfrastructureRef || !isTemplateName(id, g, ref.Name) ||
			ms.Status.Replicas == nil || *ms.Status.Replicas <= 0 {
			continue
		}
		from = append(from, ref.Name)
	}
	if len(from) == 0 {
		return nil
	}
	slices.Sort(from)
	name := machineDeploymentResourceName(g)
	return &v1alpha1.NodeGroupRollout{
		From:             slices.Compact(from),
		To:               md.InfrastructureRef,
		UpToDateReplicas: int32(r.ObservedNumber(name, "status", "upToDateReplicas")),
		Replicas:         md.Replicas,
	}
}

// kubeletVersions counts g's Machines by status.nodeInfo.kubeletVersion
// (machines without one are not counted), sorted by version (semantic
// versions in order, then anything else by text).
func kubeletVersions(id function.Identity, g string, machines []*capiObject) []v1alpha1.KubeletVersionCount {
	counts := map[string]int32{}
	for _, m := range machines {
		if !m.ofGroup(id, g) || m.Status.NodeInfo == nil || m.Status.NodeInfo.KubeletVersion == "" {
			continue
		}
		counts[kubeletVersionOf(m.Status.NodeInfo.KubeletVersion)]++
	}
	out := make([]v1alpha1.KubeletVersionCount, 0, len(counts))
	for v, n := range counts {
		out = append(out, v1alpha1.KubeletVersionCount{Version: v, Machines: n})
	}
	slices.SortFunc(out, func(a, b v1alpha1.KubeletVersionCount) int { return compareVersions(a.Version, b.Version) })
	if len(out) == 0 {
		return nil
	}
	return out
}

// kubeletVersionOf is v re-printed from its parse when it is exactly
// vMAJOR.MINOR.PATCH, each number at most maxVersionNumber without leading
// zeros; unknownKubeletVersion otherwise (pre-release or build metadata
// included): the tenant's kubelet writes the Node's status, so no text of
// its own reaches the XR.
func kubeletVersionOf(v string) string {
	if out, ok := versions.ParsePatchVersion(v); ok {
		return out
	}
	return unknownKubeletVersion
}

// compareVersions orders parseable versions semantically (v1.34.10 after
// v1.34.4), before anything else, which is ordered by text.
func compareVersions(a, b string) int {
	va, errA := utilversion.ParseGeneric(a)
	vb, errB := utilversion.ParseGeneric(b)
	switch {
	case errA == nil && errB == nil:
		switch {
		case va.LessThan(vb):
			return -1
		case vb.LessThan(va):
			return 1
		}
		return cmp.Compare(a, b)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

package main

import (
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Required-resource keys (Crossplane v2 rsp.requirements.resources).
const (
	// requirementMachineSets is the MachineSets of cluster N in NS.
	requirementMachineSets = "machinesets"
	// requirementInstancetypePrefix prefixes an instance type's name to
	// give its requirement key.
	requirementInstancetypePrefix = "instancetype-"
	// requirementInstancetypes is every VirtualMachineClusterInstancetype,
	// asked for only while a node group names one that does not exist.
	requirementInstancetypes = "instancetypes"
)

// managementPrefix starts the composed-resource names of the objects a
// claim's controllers run with in its management namespace (Deployments,
// ServiceAccounts, cloud-config): Crossplane keeps the namespace of an
// observed composed resource, so an object moved out of NS needs a name of
// its own; the one in NS is then deleted.
const managementPrefix = "management-"

// Composed-resource names of the once-per-cluster objects.
const (
	// nameAutoscalerServiceAccount is cluster-autoscaler's ServiceAccount N-cluster-autoscaler.
	nameAutoscalerServiceAccount = "cluster-autoscaler-serviceaccount"
	// nameAutoscalerRoleBinding is cluster-autoscaler's RoleBinding.
	nameAutoscalerRoleBinding = "cluster-autoscaler-rolebinding"
	// nameAutoscalerDeployment is the Deployment N-cluster-autoscaler.
	nameAutoscalerDeployment = "cluster-autoscaler-deployment"
	// nameCCMServiceAccount is the KubeVirt CCM's ServiceAccount N-kccm.
	nameCCMServiceAccount = "kccm-serviceaccount"
	// nameCCMRoleBinding is the KubeVirt CCM's RoleBinding.
	nameCCMRoleBinding = "kccm-rolebinding"
	// nameCCMCloudConfig is the ConfigMap N-kccm-cloud-config.
	nameCCMCloudConfig = "kccm-cloud-config"
	// nameCCMDeployment is the Deployment N-kccm.
	nameCCMDeployment = "kccm-deployment"
	// nameCSIServiceAccount is the KubeVirt CSI controller's infra ServiceAccount N-kcsi-controller.
	nameCSIServiceAccount = "kcsi-serviceaccount"
	// nameCSIRoleBinding is the KubeVirt CSI controller's RoleBinding.
	nameCSIRoleBinding = "kcsi-rolebinding"
	// nameCSIDeployment is the Deployment N-kcsi-controller.
	nameCSIDeployment = "kcsi-controller-deployment"
	// nameCSIClusterRoleBinding is the CSI controller's ClusterRoleBinding
	// tenantkube:kcsi-controller:<NS>.<N> (PersistentVolumes, read only).
	nameCSIClusterRoleBinding = "kcsi-clusterrolebinding"
)

// bootstrapResourceName is the composed-resource name of G's
// KubeadmConfigTemplate.
func bootstrapResourceName(g string) string { return "nodegroup-" + g + "-bootstrap" }

// talosBootstrapResourceName is the composed-resource name of a Talos
// group G's TalosConfigTemplate.
func talosBootstrapResourceName(g string) string { return "nodegroup-" + g + "-talosconfig" }

// machineTemplateResourceName is the composed-resource name of G's
// KubevirtMachineTemplate with the given 6-hex hash.
func machineTemplateResourceName(g, hash string) string {
	return "nodegroup-" + g + "-machinetemplate-" + hash
}

// machineDeploymentResourceName is the composed-resource name of G's
// MachineDeployment.
func machineDeploymentResourceName(g string) string { return function.MachineDeploymentResourceName(g) }

// healthCheckResourceName is the composed-resource name of G's
// MachineHealthCheck.
func healthCheckResourceName(g string) string { return "nodegroup-" + g + "-healthcheck" }

// machineTemplateGroup returns the node group of a machine-template
// composed-resource name (nodegroup-<G>-machinetemplate-<6 hex>), and false
// for any other name.
func machineTemplateGroup(name string) (string, bool) {
	const prefix, infix, hashLen = "nodegroup-", "-machinetemplate-", 6
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || len(rest) < len(infix)+hashLen+1 {
		return "", false
	}
	hash := rest[len(rest)-hashLen:]
	for _, c := range hash {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	g, ok := strings.CutSuffix(rest[:len(rest)-hashLen], infix)
	return g, ok && g != ""
}

// observedTemplatesByGroup indexes the observed machine-template
// composed-resource names by node group, each list sorted, in one pass over
// the observed state (so the cost per node group does not grow with the
// number of groups).
func observedTemplatesByGroup(r *function.Request) map[string][]string {
	out := map[string][]string{}
	for name := range r.ObservedNames() {
		if g, ok := machineTemplateGroup(name); ok {
			out[g] = append(out[g], name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// requirementInstancetypeKey is the required-resource key of an instance
// type.
func requirementInstancetypeKey(name string) string { return requirementInstancetypePrefix + name }

// instancetypeSelector selects the cluster-scoped
// VirtualMachineClusterInstancetype called name.
func instancetypeSelector(name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: instancetypev1beta1.SchemeGroupVersion.String(),
		Kind:       "VirtualMachineClusterInstancetype",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
}

// allInstancetypesSelector selects every VirtualMachineClusterInstancetype:
// a selector without a match lists the kind (Crossplane v2.4
// internal/xfn/required_resources.go:236-245).
func allInstancetypesSelector() *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: instancetypev1beta1.SchemeGroupVersion.String(),
		Kind:       "VirtualMachineClusterInstancetype",
	}
}

// machineSetSelector selects the MachineSets of cluster N in NS.
func machineSetSelector(id function.Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: clusterv1.GroupVersion.String(),
		Kind:       "MachineSet",
		Namespace:  ptr(id.Namespace),
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{function.LabelCAPICluster: id.Name},
		}},
	}
}

package main

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Bounds on a machine's deletion, so that deleting a node group (or the
// whole cluster) cannot hang when the tenant API server is dead or the node
// never joined: drain and volume detach give up after 5 minutes,
// deleting the Node object after 1 minute.
const (
	nodeDrainTimeoutSeconds        = 300
	nodeVolumeDetachTimeoutSeconds = 300
	nodeDeletionTimeoutSeconds     = 60
)

// buildMachineDeployment returns the MachineDeployment N-G of a node group
// (CAPI v1beta2) referring to the bootstrap template N-G and the
// machine template machineTemplate. spec.replicas is not written here
// (cluster-autoscaler owns it; hibernation writes it: holdDown,
// wakeToMinimum); the autoscaler's min/max annotations bound
// it, and spec.maxNodeProvisionTime is its max-node-provision-time for the
// group (annotations of a MachineDeployment never roll it). Capacity
// annotations report allocatable memory and CPU when the
// effective values are known, and the role labels and GPUs so the group can
// scale up from zero. Rolling updates surge up to maxReplicas with at most
// one machine unavailable. Machine deletion is bounded by the timeouts
// above.
func buildMachineDeployment(id function.Identity, p nodeGroupPlan, machineTemplate string) *clusterv1.MachineDeployment {
	name := p.ObjectName(id)
	ann := map[string]string{
		annotationAutoscalerMin:        strconv.Itoa(int(deref(p.Group.MinReplicas))),
		annotationAutoscalerMax:        strconv.Itoa(int(deref(p.Group.MaxReplicas))),
		annotationMaxNodeProvisionTime: p.MaxNodeProvisionTime,
	}
	if p.Kubelet.AllocatableMemory != "" {
		ann[annotationCapacityMemory] = p.Kubelet.AllocatableMemory
	}
	if p.Kubelet.AllocatableCPU != "" {
		ann[annotationCapacityCPU] = p.Kubelet.AllocatableCPU
	}
	if labels := scaleFromZeroLabels(p); labels != "" {
		ann[annotationCapacityLabels] = labels
	}
	if gpuType, n := gpuCapacity(p); n > 0 {
		ann[annotationCapacityGPU] = gpuType
		ann[annotationCapacityGPUs] = strconv.Itoa(n)
	}
	selector := map[string]string{function.LabelCAPICluster: id.Name, labelDeploymentName: name}
	tmplLabels := map[string]string{}
	for k, v := range selector {
		tmplLabels[k] = v
	}
	for k, v := range p.RoleLabels() {
		tmplLabels[k] = v
	}
	return &clusterv1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   id.Namespace,
			Labels:      groupLabels(id, p.Name),
			Annotations: ann,
		},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: id.Name,
			Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
				Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
					MaxSurge:       ptr(intstr.FromInt32(deref(p.Group.MaxReplicas))),
					MaxUnavailable: ptr(intstr.FromInt32(1)),
				},
			}},
			Selector: metav1.LabelSelector{MatchLabels: selector},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: tmplLabels},
				Spec: clusterv1.MachineSpec{
					ClusterName: id.Name,
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: bootstrapv1.GroupVersion.Group, Kind: p.BootstrapKind(), Name: name,
					}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: infrav1.GroupVersion.Group, Kind: "KubevirtMachineTemplate", Name: machineTemplate,
					},
					Version: p.Version,
					Deletion: clusterv1.MachineDeletionSpec{
						NodeDrainTimeoutSeconds:        ptr(int32(nodeDrainTimeoutSeconds)),
						NodeVolumeDetachTimeoutSeconds: ptr(int32(nodeVolumeDetachTimeoutSeconds)),
						NodeDeletionTimeoutSeconds:     ptr(int32(nodeDeletionTimeoutSeconds)),
					},
				},
			},
		},
	}
}

// gpuCapacity returns the extended resource a node of the group offers for
// its GPUs and how many: "<vendor domain>/gpu" of the first GPU's device
// name (nvidia.com/AD102GL_L40S → nvidia.com/gpu, the resource the vendor's
// device plugin advertises) and the number of GPUs. It returns ("", 0)
// without GPUs.
func gpuCapacity(p nodeGroupPlan) (string, int) {
	if len(p.Group.GPUs) == 0 {
		return "", 0
	}
	vendor, _, ok := strings.Cut(p.Group.GPUs[0].Name, "/")
	if !ok || vendor == "" {
		vendor = "nvidia.com"
	}
	return vendor + "/gpu", len(p.Group.GPUs)
}

package main

import (
	cabptv1alpha3 "github.com/tenantkube/tenantkube/internal/upstream/cabpt/v1alpha3"

	"sort"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Labels and annotations of the workers function (CAPI v1beta2, Cluster API
// provider of cluster-autoscaler).
const (
	// labelNodeGroup marks every per-node-group object with G.
	labelNodeGroup = "tenantkube.io/node-group"
	// labelDeploymentName is CAPI's MachineDeployment name label.
	labelDeploymentName = "cluster.x-k8s.io/deployment-name"
	// nodeRoleLabelPrefix prefixes a role to give its node label.
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	// gpuNodeLabel is the label of the nodes of a group with GPUs, the
	// nodeSelector of HAMi's device plugin DaemonSet by default
	// (HAMi chart value devicePlugin.nvidiaNodeSelector, {"gpu": "on"}).
	gpuNodeLabelKey, gpuNodeLabelValue = "gpu", "on"

	// annotationAutoscalerMin is the Cluster API autoscaler annotation holding minReplicas.
	annotationAutoscalerMin = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	// annotationAutoscalerMax is the Cluster API autoscaler annotation holding maxReplicas.
	annotationAutoscalerMax = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
	// annotationMaxNodeProvisionTime is cluster-autoscaler's per node group
	// max-node-provision-time (its Cluster API provider reads
	// autoscaling-options-* annotations with time.ParseDuration).
	annotationMaxNodeProvisionTime = "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"
	// annotationCapacityPrefix prefixes cluster-autoscaler's scale-from-zero
	// capacity annotations (memory, cpu, labels, gpu-type, gpu-count).
	annotationCapacityPrefix = "capacity.cluster-autoscaler.kubernetes.io/"
	// annotationCapacityMemory is one node's allocatable memory, whole MiB ("6800Mi").
	annotationCapacityMemory = annotationCapacityPrefix + "memory"
	// annotationCapacityCPU is one node's allocatable CPU, whole millicores ("1800m").
	annotationCapacityCPU = annotationCapacityPrefix + "cpu"
	// annotationCapacityLabels are the node labels (roles) of a node, "k=v,k=v".
	annotationCapacityLabels = annotationCapacityPrefix + "labels"
	// annotationCapacityGPU is the GPU resource a node offers ("nvidia.com/gpu").
	annotationCapacityGPU = annotationCapacityPrefix + "gpu-type"
	// annotationCapacityGPUs is how many GPUs a node offers ("1").
	annotationCapacityGPUs = annotationCapacityPrefix + "gpu-count"
	// annotationBootstrapHash carries the hash of the node group's bootstrap
	// spec into the VM template, so a kubelet or bootstrap change gives a
	// new machine template name and CAPI rolls the group.
	annotationBootstrapHash = "tenantkube.io/bootstrap-hash"
)

// nodeGroupPlan is everything computed once for one node group G: its
// defaulted spec, effective sizing, kubelet reservations and the Kubernetes
// version its machines run.
type nodeGroupPlan struct {
	// Name is G.
	Name string
	// Group is the defaulted node group spec.
	Group v1alpha1.NodeGroup
	// Sizing is the effective memory/CPU of one node.
	Sizing Sizing
	// Kubelet are the reservations and allocatable capacity.
	Kubelet reservations
	// Version is the patch version the machines run (e.g. v1.35.1).
	Version string
	// Minor is Version's minor version (v1.35), which picks the container disk.
	Minor string
	// Health is the group's effective health check.
	Health healthCheck
	// MaxNodeProvisionTime is spec.maxNodeProvisionTime, as written.
	MaxNodeProvisionTime string
	// StorageClass is the class of the worker disks: the group's
	// storageClass, else the cluster's spec.storageClass; "" leaves
	// storageClassName unset (the management cluster's default class).
	StorageClass string
	// ObservedTemplate is the KubevirtMachineTemplate the observed
	// MachineDeployment refers to ("" when none is observed).
	ObservedTemplate string
	// TalosImageURL is the system-disk image of a Talos group; "" for an
	// Ubuntu group.
	TalosImageURL string
}

// BootstrapKind is the kind of the group's bootstrap template.
func (p nodeGroupPlan) BootstrapKind() string {
	if p.TalosImageURL != "" {
		return cabptv1alpha3.TalosConfigTemplateKind
	}
	return "KubeadmConfigTemplate"
}

// ObjectName is the Kubernetes name of the group's per-group objects: N-G.
func (p nodeGroupPlan) ObjectName(id function.Identity) string { return id.Prefixed(p.Name) }

// RoleLabels returns the node-role.kubernetes.io/<role>: "" label of every
// role of the group.
func (p nodeGroupPlan) RoleLabels() map[string]string {
	out := make(map[string]string, len(p.Group.Roles))
	for _, r := range p.Group.Roles {
		out[nodeRoleLabelPrefix+r] = ""
	}
	return out
}

// NodeLabels returns the labels the group's kubelets give their Node
// beyond the role labels: gpu=on with GPUs, else none.
func (p nodeGroupPlan) NodeLabels() map[string]string {
	if len(p.Group.GPUs) == 0 {
		return nil
	}
	return map[string]string{gpuNodeLabelKey: gpuNodeLabelValue}
}

// groupLabels are the labels of every per-group object: the common ones,
// CAPI's cluster-name and the node group.
func groupLabels(id function.Identity, g string) map[string]string {
	return id.Labels(function.LabelCAPICluster, id.Name, labelNodeGroup, g)
}

// canonicalHash returns the SHA-256 of v's canonical JSON (encoding/json of
// a typed value, null values dropped, object keys sorted) as lower-case hex
// (function.CanonicalHash): TestCanonicalHashPinned holds the hashes, which
// name machine templates. It returns an error when v does not marshal.
func canonicalHash(v any) (string, error) { return function.CanonicalHash(v) }

// sortedKeys returns m's keys in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ptr[T any](v T) *T { return &v }

// diskStorageClass is the StorageClass of group g's worker disks: its own
// storageClass, else the cluster's (live migration needs a ReadWriteMany,
// replicated class, which the management cluster's default may not be).
func diskStorageClass(spec *v1alpha1.KubernetesClusterSpec, g v1alpha1.NodeGroup) string {
	if g.StorageClass != "" {
		return g.StorageClass
	}
	return spec.StorageClass
}

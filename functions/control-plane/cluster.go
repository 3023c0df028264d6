package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capkv1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// AnnotationManagedBy is Cluster API's annotation saying another controller
// (here Kamaji) provides the infrastructure cluster's control-plane endpoint.
const AnnotationManagedBy = "cluster.x-k8s.io/managed-by"

// buildCluster returns the Cluster API Cluster N (CAPI v1beta2): pod and
// service CIDRs from the input, controlPlaneRef to the KamajiControlPlane N
// and infrastructureRef to the KubevirtCluster N.
func buildCluster(id function.Identity, in *cpinput.ControlPlaneInput) *clusterv1.Cluster {
	return &clusterv1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      id.Name,
			Namespace: id.Namespace,
			Labels:    id.Labels(function.LabelCAPICluster, id.Name),
		},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{in.PodCIDR}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{in.ServiceCIDR}},
			},
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: kamajiv1alpha2.GroupVersion.Group,
				Kind:     kamajiv1alpha2.KamajiControlPlaneKind,
				Name:     id.Name,
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capkv1.GroupVersion.Group,
				Kind:     "KubevirtCluster",
				Name:     id.Name,
			},
		},
	}
}

// buildKubevirtCluster returns the KubevirtCluster N (CAPI provider KubeVirt
// v1alpha1), annotated cluster.x-k8s.io/managed-by: kamaji because the
// control-plane endpoint is Kamaji's, not a KubeVirt load balancer. It carries
// no spec: the provider's Go type has non-pointer,
// non-omitempty structs (controlPlaneEndpoint, sshKeys,
// controlPlaneServiceTemplate) whose zero values, applied with forced
// ownership, would fight Kamaji, which writes the endpoint.
func buildKubevirtCluster(id function.Identity) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: capkv1.GroupVersion.String(), Kind: "KubevirtCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        id.Name,
			Namespace:   id.Namespace,
			Labels:      id.Labels(function.LabelCAPICluster, id.Name),
			Annotations: map[string]string{AnnotationManagedBy: "kamaji"},
		},
	}
}

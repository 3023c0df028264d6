// Package v1alpha2 holds minimal Go types for the Cozystack etcd-operator's
// EtcdCluster (etcd-operator.cozystack.io/v1alpha2), written from the CRD of
// etcd-operator v0.5.4
// (../shared/crds/later/etcd-operator.cozystack.io_etcdclusters.yaml).
// Only the fields tenantkube sets for a tenant's dedicated etcd and the
// status it reads are present; JSON names, types and required-ness follow
// that CRD.
//
// +kubebuilder:object:generate=true
// +groupName=etcd-operator.cozystack.io
package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is etcd-operator.cozystack.io/v1alpha2, the group and
// version of EtcdCluster.
var GroupVersion = schema.GroupVersion{Group: "etcd-operator.cozystack.io", Version: "v1alpha2"}

var (
	// SchemeBuilder registers EtcdCluster, EtcdSnapshot and their lists under
	// GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme; it fails
	// only if the scheme rejects a registration.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &EtcdCluster{}, &EtcdClusterList{}, &EtcdSnapshot{}, &EtcdSnapshotList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

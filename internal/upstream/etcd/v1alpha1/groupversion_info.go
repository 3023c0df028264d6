// Package v1alpha1 holds minimal Go types for the Ænix etcd-operator's
// EtcdCluster (etcd.aenix.io/v1alpha1), written from the CRD of
// etcd-operator v0.4.2 (../shared/crds/etcd.aenix.io_etcdclusters.yaml).
// Only the fields tenantkube sets for a tenant's dedicated etcd
// and the status it reads are present; JSON names, types and
// required-ness follow that CRD.
//
// +kubebuilder:object:generate=true
// +groupName=etcd.aenix.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is etcd.aenix.io/v1alpha1, the group and version of
// EtcdCluster.
var GroupVersion = schema.GroupVersion{Group: "etcd.aenix.io", Version: "v1alpha1"}

var (
	// SchemeBuilder registers EtcdCluster and EtcdClusterList under
	// GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme; it fails
	// only if the scheme rejects a registration.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &EtcdCluster{}, &EtcdClusterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

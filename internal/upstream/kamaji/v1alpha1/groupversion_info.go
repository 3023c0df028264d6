// Package v1alpha1 holds minimal Go types for Kamaji's DataStore
// (kamaji.clastix.io/v1alpha1, cluster-scoped), written from the CRD in
// ../shared/crds/kamaji.clastix.io_datastores.yaml (Kamaji, as pinned by the
// control-plane provider v0.20.0). Only the fields tenantkube sets for an
// etcd DataStore and the status it reads are present; JSON
// names, types and required-ness follow that CRD.
//
// +kubebuilder:object:generate=true
// +groupName=kamaji.clastix.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is kamaji.clastix.io/v1alpha1, the group and version of
// DataStore.
var GroupVersion = schema.GroupVersion{Group: "kamaji.clastix.io", Version: "v1alpha1"}

var (
	// SchemeBuilder registers DataStore and DataStoreList under
	// GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme; it fails
	// only if the scheme rejects a registration.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &DataStore{}, &DataStoreList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

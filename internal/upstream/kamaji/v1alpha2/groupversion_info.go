// Package v1alpha2 holds minimal Go types for the Kamaji Cluster API
// control-plane provider's KamajiControlPlane
// (controlplane.cluster.x-k8s.io/v1alpha2), written from the CRD of the
// Kamaji control-plane provider v0.20.0 (../shared/crds/
// controlplane.cluster.x-k8s.io_kamajicontrolplanes.yaml). Only the fields
// tenantkube sets or reads for readiness are present; JSON
// names, types and required-ness follow that CRD.
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is controlplane.cluster.x-k8s.io/v1alpha2, the group and
// version of KamajiControlPlane. (The group is shared with Cluster API's
// own control-plane providers; the version is Kamaji's.)
var GroupVersion = schema.GroupVersion{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha2"}

var (
	// SchemeBuilder registers KamajiControlPlane and KamajiControlPlaneList
	// under GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme; it fails
	// only if the scheme rejects a registration.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &KamajiControlPlane{}, &KamajiControlPlaneList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Package v1 holds minimal Go types for cert-manager's Issuer and
// Certificate (cert-manager.io/v1), written from the CRDs of cert-manager
// v1.21.1 (../shared/crds/cert-manager.io_issuers.yaml and
// cert-manager.io_certificates.yaml). cert-manager's own API module is not
// used: github.com/cert-manager/cert-manager v1.21.1 requires a newer
// k8s.io/utils than this module pins, so adding it would move an existing
// k8s.io version. Only the fields tenantkube sets for the etcd PKI and the
// status it reads are present.
//
// +kubebuilder:object:generate=true
// +groupName=cert-manager.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is cert-manager.io/v1, the group and version of Issuer and
// Certificate.
var GroupVersion = schema.GroupVersion{Group: "cert-manager.io", Version: "v1"}

var (
	// SchemeBuilder registers Issuer, IssuerList, Certificate and
	// CertificateList under GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme; it fails
	// only if the scheme rejects a registration.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Issuer{}, &IssuerList{}, &Certificate{}, &CertificateList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

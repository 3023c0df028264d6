package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EtcdClusterKind is the kind name of EtcdCluster.
const EtcdClusterKind = "EtcdCluster"

// EtcdCluster is an etcd cluster run by the etcd-operator as a StatefulSet
// with a client Service "<name>" and a headless Service "<name>-headless".
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type EtcdCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired etcd cluster.
	Spec EtcdClusterSpec `json:"spec,omitzero"`
	// Status is written by the operator; never set it in desired state.
	Status EtcdClusterStatus `json:"status,omitzero"`
}

// EtcdClusterList is a list of EtcdCluster.
//
// +kubebuilder:object:root=true
type EtcdClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []EtcdCluster `json:"items"`
}

// EtcdClusterSpec is the subset of field spec of the etcd-operator v0.4.2
// CRD that tenantkube uses.
type EtcdClusterSpec struct {
	// Replicas is the member count; the CRD defaults it to 3 (minimum 0).
	Replicas *int32 `json:"replicas,omitempty"`
	// Options are etcd flags without the leading "--", e.g.
	// "quota-backend-bytes": "4080218931", "auto-compaction-mode":
	// "periodic", "auto-compaction-retention": "5m", "snapshot-count":
	// "10000".
	Options map[string]string `json:"options,omitempty"`
	// Storage is where members keep their data (required).
	Storage StorageSpec `json:"storage"`
	// Security configures TLS.
	Security *SecuritySpec `json:"security,omitempty"`
	// PodTemplate customises the member pods (e.g. the "etcd" container's
	// resources); its spec is merged into the operator's pod spec.
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`
}

// StorageSpec is field spec.storage of the etcd-operator v0.4.2 CRD; set
// one of EmptyDir and VolumeClaimTemplate.
type StorageSpec struct {
	// EmptyDir keeps data in an emptyDir volume (lost with the pod).
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`
	// VolumeClaimTemplate gives each member a PersistentVolumeClaim.
	VolumeClaimTemplate *EmbeddedPersistentVolumeClaim `json:"volumeClaimTemplate,omitempty"`
}

// EmbeddedPersistentVolumeClaim is field spec.storage.volumeClaimTemplate
// of the etcd-operator v0.4.2 CRD: a PersistentVolumeClaim with reduced
// metadata (its status is not modelled).
type EmbeddedPersistentVolumeClaim struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata is the claim's name, labels and annotations.
	Metadata EmbeddedObjectMetadata `json:"metadata,omitzero"`
	// Spec is the claim's spec; the storage request (a quantity in bytes)
	// is spec.resources.requests["storage"].
	Spec corev1.PersistentVolumeClaimSpec `json:"spec,omitzero"`
}

// EmbeddedObjectMetadata is the reduced metadata the etcd-operator v0.4.2
// CRD allows in its embedded templates.
type EmbeddedObjectMetadata struct {
	// Name of the embedded object.
	Name string `json:"name,omitempty"`
	// Labels of the embedded object.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations of the embedded object.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodTemplate is field spec.podTemplate of the etcd-operator v0.4.2 CRD.
type PodTemplate struct {
	// Metadata adds labels and annotations to the member pods.
	Metadata EmbeddedObjectMetadata `json:"metadata,omitzero"`
	// Spec is merged into the operator's pod spec (containers by name; the
	// etcd container is "etcd"). The CRD keeps it schemaless apart from
	// requiring containers.
	Spec corev1.PodSpec `json:"spec,omitzero"`
}

// SecuritySpec is field spec.security of the etcd-operator v0.4.2 CRD.
type SecuritySpec struct {
	// TLS names the Secrets (type kubernetes.io/tls, keys tls.crt, tls.key,
	// ca.crt, as cert-manager writes them) etcd serves and trusts.
	TLS *TLSSpec `json:"tls,omitempty"`
}

// TLSSpec is field spec.security.tls of the etcd-operator v0.4.2 CRD; each
// field is a Secret name in the EtcdCluster's namespace.
type TLSSpec struct {
	// PeerTrustedCASecret holds the CA (ca.crt) members trust for peers.
	PeerTrustedCASecret string `json:"peerTrustedCASecret,omitempty"`
	// PeerSecret holds each member's peer certificate and key.
	PeerSecret string `json:"peerSecret,omitempty"`
	// ServerTrustedCASecret holds the CA of the server certificate.
	ServerTrustedCASecret string `json:"serverTrustedCASecret,omitempty"`
	// ServerSecret holds the certificate and key served to clients.
	ServerSecret string `json:"serverSecret,omitempty"`
	// ClientTrustedCASecret holds the CA client certificates must chain to.
	ClientTrustedCASecret string `json:"clientTrustedCASecret,omitempty"`
	// ClientSecret holds the certificate and key the operator itself uses
	// as an etcd client.
	ClientSecret string `json:"clientSecret,omitempty"`
}

const (
	// ConditionInitialized is the condition type the etcd-operator sets
	// once the cluster's objects exist.
	ConditionInitialized = "Initialized"
	// ConditionReady is the condition type the etcd-operator sets to True
	// once the members form a quorum and serve.
	ConditionReady = "Ready"
)

// EtcdClusterStatus is field status of the etcd-operator v0.4.2 CRD,
// complete.
type EtcdClusterStatus struct {
	// Conditions are standard metav1 conditions (types
	// ConditionInitialized and ConditionReady).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

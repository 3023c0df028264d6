package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataStoreKind is the kind name of DataStore.
const DataStoreKind = "DataStore"

// DataStore is a cluster-scoped backing store (etcd, MySQL, PostgreSQL,
// NATS) that Kamaji tenant control planes keep their state in. It has no
// namespace; tenantkube names it uniquely per tenant namespace and cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type DataStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired data store.
	Spec DataStoreSpec `json:"spec,omitzero"`
	// Status is written by Kamaji; never set it in desired state.
	Status DataStoreStatus `json:"status,omitzero"`
}

// DataStoreList is a list of DataStore.
//
// +kubebuilder:object:root=true
type DataStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []DataStore `json:"items"`
}

// Driver is the kind of data store (enum of field spec.driver of the Kamaji
// DataStore CRD; immutable once created).
type Driver string

const (
	// DriverEtcd is "etcd", the only driver tenantkube uses.
	DriverEtcd Driver = "etcd"
	// DriverMySQL is "MySQL".
	DriverMySQL Driver = "MySQL"
	// DriverPostgreSQL is "PostgreSQL".
	DriverPostgreSQL Driver = "PostgreSQL"
	// DriverNATS is "NATS".
	DriverNATS Driver = "NATS"
)

// DataStoreSpec is field spec of the Kamaji DataStore CRD, without
// basicAuth (unused by etcd). For driver etcd the CRD's CEL rules require
// TLSConfig with a certificate authority private key and a client
// certificate and key.
type DataStoreSpec struct {
	// Driver is the data store kind (required).
	Driver Driver `json:"driver"`
	// Endpoints are "host:port" addresses of the store, e.g.
	// "demo-etcd.tenant-demo.svc:2379" (required, at least one).
	Endpoints []string `json:"endpoints"`
	// TLSConfig holds the certificates Kamaji connects with.
	TLSConfig *TLSConfig `json:"tlsConfig,omitempty"`
}

// TLSConfig is field spec.tlsConfig of the Kamaji DataStore CRD.
type TLSConfig struct {
	// CertificateAuthority is the CA that signed the store's certificates;
	// for etcd Kamaji also needs its private key to issue per-tenant client
	// certificates (required).
	CertificateAuthority CertificateAuthority `json:"certificateAuthority"`
	// ClientCertificate is the client certificate and key Kamaji presents.
	ClientCertificate *ClientCertificate `json:"clientCertificate,omitempty"`
}

// CertificateAuthority is field spec.tlsConfig.certificateAuthority of the
// Kamaji DataStore CRD.
type CertificateAuthority struct {
	// Certificate is the PEM CA certificate (required).
	Certificate ContentRef `json:"certificate"`
	// PrivateKey is the PEM CA private key (required by a CEL rule when
	// driver is etcd).
	PrivateKey *ContentRef `json:"privateKey,omitempty"`
}

// ClientCertificate is field spec.tlsConfig.clientCertificate of the Kamaji
// DataStore CRD.
type ClientCertificate struct {
	// Certificate is the PEM client certificate (required).
	Certificate ContentRef `json:"certificate"`
	// PrivateKey is the PEM client private key (required).
	PrivateKey ContentRef `json:"privateKey"`
}

// ContentRef is a value given either inline or by reference to a Secret
// key (the content/secretReference shape of the Kamaji DataStore CRD; set
// exactly one).
type ContentRef struct {
	// Content is the value itself; JSON-encoded as base64 (format byte).
	Content []byte `json:"content,omitempty"`
	// SecretReference points at a key of a Secret holding the value.
	SecretReference *SecretReference `json:"secretReference,omitempty"`
}

// SecretReference is a key of a namespaced Secret (field
// ...secretReference of the Kamaji DataStore CRD; atomic).
type SecretReference struct {
	// Name of the Secret.
	Name string `json:"name,omitempty"`
	// Namespace of the Secret (needed: DataStore is cluster-scoped).
	Namespace string `json:"namespace,omitempty"`
	// KeyPath is the key inside the Secret's data, e.g. "tls.crt"
	// (required, non-empty).
	KeyPath string `json:"keyPath"`
}

// DataStoreStatus is field status of the Kamaji DataStore CRD, complete.
type DataStoreStatus struct {
	// Ready is true when Kamaji validated the store and it can be used
	// (required when status is present).
	Ready bool `json:"ready"`
	// ObservedGeneration is the metadata.generation last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// UsedBy lists the "namespace/name" of tenant control planes using the
	// store.
	UsedBy []string `json:"usedBy,omitempty"`
	// Conditions are standard metav1 conditions.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// IssuerKind is the kind name of Issuer.
	IssuerKind = "Issuer"
	// CertificateKind is the kind name of Certificate.
	CertificateKind = "Certificate"
	// ConditionReady is the condition type cert-manager sets to True when
	// an Issuer can issue, or a Certificate's Secret is up to date.
	ConditionReady = "Ready"
)

// Issuer issues certificates for Certificates in its own namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says how the Issuer signs; set exactly one issuer type.
	Spec IssuerSpec `json:"spec,omitzero"`
	// Status is written by cert-manager; never set it in desired state.
	Status IssuerStatus `json:"status,omitzero"`
}

// IssuerList is a list of Issuer.
//
// +kubebuilder:object:root=true
type IssuerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []Issuer `json:"items"`
}

// IssuerSpec is the subset of field spec of the cert-manager v1.21.1
// Issuer CRD that tenantkube uses (self-signed and CA issuers).
type IssuerSpec struct {
	// SelfSigned makes every certificate sign itself (used to bootstrap
	// CA certificates).
	SelfSigned *SelfSignedIssuer `json:"selfSigned,omitempty"`
	// CA signs with the key pair in a Secret.
	CA *CAIssuer `json:"ca,omitempty"`
}

// SelfSignedIssuer is field spec.selfSigned of the cert-manager v1.21.1
// Issuer CRD; tenantkube sets none of its fields (it is emitted as {}).
type SelfSignedIssuer struct{}

// CAIssuer is field spec.ca of the cert-manager v1.21.1 Issuer CRD.
type CAIssuer struct {
	// SecretName is the Secret (keys tls.crt, tls.key) holding the CA key
	// pair, in the Issuer's namespace (required).
	SecretName string `json:"secretName"`
}

// IssuerStatus is the part of field status of the cert-manager v1.21.1
// Issuer CRD that tenantkube reads (ACME status is left out).
type IssuerStatus struct {
	// Conditions of the Issuer; a list keyed by type.
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is a cert-manager condition (items of status.conditions of
// the cert-manager v1.21.1 Issuer and Certificate CRDs; only type and
// status are required there, unlike metav1.Condition).
type Condition struct {
	// Type is the condition type, e.g. ConditionReady.
	Type string `json:"type"`
	// Status is True, False or Unknown.
	Status metav1.ConditionStatus `json:"status"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable CamelCase reason.
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation.
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the metadata.generation the condition is for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Certificate asks cert-manager to keep a key pair in a Secret, signed by
// the referenced issuer.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired certificate.
	Spec CertificateSpec `json:"spec,omitzero"`
	// Status is written by cert-manager; never set it in desired state.
	Status CertificateStatus `json:"status,omitzero"`
}

// CertificateList is a list of Certificate.
//
// +kubebuilder:object:root=true
type CertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []Certificate `json:"items"`
}

// KeyUsage is an X.509 key usage or extended key usage (enum of
// spec.usages items of the cert-manager v1.21.1 Certificate CRD; only the
// values tenantkube uses have constants).
type KeyUsage string

const (
	// UsageDigitalSignature is "digital signature".
	UsageDigitalSignature KeyUsage = "digital signature"
	// UsageKeyEncipherment is "key encipherment".
	UsageKeyEncipherment KeyUsage = "key encipherment"
	// UsageCertSign is "cert sign".
	UsageCertSign KeyUsage = "cert sign"
	// UsageCRLSign is "crl sign".
	UsageCRLSign KeyUsage = "crl sign"
	// UsageServerAuth is "server auth" (extended key usage).
	UsageServerAuth KeyUsage = "server auth"
	// UsageClientAuth is "client auth" (extended key usage).
	UsageClientAuth KeyUsage = "client auth"
)

// CertificateSpec is the subset of field spec of the cert-manager v1.21.1
// Certificate CRD that tenantkube uses.
type CertificateSpec struct {
	// SecretName is the kubernetes.io/tls Secret cert-manager writes
	// (keys tls.crt, tls.key, ca.crt) in the Certificate's namespace
	// (required).
	SecretName string `json:"secretName"`
	// CommonName is the subject CN.
	CommonName string `json:"commonName,omitempty"`
	// DNSNames are the DNS subject alternative names.
	DNSNames []string `json:"dnsNames,omitempty"`
	// IPAddresses are the IP subject alternative names, e.g. "127.0.0.1".
	IPAddresses []string `json:"ipAddresses,omitempty"`
	// IsCA marks the certificate as a CA (basic constraints).
	IsCA bool `json:"isCA,omitempty"`
	// Usages are the key usages requested; cert-manager defaults to
	// digital signature and key encipherment.
	Usages []KeyUsage `json:"usages,omitempty"`
	// IssuerRef names the issuer that signs (required).
	IssuerRef IssuerReference `json:"issuerRef"`
	// PrivateKey configures the key cert-manager generates.
	PrivateKey *CertificatePrivateKey `json:"privateKey,omitempty"`
	// Duration is the requested validity; cert-manager defaults to 90 days
	// (2160h) and requires at least 1h.
	Duration *metav1.Duration `json:"duration,omitempty"`
	// RenewBefore is how long before expiry cert-manager renews; it
	// defaults to a third of Duration.
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
	// SecretTemplate holds labels and annotations cert-manager copies onto
	// the Secret it writes.
	SecretTemplate *CertificateSecretTemplate `json:"secretTemplate,omitempty"`
}

// CertificateSecretTemplate is field spec.secretTemplate of the
// cert-manager v1.21.1 Certificate CRD.
type CertificateSecretTemplate struct {
	// Annotations are copied onto the Certificate's Secret (they cannot
	// overwrite cert-manager's own).
	Annotations map[string]string `json:"annotations,omitempty"`
	// Labels are copied onto the Certificate's Secret.
	Labels map[string]string `json:"labels,omitempty"`
}

// IssuerReference is field spec.issuerRef of the cert-manager v1.21.1
// Certificate CRD.
type IssuerReference struct {
	// Name of the issuer (required).
	Name string `json:"name"`
	// Kind is Issuer (the default) or ClusterIssuer.
	Kind string `json:"kind,omitempty"`
	// Group is the issuer's API group; cert-manager.io by default.
	Group string `json:"group,omitempty"`
}

// PrivateKeyAlgorithm is the key algorithm (enum of
// spec.privateKey.algorithm of the cert-manager v1.21.1 Certificate CRD).
type PrivateKeyAlgorithm string

const (
	// RSAKeyAlgorithm is "RSA" (cert-manager's default, 2048 bits).
	RSAKeyAlgorithm PrivateKeyAlgorithm = "RSA"
	// ECDSAKeyAlgorithm is "ECDSA" (size 256, 384 or 521).
	ECDSAKeyAlgorithm PrivateKeyAlgorithm = "ECDSA"
	// Ed25519KeyAlgorithm is "Ed25519" (size ignored).
	Ed25519KeyAlgorithm PrivateKeyAlgorithm = "Ed25519"
)

// PrivateKeyEncoding is the PEM encoding of the key (enum of
// spec.privateKey.encoding of the cert-manager v1.21.1 Certificate CRD).
type PrivateKeyEncoding string

const (
	// PKCS1 is "PKCS1" (cert-manager's default).
	PKCS1 PrivateKeyEncoding = "PKCS1"
	// PKCS8 is "PKCS8".
	PKCS8 PrivateKeyEncoding = "PKCS8"
)

// PrivateKeyRotationPolicy says whether a renewal generates a new key (enum
// of spec.privateKey.rotationPolicy of the cert-manager v1.21.1
// Certificate CRD).
type PrivateKeyRotationPolicy string

const (
	// RotationPolicyNever keeps the existing key on renewal.
	RotationPolicyNever PrivateKeyRotationPolicy = "Never"
	// RotationPolicyAlways generates a new key on every renewal
	// (cert-manager's default since v1.18).
	RotationPolicyAlways PrivateKeyRotationPolicy = "Always"
)

// CertificatePrivateKey is field spec.privateKey of the cert-manager
// v1.21.1 Certificate CRD.
type CertificatePrivateKey struct {
	// Algorithm is RSA, ECDSA or Ed25519.
	Algorithm PrivateKeyAlgorithm `json:"algorithm,omitempty"`
	// Encoding is PKCS1 or PKCS8.
	Encoding PrivateKeyEncoding `json:"encoding,omitempty"`
	// RotationPolicy is Never or Always.
	RotationPolicy PrivateKeyRotationPolicy `json:"rotationPolicy,omitempty"`
	// Size is the key size in bits (RSA: 2048, 4096, 8192) or the curve
	// size (ECDSA: 256, 384, 521).
	Size int `json:"size,omitempty"`
}

// CertificateStatus is the part of field status of the cert-manager
// v1.21.1 Certificate CRD that tenantkube reads.
type CertificateStatus struct {
	// Conditions of the Certificate; a list keyed by type.
	Conditions []Condition `json:"conditions,omitempty"`
	// NotBefore is the start of the current certificate's validity.
	NotBefore *metav1.Time `json:"notBefore,omitempty"`
	// NotAfter is the end of the current certificate's validity.
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
	// RenewalTime is when cert-manager will next renew.
	RenewalTime *metav1.Time `json:"renewalTime,omitempty"`
	// Revision counts issuances (1 after the first).
	Revision *int `json:"revision,omitempty"`
	// LastFailureTime is when the last issuance failed.
	LastFailureTime *metav1.Time `json:"lastFailureTime,omitempty"`
	// FailedIssuanceAttempts counts consecutive failed issuances.
	FailedIssuanceAttempts *int `json:"failedIssuanceAttempts,omitempty"`
}

package v1alpha1

import (
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Defaults of the settings (docs/architecture.md: service CIDR
// 10.95.0.0/16; the CPU allocation ratio is KubeVirt's
// developerConfiguration.cpuAllocationRatio default).
const (
	DefaultBaseDomain         = "tenants.example.com"
	DefaultIngressClassName   = "nginx"
	DefaultPodCIDR            = "10.243.0.0/16"
	DefaultServiceCIDR        = "10.95.0.0/16"
	DefaultCPUAllocationRatio = 10
	// DefaultMaxCleanupObjects is the default of MaxCleanupObjects.
	DefaultMaxCleanupObjects = 100
	DefaultEtcdReplicas      = 3
	DefaultEtcdStorageSize   = tkv1alpha1.Quantity("4Gi")
	DefaultEtcdOperator      = EtcdOperatorAenix
	// DefaultEtcdVersion is the etcd the cozystack operator runs: the
	// version its v0.5.4 documentation uses, of the minor its restore
	// tool requires.
	DefaultEtcdVersion = "3.6.11"
)

// EtcdOperator is the API group/version of the etcd-operator that runs the
// tenants' dedicated etcd.
type EtcdOperator string

// etcd-operators.
const (
	// EtcdOperatorAenix is the Ænix etcd-operator v0.4 (EtcdCluster
	// etcd.aenix.io/v1alpha1).
	EtcdOperatorAenix EtcdOperator = "etcd.aenix.io/v1alpha1"
	// EtcdOperatorCozystack is the Cozystack etcd-operator v0.5 (EtcdCluster
	// etcd-operator.cozystack.io/v1alpha2).
	EtcdOperatorCozystack EtcdOperator = "etcd-operator.cozystack.io/v1alpha2"
)

// DefaultTalosCSRSignerImage is the talos-csr-signer image of Cozystack
// v1.6.0: packages/apps/kubernetes/images/talos-csr-signer.tag of
// github.com/cozystack/cozystack at 3c780acd, the image its kubernetes
// chart runs when images.talosCsrSigner is empty.
const DefaultTalosCSRSignerImage = "ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818"

// DefaultOIDCUsernameClaim is the token claim a System-mode cluster takes
// the user name from: the email address, which spec.oidc.users name.
const DefaultOIDCUsernameClaim = "email"

// OIDCIssuer is the platform's OpenID Connect issuer. Each cluster trusts
// it with an audience of its own, "<namespace>.<name>" (the client ID the
// issuer must mint that cluster's tokens for), so a token for one cluster
// is rejected by every other.
type OIDCIssuer struct {
	// IssuerURL is the issuer's URL, https, without query or fragment; it
	// must equal the tokens' iss claim. The tenant API servers fetch its
	// discovery document from the management cluster's network.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	IssuerURL string `json:"issuerURL,omitempty"`
	// CertificateAuthority is the PEM bundle that verifies the issuer's
	// serving certificate; empty uses the API server's system roots.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	CertificateAuthority string `json:"certificateAuthority,omitempty"`
	// UsernameClaim is the token claim used as the user name, unprefixed.
	// +kubebuilder:default=email
	// +kubebuilder:validation:MaxLength=253
	// +optional
	UsernameClaim string `json:"usernameClaim,omitempty"`
	// CustomConfigIssuerHosts are the hosts a tenant's CustomConfig may
	// name in a jwt issuer's url and discoveryURL (port 443 only): a DNS
	// name, or a name with a leading dot for every host under it
	// (".corp.test"), never one where tenants publish names (baseDomain,
	// allowedTenantHostSuffixes, allowedHostSuffixes). The tenant API
	// servers fetch those URLs from the management cluster's network.
	// Empty: any host. When set, customConfig.secretRef (the function does
	// not read tenants' Secrets) and claimMappings.groups.claim (distributed
	// claims fetch URLs named in tokens) are refused.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	CustomConfigIssuerHosts []string `json:"customConfigIssuerHosts,omitempty"`
	// GroupsClaim is the token claim listing the user's groups, such as
	// groups: ASCII letters, digits and _, not starting with a digit, and
	// no CEL reserved word. Set together with TenantGroups.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// TenantGroups are the groups of a tenant in the issuer, as patterns
	// in which {namespace} stands for the cluster's namespace and {name},
	// optionally, for its name, such as "tenant:{namespace}:admin". With
	// them, a System-mode cluster refuses (401) every token whose
	// GroupsClaim holds none of its groups. Each pattern holds {namespace}
	// once, before {name}; a placeholder is next only to the pattern's
	// ends or to a character a DNS label lacks (one of A-Z . _ : / @ = +),
	// and every pattern has the same text before {namespace}, so no
	// namespace's groups are another's.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	// +optional
	TenantGroups []string `json:"tenantGroups,omitempty"`
}

// DeletionOrder names how a function declares the deletion order of the
// objects it composes.
type DeletionOrder string

// Deletion orders.
const (
	// DeletionOrderUsages declares the order with Crossplane Usages.
	DeletionOrderUsages DeletionOrder = "Usages"
	// DeletionOrderNone declares nothing.
	DeletionOrderNone DeletionOrder = "None"
)

// Etcd sizes the dedicated etcd cluster of a tenant and selects its
// operator.
type Etcd struct {
	// Operator is the API of the etcd-operator the management cluster
	// runs. The default is etcd.aenix.io/v1alpha1: every cluster composed
	// so far runs on it, and a cluster is never moved to the other
	// operator by this setting (its function refuses, naming the cluster,
	// while its EtcdCluster is of the other API).
	// +kubebuilder:validation:Enum="etcd.aenix.io/v1alpha1";"etcd-operator.cozystack.io/v1alpha2"
	// +kubebuilder:default="etcd.aenix.io/v1alpha1"
	// +optional
	Operator EtcdOperator `json:"operator,omitempty"`

	// Version is the etcd version the etcd-operator.cozystack.io/v1alpha2
	// operator runs (MAJOR.MINOR.PATCH, without "v"); the
	// etcd.aenix.io/v1alpha1 operator runs its own.
	// +kubebuilder:default="3.6.11"
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+$`
	// +optional
	Version string `json:"version,omitempty"`

	// Replicas is the number of etcd members.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// StorageSize is each member's volume size; quota-backend-bytes is 95%
	// of it.
	// +kubebuilder:default="4Gi"
	// +optional
	StorageSize tkv1alpha1.Quantity `json:"storageSize,omitempty"`

	// StorageClassName of the members' volumes. Empty uses the tenant
	// cluster's spec.storageClass.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`

	// Backup configures scheduled backups of every claim's dedicated etcd
	// (etcd-operator.cozystack.io/v1alpha2 EtcdSnapshots). Off while
	// neither s3 nor pvc is set.
	// +optional
	Backup EtcdBackup `json:"backup,omitempty"`
}

// Defaults of the etcd backups.
const (
	DefaultBackupInterval    = tkv1alpha1.Duration("24h")
	DefaultBackupMinInterval = tkv1alpha1.Duration("1h")
	DefaultBackupRetention   = 7
	// MaxBackupRetention bounds the snapshots kept per cluster (each is a
	// composed resource of every request).
	MaxBackupRetention = 100
	// DefaultMaxDeletedClusterBackups and MaxMaxDeletedClusterBackups:
	// the default and bound of maxDeletedClusterBackups (the namespace's
	// EtcdSnapshots travel in the request of a cluster's first backup).
	DefaultMaxDeletedClusterBackups = 30
	MaxMaxDeletedClusterBackups     = 1000
)

// EtcdBackup is where, how often and how many etcd backups are kept, and
// the key their PKI is encrypted to.
type EtcdBackup struct {
	// S3 stores the snapshots in an S3-compatible object store, under
	// <keyPrefix>/<namespace>/<backup>.db.
	// +optional
	S3 *BackupS3 `json:"s3,omitempty"`
	// PVC stores the snapshots on a PersistentVolumeClaim of each tenant
	// namespace, under <subPath>/<backup>.db.
	// +optional
	PVC *BackupPVC `json:"pvc,omitempty"`
	// Interval between two backups, and the longest a tenant may ask for.
	// +kubebuilder:default="24h"
	// +optional
	Interval tkv1alpha1.Duration `json:"interval,omitempty"`
	// MinInterval is the shortest interval a tenant may ask for
	// (spec.backup.interval).
	// +kubebuilder:default="1h"
	// +optional
	MinInterval tkv1alpha1.Duration `json:"minInterval,omitempty"`
	// Retention is how many backups of a cluster are kept; older ones are
	// deleted, but for the newest Complete one while none of those kept
	// is Complete.
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Retention int32 `json:"retention,omitempty"`
	// MaxDeletedClusterBackups bounds the backups of deleted clusters a
	// namespace keeps (EtcdSnapshots whose XR is gone, which outlive it
	// with their bundles and PKI objects): while the namespace holds at
	// least this many, a cluster (or Tenant) with no backup yet takes
	// none. Clusters that have backups keep taking them.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxDeletedClusterBackups int32 `json:"maxDeletedClusterBackups,omitempty"`
	// PKINamespace is the namespace of RecipientConfigMap and
	// IdentitySecret, the platform's: no tenant may read it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	PKINamespace string `json:"pkiNamespace,omitempty"`
	// RecipientConfigMap names the ConfigMap in pkiNamespace whose key
	// "recipient" holds the age X25519 public key (age1...) each backup's
	// PKI is encrypted to. Required with s3 or pvc.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	RecipientConfigMap string `json:"recipientConfigMap,omitempty"`
	// IdentitySecret names the Secret in pkiNamespace whose key
	// "identity" holds the matching age private key (AGE-SECRET-KEY-1...),
	// read only while a cluster restores a backup. Leave it unset except
	// during a restore.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	IdentitySecret string `json:"identitySecret,omitempty"`
}

// Enabled says backups are configured.
func (b *EtcdBackup) Enabled() bool { return b.S3 != nil || b.PVC != nil }

// BackupS3 is an S3-compatible destination, as the operator's
// EtcdSnapshot spec.destination.s3 takes it.
type BackupS3 struct {
	// Endpoint is the S3 endpoint URL.
	// +kubebuilder:validation:MinLength=1
	Endpoint string `json:"endpoint"`
	// Bucket is the destination bucket.
	// +kubebuilder:validation:MinLength=1
	Bucket string `json:"bucket"`
	// KeyPrefix is the object-key prefix under which each namespace's
	// backups go (<keyPrefix>/<namespace>/).
	// +optional
	KeyPrefix string `json:"keyPrefix,omitempty"`
	// Region is the S3 region; optional for endpoints that ignore it.
	// +optional
	Region string `json:"region,omitempty"`
	// ForcePathStyle selects path-style addressing (MinIO, Ceph).
	// +optional
	ForcePathStyle bool `json:"forcePathStyle,omitempty"`
	// CredentialsSecretName names the Secret, in each tenant namespace,
	// holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the operator
	// reads it from the cluster's namespace, so the tenant can read it).
	// Each namespace's must be limited to its own prefix
	// <keyPrefix>/<namespace>/ and carry the label
	// tenantkube.io/backup-credentials-for: <namespace>; without it no
	// backup is taken in that namespace.
	// +kubebuilder:validation:MinLength=1
	CredentialsSecretName string `json:"credentialsSecretName"`
}

// BackupPVC is a PersistentVolumeClaim destination, in each tenant
// namespace.
type BackupPVC struct {
	// ClaimName is the PersistentVolumeClaim's name in each tenant
	// namespace.
	// +kubebuilder:validation:MinLength=1
	ClaimName string `json:"claimName"`
	// SubPath is a directory within the volume.
	// +optional
	SubPath string `json:"subPath,omitempty"`
}

// Default fills every unset field with its documented default, in place.

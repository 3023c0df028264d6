package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EtcdClusterKind is the kind name of EtcdCluster.
const EtcdClusterKind = "EtcdCluster"

// ConditionAvailable is the EtcdCluster condition that is True while the
// cluster has quorum.
const ConditionAvailable = "Available"

// EtcdCluster is an etcd cluster run by the etcd-operator as one
// EtcdMember (a Pod and a PersistentVolumeClaim "data-<member>") per
// member, members named "<name>-<random>", behind a headless Service
// "<name>" and a client Service "<name>-client".
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

// EtcdClusterSpec is the subset of field spec of the etcd-operator v0.5.4
// CRD that tenantkube uses.
type EtcdClusterSpec struct {
	// Version is the etcd version without "v", e.g. "3.6.11" (required).
	Version string `json:"version"`
	// Replicas is the member count; the CRD defaults it to 3 (minimum 0).
	Replicas *int32 `json:"replicas,omitempty"`
	// Options are the etcd tuning flags the CRD allows.
	Options *EtcdOptions `json:"options,omitempty"`
	// Storage is each member's data volume.
	Storage StorageSpec `json:"storage,omitzero"`
	// TLS configures the client and peer APIs; immutable once created.
	TLS *TLSSpec `json:"tls,omitempty"`
	// AdditionalMetadata is merged onto every object the operator creates
	// (Pods, PersistentVolumeClaims, Services, EtcdMembers).
	AdditionalMetadata *AdditionalMetadata `json:"additionalMetadata,omitempty"`
	// Bootstrap is consulted only when the cluster is first created;
	// immutable.
	Bootstrap *Bootstrap `json:"bootstrap,omitempty"`
}

// Bootstrap is field spec.bootstrap.
type Bootstrap struct {
	// Restore initialises the cluster from a snapshot.
	Restore *BootstrapRestore `json:"restore,omitempty"`
}

// BootstrapRestore is field spec.bootstrap.restore.
type BootstrapRestore struct {
	// Source is where the snapshot is read: s3.key is the exact object
	// key, pvc.subPath the exact file path within the volume.
	Source SnapshotLocation `json:"source"`
}

// EtcdSnapshotKind is the kind name of EtcdSnapshot.
const EtcdSnapshotKind = "EtcdSnapshot"

// EtcdSnapshot phases (status.phase); Complete is the only successful
// terminal one.
const (
	SnapshotPhaseComplete = "Complete"
	SnapshotPhaseFailed   = "Failed"
)

// EtcdSnapshot is a one-shot snapshot of an EtcdCluster of its namespace,
// stored as <name>.db under the destination's S3 key prefix or PVC
// subPath.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type EtcdSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the snapshot to take; immutable.
	Spec EtcdSnapshotSpec `json:"spec"`
	// Status is written by the operator.
	Status EtcdSnapshotStatus `json:"status,omitzero"`
}

// EtcdSnapshotList is a list of EtcdSnapshot.
//
// +kubebuilder:object:root=true
type EtcdSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []EtcdSnapshot `json:"items"`
}

// EtcdSnapshotSpec is field spec of EtcdSnapshot.
type EtcdSnapshotSpec struct {
	// ClusterRef names the EtcdCluster in the snapshot's namespace.
	ClusterRef corev1.LocalObjectReference `json:"clusterRef"`
	// Destination is where the snapshot is stored.
	Destination SnapshotLocation `json:"destination"`
}

// SnapshotLocation is an S3 or PVC location; exactly one is set.
type SnapshotLocation struct {
	// S3 is an S3-compatible object store.
	S3 *S3SnapshotLocation `json:"s3,omitempty"`
	// PVC is a PersistentVolumeClaim of the namespace.
	PVC *PVCSnapshotLocation `json:"pvc,omitempty"`
}

// S3SnapshotLocation is field s3 of a SnapshotLocation.
type S3SnapshotLocation struct {
	// Endpoint is the S3 endpoint URL.
	Endpoint string `json:"endpoint"`
	// Bucket is the bucket.
	Bucket string `json:"bucket"`
	// Key is the key prefix (a snapshot) or exact key (a restore).
	Key string `json:"key,omitempty"`
	// CredentialsSecretRef names a Secret of the namespace holding
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	CredentialsSecretRef corev1.LocalObjectReference `json:"credentialsSecretRef"`
	// Region is the S3 region.
	Region string `json:"region,omitempty"`
	// ForcePathStyle selects path-style addressing.
	ForcePathStyle bool `json:"forcePathStyle,omitempty"`
}

// PVCSnapshotLocation is field pvc of a SnapshotLocation.
type PVCSnapshotLocation struct {
	// ClaimName is the PersistentVolumeClaim's name.
	ClaimName string `json:"claimName"`
	// SubPath is a directory (a snapshot) or exact file path (a restore).
	SubPath string `json:"subPath,omitempty"`
}

// EtcdSnapshotStatus is field status of EtcdSnapshot.
type EtcdSnapshotStatus struct {
	// Phase is Pending, Started, Complete or Failed.
	Phase string `json:"phase,omitempty"`
	// Conditions hold Ready, True only once Complete.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EtcdOptions is field spec.options: each field sets the etcd flag of the
// same name.
type EtcdOptions struct {
	// QuotaBackendBytes is --quota-backend-bytes, in bytes.
	QuotaBackendBytes *int64 `json:"quotaBackendBytes,omitempty"`
	// AutoCompactionMode is --auto-compaction-mode: periodic or revision.
	AutoCompactionMode string `json:"autoCompactionMode,omitempty"`
	// AutoCompactionRetention is --auto-compaction-retention, e.g. "5m".
	AutoCompactionRetention string `json:"autoCompactionRetention,omitempty"`
	// SnapshotCount is --snapshot-count (raft entries, at least 1).
	SnapshotCount *int64 `json:"snapshotCount,omitempty"`
}

// StorageSpec is field spec.storage.
type StorageSpec struct {
	// Medium is "" (a PersistentVolumeClaim per member) or "Memory";
	// immutable.
	Medium corev1.StorageMedium `json:"medium,omitempty"`
	// Size is each member's volume size; it may not shrink.
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the members' claims; nil: the default class.
	// Immutable once created.
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// TLSSpec is field spec.tls.
type TLSSpec struct {
	// Client configures TLS on the client port 2379.
	Client *ClientTLS `json:"client,omitempty"`
	// Peer configures mutual TLS on the peer port 2380.
	Peer *PeerTLS `json:"peer,omitempty"`
}

// ClientTLS is field spec.tls.client with Secrets supplied by the user
// (the CRD's alternative, certManager, has the operator issue them).
type ClientTLS struct {
	// ServerSecretRef names a kubernetes.io/tls Secret (tls.crt, tls.key,
	// ca.crt) served on 2379; its ca.crt is also the CA client certificates
	// must chain to when mutual TLS is on.
	ServerSecretRef *corev1.LocalObjectReference `json:"serverSecretRef,omitempty"`
	// OperatorClientSecretRef names the operator's client certificate
	// Secret; setting it turns on --client-cert-auth.
	OperatorClientSecretRef *corev1.LocalObjectReference `json:"operatorClientSecretRef,omitempty"`
}

// PeerTLS is field spec.tls.peer with a Secret supplied by the user.
type PeerTLS struct {
	// SecretRef names a kubernetes.io/tls Secret whose certificate has
	// both serverAuth and clientAuth usages; its ca.crt is the peer CA.
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// AdditionalMetadata is field spec.additionalMetadata; the operator's own
// keys win on collision.
type AdditionalMetadata struct {
	// Labels merged onto the created objects.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations merged onto the created objects.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// EtcdClusterStatus is the subset of field status tenantkube reads.
type EtcdClusterStatus struct {
	// ReadyMembers is the count of healthy, serving members.
	ReadyMembers int32 `json:"readyMembers,omitempty"`
	// Conditions are Available, Progressing and Degraded.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

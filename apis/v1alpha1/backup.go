package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of spec.backup.interval (the XRD's rules carry the same); the
// platform's minInterval and interval narrow them per platform.
const (
	MinBackupInterval Duration = "1h"
	MaxBackupInterval Duration = "168h"
)

// Backup is the tenant's schedule of its etcd backups, taken only where
// the platform configures backups (docs/platform-guide.md, Backups).
type Backup struct {
	// Interval between two backups, such as 6h: at least the platform's
	// minInterval and at most its interval (the default when empty).
	// +kubebuilder:validation:MaxLength=24
	// +optional
	Interval Duration `json:"interval,omitempty"`
}

// Validate returns every problem of b at path (spec.backup).
func (b Backup) Validate(path *field.Path) field.ErrorList {
	return backupRules.check(b, path)
}

// Restore names the backup a new cluster starts from: its etcd data and
// its PKI (cluster CA, service-account key, front-proxy CA), so
// kubeconfigs and service-account tokens issued before the backup keep
// working.
type Restore struct {
	// Backup is the backup's name, as status.backup of the cluster (or
	// Tenant) it came from names it: <cluster>-<UTC time
	// YYYYMMDDhhmmss>-<6 hex digits> for a cluster's, <UTC time>-<6 hex
	// digits> for a Tenant's. The cluster may since have been deleted: its
	// backups stay until their namespace is deleted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Backup string `json:"backup"`
	// Namespace the backup was taken in; empty is the cluster's own. A
	// cluster restores only backups of its own namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Cluster is the TenantCluster whose state a Tenant's backup (of the
	// namespace's shared etcd) restores; for a cluster's own backup, empty
	// or that cluster's name.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Cluster string `json:"cluster,omitempty"`
}

// Validate returns every problem of r at path (spec.restore).
func (r *Restore) Validate(path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.Backup == "" {
		errs = append(errs, field.Required(path.Child("backup"), "names the backup to restore"))
	} else {
		errs = append(errs, validateLabel(path.Child("backup"), r.Backup, validation.DNS1123LabelMaxLength)...)
	}
	if r.Namespace != "" {
		errs = append(errs, validateLabel(path.Child("namespace"), r.Namespace, validation.DNS1123LabelMaxLength)...)
	}
	if r.Cluster != "" {
		errs = append(errs, validateLabel(path.Child("cluster"), r.Cluster, MaxClusterNameLength)...)
	}
	return errs
}

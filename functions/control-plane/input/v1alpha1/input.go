// Package v1alpha1 is the input of the tenantkube control-plane function:
// the platform settings (apis/settings/v1alpha1), which every function
// input holds in full.
//
// +kubebuilder:object:generate=true
// +groupName=fn.tenantkube.io
// +versionName=v1alpha1
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	settings "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
)

// ControlPlaneInput configures the control-plane function of a Composition
// pipeline step: the platform settings, every field optional.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type ControlPlaneInput struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	settings.Settings `json:",inline"`
}

// Validate checks the defaulted input: every problem of the settings, as
// one error.
func (in *ControlPlaneInput) Validate() error { return in.Settings.Validate().ToAggregate() }

// The settings' types and values the control-plane function uses.
type (
	Etcd         = settings.Etcd
	EtcdBackup   = settings.EtcdBackup
	EtcdOperator = settings.EtcdOperator
	OIDCIssuer   = settings.OIDCIssuer
)

// The settings' values the control-plane function uses.
const (
	EtcdOperatorAenix           = settings.EtcdOperatorAenix
	EtcdOperatorCozystack       = settings.EtcdOperatorCozystack
	DeletionOrderUsages         = settings.DeletionOrderUsages
	DeletionOrderNone           = settings.DeletionOrderNone
	MaxBackupRetention          = settings.MaxBackupRetention
	MaxMaxDeletedClusterBackups = settings.MaxMaxDeletedClusterBackups
	DefaultIngressClassName     = settings.DefaultIngressClassName
	DefaultEtcdReplicas         = settings.DefaultEtcdReplicas
	DefaultEtcdStorageSize      = settings.DefaultEtcdStorageSize
)

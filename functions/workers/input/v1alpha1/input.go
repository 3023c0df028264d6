// Package v1alpha1 is the input of the tenantkube workers function: the
// platform settings (apis/settings/v1alpha1), which every function input
// holds in full.
//
// +kubebuilder:object:generate=true
// +groupName=fn.tenantkube.io
// +versionName=v1alpha1
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	settings "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
)

// WorkersInput configures the workers function of a Composition pipeline
// step: the platform settings, every field optional.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type WorkersInput struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	settings.Settings `json:",inline"`

	// SettingsPending is set by the function, never read from the input,
	// while the platform settings have not arrived: Crossplane calls again
	// with them and only that call counts, so the checks against the
	// platform's lists (RemoteStorageClasses) wait for them.
	SettingsPending bool `json:"-"`
}

// Validate checks the defaulted input: every problem of the settings, as
// one error.
func (in *WorkersInput) Validate() error { return in.Settings.Validate().ToAggregate() }

// The settings' types the workers function uses.
type (
	Controllers      = settings.Controllers
	LoadBalancerMode = settings.LoadBalancerMode
	RegistryMirror   = settings.RegistryMirror
	TalosPlatform    = settings.TalosPlatform
)

// The settings' values the workers function uses.
const (
	LoadBalancerSelectorless = settings.LoadBalancerSelectorless
	LoadBalancerSelector     = settings.LoadBalancerSelector
)

// DefaultCleanupKinds are the kinds cleanupKinds defaults to.
func DefaultCleanupKinds() []settings.ObjectKind { return settings.DefaultCleanupKinds() }

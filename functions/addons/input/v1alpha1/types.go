package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	settings "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
)

// AddonsInput is the addons function's input (apiVersion
// fn.tenantkube.io/v1alpha1, kind AddonsInput), set in the Composition's
// pipeline step: the platform settings, every field optional.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=crossplane
type AddonsInput struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	settings.Settings `json:",inline"`
}

// Validate checks the defaulted input: every problem of the settings, as
// one error.
func (in *AddonsInput) Validate() error { return in.Settings.Validate().ToAggregate() }

// The settings' types the addons function uses.
type (
	ChartSource = settings.ChartSource
	Charts      = settings.Charts
	Monitoring  = settings.Monitoring
)

// The settings' values the addons function uses.
const (
	DeletionOrderUsages  = settings.DeletionOrderUsages
	KindExternalArtifact = settings.KindExternalArtifact
	KindHelmRepository   = settings.KindHelmRepository
	KindOCIRepository    = settings.KindOCIRepository
	LayoutWrapped        = settings.LayoutWrapped
)

// DefaultCharts returns the default chart source of every add-on, keyed by
// release name.
func DefaultCharts() map[string]ChartSource { return settings.DefaultCharts() }

// Releases returns the release names Charts has a source for, sorted.
func Releases() []string { return settings.Releases() }

// TenthAddress returns the 10th address of a CIDR (10.95.0.0/16 →
// 10.95.0.10).
func TenthAddress(cidr string) (string, error) { return settings.TenthAddress(cidr) }

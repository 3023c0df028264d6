// Package v1alpha1 is the input of the tenantkube addons composition
// function (apiVersion fn.tenantkube.io/v1alpha1, kind AddonsInput): the
// platform settings (apis/settings/v1alpha1), which every function input
// holds in full; among them where each add-on's Helm chart comes from
// (settings.Charts).
//
// +kubebuilder:object:generate=true
// +groupName=fn.tenantkube.io
// +versionName=v1alpha1
package v1alpha1

// Package v1alpha3 holds minimal Go types for Cluster API's Talos
// bootstrap provider (CABPT) TalosConfigTemplate
// (bootstrap.cluster.x-k8s.io/v1alpha3), written from its CRD
// (../shared/crds/later/bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml):
// CABPT's Go module is not served by the module proxy. Only the fields
// tenantkube sets are present; JSON names, types and required-ness follow
// that CRD.
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1alpha3

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is bootstrap.cluster.x-k8s.io/v1alpha3, the group and
// version of TalosConfigTemplate.
var GroupVersion = schema.GroupVersion{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha3"}

// TalosConfigTemplateKind is the kind name of TalosConfigTemplate.
const TalosConfigTemplateKind = "TalosConfigTemplate"

// Generate types of a TalosConfig: the machine type CABPT generates the
// configuration of.
const (
	GenerateTypeJoin = "join"
)

// HostnameSourceMachineName sets a machine's hostname to its Machine's
// name.
const HostnameSourceMachineName = "MachineName"

// TalosConfigTemplate is the template of the TalosConfigs CABPT renders
// into a machine's bootstrap data.
//
// +kubebuilder:object:root=true
type TalosConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the template.
	Spec TalosConfigTemplateSpec `json:"spec"`
}

// TalosConfigTemplateSpec holds the TalosConfig template.
type TalosConfigTemplateSpec struct {
	// Template is the TalosConfig of each machine.
	Template TalosConfigTemplateResource `json:"template"`
}

// TalosConfigTemplateResource is the TalosConfig of each machine.
type TalosConfigTemplateResource struct {
	// Spec is the TalosConfig's spec.
	Spec TalosConfigSpec `json:"spec,omitempty"`
}

// TalosConfigSpec is how CABPT generates a machine's configuration.
type TalosConfigSpec struct {
	// GenerateType is the machine type: init, controlplane, join (a
	// worker) or none.
	GenerateType string `json:"generateType"`
	// TalosVersion is the Talos release the configuration is generated
	// for (its defaults and contract).
	TalosVersion string `json:"talosVersion,omitempty"`
	// Hostname sets the machine's hostname.
	Hostname *HostnameSpec `json:"hostname,omitempty"`
	// ConfigPatches are RFC 6902 JSON patches of the generated
	// configuration.
	ConfigPatches []ConfigPatches `json:"configPatches,omitempty"`
	// StrategicPatches are Talos machine configuration strategic merge
	// patches (YAML documents), applied in order.
	StrategicPatches []string `json:"strategicPatches,omitempty"`
}

// HostnameSpec is where a machine's hostname comes from.
type HostnameSpec struct {
	// Source is MachineName or InfrastructureName.
	Source string `json:"source,omitempty"`
}

// ConfigPatches is one RFC 6902 operation.
type ConfigPatches struct {
	Op    string                `json:"op"`
	Path  string                `json:"path"`
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

package v1alpha1

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The Tenant composite: cluster-scoped,
// platform-facing, one per tenant namespace.
const (
	// TenantKind is the cluster-scoped composite of a tenant namespace
	// (apiextensions.crossplane.io/v2 XRD, scope Cluster). Its name is the
	// namespace.
	TenantKind   = "Tenant"
	TenantPlural = "tenants"
	// TenantXRDName is the name of the Tenant's XRD and of its default
	// Composition.
	TenantXRDName = TenantPlural + "." + Group
)

// Defaults and bounds of spec.etcd. The defaults equal the control-plane
// function input's etcd defaults (a claim's dedicated etcd).
const (
	DefaultTenantEtcdReplicas    = 3
	DefaultTenantEtcdStorageSize = Quantity("4Gi")
	// MaxTenantEtcdReplicas: the etcd FAQ ("What is maximum cluster
	// size?") advises against more than seven members.
	MaxTenantEtcdReplicas = 7
	// MaxTenantEtcdStorageSize: quota-backend-bytes is 95% of it, within
	// etcd's suggested maximum quota of 8 GiB (etcd's MaxQuotaBytes).
	MaxTenantEtcdStorageSize = "8Gi"
)

// Tenant provisions a tenant namespace's shared etcd, its cert-manager PKI
// and the Kamaji DataStore tenantkube.tenant.<name> its TenantClusters use.
// Its metadata.name is the namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TenantSpec   `json:"spec,omitempty"`
	Status TenantStatus `json:"status,omitempty"`
}

// TenantSpec is the desired tenant namespace.
type TenantSpec struct {
	// Etcd sizes the namespace's etcd cluster.
	// +kubebuilder:default={}
	// +optional
	Etcd TenantEtcd `json:"etcd,omitempty"`
}

// TenantEtcd sizes the etcd cluster shared by a namespace's clusters.
type TenantEtcd struct {
	// Replicas is the number of etcd members. It may grow, not shrink (the
	// XRD refuses a lower value; the function refuses one below the running
	// EtcdCluster's): raising it adds members to the StatefulSet, the data
	// stays.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// StorageSize is each member's volume; quota-backend-bytes is 95% of it.
	// It may grow, not shrink (refused as replicas is).
	// +kubebuilder:default="4Gi"
	// +optional
	StorageSize Quantity `json:"storageSize,omitempty"`

	// StorageClassName of the members' volumes. Empty uses the control-plane
	// function input's etcd.storageClassName, else the management cluster's
	// default StorageClass.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
}

// TenantStatus is what the function reports on a Tenant.
type TenantStatus struct {
	// DataStoreName is the Kamaji DataStore the namespace's TenantClusters
	// use: tenantkube.tenant.<namespace>.
	// +optional
	DataStoreName string `json:"dataStoreName,omitempty"`

	// Clusters is the number of TenantClusters of the namespace the Tenant
	// serves: those whose KamajiControlPlane uses its DataStore and that
	// yield to no claim of their name. With the control-plane input's
	// deletionOrder Usages, each holds the Tenant, the etcd and the
	// DataStore against deletion until its control plane is gone.
	// +optional
	Clusters int32 `json:"clusters,omitempty"`

	// Backup is the backups of the namespace's etcd, where the platform
	// takes them.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`
}

// Default fills every unset field with its default (the XRD's), in place.
func (s *TenantSpec) Default() {
	if s.Etcd.Replicas == nil {
		r := int32(DefaultTenantEtcdReplicas)
		s.Etcd.Replicas = &r
	}
	if !s.Etcd.StorageSize.IsSet() {
		s.Etcd.StorageSize = DefaultTenantEtcdStorageSize
	}
}

// Validate returns every problem of the (defaulted) spec, with the field
// paths of the XRD's rules.
func (s *TenantSpec) Validate() field.ErrorList {
	p := field.NewPath("spec", "etcd")
	var errs field.ErrorList
	if r := deref(s.Etcd.Replicas); r < 1 || r > MaxTenantEtcdReplicas {
		errs = append(errs, field.Invalid(p.Child("replicas"), r, fmt.Sprintf("must be between 1 and %d", MaxTenantEtcdReplicas)))
	}
	errs = append(errs, etcdStorage.check(p, string(s.Etcd.StorageSize))...)
	if s.Etcd.StorageClassName != "" {
		errs = append(errs, validateSubdomain(p.Child("storageClassName"), s.Etcd.StorageClassName)...)
	}
	return errs
}

// TenantCompositeResourceDefinition builds the Tenant's Crossplane v2 XRD
// (apiextensions.crossplane.io/v2, scope Cluster) from the CRD
// controller-gen generates for Tenant: its spec and status schema with the
// quantity bounds' CEL rules, and printer columns. It returns an error when the CRD has no
// v1alpha1 schema.
func TenantCompositeResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	version, err := xrdVersion(crd, []map[string]any{
		{"name": "DATASTORE", "type": "string", "jsonPath": ".status.dataStoreName", "description": "Kamaji DataStore of the namespace's TenantClusters."},
		{"name": "CLUSTERS", "type": "integer", "jsonPath": ".status.clusters", "description": "TenantClusters served: their control plane uses this DataStore."},
	}, TenantQuantityBounds, tenantRuleTables())
	if err != nil {
		return nil, err
	}
	return v2XRD(TenantXRDName, "Cluster", map[string]any{
		"kind": TenantKind, "listKind": TenantKind + "List", "plural": TenantPlural,
		"singular":   "tenant",
		"categories": []string{"crossplane", "composite", "tenantkube"},
	}, version), nil
}

// tenantEtcdRules are the rules of a Tenant's spec.etcd on update:
// replicas and storageSize may not decrease. The control-plane function
// holds the same against the running EtcdCluster (etcdDecreases).
var tenantEtcdRules = ruleTable[*TenantEtcd]{{
	RuleDoc: RuleDoc{ID: "tenant.etcd.replicas.mayNotDecrease", Object: "etcd", Field: "replicas", Go: msgEtcdObserved},
	CEL: celRule("!has(self.replicas) || !has(oldSelf.replicas) || self.replicas >= oldSelf.replicas",
		celFormat("replicas may not be lowered from %s to %s: the etcd-operator removes no member when it scales down, and the etcd loses quorum",
			digits("oldSelf.replicas", MaxTenantEtcdReplicas), digits("self.replicas", MaxTenantEtcdReplicas)), ".replicas"),
}, {
	RuleDoc: RuleDoc{ID: "tenant.etcd.storageSize.mayNotDecrease", Object: "etcd", Field: "storageSize", Go: msgEtcdObserved},
	CEL: celRule("!has(self.storageSize) || !has(oldSelf.storageSize) || !isQuantity(string(self.storageSize)) || !isQuantity(string(oldSelf.storageSize)) || "+
		"quantity(string(self.storageSize)).compareTo(quantity(string(oldSelf.storageSize))) >= 0",
		celFormat("storageSize may not be lowered from %s to %s: a bound volume cannot shrink, and a lower quota-backend-bytes stops writes",
			celExpr("string(oldSelf.storageSize)"), celExpr("string(self.storageSize)")), ".storageSize"),
}}

// msgEtcdObserved is where tenantEtcdRules hold besides CEL.
const msgEtcdObserved = "control-plane function (etcdDecreases), against the observed EtcdCluster"

// tenantRuleTables are the Tenant spec's tables.
func tenantRuleTables() []rules { return []rules{tenantEtcdRules} }

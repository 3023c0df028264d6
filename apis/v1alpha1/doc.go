// Package v1alpha1 is the tenant-cluster API of tenantkube: the composite
// resource XKubernetesCluster and its claim KubernetesCluster, group
// tenantkube.io, version v1alpha1.
//
// The spec carries exactly the parameters of the Cozystack "kubernetes" Helm
// chart (the seed), with its names, types, defaults and descriptions, so a
// Cozystack user can move their values under spec: unchanged. These types
// are the single source of package/xrd.yaml (make generate).
//
// +kubebuilder:object:generate=true
// +groupName=tenantkube.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, Version and kinds of the tenant-cluster API.
const (
	Group   = "tenantkube.io"
	Version = "v1alpha1"

	// CompositeKind is the cluster-scoped composite resource (XR) kind.
	CompositeKind = "XKubernetesCluster"
	// ClaimKind is the namespaced claim kind a tenant applies.
	ClaimKind = "KubernetesCluster"
	// NamespacedKind is the namespaced composite resource kind of the
	// Crossplane v2 API (apiextensions.crossplane.io/v2 XRD, scope
	// Namespaced), which a tenant creates directly in its namespace. A kind
	// of its own, so that both XRDs install together.
	NamespacedKind = "TenantCluster"
)

// GroupVersion is tenantkube.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

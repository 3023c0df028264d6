// Package v1alpha1 is the input of the tenantkube addons composition
// function (apiVersion fn.tenantkube.io/v1alpha1, kind AddonsInput): the
// platform team's settings that are the same for every tenant cluster —
// where each add-on's Helm chart comes from, the layout of its values, the
// management cluster's ingress class and the tenant service CIDR.
//
// An empty input is valid: every field has a default (kubebuilder markers
// for the CRD, and Input.Default for the function itself, which is what
// applies, because Crossplane hands the input to the function without
// defaulting it).
//
// # Chart sources
//
// Each add-on names its chart by one ChartSource. A source is either
// managed — it carries a URL and the function emits the Flux source object
// per tenant cluster in the claim namespace NS, next to the HelmReleases that
// use it (HelmRepository N-<repository>, shared by every chart of the same
// repository; OCIRepository N-<add-on release> for an OCI chart) — or a
// reference to an object the platform team maintains (a HelmRepository, an
// OCIRepository or an ExternalArtifact, by namespace and name; namespace
// defaults to NS). Managed sources keep each tenant self-contained (they go
// away with the cluster and work when Flux runs with
// --no-cross-namespace-refs); references let a platform mirror charts once.
// The function never references a source it neither emits nor was told
// about in this input.
//
// The defaults point at each project's public chart repository. A few
// add-ons have no public upstream chart (the volume-snapshot CRDs, the
// KubeVirt CSI node plugin, the cert-manager and VPA CRD bundles, the
// monitoring agents bundle and ouroboros); their defaults reference
// ExternalArtifacts named tenantkube-addon-<release> in namespace
// flux-system, which the platform team publishes (for example from the
// Cozystack charts) or replaces here.
//
// +kubebuilder:object:generate=true
// +groupName=fn.tenantkube.io
// +versionName=v1alpha1
package v1alpha1

// Package v1alpha1 holds the platform settings of tenantkube: the data of
// the cluster-scoped EnvironmentConfig named tenantkube
// (apiextensions.crossplane.io/v1beta1), one flat object whose keys are the
// JSON names of Settings' fields. Every function reads all of it
// (internal/platform decodes it strictly); each function input
// (ControlPlaneInput, WorkersInput, AddonsInput) embeds Settings and names
// nothing of its own. Settings.Default fills the documented defaults and
// Settings.Validate reports every bad value, by its path under "input".
// The schema of the data is generated from these types
// (package/settings/, make generate).
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
// about in these settings.
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
// +groupName=settings.tenantkube.io
// +versionName=v1alpha1
package v1alpha1

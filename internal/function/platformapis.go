package function

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// APIServiceVersion and APIServiceKind: kube-apiserver registers a local
// APIService <version>.<group> for every served version of every CRD
// (k8s.io/kubernetes v1.36.3
// pkg/controlplane/controller/crdregistration/crdregistration_controller.go:196-223,
// handleVersionUpdate) and removes it when no CRD serves that version.
const (
	APIServiceVersion = "apiregistration.k8s.io/v1"
	APIServiceKind    = "APIService"
)

// KindRelease is a kind of an API group/version and the upstream release
// that first serves it.
type KindRelease struct {
	Kind, Release string
	// CRD, for a kind its group/version served before, is its
	// CustomResourceDefinition's name (<plural>.<group>), by which the
	// kind itself is checked.
	CRD string
}

// CRDVersion and CRDKind: the CustomResourceDefinition API.
const (
	CRDVersion = "apiextensions.k8s.io/v1"
	CRDKind    = "CustomResourceDefinition"
)

// CRDSelector selects the CustomResourceDefinition named name.
func CRDSelector(name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: CRDVersion, Kind: CRDKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
}

// crdRequirementKey is the required-resources key of the
// CustomResourceDefinition named name.
func crdRequirementKey(name string) string { return "crd-" + name }

// PlatformAPI is one group/version a tenantkube pipeline composes or reads,
// with the upstream release that first serves each kind, and where it is
// needed.
type PlatformAPI struct {
	Group, Version string
	Kinds          []KindRelease
	// Cluster: the clusters' pipeline (claim, XKubernetesCluster,
	// TenantCluster) needs it; Tenant: the Tenant's.
	Cluster, Tenant bool
	// Etcd: an etcd operator's API, needed only where the platform's
	// etcd.operator setting (a group/version) names it.
	Etcd bool
	// Talos limits it to clusters with a Talos node group.
	Talos bool
}

// APIServiceName is the name of the APIService of a's group/version.
func (a PlatformAPI) APIServiceName() string { return a.Version + "." + a.Group }

// requirementKey is the required-resources key of a's APIService.
func (a PlatformAPI) requirementKey() string { return "apiservice-" + a.APIServiceName() }

// PlatformAPIs are the group/versions the pipelines need from the
// platform, beside the built-in Kubernetes APIs and Crossplane's own
// (package/crossplane.yaml requires Crossplane v2). Releases from the
// upstream CRDs at their tags: Cluster API v1.10.0 serves no v1beta2,
// v1.11.0 does; the Kamaji control-plane provider v0.19.0 serves only
// v1alpha1 KamajiControlPlane, v0.20.0 only v1alpha2.
var PlatformAPIs = []PlatformAPI{
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Cluster: true, Kinds: []KindRelease{
		{Kind: "Cluster", Release: capi111}, {Kind: "MachineDeployment", Release: capi111}, {Kind: "MachineHealthCheck", Release: capi111}, {Kind: "MachineSet", Release: capi111}, {Kind: "Machine", Release: capi111},
	}},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Cluster: true, Kinds: []KindRelease{{Kind: "KubeadmConfigTemplate", Release: capi111}}},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha2", Cluster: true, Tenant: true, Kinds: []KindRelease{
		{Kind: "KamajiControlPlane", Release: "Cluster API control-plane provider Kamaji v0.20.0"},
	}},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Cluster: true, Kinds: []KindRelease{
		{Kind: "KubevirtCluster", Release: capk}, {Kind: "KubevirtMachineTemplate", Release: capk},
	}},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha3", Cluster: true, Talos: true, Kinds: []KindRelease{
		{Kind: "TalosConfigTemplate", Release: "Cluster API bootstrap provider Talos v0.2.0"},
	}},
	{Group: "kamaji.clastix.io", Version: "v1alpha1", Cluster: true, Tenant: true, Kinds: []KindRelease{{Kind: "DataStore", Release: "Kamaji v0.1.0"}}},
	{Group: "etcd.aenix.io", Version: "v1alpha1", Cluster: true, Tenant: true, Etcd: true, Kinds: []KindRelease{
		{Kind: "EtcdCluster", Release: "Ænix etcd-operator v0.0.1"},
	}},
	{Group: "etcd-operator.cozystack.io", Version: "v1alpha2", Cluster: true, Tenant: true, Etcd: true, Kinds: []KindRelease{
		{Kind: "EtcdCluster", Release: cozyEtcd}, {Kind: "EtcdSnapshot", Release: cozyEtcd},
	}},
	{Group: "cert-manager.io", Version: "v1", Cluster: true, Tenant: true, Kinds: []KindRelease{
		{Kind: "Certificate", Release: "cert-manager v1.0.0"}, {Kind: "Issuer", Release: "cert-manager v1.0.0"},
	}},
	{Group: "helm.toolkit.fluxcd.io", Version: "v2", Cluster: true, Kinds: []KindRelease{{Kind: "HelmRelease", Release: "Flux v2.3.0"}}},
	// ExternalArtifact, the default chart sources' kind: source-controller
	// v1.7.0's CRD, and HelmRelease chartRef.kind ExternalArtifact from
	// helm-controller v1.4.0, both first in Flux v2.7.0.
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Cluster: true, Kinds: []KindRelease{
		{Kind: "HelmRepository", Release: "Flux v2.3.0"}, {Kind: "HelmChart", Release: "Flux v2.3.0"}, {Kind: "OCIRepository", Release: "Flux v2.6.0"},
		{Kind: "ExternalArtifact", Release: "Flux v2.7.0", CRD: "externalartifacts.source.toolkit.fluxcd.io"},
	}},
}

const (
	capi111  = "Cluster API v1.11.0"
	capk     = "Cluster API provider KubeVirt v0.1.0"
	cozyEtcd = "Cozystack etcd-operator v0.5.0"
)

// APINeeds says which of PlatformAPIs one XR needs.
type APINeeds struct {
	// Tenant: the XR is a Tenant; else a cluster.
	Tenant bool
	// EtcdOperator is the platform's etcd.operator setting, the
	// operator's group/version.
	EtcdOperator string
	// Talos: the cluster has a Talos node group.
	Talos bool
}

// NeededAPIs are the entries of PlatformAPIs n needs, in table order.
func NeededAPIs(n APINeeds) []PlatformAPI {
	var out []PlatformAPI
	for _, a := range PlatformAPIs {
		switch {
		case n.Tenant && !a.Tenant, !n.Tenant && !a.Cluster:
		case a.Etcd && a.Group+"/"+a.Version != n.EtcdOperator:
		case a.Talos && !n.Talos:
		default:
			out = append(out, a)
		}
	}
	return out
}

// APIServiceSelector selects the APIService of a by name.
func APIServiceSelector(a PlatformAPI) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: APIServiceVersion, Kind: APIServiceKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: a.APIServiceName()}}
}

// RequirePlatformAPIs asks Crossplane, in rsp, for the APIService of every
// API of apis, and returns an error naming every one Crossplane answered
// with nothing: its group/version, kinds and the releases that serve them.
// Until Crossplane has answered all of them it returns nil: a requirement
// not answered yet is never an absent API (Crossplane calls again with it
// before it uses a response).
func RequirePlatformAPIs(r *Request, rsp *fnv1.RunFunctionResponse, apis []PlatformAPI) error {
	var missing, missingKinds []string
	answered := true
	// absent asks for key's object and reports whether Crossplane
	// answered with nothing.
	absent := func(key string, sel *fnv1.ResourceSelector) bool {
		Require(rsp, key, sel)
		items, arrived := requiredResources(r.req, key)
		answered = answered && arrived
		return arrived && len(items) == 0
	}
	for _, a := range apis {
		if absent(a.requirementKey(), APIServiceSelector(a)) {
			missing = append(missing, a.Group+"/"+a.Version+" "+kindsByRelease(a.Kinds))
			continue
		}
		for _, k := range a.Kinds {
			if k.CRD != "" && absent(crdRequirementKey(k.CRD), CRDSelector(k.CRD)) {
				missingKinds = append(missingKinds, a.Group+"/"+a.Version+" "+k.Kind+" ("+k.Release+")")
			}
		}
	}
	if !answered || len(missing)+len(missingKinds) == 0 {
		return nil
	}
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "the platform does not serve these APIs tenantkube composes (no APIService <version>.<group>): "+strings.Join(missing, "; "))
	}
	if len(missingKinds) > 0 {
		msg = append(msg, "the platform does not serve these kinds tenantkube composes (no CustomResourceDefinition): "+strings.Join(missingKinds, "; "))
	}
	return fmt.Errorf("%s. Install or upgrade to the releases named, nothing is applied until then (docs/platform-guide.md, Compatibility)", strings.Join(msg, ". "))
}

// kindsByRelease lists kinds as "K1, K2 (release); K3 (release)", the
// kinds of one release together, in table order.
func kindsByRelease(kinds []KindRelease) string {
	var releases []string
	of := map[string][]string{}
	for _, k := range kinds {
		if _, ok := of[k.Release]; !ok {
			releases = append(releases, k.Release)
		}
		of[k.Release] = append(of[k.Release], k.Kind)
	}
	parts := make([]string, 0, len(releases))
	for _, r := range releases {
		parts = append(parts, strings.Join(of[r], ", ")+" ("+r+")")
	}
	return strings.Join(parts, ", ")
}

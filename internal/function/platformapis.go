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
}

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
		{"Cluster", capi111}, {"MachineDeployment", capi111}, {"MachineHealthCheck", capi111}, {"MachineSet", capi111}, {"Machine", capi111},
	}},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Cluster: true, Kinds: []KindRelease{{"KubeadmConfigTemplate", capi111}}},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha2", Cluster: true, Tenant: true, Kinds: []KindRelease{
		{"KamajiControlPlane", "Cluster API control-plane provider Kamaji v0.20.0"},
	}},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Cluster: true, Kinds: []KindRelease{
		{"KubevirtCluster", capk}, {"KubevirtMachineTemplate", capk},
	}},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha3", Cluster: true, Talos: true, Kinds: []KindRelease{
		{"TalosConfigTemplate", "Cluster API bootstrap provider Talos v0.2.0"},
	}},
	{Group: "kamaji.clastix.io", Version: "v1alpha1", Cluster: true, Tenant: true, Kinds: []KindRelease{{"DataStore", "Kamaji v0.1.0"}}},
	{Group: "etcd.aenix.io", Version: "v1alpha1", Cluster: true, Tenant: true, Etcd: true, Kinds: []KindRelease{
		{"EtcdCluster", "Ænix etcd-operator v0.0.1"},
	}},
	{Group: "etcd-operator.cozystack.io", Version: "v1alpha2", Cluster: true, Tenant: true, Etcd: true, Kinds: []KindRelease{
		{"EtcdCluster", cozyEtcd}, {"EtcdSnapshot", cozyEtcd},
	}},
	{Group: "cert-manager.io", Version: "v1", Cluster: true, Tenant: true, Kinds: []KindRelease{
		{"Certificate", "cert-manager v1.0.0"}, {"Issuer", "cert-manager v1.0.0"},
	}},
	{Group: "helm.toolkit.fluxcd.io", Version: "v2", Cluster: true, Kinds: []KindRelease{{"HelmRelease", "Flux v2.3.0"}}},
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Cluster: true, Kinds: []KindRelease{
		{"HelmRepository", "Flux v2.3.0"}, {"HelmChart", "Flux v2.3.0"}, {"OCIRepository", "Flux v2.6.0"},
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
	var missing []string
	answered := true
	for _, a := range apis {
		Require(rsp, a.requirementKey(), APIServiceSelector(a))
		items, arrived := requiredResources(r.req, a.requirementKey())
		switch {
		case !arrived:
			answered = false
		case len(items) == 0:
			missing = append(missing, a.Group+"/"+a.Version+" "+kindsByRelease(a.Kinds))
		}
	}
	if !answered || len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("the platform does not serve these APIs tenantkube composes (no APIService <version>.<group>): %s. Install or upgrade to the releases named, nothing is applied until then (docs/platform-guide.md, Compatibility)", strings.Join(missing, "; "))
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

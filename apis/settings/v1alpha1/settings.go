package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// PlatformSettings is the schema of the EnvironmentConfig tenantkube: its
// data is a PlatformSettings without apiVersion, kind and metadata. No
// object of this kind is ever created; its generated CRD
// (package/settings/) documents and checks the data.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type PlatformSettings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Settings `json:",inline"`
}

// Inputs are the kinds of the function inputs that embed Settings.
var Inputs = []string{"ControlPlaneInput", "WorkersInput", "AddonsInput"}

// Settings are the platform settings. Every field is optional; Default
// fills the documented defaults, so an empty object works.
type Settings struct {
	// BaseDomain is the tenant base domain: the tenant host of namespace NS
	// is <NS>.<baseDomain> unless the Namespace's tenantkube.io/tenant-host
	// annotation sets it, and a cluster without spec.host is reachable at
	// <cluster-name>.<tenant host>. At most 156 characters, so that every
	// default host fits in 253.
	// +kubebuilder:default="tenants.example.com"
	// +kubebuilder:validation:MaxLength=156
	// +optional
	BaseDomain string `json:"baseDomain,omitempty"`

	// AllowedHostSuffixes are domains under which any tenant may set
	// spec.host, beside its own tenant host. Empty: only the tenant host.
	// Names under a suffix listed here are not exclusive: two tenants may
	// claim the same one. An entry may not be, contain or lie under
	// baseDomain or a tenant-host suffix (tenants' own hosts). The addons
	// function lets ingress-nginx hosts lie under them too.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	AllowedHostSuffixes []string `json:"allowedHostSuffixes,omitempty"`

	// AllowedTenantHostSuffixes are domains within which a Namespace's
	// tenantkube.io/tenant-host annotation may set the tenant host, beside
	// names under baseDomain. Tenants must not be able to set that
	// annotation (docs/platform-guide.md, Security model).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	AllowedTenantHostSuffixes []string `json:"allowedTenantHostSuffixes,omitempty"`

	// IngressClassName is the management cluster's ingress class that routes
	// each tenant API server's host (with SSL passthrough) to Kamaji, and
	// the class of the Ingresses N-app-<digest> and N-app-<digest>-http that
	// route a tenant's hosts to its ingress-nginx when
	// addons.ingressNginx.exposeMethod is Proxied; they need SSL passthrough
	// and no snippet annotation.
	// +kubebuilder:default=nginx
	// +kubebuilder:validation:MinLength=1
	// +optional
	IngressClassName string `json:"ingressClassName,omitempty"`

	// PodCIDR is the tenant clusters' pod network (also Talos workers'
	// cluster.network.podSubnets).
	// +kubebuilder:default="10.243.0.0/16"
	// +optional
	PodCIDR string `json:"podCIDR,omitempty"`

	// ServiceCIDR is the tenant clusters' service network (also Talos
	// workers' cluster.network.serviceSubnets). The kubelet's cluster DNS
	// and CoreDNS's Service take its 10th address (10.95.0.0/16 →
	// 10.95.0.10).
	// +kubebuilder:default="10.95.0.0/16"
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty"`

	// ClusterDomain is the management cluster's DNS domain (its kubelets'
	// --cluster-domain). The tenant API server's certificate and the Talos
	// signer's certificate cover N.NS.svc.<clusterDomain>, the name worker
	// VMs dial (their DNS has no management-cluster search path), and each
	// etcd peer certificate covers *.<headless>.<NS>.svc.<clusterDomain>,
	// the name a member's reverse lookup answers with. Worker VMs join
	// that name (kubeadm's apiServerEndpoint, Talos's
	// cluster.controlPlane.endpoint) and Cilium's k8sServiceHost is it. A
	// DNS subdomain of at most 119 characters.
	// +kubebuilder:default="cluster.local"
	// +kubebuilder:validation:MaxLength=119
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// CPUAllocationRatio divides a control-plane component's CPU limit to
	// give its CPU request. It is also the vCPUs per host CPU a worker VM
	// may overcommit: KubeVirt's developerConfiguration.cpuAllocationRatio,
	// which must be the same. A virt-launcher pod without a CPU request
	// requests vCPUs ÷ this ratio; a node group's podCpuRequest (or a
	// podCpuLimit without one) below that is refused unless
	// AllowPodCPURequestBelowRatio.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +optional
	CPUAllocationRatio int64 `json:"cpuAllocationRatio,omitempty"`

	// DataStoreName names an existing shared Kamaji DataStore. When set, the
	// function emits no etcd objects and every tenant control plane stores
	// its state there. Names with a dot are the dedicated DataStores'
	// (<NS>.<N>) and are refused.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	DataStoreName string `json:"dataStoreName,omitempty"`

	// DeletionOrder says how the deletion order of docs/architecture.md (node groups go
	// before the control plane; etcd and its PKI Secrets outlive it) is
	// declared: Usages (protection.crossplane.io/v1beta1 Usage objects,
	// Crossplane v2) or None (for a Crossplane that does not serve that
	// API; Crossplane v1 has Usages only as apiextensions.crossplane.io).
	// With Usages the add-on HelmReleases also go before the control plane
	// (one Usage per release), so Flux uninstalls each while the tenant API
	// server still answers.
	// +kubebuilder:validation:Enum=Usages;None
	// +kubebuilder:default=Usages
	// +optional
	DeletionOrder DeletionOrder `json:"deletionOrder,omitempty"`

	// Etcd sizes the dedicated etcd cluster of each tenant (ignored with
	// DataStoreName).
	// +optional
	Etcd Etcd `json:"etcd,omitempty"`

	// OIDC is the platform's OpenID Connect issuer, trusted by the tenant
	// clusters whose spec.oidc.mode is System. Unset: mode System is
	// refused.
	// +optional
	OIDC OIDCIssuer `json:"oidc,omitempty"`

	// DefaultWorkerOS is the operating system of a node group that does
	// not set os: Ubuntu or Talos. Changing it rolls every such group. A
	// cluster with a Talos group gets the Talos PKI, the CSR signer beside
	// the API server and the talos-bootstrap-token release.
	// +kubebuilder:validation:Enum=Ubuntu;Talos
	// +kubebuilder:default=Ubuntu
	// +optional
	DefaultWorkerOS tkv1alpha1.WorkerOS `json:"defaultWorkerOS,omitempty"`

	// TalosCSRSignerImage is the talos-csr-signer image run beside the API
	// server of a cluster with Talos node groups: it serves trustd's
	// certificate API on port 50001, signing the workers' certificates
	// with the cluster's Talos CA. Default: Cozystack's build, pinned by
	// digest.
	// +kubebuilder:default="ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818"
	// +optional
	TalosCSRSignerImage string `json:"talosCsrSignerImage,omitempty"`

	// ContainerDiskImages maps a Kubernetes minor version ("v1.35") to the
	// container-disk image of the worker VMs' system disk. Versions not
	// listed use ghcr.io/cozystack/cozystack/ubuntu-container-disk:<minor>-v1.5.2.
	// +optional
	ContainerDiskImages map[string]string `json:"containerDiskImages,omitempty"`

	// KubernetesBinaryMirror is the base URL kubelet and kubeadm are
	// downloaded from at boot: <mirror>/<patch>/bin/linux/amd64/<binary>.
	// +kubebuilder:default="https://dl.k8s.io/release"
	// +kubebuilder:validation:Pattern=`^https?://`
	// +optional
	KubernetesBinaryMirror string `json:"kubernetesBinaryMirror,omitempty"`

	// RegistryMirror optionally names a Secret in the tenant's namespace
	// holding containerd hosts.toml files, one key per registry host.
	// +optional
	RegistryMirror *RegistryMirror `json:"registryMirror,omitempty"`

	// Images of the once-per-cluster controllers.
	// +kubebuilder:default={}
	// +optional
	Images Images `json:"images,omitempty"`

	// AllowPodCPURequestBelowRatio lets a node group's virt-launcher CPU
	// request (podCpuRequest, or podCpuLimit without one) go below the
	// VM's vCPUs ÷ CPUAllocationRatio, down to MinPodCPURequest: its VMs
	// then overcommit the host's CPUs more than the platform's ratio.
	// +optional
	AllowPodCPURequestBelowRatio bool `json:"allowPodCpuRequestBelowRatio,omitempty"`

	// MinPodCPURequest is the least virt-launcher CPU request a node group
	// may set when AllowPodCPURequestBelowRatio is true (cores or
	// millicores, at least 1m).
	// +kubebuilder:default="100m"
	// +optional
	MinPodCPURequest *resource.Quantity `json:"minPodCpuRequest,omitempty"`

	// MaxNodeGroups is the most node groups a cluster may have. It re-checks
	// the XRD's nodeGroups maxProperties (50: the largest function request
	// then stays under 2 MiB, half of gRPC's 4 MiB limit); raise it only
	// together with the XRD, or to measure scaling (make bench).
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxNodeGroups int `json:"maxNodeGroups,omitempty"`

	// CleanupKinds are the kinds of object the tenant cluster's controllers
	// running in the management cluster create in NS, labelled
	// tenantkube.io/cluster=N: the KubeVirt CSI driver's DataVolumes (the
	// tenant's PersistentVolumes) and the KubeVirt cloud controller's
	// LoadBalancer Services. The function asks Crossplane for them
	// (required resources) and composes each one it finds, so that
	// deleting the cluster deletes them too (docs/architecture.md: nothing is left in
	// NS). The management cluster must serve every kind listed (a missing
	// kind fails the reconcile); add snapshot.storage.k8s.io/v1
	// VolumeSnapshot where the CSI driver's snapshots are enabled, or set []
	// to adopt no new ones (objects composed earlier stay composed until
	// their creator deletes them or the cluster goes).
	// +kubebuilder:default={{apiVersion: "cdi.kubevirt.io/v1beta1", kind: DataVolume}, {apiVersion: v1, kind: Service}}
	// +optional
	CleanupKinds []ObjectKind `json:"cleanupKinds,omitempty"`

	// MaxCleanupObjects is the most objects of each CleanupKinds kind
	// composed per cluster. Every composed object travels in each later
	// function request (a DataVolume about 3 KB, twice in the workers
	// request: observed and required); 100 per kind keeps the largest
	// request under gRPC's 4 MiB limit next to 50 node groups. Objects
	// beyond it are reported in a Warning and left when the cluster is
	// deleted. It also bounds the HelmCharts of a cluster composed for
	// deletion with it (the addons function).
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxCleanupObjects int `json:"maxCleanupObjects,omitempty"`

	// AllowedImageRegistries are where the images a tenant may set
	// (spec.images) may come from: a registry host
	// ("registry.example.com") or a host and repository prefix
	// ("docker.io/library"), matched at '/' boundaries after the container
	// runtime's normalisation (distribution/reference: "busybox" is
	// docker.io/library/busybox, index.docker.io is docker.io). The
	// fully qualified name is what gets composed. Such an image runs in the
	// management cluster beside controller credentials; any other is a
	// Fatal result. The input's own images are the platform's
	// and are not checked.
	// +kubebuilder:default={"docker.io/library"}
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllowedImageRegistries []string `json:"allowedImageRegistries,omitempty"`

	// MaxReplicas is the largest maxReplicas (and minReplicas) a node group
	// may ask for, at most the XRD's 5000.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5000
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`

	// AllowSerialConsoleLog lets a node group set logSerialConsole: KubeVirt
	// then writes the VM's serial console, text the tenant's node prints,
	// into the logs of the management cluster (the virt-launcher pod's
	// guest-console-log container). Off: a group asking for it is a Fatal
	// result naming the field, and nothing running is changed.
	// +optional
	AllowSerialConsoleLog bool `json:"allowSerialConsoleLog,omitempty"`

	// HealthCheckFloors are the least health-check and provisioning
	// timeouts a cluster may ask for: below them remediation or the
	// autoscaler replaces VMs still booting or briefly unheard, over and
	// over. A value under its floor is a Fatal result naming the field.
	// +kubebuilder:default={}
	// +optional
	HealthCheckFloors HealthCheckFloors `json:"healthCheckFloors,omitempty"`

	// RemoteStorageClasses are the management cluster's StorageClasses a
	// tenant cluster may use: classes whose volumes a worker VM on any node
	// can attach (for LINSTOR, those without
	// linstor.csi.linbit.com/allowRemoteVolumeAccess: "false"). Inside every
	// tenant cluster the KubeVirt CSI release offers each under its own
	// name, spec.storageClass (which must be one of them) as the default
	// class, and kubevirt as an alias of spec.storageClass; the KubeVirt CSI
	// controller refuses a volume of any other class. Changing the list
	// upgrades every cluster's csi release and restarts its CSI controller.
	// +kubebuilder:default={"replicated"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	RemoteStorageClasses []string `json:"remoteStorageClasses,omitempty"`

	// Controllers are the platform's settings of the once-per-cluster
	// controllers (cluster-autoscaler, KubeVirt cloud controller, KubeVirt
	// CSI controller) that run in NS.
	// +kubebuilder:default={}
	// +optional
	Controllers Controllers `json:"controllers,omitempty"`

	// Talos holds where Talos workers get their OS disk image and
	// installer: the platform's trust decision, as allowedImageRegistries
	// is.
	// +kubebuilder:default={}
	// +optional
	Talos TalosPlatform `json:"talos,omitempty"`

	// SourceInterval is how often the Flux source objects this function
	// emits (managed chart sources) are reconciled.
	// +kubebuilder:default="1h"
	// +optional
	SourceInterval *metav1.Duration `json:"sourceInterval,omitempty"`

	// ReleaseRetryInterval is how long helm-controller waits before it
	// retries a failed install or upgrade of an add-on (the RetryOnFailure
	// strategy's retryInterval). Unset, it is left to helm-controller, whose
	// default is 5m. Between 10s and 1h: each retry runs Helm against the
	// tenant API server.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	ReleaseRetryInterval *metav1.Duration `json:"releaseRetryInterval,omitempty"`

	// AllowWildcardHosts lets addons.ingressNginx.hosts hold wildcards
	// ("*.apps.<tenant host>"), still under an allowed domain.
	// +optional
	AllowWildcardHosts bool `json:"allowWildcardHosts,omitempty"`

	// MaxValuesOverrideBytes bounds the JSON size of all of a cluster's
	// add-on valuesOverride together. Each override is copied into its
	// HelmRelease, which travels in every later function request (desired
	// and observed): 64 KiB keeps the addons request far below gRPC's
	// 4 MiB message limit next to 50 node groups (docs/platform-guide.md, Limits).
	// +kubebuilder:default=65536
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	// +optional
	MaxValuesOverrideBytes int `json:"maxValuesOverrideBytes,omitempty"`

	// Charts is the chart source of each add-on.
	// +kubebuilder:default={}
	// +optional
	Charts Charts `json:"charts,omitempty"`

	// Monitoring are the platform's destinations of the monitoring agents
	// of a cluster with addons.monitoringAgents.enabled.
	// +kubebuilder:default={}
	// +optional
	Monitoring Monitoring `json:"monitoring,omitempty"`

	// Encryption is how the tenant API servers encrypt Secrets (and the
	// resources it lists) at rest.
	// +kubebuilder:default={}
	// +optional
	Encryption Encryption `json:"encryption,omitempty"`
	// Maintenance confines the platform's changes to the clusters'
	// maintenance windows and spreads them (docs/platform-guide.md,
	// Maintenance).
	// +kubebuilder:default={}
	// +optional
	Maintenance Maintenance `json:"maintenance,omitempty"`
}

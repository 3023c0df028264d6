package v1alpha1

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Defaults of the worker settings. Image references are upstream
// releases; a platform team mirrors them by overriding the fields.
const (
	// DefaultTalosImageFactoryURL and DefaultTalosInstallerRepository are
	// the public Talos Image Factory's (the Cozystack chart's talos
	// defaults).
	DefaultTalosImageFactoryURL     = "https://factory.talos.dev"
	DefaultTalosInstallerRepository = "factory.talos.dev/installer"
	// DefaultKubernetesBinaryMirror is where node bootstrap downloads
	// kubelet and kubeadm: <mirror>/<patch>/bin/linux/<arch>/<binary>
	// (the upstream Kubernetes release bucket).
	DefaultKubernetesBinaryMirror = "https://dl.k8s.io/release"
	// DefaultContainerDiskRepository is the repository of the worker VM
	// system disk images (Cozystack's Ubuntu node images, one per
	// Kubernetes minor version).
	DefaultContainerDiskRepository = "ghcr.io/cozystack/cozystack/ubuntu-container-disk"
	// DefaultContainerDiskRelease is the Cozystack release whose node images
	// are the defaults: tags are <minor>-<release>, e.g. v1.35-v1.5.2.
	DefaultContainerDiskRelease = "v1.5.2"
	// DefaultClusterAutoscalerImage is cluster-autoscaler with the Cluster
	// API provider.
	DefaultClusterAutoscalerImage = "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1"
	// DefaultCloudControllerManagerImage is the KubeVirt cloud controller
	// manager.
	DefaultCloudControllerManagerImage = "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.6.0"
	// DefaultCSIDriverImage is the KubeVirt CSI driver (controller mode).
	// Upstream (kubevirt/csi-driver) publishes no versioned tags; this is a
	// versioned build of it.
	DefaultCSIDriverImage = "quay.io/kubermatic/kubevirt-csi-driver:v0.4.5"
	// DefaultCSIProvisionerImage is the external-provisioner sidecar.
	DefaultCSIProvisionerImage = "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0"
	// DefaultCSIAttacherImage is the external-attacher sidecar.
	DefaultCSIAttacherImage = "registry.k8s.io/sig-storage/csi-attacher:v4.8.1"
	// DefaultCSIResizerImage is the external-resizer sidecar.
	DefaultCSIResizerImage = "registry.k8s.io/sig-storage/csi-resizer:v1.13.2"
	// DefaultCSILivenessProbeImage is the CSI livenessprobe sidecar.
	DefaultCSILivenessProbeImage = "registry.k8s.io/sig-storage/livenessprobe:v2.15.0"
	// DefaultCSISnapshotterImage is the external-snapshotter sidecar (the
	// seed chart's version).
	DefaultCSISnapshotterImage = "registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0"
	// DefaultSnapshotControllerImage is the snapshot controller that
	// binds the tenant's VolumeSnapshots to VolumeSnapshotContents (the
	// seed chart's version).
	DefaultSnapshotControllerImage = "registry.k8s.io/sig-storage/snapshot-controller:v8.3.0"
	// DefaultCSIPriorityClassName is the CSI controller's priority class
	// (the seed chart's).
	DefaultCSIPriorityClassName = "system-cluster-critical"
	// DefaultRunAsUser is the user (and group) the controllers' containers
	// run as: distroless's nonroot.
	DefaultRunAsUser = 65532
	// DefaultWaitForKubeconfigImage is the image of the init container that
	// waits for the tenant kubeconfig Secret when the XR's
	// spec.images.waitForKubeconfig is empty (the seed chart's busybox).
	DefaultWaitForKubeconfigImage = "docker.io/library/busybox:1.37.0"
	// DefaultMinPodCPURequest is the default of MinPodCPURequest.
	DefaultMinPodCPURequest = "100m"
	// DefaultMaxNodeGroups is the XRD's nodeGroups maxProperties.
	DefaultMaxNodeGroups = 50
	// DefaultCSIKubeAPIQPS and DefaultCSIKubeAPIBurst are the CSI
	// controller's client rate limits: Cozystack's KubeVirt CSI driver
	// build's defaults, 20 times client-go's 5 QPS and 10 burst.
	DefaultCSIKubeAPIQPS   = 100
	DefaultCSIKubeAPIBurst = 200
	// MaxCSIKubeAPIQPS and MaxCSIKubeAPIBurst bound them: ten times the
	// defaults, so one tenant's controller cannot be set to flood the
	// API servers it talks to (the management one is shared).
	MaxCSIKubeAPIQPS   = 1000
	MaxCSIKubeAPIBurst = 2000
	// DefaultMaxReplicas is the default ceiling of a node group's
	// maxReplicas: 50 node groups (the XRD's most) of 100 reach
	// Kubernetes' largest supported cluster, 5000 nodes, and one tenant's
	// autoscaler cannot ask the management cluster for more VMs than that
	// per group.
	DefaultMaxReplicas = 100
)

// DefaultAllowedImageRegistries are the registries a tenant's
// spec.images may name by default: Docker Hub's official images (where the
// seed's busybox comes from; other Docker Hub repositories belong to any
// user who signs up).
func DefaultAllowedImageRegistries() []string { return []string{"docker.io/library"} }

// DefaultRegistryMirrorHosts are the registries whose hosts.toml is read from
// the registry-mirror Secret when the input names one but lists no hosts.
var DefaultRegistryMirrorHosts = []string{"docker.io", "ghcr.io", "quay.io", "registry.k8s.io"}

// DefaultContainerDiskImages returns the default container-disk image of
// every supported minor version: the Cozystack Ubuntu node image
// of that minor, e.g. "v1.35" →
// "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.35-v1.5.2".
func DefaultContainerDiskImages() map[string]string {
	out := map[string]string{}
	for _, v := range v1alpha1.Versions {
		out[v] = DefaultContainerDiskRepository + ":" + v + "-" + DefaultContainerDiskRelease
	}
	return out
}

// WorkersInput configures the workers function of a Composition pipeline
// TalosPlatform is where Talos workers get their OS disk image and
// installer image.
type TalosPlatform struct {
	// ImageFactoryURL is the base URL of the Talos Image Factory (or a
	// mirror of it, or a plain HTTP file server with its layout) that CDI
	// imports a worker's system disk from:
	// <imageFactoryURL>/image/<schematicID>/<version>/openstack-amd64.raw.xz.
	// A trailing slash is tolerated.
	// +kubebuilder:default="https://factory.talos.dev"
	// +kubebuilder:validation:Pattern=`^https?://[^\s?#]+$`
	// +optional
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// InstallerRepository is the OCI repository prefix of the Talos
	// installer image, <installerRepository>/<schematicID>:<version>
	// (machine.install.image).
	// +kubebuilder:default="factory.talos.dev/installer"
	// +optional
	InstallerRepository string `json:"installerRepository,omitempty"`
}

// ImageURL is the system-disk image of a Talos release and schematic:
// <imageFactoryURL>/image/<schematicID>/<version>/openstack-amd64.raw.xz,
// the factory URL without its trailing slashes.
func (t TalosPlatform) ImageURL(schematicID, version string) string {
	return strings.TrimRight(t.ImageFactoryURL, "/") + "/image/" + schematicID + "/" + version + "/openstack-amd64.raw.xz"
}

// InstallerImage is the Talos installer image of a release and
// schematic: <installerRepository>/<schematicID>:<version>.
func (t TalosPlatform) InstallerImage(schematicID, version string) string {
	return strings.TrimRight(t.InstallerRepository, "/") + "/" + schematicID + ":" + version
}

// Controllers are the settings of the once-per-cluster controllers.
type Controllers struct {
	// Resources are the requests and limits of every container of the
	// controllers (init containers included).
	// +kubebuilder:default={requests: {cpu: "125m", memory: "128Mi"}, limits: {cpu: "512m", memory: "512Mi"}}
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// ContainerResources replace Resources for the containers named: any
	// of cluster-autoscaler, kccm, csi-driver, csi-provisioner,
	// csi-attacher, csi-resizer, csi-snapshotter, snapshot-controller,
	// csi-liveness-probe and wait-for-kubeconfig.
	// +optional
	ContainerResources map[string]corev1.ResourceRequirements `json:"containerResources,omitempty"`
	// RunAsUser is the non-root user and group every container runs as.
	// +kubebuilder:default=65532
	// +kubebuilder:validation:Minimum=1
	// +optional
	RunAsUser int64 `json:"runAsUser,omitempty"`
	// CSIPriorityClassName is the priority class of the CSI controller,
	// which tenant volumes wait on.
	// +kubebuilder:default="system-cluster-critical"
	// +optional
	CSIPriorityClassName string `json:"csiPriorityClassName,omitempty"`
	// LoadBalancerMode is how the KubeVirt cloud controller backs a tenant
	// LoadBalancer Service: Selectorless (the infrastructure Service has
	// no selector and the controller's EndpointSlice controller points it
	// at the VMs of the nodes that hold endpoints, so
	// externalTrafficPolicy: Local works) or Selector (the infrastructure
	// Service selects every VM of the cluster).
	// +kubebuilder:validation:Enum=Selectorless;Selector
	// +kubebuilder:default=Selectorless
	// +optional
	LoadBalancerMode LoadBalancerMode `json:"loadBalancerMode,omitempty"`
	// CSIKubeAPIQPS is the Kubernetes API client rate (queries per second)
	// of the CSI controller, its --kube-api-qps: every sidecar and the
	// snapshot controller (client-go's default is 5, which starves a burst
	// of volume attaches), and the driver when CSIDriverKubeAPIFlags is set.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	CSIKubeAPIQPS int32 `json:"csiKubeAPIQPS,omitempty"`
	// CSIKubeAPIBurst is the CSI controller's client burst, its
	// --kube-api-burst (client-go's default is 10).
	// +kubebuilder:default=200
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2000
	// +optional
	CSIKubeAPIBurst int32 `json:"csiKubeAPIBurst,omitempty"`
	// CSIDriverKubeAPIFlags passes --kube-api-qps and --kube-api-burst to
	// the CSI driver container too. Only for a driver image that defines
	// them (Cozystack's build does): kubevirt/csi-driver, which the default
	// image is built from, has no such flags and exits on an unknown flag.
	// +optional
	CSIDriverKubeAPIFlags bool `json:"csiDriverKubeAPIFlags,omitempty"`
}

// LoadBalancerMode is the KubeVirt cloud controller's load-balancer mode.
type LoadBalancerMode string

// Load-balancer modes.
const (
	LoadBalancerSelectorless LoadBalancerMode = "Selectorless"
	LoadBalancerSelector     LoadBalancerMode = "Selector"
)

// ContainerNames are the containers of the controllers, the keys
// Controllers.ContainerResources accepts.
var ContainerNames = []string{"cluster-autoscaler", "csi-attacher", "csi-driver", "csi-liveness-probe", "csi-provisioner",
	"csi-resizer", "csi-snapshotter", "kccm", "snapshot-controller", "wait-for-kubeconfig"}

// DefaultControllerResources are every controller container's default
// requests and limits (the seed chart's).
func DefaultControllerResources() *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("512m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
}

// ContainerResourcesFor returns the requests and limits of the container
// called name.
func (c *Controllers) ContainerResourcesFor(name string) corev1.ResourceRequirements {
	if r, ok := c.ContainerResources[name]; ok {
		return *r.DeepCopy()
	}
	return *c.Resources.DeepCopy()
}

// HealthCheckFloors bound spec.nodeHealthCheck, each node group's
// nodeStartupTimeout and spec.maxNodeProvisionTime from below; each is a
// duration such as 5m, empty for its default.
type HealthCheckFloors struct {
	// NodeStartupTimeout floors nodeStartupTimeout (default 5m: a KubeVirt
	// VM boots and joins with kubeadm in a few minutes).
	// +optional
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty"`
	// ReadyUnknownTimeout floors readyUnknownTimeout (default 2m: the node
	// lifecycle controller marks a node Unknown 50 s after its last
	// heartbeat; a kubelet restart must not cost a VM).
	// +optional
	ReadyUnknownTimeout string `json:"readyUnknownTimeout,omitempty"`
	// ReadyFalseTimeout floors readyFalseTimeout (default 2m).
	// +optional
	ReadyFalseTimeout string `json:"readyFalseTimeout,omitempty"`
	// MaxNodeProvisionTime floors maxNodeProvisionTime (default 5m).
	// +optional
	MaxNodeProvisionTime string `json:"maxNodeProvisionTime,omitempty"`
}

// Defaults of HealthCheckFloors.
const (
	DefaultFloorNodeStartupTimeout   = "5m"
	DefaultFloorReadyUnknownTimeout  = "2m"
	DefaultFloorReadyFalseTimeout    = "2m"
	DefaultFloorMaxNodeProvisionTime = "5m"
)

// ObjectKind is a kind of Kubernetes object.
type ObjectKind struct {
	// APIVersion is the kind's group/version, e.g. cdi.kubevirt.io/v1beta1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind is the kind, e.g. DataVolume.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
}

// DefaultCleanupKinds are the kinds CleanupKinds defaults to: the KubeVirt
// CSI driver's DataVolumes and the KubeVirt cloud controller's Services.
func DefaultCleanupKinds() []ObjectKind {
	return []ObjectKind{{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}, {APIVersion: "v1", Kind: "Service"}}
}

// RegistryMirror names a Secret with containerd registry host configuration.
// Each listed host's key becomes /etc/containerd/certs.d/<host>/hosts.toml
// on every worker node.
type RegistryMirror struct {
	// SecretName is the Secret in the tenant's namespace (NS).
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
	// Hosts are the registry hosts (Secret keys) to configure.
	// Defaults to docker.io, ghcr.io, quay.io and registry.k8s.io.
	// +optional
	Hosts []string `json:"hosts,omitempty"`
}

// Images are the container images of the once-per-cluster controllers.
type Images struct {
	// ClusterAutoscaler is cluster-autoscaler (Cluster API provider).
	// +kubebuilder:default="registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1"
	// +optional
	ClusterAutoscaler string `json:"clusterAutoscaler,omitempty"`
	// CloudControllerManager is the KubeVirt cloud controller manager.
	// +kubebuilder:default="quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.6.0"
	// +optional
	CloudControllerManager string `json:"cloudControllerManager,omitempty"`
	// CSIDriver is the KubeVirt CSI driver, run in controller mode.
	// +kubebuilder:default="quay.io/kubermatic/kubevirt-csi-driver:v0.4.5"
	// +optional
	CSIDriver string `json:"csiDriver,omitempty"`
	// CSIProvisioner is the external-provisioner sidecar.
	// +kubebuilder:default="registry.k8s.io/sig-storage/csi-provisioner:v5.2.0"
	// +optional
	CSIProvisioner string `json:"csiProvisioner,omitempty"`
	// CSIAttacher is the external-attacher sidecar.
	// +kubebuilder:default="registry.k8s.io/sig-storage/csi-attacher:v4.8.1"
	// +optional
	CSIAttacher string `json:"csiAttacher,omitempty"`
	// CSIResizer is the external-resizer sidecar.
	// +kubebuilder:default="registry.k8s.io/sig-storage/csi-resizer:v1.13.2"
	// +optional
	CSIResizer string `json:"csiResizer,omitempty"`
	// CSILivenessProbe is the CSI livenessprobe sidecar.
	// +kubebuilder:default="registry.k8s.io/sig-storage/livenessprobe:v2.15.0"
	// +optional
	CSILivenessProbe string `json:"csiLivenessProbe,omitempty"`
	// CSISnapshotter is the external-snapshotter sidecar.
	// +kubebuilder:default="registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0"
	// +optional
	CSISnapshotter string `json:"csiSnapshotter,omitempty"`
	// SnapshotController is the snapshot controller run against the
	// tenant cluster.
	// +kubebuilder:default="registry.k8s.io/sig-storage/snapshot-controller:v8.3.0"
	// +optional
	SnapshotController string `json:"snapshotController,omitempty"`
	// WaitForKubeconfig is the default image of the init container that
	// waits for the tenant kubeconfig Secret; a cluster's
	// spec.images.waitForKubeconfig overrides it.
	// +kubebuilder:default="docker.io/library/busybox:1.37.0"
	// +optional
	WaitForKubeconfig string `json:"waitForKubeconfig,omitempty"`
}

// Default fills every unset field with its documented default, in place.
// Container-disk images of versions the map does not list are added.
// selectorlessCloudControllerVersion is the first cloud-provider-kubevirt
// release with the selectorless mode and the EndpointSlice controller that
// Selectorless configures (v0.6.0 pkg/provider/cloud.go:62-69,
// cmd/kubevirt-cloud-controller-manager/kubevirteps.go:40); earlier
// releases ignore both keys and give every infrastructure Service a
// selector.
const selectorlessCloudControllerVersion = "v0.6.0"

// validateCloudControllerImage refuses Selectorless with an upstream
// cloud controller image (repository kubevirt-cloud-controller-manager)
// whose tag is a release before selectorlessCloudControllerVersion. Other
// repositories and tags (a fork, a digest) are the platform's to vouch for.
func validateCloudControllerImage(p *field.Path, image string, mode LoadBalancerMode) error {
	if mode != LoadBalancerSelectorless {
		return nil
	}
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return nil
	}
	repo, tag := ref[:i], ref[i+1:]
	if path.Base(repo) != "kubevirt-cloud-controller-manager" || !semver.IsValid(tag) {
		return nil
	}
	if semver.Compare(tag, selectorlessCloudControllerVersion) < 0 {
		return field.Invalid(p.Child("images", "cloudControllerManager"), image,
			fmt.Sprintf("controllers.loadBalancerMode Selectorless needs cloud-provider-kubevirt %s or newer (earlier releases have no selectorless mode or EndpointSlice controller); use a newer image or loadBalancerMode Selector", selectorlessCloudControllerVersion))
	}
	return nil
}

// installerRepositoryPattern is an image repository: a registry host with
// an optional port, then lower-case path components.
var installerRepositoryPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)+$`)

// validate checks defaulted controller settings: each container's requests
// at most its limits, ContainerResources keys among ContainerNames, a
// positive user, a known load-balancer mode, a priority class name and the
// CSI controller's client rate limits within their bounds.
func (c *Controllers) validate(p *field.Path) error {
	if err := validateResources(p.Child("resources"), *c.Resources); err != nil {
		return err
	}
	keys := make([]string, 0, len(c.ContainerResources))
	for k := range c.ContainerResources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kp := p.Child("containerResources").Key(k)
		if !slices.Contains(ContainerNames, k) {
			return field.NotSupported(p.Child("containerResources"), k, ContainerNames)
		}
		if err := validateResources(kp, c.ContainerResources[k]); err != nil {
			return err
		}
	}
	if c.RunAsUser < 1 {
		return field.Invalid(p.Child("runAsUser"), c.RunAsUser, "must be a non-root user (at least 1)")
	}
	if msgs := validation.IsDNS1123Subdomain(c.CSIPriorityClassName); len(msgs) > 0 {
		return field.Invalid(p.Child("csiPriorityClassName"), c.CSIPriorityClassName, msgs[0])
	}
	switch c.LoadBalancerMode {
	case LoadBalancerSelectorless, LoadBalancerSelector:
	default:
		return field.NotSupported(p.Child("loadBalancerMode"), c.LoadBalancerMode, []string{string(LoadBalancerSelectorless), string(LoadBalancerSelector)})
	}
	if c.CSIKubeAPIQPS < 1 || c.CSIKubeAPIQPS > MaxCSIKubeAPIQPS {
		return field.Invalid(p.Child("csiKubeAPIQPS"), c.CSIKubeAPIQPS, fmt.Sprintf("must be between 1 and %d", MaxCSIKubeAPIQPS))
	}
	if c.CSIKubeAPIBurst < 1 || c.CSIKubeAPIBurst > MaxCSIKubeAPIBurst {
		return field.Invalid(p.Child("csiKubeAPIBurst"), c.CSIKubeAPIBurst, fmt.Sprintf("must be between 1 and %d", MaxCSIKubeAPIBurst))
	}
	return nil
}

// validateResources rejects a negative quantity and a request above its
// limit (the API server would reject the Deployment).
func validateResources(p *field.Path, r corev1.ResourceRequirements) error {
	for _, list := range []struct {
		key string
		l   corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for _, name := range slices.Sorted(maps.Keys(list.l)) {
			if q := list.l[name]; q.Sign() < 0 {
				return field.Invalid(p.Child(list.key).Key(string(name)), q.String(), "must not be negative")
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			return field.Invalid(p.Child("requests").Key(string(name)), req.String(), "must be less than or equal to the limit "+lim.String())
		}
	}
	return nil
}

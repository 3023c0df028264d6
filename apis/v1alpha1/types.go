package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// XKubernetesCluster is a tenant Kubernetes cluster: its control plane runs
// as pods in the management cluster (Kamaji, dedicated etcd), its workers
// are KubeVirt virtual machines managed by Cluster API.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type XKubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesClusterSpec   `json:"spec,omitempty"`
	Status KubernetesClusterStatus `json:"status,omitempty"`
}

// KubernetesClusterSpec is the desired tenant cluster. Field names, types,
// defaults and descriptions are the seed chart's parameters.
type KubernetesClusterSpec struct {
	// StorageClass used to store the data.
	// +kubebuilder:default=replicated
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClass string `json:"storageClass,omitempty"`

	// Namespace of the tenant cluster's objects. Set it only on an XR created
	// without a claim; with a claim it must be empty or the claim's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Worker nodes configuration map. At most 50 node groups, so that the
	// largest function request stays well inside gRPC's 4 MiB message limit
	// (docs/platform-guide.md, Limits, has the measured request size).
	// +kubebuilder:default={"md0":{"minReplicas":0,"maxReplicas":10,"instanceType":"u1.medium","diskSize":"20Gi","roles":{"ingress-nginx"}}}
	// +kubebuilder:validation:MaxProperties=50
	// +optional
	NodeGroups map[string]NodeGroup `json:"nodeGroups,omitempty"`

	// MachineHealthCheck tuning for worker node groups: when a machine is
	// unhealthy and how many of a group may be remediated (deleted and
	// replaced). Changing it never rolls a node group.
	// +kubebuilder:default={}
	// +optional
	NodeHealthCheck NodeHealthCheck `json:"nodeHealthCheck,omitempty"`

	// How long cluster-autoscaler waits for a new worker to register as a
	// node before it treats the machine as failed to provision (written
	// on every MachineDeployment; changing it never rolls a node group).
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:MaxLength=24
	// +optional
	MaxNodeProvisionTime Duration `json:"maxNodeProvisionTime,omitempty"`

	// Kubernetes major.minor version to deploy
	// +kubebuilder:default=v1.35
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Enum=v1.35;v1.34;v1.33;v1.32;v1.31
	// +optional
	Version string `json:"version,omitempty"`

	// External hostname for Kubernetes cluster. Defaults to <cluster-name>.<tenant-host> if empty.
	// Must be the tenant host or lie under it (or under a suffix the
	// platform allows); the tenant host is <namespace>.<base domain> unless
	// the platform sets it on the namespace.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$|^$`
	// +optional
	Host string `json:"host,omitempty"`

	// Cluster addons configuration.
	// +kubebuilder:default={}
	// +optional
	Addons Addons `json:"addons,omitempty"`

	// Kubernetes control-plane configuration.
	// +kubebuilder:default={}
	// +optional
	ControlPlane ControlPlane `json:"controlPlane,omitempty"`

	// Optional image overrides for air-gapped or rate-limited registries.
	// +kubebuilder:default={}
	// +optional
	Images Images `json:"images,omitempty"`

	// OIDC authentication and per-user RBAC for the tenant kube-apiserver.
	// +kubebuilder:default={}
	// +optional
	OIDC OIDC `json:"oidc,omitempty"`

	// Talos worker image configuration: the Talos release, Image Factory
	// schematic and registry mirrors of the node groups whose os is Talos.
	// +kubebuilder:default={}
	// +optional
	Talos Talos `json:"talos,omitempty"`

	// Backup schedule of the cluster's dedicated etcd, where the platform
	// configures backups.
	// +kubebuilder:default={}
	// +optional
	Backup Backup `json:"backup,omitempty"`

	// Hibernation: the cluster sleeps (no machine, no control-plane
	// replica, add-ons suspended; etcd and volumes kept) while enabled or
	// while a schedule says so.
	// +kubebuilder:default={}
	// +optional
	Hibernation Hibernation `json:"hibernation,omitempty"`

	// Maintenance window of the platform's changes (docs/tenant-guide.md,
	// Maintenance).
	// +kubebuilder:default={}
	// +optional
	Maintenance Maintenance `json:"maintenance,omitempty"`

	// Restore starts a new cluster from a backup. Set it when creating the
	// cluster; it cannot be added, changed or removed afterwards.
	// +optional
	Restore *Restore `json:"restore,omitempty"`

	// Encryption of the cluster's Secrets at rest, where the platform
	// encrypts them: the key generation the tenant asks for.
	// +kubebuilder:default={}
	// +optional
	Encryption Encryption `json:"encryption,omitempty"`
}

// NodeGroup is one worker node group: a MachineDeployment of KubeVirt VMs
// autoscaled between minReplicas and maxReplicas.
type NodeGroup struct {
	// Minimum number of replicas.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5000
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// Maximum number of replicas. At most 5000 (Kubernetes' largest
	// supported cluster); the platform may set a lower ceiling.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5000
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// Virtual machine instance type. An absent field is u1.medium; an
	// empty one means no instance type (without resources the VM has no
	// size of its own: kubelet reservations are the minimum and no
	// capacity annotations are written).
	// +kubebuilder:default=u1.medium
	// +kubebuilder:validation:MaxLength=253
	// +optional
	InstanceType *string `json:"instanceType,omitempty"`

	// Persistent disk for kubelet and containerd data.
	// +kubebuilder:default="20Gi"
	// +optional
	DiskSize Quantity `json:"diskSize,omitempty"`

	// StorageClass for worker node persistent disks. When empty, falls back
	// to the cluster's storageClass: worker VMs live-migrate, so their disks
	// need ReadWriteMany, which the replicated class provides and the
	// management cluster's default class may not. Deliberately not
	// immutable: it is optional and undefaulted, so a strict self == oldSelf
	// rule would block setting it on an existing node group.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	StorageClass string `json:"storageClass,omitempty"`

	// List of node roles.
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Explicit CPU and memory for each worker node, as an alternative to
	// instanceType sizing. When both cpu and memory are set, they take
	// precedence and instanceType is ignored for that node group (the
	// instancetype is omitted from the VM, since KubeVirt cannot override an
	// instancetype's CPU/memory). Set both cpu and memory together or neither.
	// +optional
	Resources Resources `json:"resources,omitempty"`

	// List of GPUs to attach (NVIDIA driver requires at least 4 GiB RAM).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	GPUs []GPU `json:"gpus,omitempty"`

	// Per-group override of nodeHealthCheck.maxUnhealthy; empty keeps the
	// cluster-wide value. A whole number of machines such as 1 or a whole
	// percentage such as 50%.
	// +kubebuilder:validation:MaxLength=8
	// +optional
	MaxUnhealthy IntOrPercent `json:"maxUnhealthy,omitempty"`

	// Per-group override of nodeHealthCheck.nodeStartupTimeout; empty
	// keeps the cluster-wide value.
	// +kubebuilder:validation:MaxLength=24
	// +optional
	NodeStartupTimeout Duration `json:"nodeStartupTimeout,omitempty"`

	// Kubelet resource reservations for this node group.
	// +kubebuilder:default={}
	// +optional
	Kubelet Kubelet `json:"kubelet,omitempty"`

	// EphemeralStorage is the field's name before v1.4 of the seed chart; it
	// is rejected with a message pointing at diskSize.
	// +kubebuilder:validation:XIntOrString
	// +optional
	EphemeralStorage *Quantity `json:"ephemeralStorage,omitempty"`

	// Stream each worker VM's guest serial console into a guest-console-log
	// container beside virt-launcher, readable with kubectl logs (KubeVirt
	// devices.logSerialConsole). Part of the VM template: changing it rolls
	// the node group. Only true is written; false leaves the platform's
	// cluster-wide KubeVirt setting in force.
	// +optional
	LogSerialConsole bool `json:"logSerialConsole,omitempty"`

	// CPU limit of the worker VM's virt-launcher compute container (KubeVirt
	// domain.resources.limits.cpu), the ceiling the guest vCPUs, the QEMU
	// emulator thread and the IO threads share; not the guest's size. Only
	// with a VM without instancetype (resources.cpu and resources.memory
	// set, or instanceType ""): KubeVirt refuses an instancetype beside it.
	// KubeVirt copies a limit into the request when no request is set; pair
	// it with podCpuRequest to keep the request. Greater than zero; without
	// podCpuRequest it is the request, and the request's lower bound applies
	// to it. Changing it rolls the node group.
	// +optional
	PodCPULimit Quantity `json:"podCpuLimit,omitempty"`

	// CPU request of the worker VM's virt-launcher compute container
	// (KubeVirt domain.resources.requests.cpu): what the scheduler reserves
	// for a worker on its host. Greater than zero and at most podCpuLimit;
	// at least the VM's vCPUs divided by the platform's CPU allocation
	// ratio (the request KubeVirt derives when none is given) unless the
	// platform allows less, down to its floor. Same instancetype
	// restriction as podCpuLimit. Changing it rolls the node group.
	// +optional
	PodCPURequest Quantity `json:"podCpuRequest,omitempty"`

	// How the node group's VMs spread over the management cluster's hosts
	// (pod anti-affinity of the virt-launcher pods, topology key
	// kubernetes.io/hostname, against the VMs of this group only): Soft
	// prefers a host without another VM of the group, Hard requires one (a
	// VM stays Pending when every host has one), None places freely. Unset
	// is Soft, except that a group already running without placement keeps
	// it until its VM template changes for another reason. Setting it rolls
	// the node group.
	// +kubebuilder:validation:Enum=Soft;Hard;None
	// +optional
	AntiAffinity AntiAffinity `json:"antiAffinity,omitempty"`

	// Operating system of the node group's VMs: Ubuntu (a container disk
	// joined by kubeadm) or Talos (the Image Factory disk image of
	// spec.talos, bootstrapped by Cluster API's Talos provider). Unset takes
	// the platform's defaultWorkerOS (Ubuntu unless the platform says
	// otherwise). Changing it, or the platform default a group follows,
	// rolls the node group.
	// +kubebuilder:validation:Enum=Ubuntu;Talos
	// +optional
	OS WorkerOS `json:"os,omitempty"`
}

// AntiAffinity is how a node group's VMs spread over the management
// cluster's hosts.
type AntiAffinity string

// Anti-affinity of a node group's VMs.
const (
	AntiAffinitySoft AntiAffinity = "Soft"
	AntiAffinityHard AntiAffinity = "Hard"
	AntiAffinityNone AntiAffinity = "None"
)

// Resources is an explicit CPU and memory configuration for a node or a
// control-plane component.
type Resources struct {
	// CPU available.
	// +optional
	CPU Quantity `json:"cpu,omitempty"`
	// Memory (RAM) available.
	// +optional
	Memory Quantity `json:"memory,omitempty"`
}

// GPU is a GPU passed through to a worker VM.
type GPU struct {
	// Name of GPU, such as "nvidia.com/AD102GL_L40S".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Kubelet holds the kubelet resource reservations of a node group.
// Reservations left empty are computed from the node's effective memory and
// CPU by the seed's formula (5%, clamped to [256Mi, 1Gi] and [50m, 500m]).
// Reservations stop at a node's maxima (256 cores, 4Ti).
type Kubelet struct {
	// Memory reserved for host OS. Auto-computed from instanceType if empty.
	// +optional
	SystemReservedMemory Quantity `json:"systemReservedMemory,omitempty"`
	// Memory reserved for kubelet and container runtime. Auto-computed from instanceType if empty.
	// +optional
	KubeReservedMemory Quantity `json:"kubeReservedMemory,omitempty"`
	// CPU reserved for host OS. Auto-computed from instanceType if empty.
	// +optional
	SystemReservedCPU Quantity `json:"systemReservedCpu,omitempty"`
	// CPU reserved for kubelet and container runtime. Auto-computed from instanceType if empty.
	// +optional
	KubeReservedCPU Quantity `json:"kubeReservedCpu,omitempty"`
	// Hard eviction threshold for memory (absolute like 200Mi or percentage like 7%).
	// +kubebuilder:default="7%"
	// +optional
	EvictionHardMemory Threshold `json:"evictionHardMemory,omitempty"`
	// Soft eviction threshold for memory (absolute like 1Gi or percentage like 10%).
	// +kubebuilder:default="10%"
	// +optional
	EvictionSoftMemory Threshold `json:"evictionSoftMemory,omitempty"`
}

// Addons is the cluster add-ons configuration. Each add-on is installed in
// the tenant cluster as a Flux HelmRelease.
type Addons struct {
	// Cert-manager addon.
	// +optional
	CertManager ToggledAddon `json:"certManager,omitempty"`
	// Cilium CNI plugin.
	// +optional
	Cilium Addon `json:"cilium,omitempty"`
	// Gateway API addon.
	// +optional
	GatewayAPI GatewayAPIAddon `json:"gatewayAPI,omitempty"`
	// Ingress-NGINX controller.
	// +kubebuilder:default={}
	// +optional
	IngressNginx IngressNginxAddon `json:"ingressNginx,omitempty"`
	// NVIDIA GPU Operator.
	// +optional
	GPUOperator ToggledAddon `json:"gpuOperator,omitempty"`
	// HAMi GPU virtualization middleware (requires GPU Operator).
	// +optional
	HAMi ToggledAddon `json:"hami,omitempty"`
	// FluxCD GitOps operator.
	// +optional
	FluxCD ToggledAddon `json:"fluxcd,omitempty"`
	// Monitoring agents.
	// +optional
	MonitoringAgents ToggledAddon `json:"monitoringAgents,omitempty"`
	// Vertical Pod Autoscaler.
	// +optional
	VerticalPodAutoscaler Addon `json:"verticalPodAutoscaler,omitempty"`
	// Velero backup/restore addon.
	// +optional
	Velero ToggledAddon `json:"velero,omitempty"`
	// CoreDNS addon.
	// +optional
	CoreDNS Addon `json:"coredns,omitempty"`
	// Hairpin-NAT fix for ingress-nginx with PROXY-protocol. Requires
	// addons.ingressNginx.enabled. Only useful when PROXY-protocol is wired
	// on the tenant ingress-nginx via valuesOverride.
	// +optional
	Ouroboros ToggledAddon `json:"ouroboros,omitempty"`
}

// Addon is an always-installed add-on whose Helm values can be overridden.
type Addon struct {
	// Custom Helm values overrides, deep-merged over the add-on's defaults
	// (the user wins key by key; lists are replaced).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ValuesOverride *apiextensionsv1.JSON `json:"valuesOverride,omitempty"`
}

// ToggledAddon is an optional add-on: installed only when enabled.
type ToggledAddon struct {
	// Enable the add-on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Custom Helm values overrides, deep-merged over the add-on's defaults
	// (the user wins key by key; lists are replaced).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ValuesOverride *apiextensionsv1.JSON `json:"valuesOverride,omitempty"`
}

// GatewayAPIAddon enables the Gateway API CRDs and Cilium's Gateway API
// support.
type GatewayAPIAddon struct {
	// Enable Gateway API.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// ExposeMethod says how the tenant's ingress-nginx controller is reached.
// +kubebuilder:validation:Enum=Proxied;LoadBalancer
type ExposeMethod string

// Expose methods of the ingress-nginx add-on.
const (
	// ExposeProxied routes the hosts through the management cluster's
	// ingress with SSL passthrough to node ports 30000/30001.
	ExposeProxied ExposeMethod = "Proxied"
	// ExposeLoadBalancer leaves the controller's Service type to the chart
	// (a LoadBalancer served by the KubeVirt cloud controller manager).
	ExposeLoadBalancer ExposeMethod = "LoadBalancer"
)

// IngressNginxAddon is the tenant's ingress-nginx controller.
type IngressNginxAddon struct {
	// Enable the controller (requires nodes labeled ingress-nginx).
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Method to expose the controller. Allowed values: Proxied, LoadBalancer.
	// +kubebuilder:default=Proxied
	// +optional
	ExposeMethod ExposeMethod `json:"exposeMethod,omitempty"`
	// Domains routed to this tenant cluster when exposeMethod is Proxied.
	// Each must lie under the tenant host (or a suffix the platform
	// allows); wildcards only where the platform allows them.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Hosts []string `json:"hosts,omitempty"`
	// Custom Helm values overrides, deep-merged over the add-on's defaults.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ValuesOverride *apiextensionsv1.JSON `json:"valuesOverride,omitempty"`
}

// ControlPlane is the Kubernetes control-plane configuration.
type ControlPlane struct {
	// Number of control-plane replicas.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// API Server configuration.
	// +kubebuilder:default={"resourcesPreset":"c1.medium"}
	// +optional
	APIServer APIServer `json:"apiServer,omitempty"`
	// Controller Manager configuration.
	// +kubebuilder:default={"resourcesPreset":"t1.micro"}
	// +optional
	ControllerManager Component `json:"controllerManager,omitempty"`
	// Scheduler configuration.
	// +kubebuilder:default={"resourcesPreset":"t1.micro"}
	// +optional
	Scheduler Component `json:"scheduler,omitempty"`
	// Konnectivity configuration.
	// +kubebuilder:default={"server":{"resourcesPreset":"t1.micro"}}
	// +optional
	Konnectivity Konnectivity `json:"konnectivity,omitempty"`
}

// Component is the sizing of one control-plane component: explicit
// resources override the preset key by key. Explicit resources stop at the
// largest preset's (32 CPUs, 256Gi): the component runs in the management
// cluster.
type Component struct {
	// CPU and memory resources of the component; each key set overrides the
	// preset's value for that key.
	// +optional
	Resources Resources `json:"resources,omitempty"`
	// Preset if resources omitted.
	// +optional
	ResourcesPreset ResourcesPreset `json:"resourcesPreset,omitempty"`
}

// APIServer is the tenant API server's sizing (as Component) and its extra
// flags, volumes and mounts, passed to the KamajiControlPlane
// (spec.apiServer.extraArgs, spec.apiServer.extraVolumeMounts,
// spec.deployment.extraVolumes). The pod runs in the management cluster:
// volumes come only from ConfigMaps and Secrets of the cluster's namespace.
type APIServer struct {
	// CPU and memory resources for API Server; each key set overrides the
	// preset's value for that key.
	// +optional
	Resources Resources `json:"resources,omitempty"`
	// Preset if resources omitted.
	// +optional
	ResourcesPreset ResourcesPreset `json:"resourcesPreset,omitempty"`
	// Extra command-line flags of the tenant kube-apiserver, each
	// "--name=value" (or "--name"), passed to the KamajiControlPlane's
	// spec.apiServer.extraArgs sorted by flag name, so reordering the list
	// changes nothing. Each flag at most once. Flags the platform sets
	// (storage, certificates, ports, service network, service accounts,
	// authorization, the probes' anonymous access) and flags that make the
	// API server call out from the management network (webhook, tracing
	// and admission configuration files) or spend what other tenants share
	// (audit log, event TTL, watch cache, logs handler) are refused, and so
	// are --oidc-* and --authentication-config whatever oidc.mode: OIDC is
	// configured only with oidc. Empty by default.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ExtraArgs []APIServerArg `json:"extraArgs,omitempty"`
	// Extra volumes of the control-plane pod (KamajiControlPlane
	// spec.deployment.extraVolumes), to hold files extraArgs name. Only
	// configMap and secret sources, from the cluster's namespace: the pod
	// runs in the management cluster. Names are unique, and not one the
	// control plane uses itself. Empty by default.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ExtraVolumes []APIServerVolume `json:"extraVolumes,omitempty"`
	// Extra mounts of the kube-apiserver container (KamajiControlPlane
	// spec.apiServer.extraVolumeMounts). Each names a volume of
	// extraVolumes; mount paths are absolute, unique, and neither on nor
	// above a path the control plane uses (/etc/kubernetes, the CA
	// certificate directories, /run/konnectivity). Empty by default.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ExtraVolumeMounts []APIServerVolumeMount `json:"extraVolumeMounts,omitempty"`
}

// APIServerArg is one kube-apiserver flag, "--name=value" or "--name".
//
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:Pattern=`^--[a-z0-9][-a-z0-9]*(=.*)?$`
type APIServerArg string

// APIServerVolume is a volume of the control-plane pod from a ConfigMap or
// a Secret of the cluster's namespace (a subset of core/v1 Volume).
type APIServerVolume struct {
	// Volume name, a DNS label, unique among extraVolumes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// ConfigMap of the cluster's namespace to populate the volume.
	// +optional
	ConfigMap *ConfigMapVolume `json:"configMap,omitempty"`
	// Secret of the cluster's namespace to populate the volume.
	// +optional
	Secret *SecretVolume `json:"secret,omitempty"`
}

// ConfigMapVolume names a ConfigMap in the cluster's namespace.
type ConfigMapVolume struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Optional: the pod starts without the ConfigMap.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// SecretVolume names a Secret in the cluster's namespace.
type SecretVolume struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName"`
	// Optional: the pod starts without the Secret.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// APIServerVolumeMount mounts one of extraVolumes into the kube-apiserver
// container (a subset of core/v1 VolumeMount).
type APIServerVolumeMount struct {
	// Name of a volume of extraVolumes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Absolute path in the container, without a trailing slash.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(/[^/:]+)+$`
	MountPath string `json:"mountPath"`
	// Mounted read-only if true (ConfigMap and Secret volumes are
	// read-only anyway).
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}

// ResourcesPreset names a <series>.<size> sizing preset, or one of
// the deprecated flat aliases.
// +kubebuilder:validation:Enum="t1.nano";"t1.micro";"t1.small";"t1.medium";"t1.large";"t1.xlarge";"t1.2xlarge";"t1.4xlarge";"c1.nano";"c1.micro";"c1.small";"c1.medium";"c1.large";"c1.xlarge";"c1.2xlarge";"c1.4xlarge";"s1.nano";"s1.micro";"s1.small";"s1.medium";"s1.large";"s1.xlarge";"s1.2xlarge";"s1.4xlarge";"u1.nano";"u1.micro";"u1.small";"u1.medium";"u1.large";"u1.xlarge";"u1.2xlarge";"u1.4xlarge";"m1.nano";"m1.micro";"m1.small";"m1.medium";"m1.large";"m1.xlarge";"m1.2xlarge";"m1.4xlarge";"nano";"micro";"small";"medium";"large";"xlarge";"2xlarge"
type ResourcesPreset string

// Konnectivity is the Konnectivity configuration.
type Konnectivity struct {
	// Konnectivity Server configuration.
	// +kubebuilder:default={"resourcesPreset":"t1.micro"}
	// +optional
	Server Component `json:"server,omitempty"`
}

// OIDCMode is the identity mode of the tenant kube-apiserver.
// +kubebuilder:validation:Enum=None;System;CustomConfig
type OIDCMode string

// OIDC modes.
const (
	// OIDCModeNone: no OIDC; only the admin kubeconfig works.
	OIDCModeNone OIDCMode = "None"
	// OIDCModeSystem trusts the platform's issuer with an audience unique to
	// this cluster.
	OIDCModeSystem OIDCMode = "System"
	// OIDCModeCustomConfig trusts the tenant's own AuthenticationConfiguration.
	OIDCModeCustomConfig OIDCMode = "CustomConfig"
)

// OIDC is the OIDC authentication of the tenant kube-apiserver, wired as a
// structured AuthenticationConfiguration file (--authentication-config),
// and the users bound to a role inside the tenant cluster.
type OIDC struct {
	// Identity mode. None: no OIDC, only the admin kubeconfig works.
	// System: trust the platform's issuer with an audience unique to this
	// cluster. CustomConfig: trust the tenant's own
	// AuthenticationConfiguration. Changing it restarts the API server
	// pods.
	// +kubebuilder:default=None
	// +optional
	Mode OIDCMode `json:"mode,omitempty"`
	// Tenant-supplied AuthenticationConfiguration, used only with mode
	// CustomConfig: exactly one of config and secretRef.name.
	// +kubebuilder:default={}
	// +optional
	CustomConfig OIDCCustomConfig `json:"customConfig,omitempty"`
	// Users granted a role inside the tenant cluster: one
	// ClusterRoleBinding each, for the User named by the email claim.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Users []OIDCUser `json:"users,omitempty"`
}

// OIDCCustomConfig is the tenant's AuthenticationConfiguration, inline or
// in a Secret of the cluster's namespace.
type OIDCCustomConfig struct {
	// Inline AuthenticationConfiguration YAML
	// (apiserver.config.k8s.io/v1beta1), at most 32768 characters, with at
	// least one jwt issuer. Mutually exclusive with secretRef.name.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Config string `json:"config,omitempty"`
	// Secret in the cluster's namespace whose key config.yaml holds the
	// AuthenticationConfiguration. Mutually exclusive with config. The
	// control-plane function refuses it: kube-apiserver reloads a
	// Secret's edits, so its issuers could not be checked; give the
	// configuration inline in config.
	// +kubebuilder:default={}
	// +optional
	SecretRef OIDCSecretRef `json:"secretRef,omitempty"`
}

// OIDCSecretRef names a Secret in the cluster's namespace.
type OIDCSecretRef struct {
	// Name of the Secret (key config.yaml).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	Name string `json:"name,omitempty"`
}

// OIDCRole is the role bound to a user inside the tenant cluster.
// +kubebuilder:validation:Enum=admin;view
type OIDCRole string

// OIDC roles and the ClusterRoles they bind.
const (
	// OIDCRoleAdmin binds ClusterRole cluster-admin.
	OIDCRoleAdmin OIDCRole = "admin"
	// OIDCRoleView binds ClusterRole view.
	OIDCRoleView OIDCRole = "view"
)

// OIDCUser is one user bound to a role inside the tenant cluster.
type OIDCUser struct {
	// Email address, matched against the token's email claim (the User
	// subject of the ClusterRoleBinding).
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:Pattern=`^[^@\s:]+@[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)+$`
	Email string `json:"email"`
	// Role to bind: admin binds ClusterRole cluster-admin, view binds
	// ClusterRole view.
	Role OIDCRole `json:"role"`
}

// Images holds optional image overrides for air-gapped or rate-limited
// registries.
type Images struct {
	// Image used by the wait-for-kubeconfig init container. Empty falls back
	// to the workers function input's default. Only from registries the
	// platform allows (the workers input's allowedImageRegistries).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	WaitForKubeconfig string `json:"waitForKubeconfig,omitempty"`
}

// KubernetesClusterStatus is what the functions observed of the tenant
// cluster. Crossplane adds its Ready and Synced conditions beside it.
type KubernetesClusterStatus struct {
	// ControlPlane is the observed control plane.
	// +optional
	ControlPlane ControlPlaneStatus `json:"controlPlane,omitempty"`
	// Version is the patch version the control plane actually runs, from the
	// observed KamajiControlPlane (e.g. v1.35.1).
	// +optional
	Version string `json:"version,omitempty"`
	// Nodes is "<ready>/<total>" worker nodes over all node groups.
	// +optional
	Nodes string `json:"nodes,omitempty"`
	// KubeconfigSecret is the name of the Secret in the claim's namespace
	// holding admin.conf, admin.svc, super-admin.conf and super-admin.svc.
	// +optional
	KubeconfigSecret string `json:"kubeconfigSecret,omitempty"`
	// NodeGroups is the observed state of each node group.
	// +optional
	NodeGroups map[string]NodeGroupStatus `json:"nodeGroups,omitempty"`
	// Addons is the readiness of each add-on, keyed by release name.
	// +optional
	Addons map[string]AddonStatus `json:"addons,omitempty"`
	// Backup is the cluster's etcd backups, where the platform takes them.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`
	// Hibernation is the cluster's sleep state and next transition.
	// +optional
	Hibernation *HibernationStatus `json:"hibernation,omitempty"`
	// Encryption is how the API servers encrypt Secrets at rest, where the
	// platform encrypts them.
	// +optional
	Encryption *EncryptionStatus `json:"encryption,omitempty"`

	// Maintenance is what waits for the maintenance window.
	// +optional
	Maintenance *MaintenanceStatus `json:"maintenance,omitempty"`
}

// BackupStatus is the state of a cluster's scheduled etcd backups.
type BackupStatus struct {
	// Interval between two backups (a Go duration as the tenant or the
	// platform wrote it, such as 24h).
	// +optional
	Interval string `json:"interval,omitempty"`
	// Retained is how many backups exist.
	// +optional
	Retained int64 `json:"retained,omitempty"`
	// LastSuccessful is the newest backup the operator completed.
	// +optional
	LastSuccessful *LastBackup `json:"lastSuccessful,omitempty"`
}

// LastBackup is one successful backup.
type LastBackup struct {
	// Name is the backup's name, what spec.restore.backup takes.
	Name string `json:"name"`
	// Time the backup was taken (RFC 3339).
	Time string `json:"time"`
	// Age is how old it was at the last reconcile, to the minute (Go
	// duration without zero trailing units, such as 17h28m).
	Age string `json:"age"`
}

// ControlPlaneStatus is the observed control plane.
type ControlPlaneStatus struct {
	// Endpoint is the tenant API server's external URL, https://<host>:443.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
}

// NodeGroupStatus is the observed state of one node group.
type NodeGroupStatus struct {
	// Replicas is the MachineDeployment's current number of machines.
	// +optional
	Replicas int32 `json:"replicas"`
	// ReadyReplicas is the number of machines whose node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// Allocatable is what one node of the group offers to pods, after kubelet
	// reservations and hard eviction (the autoscaler capacity annotations).
	// +optional
	Allocatable Allocatable `json:"allocatable,omitempty"`
	// Rollout is the roll of the group's machines in progress: absent when
	// none is (no MachineSet of another machine template has machines).
	// +optional
	Rollout *NodeGroupRollout `json:"rollout,omitempty"`
	// KubeletVersions counts the group's machines by the kubelet version
	// their node reports (Machine status.nodeInfo.kubeletVersion) as
	// vMAJOR.MINOR.PATCH, or "unknown" for any other text, sorted by
	// version; machines without a node yet are not counted. Absent when
	// the cluster may have more machines than the function reads
	// (docs/tenant-guide.md, Status).
	// +optional
	KubeletVersions []KubeletVersionCount `json:"kubeletVersions,omitempty"`
}

// NodeGroupRollout is a roll of a node group's machines from one machine
// template to another (Cluster API replaces the machines one by one).
type NodeGroupRollout struct {
	// From are the KubevirtMachineTemplates of the older MachineSets that
	// still have machines, sorted.
	From []string `json:"from"`
	// To is the KubevirtMachineTemplate the MachineDeployment rolls to
	// (its spec.template.spec.infrastructureRef.name).
	To string `json:"to"`
	// UpToDateReplicas is the number of machines already on To (the
	// MachineDeployment's status.upToDateReplicas).
	UpToDateReplicas int32 `json:"upToDateReplicas"`
	// Replicas is the MachineDeployment's current number of machines, old
	// and new.
	Replicas int32 `json:"replicas"`
}

// KubeletVersionCount is how many machines of a node group run one
// kubelet version.
type KubeletVersionCount struct {
	// Version is the kubelet version, e.g. v1.35.1 ("unknown" for a value
	// that is not a version).
	Version string `json:"version"`
	// Machines is the number of machines whose node reports Version.
	Machines int32 `json:"machines"`
}

// Allocatable is a node's allocatable CPU and memory.
type Allocatable struct {
	// CPU in millicores, e.g. 1800m.
	// +optional
	CPU string `json:"cpu,omitempty"`
	// Memory in MiB, e.g. 6800Mi.
	// +optional
	Memory string `json:"memory,omitempty"`
}

// AddonStatus is the readiness of one add-on's HelmRelease.
type AddonStatus struct {
	// Ready is true when the HelmRelease reports Ready=True.
	Ready bool `json:"ready"`
	// Message says why the add-on is not ready: a fixed text, or the
	// HelmRelease's Ready reason when Flux's API defines it (InstallFailed,
	// UpgradeFailed, ...). The condition's own message is not copied: it
	// quotes the tenant cluster's API server.
	// +optional
	Message string `json:"message,omitempty"`
}

package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KamajiControlPlaneKind is the kind name of KamajiControlPlane.
const KamajiControlPlaneKind = "KamajiControlPlane"

// KubeconfigSecretKeyAnnotation is the KamajiControlPlane annotation that
// names the key of the admin kubeconfig Secret Kamaji hands to Cluster API;
// tenantkube sets it to "super-admin.svc".
const KubeconfigSecretKeyAnnotation = "kamaji.clastix.io/kubeconfig-secret-key"

// KamajiControlPlane is a tenant control plane (kube-apiserver,
// controller-manager, scheduler as pods in the management cluster) managed
// by Kamaji for a Cluster API Cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type KamajiControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired control plane.
	Spec KamajiControlPlaneSpec `json:"spec,omitzero"`
	// Status is written by the Kamaji control-plane provider; never set it
	// in desired state.
	Status KamajiControlPlaneStatus `json:"status,omitzero"`
}

// KamajiControlPlaneList is a list of KamajiControlPlane.
//
// +kubebuilder:object:root=true
type KamajiControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the listed objects.
	Items []KamajiControlPlane `json:"items"`
}

// KamajiControlPlaneSpec is the subset of spec tenantkube uses (field
// "spec" of the Kamaji control-plane provider v0.20.0 CRD).
type KamajiControlPlaneSpec struct {
	// Replicas is the number of control-plane pods; the CRD defaults it to 2.
	Replicas *int32 `json:"replicas,omitempty"`
	// Version is the Kubernetes patch version, e.g. "v1.35.1" (required).
	Version string `json:"version"`
	// DataStoreName names the cluster-scoped kamaji.clastix.io DataStore
	// holding this control plane's state.
	DataStoreName string `json:"dataStoreName,omitempty"`
	// DataStoreSchema is the etcd key prefix or SQL database of this
	// control plane in its DataStore; Kamaji defaults it to NS_N with '-'
	// turned to '_', and the TenantControlPlane's is immutable.
	DataStoreSchema string `json:"dataStoreSchema,omitempty"`
	// DataStoreUsername is the SQL user of this control plane (immutable,
	// defaulted as DataStoreSchema).
	DataStoreUsername string `json:"dataStoreUsername,omitempty"`
	// ControlPlaneEndpoint is filled in by the provider with the address
	// the tenant API server is reached at; read it, do not set it.
	ControlPlaneEndpoint *APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// APIServer configures the kube-apiserver container.
	APIServer *ControlPlaneComponent `json:"apiServer,omitempty"`
	// ControllerManager configures the kube-controller-manager container.
	ControllerManager *ControlPlaneComponent `json:"controllerManager,omitempty"`
	// Scheduler configures the kube-scheduler container.
	Scheduler *ControlPlaneComponent `json:"scheduler,omitempty"`
	// Addons configures add-ons Kamaji installs itself (konnectivity).
	Addons *AddonsSpec `json:"addons,omitempty"`
	// Kubelet configures how the control plane talks to tenant kubelets;
	// the CRD defaults it to cgroupfs systemd and address types
	// InternalIP, ExternalIP, Hostname.
	Kubelet *KubeletSpec `json:"kubelet,omitempty"`
	// Network configures how the tenant API server is exposed; the CRD
	// defaults serviceType to LoadBalancer.
	Network *NetworkSpec `json:"network,omitempty"`
	// Deployment configures the control-plane Deployment.
	Deployment *DeploymentSpec `json:"deployment,omitempty"`
}

// DeploymentSpec is field spec.deployment of the Kamaji control-plane
// provider v0.20.0 CRD; only extraVolumes and extraContainers are used.
type DeploymentSpec struct {
	// ExtraVolumes are added to the control-plane pod (core/v1 Volume).
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty"`
	// ExtraContainers are added to the control-plane pod (core/v1
	// Container), such as the Talos CSR signer.
	ExtraContainers []corev1.Container `json:"extraContainers,omitempty"`
	// PodAdditionalMetadata are labels and annotations of the
	// control-plane pods (provider v0.20.0
	// api/v1alpha2/kamajicontrolplane_types.go:174-176, copied to the
	// TenantControlPlane by controllers/kamajicontrolplane_controller_tcp.go:239):
	// a change rolls them.
	PodAdditionalMetadata *AdditionalMetadata `json:"podAdditionalMetadata,omitempty"`
}

// AdditionalMetadata are labels and annotations (Kamaji
// api/v1alpha1 AdditionalMetadata).
type AdditionalMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// APIEndpoint is a host and port (field spec.controlPlaneEndpoint of the
// Kamaji control-plane provider v0.20.0 CRD; at least one must be set).
type APIEndpoint struct {
	// Host is a DNS name or IP address, 1..512 characters.
	Host string `json:"host,omitempty"`
	// Port is a TCP port, 1..65535.
	Port int32 `json:"port,omitempty"`
}

// ControlPlaneComponent configures one control-plane container (fields
// spec.apiServer, spec.controllerManager, spec.scheduler of the Kamaji
// control-plane provider v0.20.0 CRD).
type ControlPlaneComponent struct {
	// ExtraArgs are extra command-line flags, each "--flag=value".
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// ExtraVolumeMounts are added to the container (core/v1 VolumeMount),
	// each naming a volume of spec.deployment.extraVolumes.
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`
	// Resources are the container's requests and limits (CPU in cores,
	// memory and ephemeral-storage in bytes, as quantities).
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// AddonsSpec holds the add-ons Kamaji deploys itself (field spec.addons of
// the Kamaji control-plane provider v0.20.0 CRD); only konnectivity is used.
type AddonsSpec struct {
	// Konnectivity enables the konnectivity server (sidecar of the API
	// server) and agent (in the tenant cluster).
	Konnectivity *KonnectivitySpec `json:"konnectivity,omitempty"`
}

// KonnectivitySpec is field spec.addons.konnectivity of the Kamaji
// control-plane provider v0.20.0 CRD.
type KonnectivitySpec struct {
	// Server is the konnectivity server; the CRD defaults it to port 8132
	// and the registry.k8s.io proxy-server image.
	Server *KonnectivityServerSpec `json:"server,omitempty"`
	// Agent is the konnectivity agent; the CRD defaults it to a DaemonSet
	// of the registry.k8s.io proxy-agent image.
	Agent *KonnectivityAgentSpec `json:"agent,omitempty"`
}

// KonnectivityServerSpec is field spec.addons.konnectivity.server of the
// Kamaji control-plane provider v0.20.0 CRD.
type KonnectivityServerSpec struct {
	// Port is the TCP port the server listens on (required; tenantkube
	// uses 8132).
	Port int32 `json:"port"`
	// Image is the container image without tag.
	Image string `json:"image,omitempty"`
	// Version is the image tag, e.g. "v0.34.0"; empty lets Kamaji derive it
	// from the Kubernetes version.
	Version string `json:"version,omitempty"`
	// ExtraArgs are extra command-line flags of the server.
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// Resources are the server container's requests and limits.
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// KonnectivityAgentMode says how the konnectivity agent is deployed in the
// tenant cluster (enum of the Kamaji control-plane provider v0.20.0 CRD).
type KonnectivityAgentMode string

const (
	// KonnectivityAgentModeDaemonSet runs one agent per node (CRD default).
	KonnectivityAgentModeDaemonSet KonnectivityAgentMode = "DaemonSet"
	// KonnectivityAgentModeDeployment runs Replicas agents.
	KonnectivityAgentModeDeployment KonnectivityAgentMode = "Deployment"
)

// KonnectivityAgentSpec is field spec.addons.konnectivity.agent of the
// Kamaji control-plane provider v0.20.0 CRD. A CEL rule of the CRD requires
// Replicas to be unset or 0 in DaemonSet mode and unset or >0 in
// Deployment mode.
type KonnectivityAgentSpec struct {
	// Image is the container image without tag.
	Image string `json:"image,omitempty"`
	// Version is the image tag, e.g. "v0.34.0"; empty lets Kamaji derive it.
	Version string `json:"version,omitempty"`
	// Mode is DaemonSet (CRD default) or Deployment.
	Mode KonnectivityAgentMode `json:"mode,omitempty"`
	// Replicas is the agent count in Deployment mode.
	Replicas *int32 `json:"replicas,omitempty"`
	// ExtraArgs are extra command-line flags of the agent.
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// Tolerations of the agent pods; the CRD defaults them to
	// CriticalAddonsOnly Exists.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// CgroupDriver is the tenant kubelets' cgroup driver (enum of field
// spec.kubelet.cgroupfs of the Kamaji control-plane provider v0.20.0 CRD).
type CgroupDriver string

const (
	// CgroupDriverSystemd is "systemd" (the CRD default).
	CgroupDriverSystemd CgroupDriver = "systemd"
	// CgroupDriverCgroupfs is "cgroupfs".
	CgroupDriverCgroupfs CgroupDriver = "cgroupfs"
)

// KubeletSpec is field spec.kubelet of the Kamaji control-plane provider
// v0.20.0 CRD.
type KubeletSpec struct {
	// CgroupFS is the cgroup driver written into the kubelet configuration.
	CgroupFS CgroupDriver `json:"cgroupfs,omitempty"`
	// PreferredAddressTypes is the order in which the API server tries node
	// addresses (a set, at least one; Hostname, InternalIP, ExternalIP,
	// InternalDNS, ExternalDNS).
	PreferredAddressTypes []corev1.NodeAddressType `json:"preferredAddressTypes,omitempty"`
}

// NetworkSpec is field spec.network of the Kamaji control-plane provider
// v0.20.0 CRD.
type NetworkSpec struct {
	// ServiceType is the type of the API server Service: ClusterIP,
	// NodePort or LoadBalancer (CRD default).
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`
	// Ingress exposes the API server through an Ingress of the management
	// cluster.
	Ingress *IngressSpec `json:"ingress,omitempty"`
	// CertSANs are extra subject alternative names of the API server's
	// certificate.
	CertSANs []string `json:"certSANs,omitempty"`
	// AdditionalServicePorts are extra ports of the Service in front of
	// the control-plane pods (for sidecars such as a CSR signer).
	AdditionalServicePorts []AdditionalServicePort `json:"additionalServicePorts,omitempty"`
}

// AdditionalServicePort is one item of spec.network.additionalServicePorts
// of the Kamaji control-plane provider CRD.
type AdditionalServicePort struct {
	// Name is a DNS label, not kube-apiserver or konnectivity-server.
	Name string `json:"name"`
	// Port is the Service's port.
	Port int32 `json:"port"`
	// Protocol is TCP (CRD default), UDP or SCTP.
	Protocol corev1.Protocol `json:"protocol,omitempty"`
	// TargetPort is the pods' port, a number or an IANA_SVC_NAME.
	TargetPort intstr.IntOrString `json:"targetPort,omitempty"`
}

// IngressSpec is field spec.network.ingress of the Kamaji control-plane
// provider v0.20.0 CRD.
type IngressSpec struct {
	// Hostname is the Ingress host, optionally with ":port"; tenantkube
	// uses "<host>:443" (required, non-empty).
	Hostname string `json:"hostname"`
	// ClassName is the Ingress class of the management cluster.
	ClassName string `json:"className,omitempty"`
	// ExtraAnnotations are added to the Ingress, e.g.
	// nginx.ingress.kubernetes.io/ssl-passthrough: "true".
	ExtraAnnotations map[string]string `json:"extraAnnotations,omitempty"`
	// ExtraLabels are added to the Ingress.
	ExtraLabels map[string]string `json:"extraLabels,omitempty"`
}

// KamajiControlPlaneStatus is field status of the Kamaji control-plane
// provider v0.20.0 CRD, complete: every status field the CRD defines.
type KamajiControlPlaneStatus struct {
	// Ready is true when the tenant control plane serves requests
	// (required when status is present).
	Ready bool `json:"ready"`
	// Initialization reports Cluster API's initialization contract.
	Initialization *Initialization `json:"initialization,omitempty"`
	// Version is the Kubernetes version running (required when status is
	// present).
	Version string `json:"version"`
	// ExternalManagedControlPlane tells Cluster API that control-plane
	// machines are not Machines; the CRD defaults it to true.
	ExternalManagedControlPlane *bool `json:"externalManagedControlPlane,omitempty"`
	// Replicas is the number of control-plane pods.
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of ready control-plane pods.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// UpToDateReplicas is the number of pods at the desired spec.
	UpToDateReplicas int32 `json:"upToDateReplicas,omitempty"`
	// AvailableReplicas is the number of available pods.
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// Selector is the label selector of the pods, in string form.
	Selector string `json:"selector,omitempty"`
	// FailureReason is a terse machine-readable failure reason.
	FailureReason string `json:"failureReason,omitempty"`
	// FailureMessage is a human-readable failure message.
	FailureMessage string `json:"failureMessage,omitempty"`
	// Conditions are standard metav1 conditions.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Initialization is field status.initialization of the Kamaji control-plane
// provider v0.20.0 CRD.
type Initialization struct {
	// ControlPlaneInitialized is true once the control plane accepted its
	// first request (Cluster API's "initialized").
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

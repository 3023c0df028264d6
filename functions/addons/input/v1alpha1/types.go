package v1alpha1

import (
	"strings"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Input is the addons function's input (apiVersion fn.tenantkube.io/v1alpha1,
// kind AddonsInput), set in the Composition's pipeline step. Every field is
// optional; Default fills what is unset.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=crossplane
type AddonsInput struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// IngressClassName is the management cluster's ingress class, used for
	// the Ingresses N-app-<digest> and N-app-<digest>-http that route a
	// tenant's hosts to its ingress-nginx when
	// addons.ingressNginx.exposeMethod is Proxied; they need SSL passthrough
	// and no snippet annotation.
	// +kubebuilder:default=nginx
	// +kubebuilder:validation:MinLength=1
	// +optional
	IngressClassName string `json:"ingressClassName,omitempty"`

	// ServiceCIDR is the tenant clusters' service CIDR; CoreDNS's Service
	// gets its 10th address (10.95.0.0/16 → 10.95.0.10). The same setting
	// as the control-plane input's serviceCIDR: set it once, in the
	// platform settings EnvironmentConfig.
	// +kubebuilder:default="10.95.0.0/16"
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty"`

	// ClusterDomain is the management cluster's DNS domain (its kubelets'
	// --cluster-domain), not the tenant clusters' own. Cilium's
	// k8sServiceHost is the tenant API server Service's fully qualified
	// name N.NS.svc.<clusterDomain>: Cilium's agents resolve it on the
	// worker VMs, whose DNS has no management-cluster search path. The
	// same setting in the three function inputs: set it once, in the
	// platform settings EnvironmentConfig. A DNS subdomain of at most 119
	// characters.
	// +kubebuilder:default="cluster.local"
	// +kubebuilder:validation:MaxLength=119
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

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

	// BaseDomain is the tenant base domain, as in the control-plane input:
	// the tenant host of namespace NS is <NS>.<baseDomain> unless the
	// Namespace's tenantkube.io/tenant-host annotation sets it.
	// addons.ingressNginx.hosts must lie under the tenant host.
	// +kubebuilder:default="tenants.example.com"
	// +kubebuilder:validation:MaxLength=156
	// +optional
	BaseDomain string `json:"baseDomain,omitempty"`

	// AllowedHostSuffixes are domains under which any tenant may route
	// ingress-nginx hosts, beside its own tenant host. Names under a suffix
	// listed here are not exclusive: two tenants may claim the same one. An
	// entry may not be, contain or lie under baseDomain or a tenant-host
	// suffix (tenants' own hosts).
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

	// MaxCleanupObjects is the most HelmCharts of a cluster composed for
	// deletion with it (as the workers input's maxCleanupObjects); beyond
	// it a Warning names the count.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxCleanupObjects int `json:"maxCleanupObjects,omitempty"`

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

	// DefaultWorkerOS is the operating system of a node group that does
	// not set os, as in the workers input: a cluster with a Talos group gets
	// the talos-bootstrap-token release.
	// +kubebuilder:validation:Enum=Ubuntu;Talos
	// +kubebuilder:default=Ubuntu
	// +optional
	DefaultWorkerOS tkv1alpha1.WorkerOS `json:"defaultWorkerOS,omitempty"`

	// Charts is the chart source of each add-on.
	// +kubebuilder:default={}
	// +optional
	Charts Charts `json:"charts,omitempty"`

	// DeletionOrder says how the add-on HelmReleases are made to go before
	// the control plane when a cluster is deleted: Usages declares
	// one Crossplane Usage per release (protection.crossplane.io/v1beta1,
	// Crossplane v2: the KamajiControlPlane N is used by the HelmRelease
	// N-<release>, so Flux uninstalls each release while the tenant API
	// server still answers); None declares nothing (for a Crossplane that
	// does not serve protection.crossplane.io), and the releases are deleted
	// together with the control plane.
	// +kubebuilder:validation:Enum=Usages;None
	// +kubebuilder:default=Usages
	// +optional
	DeletionOrder DeletionOrder `json:"deletionOrder,omitempty"`

	// Monitoring are the platform's destinations of the monitoring agents
	// of a cluster with addons.monitoringAgents.enabled.
	// +kubebuilder:default={}
	// +optional
	Monitoring Monitoring `json:"monitoring,omitempty"`
}

// Monitoring are where a tenant cluster's monitoring agents ship metrics and
// logs and where its VPA recommender reads metrics back. In each URL,
// {namespace} stands for the cluster's namespace NS and {name} for its name
// N, so a platform with a monitoring stack per tenant points every cluster
// at its own, and {clusterDomain} for clusterDomain, so a name resolves
// from a tenant node, which has no search path. The defaults are the seed
// chart's endpoints of a monitoring stack in tenant-root (the seed writes
// its cluster domain, cozy.local).
type Monitoring struct {
	// MetricsWriteURL is the Prometheus remote-write endpoint vmagent sends
	// the cluster's metrics to (vmagent remoteWrite.url).
	// +kubebuilder:default="http://vminsert-shortterm.tenant-root.svc.{clusterDomain}:8480/insert/0/prometheus"
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	MetricsWriteURL string `json:"metricsWriteURL,omitempty"`
	// MetricsReadURL is the Prometheus-compatible query endpoint the VPA
	// recommender reads the cluster's usage history from
	// (--prometheus-address).
	// +kubebuilder:default="http://vmselect-shortterm.tenant-root.svc.{clusterDomain}:8481/select/0/prometheus/"
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	MetricsReadURL string `json:"metricsReadURL,omitempty"`
	// LogsURL is where Fluent Bit sends the cluster's container logs as
	// JSON lines over HTTP (its http output's host, port and URI; TLS for
	// https).
	// +kubebuilder:default="http://vlinsert-generic.tenant-root.svc.{clusterDomain}:9481/insert/jsonline?_stream_fields=stream,kubernetes_pod_name,kubernetes_container_name,kubernetes_namespace_name&_msg_field=log&_time_field=date"
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	LogsURL string `json:"logsURL,omitempty"`
	// LogsHeaders are HTTP headers sent with every log request (VictoriaLogs
	// reads the tenant from AccountID and ProjectID).
	// +kubebuilder:default={"AccountID":"0","ProjectID":"0"}
	// +optional
	LogsHeaders map[string]string `json:"logsHeaders,omitempty"`
}

// For returns m with {namespace}, {name} and {clusterDomain} replaced by
// the cluster's namespace and name and the management cluster's domain in
// every URL.
func (m Monitoring) For(namespace, name, clusterDomain string) Monitoring {
	r := strings.NewReplacer("{namespace}", namespace, "{name}", name, "{clusterDomain}", clusterDomain)
	m.MetricsWriteURL = r.Replace(m.MetricsWriteURL)
	m.MetricsReadURL = r.Replace(m.MetricsReadURL)
	m.LogsURL = r.Replace(m.LogsURL)
	return m
}

// DeletionOrder names how the function declares the deletion order of the
// objects it composes.
type DeletionOrder string

// Deletion orders.
const (
	// DeletionOrderUsages declares the order with Crossplane Usages.
	DeletionOrderUsages DeletionOrder = "Usages"
	// DeletionOrderNone declares nothing.
	DeletionOrderNone DeletionOrder = "None"
)

// SourceKind is the kind of Flux source a chart comes from.
// +kubebuilder:validation:Enum=HelmRepository;OCIRepository;ExternalArtifact
type SourceKind string

// Chart source kinds.
const (
	// KindHelmRepository is a Flux HelmRepository (an https:// Helm
	// repository, or an oci:// one of type oci); the HelmRelease names the
	// chart and version in spec.chart.
	KindHelmRepository SourceKind = "HelmRepository"
	// KindOCIRepository is a Flux OCIRepository holding one Helm chart
	// artifact; the HelmRelease refers to it through spec.chartRef.
	KindOCIRepository SourceKind = "OCIRepository"
	// KindExternalArtifact is a Flux ExternalArtifact holding one chart
	// (produced by another controller); the HelmRelease refers to it
	// through spec.chartRef.
	KindExternalArtifact SourceKind = "ExternalArtifact"
)

// ValuesLayout says how a chart expects its values.
// +kubebuilder:validation:Enum=Upstream;Wrapped
type ValuesLayout string

// Values layouts.
const (
	// LayoutUpstream is the project's own chart: values at the top level
	// (Cilium: {MTU: 1350}).
	LayoutUpstream ValuesLayout = "Upstream"
	// LayoutWrapped is an umbrella chart that nests the upstream chart
	// under a wrapper key, as Cozystack's charts do (Cilium:
	// {cilium: {MTU: 1350}}). The function nests its defaults the same way,
	// so a Cozystack user's overrides work unchanged.
	LayoutWrapped ValuesLayout = "Wrapped"
)

// ChartSource is where one add-on's chart comes from.
//
// Managed (url set): the function emits the source in NS — for kind
// HelmRepository a HelmRepository N-<repository> (url https:// or oci://),
// for kind OCIRepository an OCIRepository N-<add-on release> with url and
// tag version. Referenced (url empty): name (and namespace, default NS)
// point at an existing HelmRepository, OCIRepository or ExternalArtifact.
// Kind HelmRepository needs chart; an ExternalArtifact is always referenced.
type ChartSource struct {
	// Kind of the Flux source.
	// +optional
	Kind SourceKind `json:"kind,omitempty"`
	// URL of a managed source; empty for a referenced one.
	// +kubebuilder:validation:Pattern=`^(https?|oci)://.+$`
	// +optional
	URL string `json:"url,omitempty"`
	// Repository is the name suffix of a managed HelmRepository
	// (N-<repository>); add-ons whose sources give the same repository share
	// one object and must give the same url.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Repository string `json:"repository,omitempty"`
	// Name of a referenced source object.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of a referenced source object; defaults to the claim's
	// namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Chart name in a HelmRepository.
	// +optional
	Chart string `json:"chart,omitempty"`
	// Version of the chart (HelmRepository: a version or semver range;
	// managed OCIRepository: the tag).
	// +optional
	Version string `json:"version,omitempty"`
	// ValuesLayout of the chart: Upstream or Wrapped.
	// +optional
	ValuesLayout ValuesLayout `json:"valuesLayout,omitempty"`
	// WrapperKey is the key a Wrapped chart nests the upstream values under;
	// defaults to the add-on's Cozystack wrapper key (cilium, ingress-nginx,
	// gpu-operator, ...).
	// +optional
	WrapperKey string `json:"wrapperKey,omitempty"`
}

// Charts holds one ChartSource per add-on release. A source left
// empty takes its default; a source that keeps the default's kind inherits
// every field it leaves empty (so {version: x} only bumps the version).
type Charts struct {
	// Chart source of the cilium release; default: HelmRepository https://helm.cilium.io/ chart cilium version 1.18.4.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://helm.cilium.io/","repository":"cilium","chart":"cilium","version":"1.18.4","valuesLayout":"Upstream","wrapperKey":"cilium"}
	// +optional
	Cilium ChartSource `json:"cilium,omitempty"`
	// Chart source of the coredns release; default: HelmRepository https://coredns.github.io/helm chart coredns version 1.43.3.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://coredns.github.io/helm","repository":"coredns","chart":"coredns","version":"1.43.3","valuesLayout":"Upstream","wrapperKey":"coredns"}
	// +optional
	CoreDNS ChartSource `json:"coredns,omitempty"`
	// Chart source of the vsnap-crd release; default: ExternalArtifact flux-system/tenantkube-addon-vsnap-crd.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-vsnap-crd","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	VsnapCRD ChartSource `json:"vsnapCRD,omitempty"`
	// Chart source of the csi release; default: ExternalArtifact flux-system/tenantkube-addon-csi.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-csi","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	CSI ChartSource `json:"csi,omitempty"`
	// Chart source of the prometheus-operator-crds release; default: HelmRepository https://prometheus-community.github.io/helm-charts chart prometheus-operator-crds version 33.0.2.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://prometheus-community.github.io/helm-charts","repository":"prometheus-community","chart":"prometheus-operator-crds","version":"33.0.2","valuesLayout":"Upstream"}
	// +optional
	PrometheusOperatorCRDs ChartSource `json:"prometheusOperatorCRDs,omitempty"`
	// Chart source of the metrics-server release; default: HelmRepository https://kubernetes-sigs.github.io/metrics-server/ chart metrics-server version 3.13.0.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://kubernetes-sigs.github.io/metrics-server/","repository":"metrics-server","chart":"metrics-server","version":"3.13.0","valuesLayout":"Upstream","wrapperKey":"metrics-server"}
	// +optional
	MetricsServer ChartSource `json:"metricsServer,omitempty"`
	// Chart source of the cert-manager-crds release; default: ExternalArtifact flux-system/tenantkube-addon-cert-manager-crds.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-cert-manager-crds","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	CertManagerCRDs ChartSource `json:"certManagerCRDs,omitempty"`
	// Chart source of the cert-manager release; default: HelmRepository https://charts.jetstack.io chart cert-manager version v1.21.1.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://charts.jetstack.io","repository":"jetstack","chart":"cert-manager","version":"v1.21.1","valuesLayout":"Upstream","wrapperKey":"cert-manager"}
	// +optional
	CertManager ChartSource `json:"certManager,omitempty"`
	// Chart source of the gateway-api-crds release; default: OCIRepository oci://docker.io/envoyproxy/gateway-crds-helm version v1.8.2.
	// +kubebuilder:default={"kind":"OCIRepository","url":"oci://docker.io/envoyproxy/gateway-crds-helm","version":"v1.8.2","valuesLayout":"Upstream"}
	// +optional
	GatewayAPICRDs ChartSource `json:"gatewayAPICRDs,omitempty"`
	// Chart source of the ingress-nginx release; default: HelmRepository https://kubernetes.github.io/ingress-nginx chart ingress-nginx version 4.13.3.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://kubernetes.github.io/ingress-nginx","repository":"ingress-nginx","chart":"ingress-nginx","version":"4.13.3","valuesLayout":"Upstream","wrapperKey":"ingress-nginx"}
	// +optional
	IngressNginx ChartSource `json:"ingressNginx,omitempty"`
	// Chart source of the gpu-operator release; default: HelmRepository https://helm.ngc.nvidia.com/nvidia chart gpu-operator version v25.3.4.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://helm.ngc.nvidia.com/nvidia","repository":"nvidia","chart":"gpu-operator","version":"v25.3.4","valuesLayout":"Upstream","wrapperKey":"gpu-operator"}
	// +optional
	GPUOperator ChartSource `json:"gpuOperator,omitempty"`
	// Chart source of the hami release; default: HelmRepository https://project-hami.github.io/HAMi/ chart hami version 2.6.1.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://project-hami.github.io/HAMi/","repository":"hami","chart":"hami","version":"2.6.1","valuesLayout":"Upstream","wrapperKey":"hami"}
	// +optional
	HAMi ChartSource `json:"hami,omitempty"`
	// Chart source of the fluxcd-operator release; default: OCIRepository oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator version 0.33.0.
	// +kubebuilder:default={"kind":"OCIRepository","url":"oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator","version":"0.33.0","valuesLayout":"Upstream","wrapperKey":"flux-operator"}
	// +optional
	FluxCDOperator ChartSource `json:"fluxcdOperator,omitempty"`
	// Chart source of the fluxcd release; default: OCIRepository oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance version 0.33.0.
	// +kubebuilder:default={"kind":"OCIRepository","url":"oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance","version":"0.33.0","valuesLayout":"Upstream","wrapperKey":"flux-instance"}
	// +optional
	FluxCD ChartSource `json:"fluxcd,omitempty"`
	// Chart source of the cozy-victoria-metrics-operator release; default: HelmRepository https://victoriametrics.github.io/helm-charts/ chart victoria-metrics-operator version 0.55.0.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://victoriametrics.github.io/helm-charts/","repository":"victoriametrics","chart":"victoria-metrics-operator","version":"0.55.0","valuesLayout":"Upstream","wrapperKey":"victoria-metrics-operator"}
	// +optional
	VictoriaMetricsOperator ChartSource `json:"victoriaMetricsOperator,omitempty"`
	// Chart source of the vertical-pod-autoscaler-crds release; default: ExternalArtifact flux-system/tenantkube-addon-vertical-pod-autoscaler-crds.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-vertical-pod-autoscaler-crds","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	VerticalPodAutoscalerCRDs ChartSource `json:"verticalPodAutoscalerCRDs,omitempty"`
	// Chart source of the monitoring-agents release; default: ExternalArtifact flux-system/tenantkube-addon-monitoring-agents.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-monitoring-agents","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	MonitoringAgents ChartSource `json:"monitoringAgents,omitempty"`
	// Chart source of the vertical-pod-autoscaler release; default: HelmRepository https://cowboysysop.github.io/charts/ chart vertical-pod-autoscaler version 11.1.1.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://cowboysysop.github.io/charts/","repository":"cowboysysop","chart":"vertical-pod-autoscaler","version":"11.1.1","valuesLayout":"Upstream","wrapperKey":"vertical-pod-autoscaler"}
	// +optional
	VerticalPodAutoscaler ChartSource `json:"verticalPodAutoscaler,omitempty"`
	// Chart source of the velero release; default: HelmRepository https://vmware-tanzu.github.io/helm-charts chart velero version 12.2.1.
	// +kubebuilder:default={"kind":"HelmRepository","url":"https://vmware-tanzu.github.io/helm-charts","repository":"vmware-tanzu","chart":"velero","version":"12.2.1","valuesLayout":"Upstream","wrapperKey":"velero"}
	// +optional
	Velero ChartSource `json:"velero,omitempty"`
	// Chart source of the ouroboros release; default: ExternalArtifact flux-system/tenantkube-addon-ouroboros.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-ouroboros","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	Ouroboros ChartSource `json:"ouroboros,omitempty"`
	// Chart source of the oidc-users release (one ClusterRoleBinding per
	// spec.oidc.users entry; the chart is charts/oidc-users of the
	// tenantkube repository); default: ExternalArtifact flux-system/tenantkube-addon-oidc-users.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-oidc-users","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	OIDCUsers ChartSource `json:"oidcUsers,omitempty"`
	// Chart source of the talos-bootstrap-token release (the Talos workers'
	// bootstrap token and its RBAC; the chart is
	// charts/talos-bootstrap-token of the tenantkube repository); default:
	// ExternalArtifact flux-system/tenantkube-addon-talos-bootstrap-token.
	// +kubebuilder:default={"kind":"ExternalArtifact","name":"tenantkube-addon-talos-bootstrap-token","namespace":"flux-system","valuesLayout":"Upstream"}
	// +optional
	TalosBootstrapToken ChartSource `json:"talosBootstrapToken,omitempty"`
}

package v1alpha1

import (
	"fmt"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Version string `json:"version,omitempty"`
	// EarlierVersions are earlier versions of this source (each like
	// version: a HelmRepository's chart version, a managed
	// OCIRepository's tag at url) that a running add-on keeps until its
	// cluster's maintenance window; a running version not listed moves to
	// version at once. Each must take the values the current layout
	// renders (docs/platform-guide.md, Maintenance windows).
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +listType=atomic
	// +optional
	EarlierVersions []string `json:"earlierVersions,omitempty"`
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

// Defaults of the add-on settings.
const (
	DefaultSourceInterval = time.Hour
	// Bounds of ReleaseRetryInterval.
	MinReleaseRetryInterval = 10 * time.Second
	MaxReleaseRetryInterval = time.Hour
	// Default monitoring destinations: the seed chart's endpoints of the
	// monitoring stack of tenant-root, its cluster domain cozy.local a
	// placeholder (Monitoring.For).
	DefaultMetricsWriteURL = "http://vminsert-shortterm.tenant-root.svc.{clusterDomain}:8480/insert/0/prometheus"
	DefaultMetricsReadURL  = "http://vmselect-shortterm.tenant-root.svc.{clusterDomain}:8481/select/0/prometheus/"
	DefaultLogsURL         = "http://vlinsert-generic.tenant-root.svc.{clusterDomain}:9481/insert/jsonline?_stream_fields=stream,kubernetes_pod_name,kubernetes_container_name,kubernetes_namespace_name&_msg_field=log&_time_field=date"
	// DefaultArtifactNamespace is where the default ExternalArtifacts of the
	// add-ons without a public chart are looked up.
	DefaultArtifactNamespace = "flux-system"
	// DefaultMaxValuesOverrideBytes is the default of
	// MaxValuesOverrideBytes: 64 KiB.
	DefaultMaxValuesOverrideBytes = 64 << 10
)

// DefaultLogsHeaders are the headers of every log request by default: the
// VictoriaLogs tenant 0:0.
func DefaultLogsHeaders() map[string]string {
	return map[string]string{"AccountID": "0", "ProjectID": "0"}
}

// helm returns a managed HelmRepository source.
func helm(repo, url, chart, version, wrapper string) ChartSource {
	return ChartSource{Kind: KindHelmRepository, URL: url, Repository: repo, Chart: chart, Version: version,
		ValuesLayout: LayoutUpstream, WrapperKey: wrapper}
}

// oci returns a managed OCIRepository source (one chart artifact).
func oci(url, version, wrapper string) ChartSource {
	return ChartSource{Kind: KindOCIRepository, URL: url, Version: version, ValuesLayout: LayoutUpstream, WrapperKey: wrapper}
}

// artifact returns a referenced ExternalArtifact tenantkube-addon-<release>.
func artifact(release string) ChartSource {
	return ChartSource{Kind: KindExternalArtifact, Name: "tenantkube-addon-" + release, Namespace: DefaultArtifactNamespace,
		ValuesLayout: LayoutUpstream}
}

// DefaultCharts returns the default chart source of every add-on, keyed by
// release name. Public charts are each project's own repository at a current
// release; the wrapper keys are those of the Cozystack umbrella charts (used
// only when a source is switched to valuesLayout Wrapped).
func DefaultCharts() map[string]ChartSource {
	return map[string]ChartSource{
		"cilium":                         helm("cilium", "https://helm.cilium.io/", "cilium", "1.18.4", "cilium"),
		"coredns":                        helm("coredns", "https://coredns.github.io/helm", "coredns", "1.43.3", "coredns"),
		"vsnap-crd":                      artifact("vsnap-crd"),
		"csi":                            artifact("csi"),
		"prometheus-operator-crds":       helm("prometheus-community", "https://prometheus-community.github.io/helm-charts", "prometheus-operator-crds", "33.0.2", ""),
		"metrics-server":                 helm("metrics-server", "https://kubernetes-sigs.github.io/metrics-server/", "metrics-server", "3.13.0", "metrics-server"),
		"cert-manager-crds":              artifact("cert-manager-crds"),
		"cert-manager":                   helm("jetstack", "https://charts.jetstack.io", "cert-manager", "v1.21.1", "cert-manager"),
		"gateway-api-crds":               oci("oci://docker.io/envoyproxy/gateway-crds-helm", "v1.8.2", ""),
		"ingress-nginx":                  helm("ingress-nginx", "https://kubernetes.github.io/ingress-nginx", "ingress-nginx", "4.13.3", "ingress-nginx"),
		"gpu-operator":                   helm("nvidia", "https://helm.ngc.nvidia.com/nvidia", "gpu-operator", "v25.3.4", "gpu-operator"),
		"hami":                           helm("hami", "https://project-hami.github.io/HAMi/", "hami", "2.6.1", "hami"),
		"fluxcd-operator":                oci("oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator", "0.33.0", "flux-operator"),
		"fluxcd":                         oci("oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance", "0.33.0", "flux-instance"),
		"cozy-victoria-metrics-operator": helm("victoriametrics", "https://victoriametrics.github.io/helm-charts/", "victoria-metrics-operator", "0.55.0", "victoria-metrics-operator"),
		"vertical-pod-autoscaler-crds":   artifact("vertical-pod-autoscaler-crds"),
		"monitoring-agents":              artifact("monitoring-agents"),
		"vertical-pod-autoscaler":        helm("cowboysysop", "https://cowboysysop.github.io/charts/", "vertical-pod-autoscaler", "11.1.1", "vertical-pod-autoscaler"),
		"velero":                         helm("vmware-tanzu", "https://vmware-tanzu.github.io/helm-charts", "velero", "12.2.1", "velero"),
		"ouroboros":                      artifact("ouroboros"),
		"oidc-users":                     artifact("oidc-users"),
		"talos-bootstrap-token":          artifact("talos-bootstrap-token"),
	}
}

// Source returns a pointer to the ChartSource of an add-on release, or nil
// for an unknown release. The second result is the field's JSON name, for
// error paths (input.charts.<key>).
func (c *Charts) Source(release string) (*ChartSource, string) {
	switch release {
	case "cilium":
		return &c.Cilium, "cilium"
	case "coredns":
		return &c.CoreDNS, "coredns"
	case "vsnap-crd":
		return &c.VsnapCRD, "vsnapCRD"
	case "csi":
		return &c.CSI, "csi"
	case "prometheus-operator-crds":
		return &c.PrometheusOperatorCRDs, "prometheusOperatorCRDs"
	case "metrics-server":
		return &c.MetricsServer, "metricsServer"
	case "cert-manager-crds":
		return &c.CertManagerCRDs, "certManagerCRDs"
	case "cert-manager":
		return &c.CertManager, "certManager"
	case "gateway-api-crds":
		return &c.GatewayAPICRDs, "gatewayAPICRDs"
	case "ingress-nginx":
		return &c.IngressNginx, "ingressNginx"
	case "gpu-operator":
		return &c.GPUOperator, "gpuOperator"
	case "hami":
		return &c.HAMi, "hami"
	case "fluxcd-operator":
		return &c.FluxCDOperator, "fluxcdOperator"
	case "fluxcd":
		return &c.FluxCD, "fluxcd"
	case "cozy-victoria-metrics-operator":
		return &c.VictoriaMetricsOperator, "victoriaMetricsOperator"
	case "vertical-pod-autoscaler-crds":
		return &c.VerticalPodAutoscalerCRDs, "verticalPodAutoscalerCRDs"
	case "monitoring-agents":
		return &c.MonitoringAgents, "monitoringAgents"
	case "vertical-pod-autoscaler":
		return &c.VerticalPodAutoscaler, "verticalPodAutoscaler"
	case "velero":
		return &c.Velero, "velero"
	case "ouroboros":
		return &c.Ouroboros, "ouroboros"
	case "oidc-users":
		return &c.OIDCUsers, "oidcUsers"
	case "talos-bootstrap-token":
		return &c.TalosBootstrapToken, "talosBootstrapToken"
	}
	return nil, ""
}

// Releases returns the release names Charts has a source for, sorted.
func Releases() []string {
	d := DefaultCharts()
	out := make([]string, 0, len(d))
	for r := range d {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func (s *ChartSource) defaultFrom(def ChartSource, release string) {
	if s.isZero() {
		*s = def
		return
	}
	if s.Kind == "" || s.Kind == def.Kind {
		s.Kind = def.Kind
		fill(&s.URL, def.URL)
		fill(&s.Repository, def.Repository)
		fill(&s.Name, def.Name)
		fill(&s.Namespace, def.Namespace)
		fill(&s.Chart, def.Chart)
		fill(&s.Version, def.Version)
		fill((*string)(&s.ValuesLayout), string(def.ValuesLayout))
	}
	if s.Kind == KindHelmRepository && s.URL != "" {
		fill(&s.Repository, release)
	}
	fill((*string)(&s.ValuesLayout), string(LayoutUpstream))
	fill(&s.WrapperKey, def.WrapperKey)
}

// isZero reports whether s sets no field.
func (s *ChartSource) isZero() bool { return reflect.ValueOf(*s).IsZero() }

func fill(dst *string, def string) {
	if *dst == "" {
		*dst = def
	}
}

var urlPattern = regexp.MustCompile(`^(https?|oci)://.+$`)

// headerName is an HTTP header name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validate checks the destinations: each URL http or https with a host and
// without whitespace (they are written into Fluent Bit's configuration and
// command-line flags), header names tokens and values printable without
// line breaks.
func (m *Monitoring) validate(p *field.Path) error {
	// A namespace and a name are DNS labels, a cluster domain DNS labels
	// joined by dots: URLs are checked with such values.
	sample := m.For("namespace", "name", "cluster.local")
	for i, f := range []struct {
		key, val string
	}{{"metricsWriteURL", m.MetricsWriteURL}, {"metricsReadURL", m.MetricsReadURL}, {"logsURL", m.LogsURL}} {
		u, err := url.Parse([]string{sample.MetricsWriteURL, sample.MetricsReadURL, sample.LogsURL}[i])
		switch {
		case err != nil:
			return field.Invalid(p.Child(f.key), f.val, err.Error())
		case u.Scheme != "http" && u.Scheme != "https", u.Hostname() == "", strings.ContainsAny(f.val, " \t\r\n"):
			return field.Invalid(p.Child(f.key), f.val, "must be an http:// or https:// URL with a host and no whitespace")
		}
	}
	keys := make([]string, 0, len(m.LogsHeaders))
	for k := range m.LogsHeaders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !headerName.MatchString(k) {
			return field.Invalid(p.Child("logsHeaders"), k, "must be an HTTP header name")
		}
		v := m.LogsHeaders[k]
		if v == "" || strings.ContainsAny(v, "\r\n") || strings.TrimSpace(v) != v {
			return field.Invalid(p.Child("logsHeaders").Key(k), v, "must be a non-empty value on one line without leading or trailing spaces")
		}
	}
	return nil
}

func (s *ChartSource) validate(p *field.Path) error {
	switch s.Kind {
	case KindHelmRepository, KindOCIRepository, KindExternalArtifact:
	default:
		return field.NotSupported(p.Child("kind"), s.Kind, []string{string(KindHelmRepository), string(KindOCIRepository), string(KindExternalArtifact)})
	}
	switch s.ValuesLayout {
	case LayoutUpstream:
	case LayoutWrapped:
		if s.WrapperKey == "" {
			return field.Required(p.Child("wrapperKey"), "a Wrapped chart needs the key its values are nested under")
		}
	default:
		return field.NotSupported(p.Child("valuesLayout"), s.ValuesLayout, []string{string(LayoutUpstream), string(LayoutWrapped)})
	}
	if s.URL != "" {
		if s.Kind == KindExternalArtifact {
			return field.Invalid(p.Child("url"), s.URL, "an ExternalArtifact is produced by another controller; reference it by name")
		}
		if !urlPattern.MatchString(s.URL) {
			return field.Invalid(p.Child("url"), s.URL, "must be an https://, http:// or oci:// URL")
		}
		if s.Kind == KindOCIRepository && s.URL[:6] != "oci://" {
			return field.Invalid(p.Child("url"), s.URL, "an OCIRepository url must start with oci://")
		}
		if s.Kind == KindOCIRepository && s.Version == "" {
			return field.Required(p.Child("version"), "a managed OCIRepository needs the chart's tag")
		}
		if s.Kind == KindHelmRepository {
			if msgs := validation.IsDNS1123Label(s.Repository); len(msgs) > 0 || len(s.Repository) > 30 {
				return field.Invalid(p.Child("repository"), s.Repository, "must be a DNS-1123 label of at most 30 characters")
			}
		}
	} else {
		if s.Name == "" {
			return field.Required(p.Child("name"), "a source without url references an existing object by name")
		}
		if msgs := validation.IsDNS1123Subdomain(s.Name); len(msgs) > 0 {
			return field.Invalid(p.Child("name"), s.Name, msgs[0])
		}
		if s.Namespace != "" {
			if msgs := validation.IsDNS1123Label(s.Namespace); len(msgs) > 0 {
				return field.Invalid(p.Child("namespace"), s.Namespace, msgs[0])
			}
		}
	}
	if s.Kind == KindHelmRepository && s.Chart == "" {
		return field.Required(p.Child("chart"), "a HelmRepository source needs the chart name")
	}
	return nil
}

// TenthAddress returns the 10th address of a CIDR (10.95.0.0/16 →
// 10.95.0.10), the conventional cluster DNS address. It returns an error
// when cidr is not a prefix or holds fewer than 11 addresses.
func TenthAddress(cidr string) (string, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", fmt.Errorf("not a CIDR: %v", err)
	}
	if p.Addr().BitLen()-p.Bits() < 4 {
		return "", fmt.Errorf("prefix /%d is too small to hold a 10th address", p.Bits())
	}
	a := p.Masked().Addr()
	for range 10 {
		a = a.Next()
	}
	return a.String(), nil
}

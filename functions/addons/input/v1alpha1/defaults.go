package v1alpha1

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// Defaults of the Input's scalar fields (docs/architecture.md: service CIDR 10.95.0.0/16).
const (
	DefaultIngressClassName = "nginx"
	DefaultServiceCIDR      = "10.95.0.0/16"
	DefaultSourceInterval   = time.Hour
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
	// DefaultBaseDomain is the control-plane input's default base domain.
	DefaultBaseDomain = "tenants.example.com"
	// DefaultMaxValuesOverrideBytes is the default of
	// MaxValuesOverrideBytes: 64 KiB.
	DefaultMaxValuesOverrideBytes = 64 << 10
	// DefaultMaxCleanupObjects is the default of MaxCleanupObjects.
	DefaultMaxCleanupObjects = 100
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

// Default fills every unset field of in with its default, in place. A chart
// source left empty becomes the default source; one that keeps the
// default's kind (or leaves kind empty) inherits each field it leaves
// empty; one of another kind only gets the layout Upstream and the
// default wrapper key.
func (in *AddonsInput) Default() {
	if in.IngressClassName == "" {
		in.IngressClassName = DefaultIngressClassName
	}
	if in.ServiceCIDR == "" {
		in.ServiceCIDR = DefaultServiceCIDR
	}
	if in.ClusterDomain == "" {
		in.ClusterDomain = function.DefaultClusterDomain
	}
	if in.SourceInterval == nil {
		in.SourceInterval = &metav1.Duration{Duration: DefaultSourceInterval}
	}
	if in.DeletionOrder == "" {
		in.DeletionOrder = DeletionOrderUsages
	}
	if in.BaseDomain == "" {
		in.BaseDomain = DefaultBaseDomain
	}
	if in.MaxValuesOverrideBytes == 0 {
		in.MaxValuesOverrideBytes = DefaultMaxValuesOverrideBytes
	}
	if in.MaxCleanupObjects == 0 {
		in.MaxCleanupObjects = DefaultMaxCleanupObjects
	}
	if in.DefaultWorkerOS == "" {
		in.DefaultWorkerOS = tkv1alpha1.WorkerOSUbuntu
	}
	if in.RemoteStorageClasses == nil {
		in.RemoteStorageClasses = storageclass.DefaultRemote()
	}
	m := &in.Monitoring
	fill(&m.MetricsWriteURL, DefaultMetricsWriteURL)
	fill(&m.MetricsReadURL, DefaultMetricsReadURL)
	fill(&m.LogsURL, DefaultLogsURL)
	if m.LogsHeaders == nil {
		m.LogsHeaders = DefaultLogsHeaders()
	}
	for release, def := range DefaultCharts() {
		src, _ := in.Charts.Source(release)
		src.defaultFrom(def, release)
	}
}

func (s *ChartSource) defaultFrom(def ChartSource, release string) {
	if *s == (ChartSource{}) {
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

func fill(dst *string, def string) {
	if *dst == "" {
		*dst = def
	}
}

var urlPattern = regexp.MustCompile(`^(https?|oci)://.+$`)

// Validate checks a defaulted Input. It returns a *field.Error under the
// path "input" naming the offending field: a service CIDR that is not an
// IPv4/IPv6 prefix with at least 10 addresses; a releaseRetryInterval
// outside [10s, 1h]; a defaultWorkerOS that is not a worker OS; a chart source whose kind is
// unknown, whose managed url is malformed or of the wrong scheme for its
// kind, a referenced source without a name, an ExternalArtifact with a url,
// a HelmRepository without chart, an unknown values layout, a Wrapped layout
// without wrapper key; two managed HelmRepository sources sharing a
// repository name with different urls.
func (in *AddonsInput) Validate() error {
	root := field.NewPath("input")
	if in.IngressClassName == "" {
		return field.Required(root.Child("ingressClassName"), "")
	}
	if _, err := TenthAddress(in.ServiceCIDR); err != nil {
		return field.Invalid(root.Child("serviceCIDR"), in.ServiceCIDR, err.Error())
	}
	if err := function.ValidateClusterDomain(root.Child("clusterDomain"), in.ClusterDomain); err != nil {
		return err
	}
	if err := in.HostSettings().Validate(root); err != nil {
		return err
	}
	if in.MaxValuesOverrideBytes < 1 {
		return field.Invalid(root.Child("maxValuesOverrideBytes"), in.MaxValuesOverrideBytes, "must be at least 1")
	}
	if in.MaxCleanupObjects < 1 {
		return field.Invalid(root.Child("maxCleanupObjects"), in.MaxCleanupObjects, "must be at least 1")
	}
	if r := in.ReleaseRetryInterval; r != nil && (r.Duration < MinReleaseRetryInterval || r.Duration > MaxReleaseRetryInterval) {
		return field.Invalid(root.Child("releaseRetryInterval"), r.Duration.String(),
			fmt.Sprintf("must be between %s and %s", MinReleaseRetryInterval, MaxReleaseRetryInterval))
	}
	if !slices.Contains(tkv1alpha1.WorkerOSes, in.DefaultWorkerOS) {
		return field.NotSupported(root.Child("defaultWorkerOS"), in.DefaultWorkerOS, tkv1alpha1.WorkerOSes)
	}
	switch in.DeletionOrder {
	case DeletionOrderUsages, DeletionOrderNone:
	default:
		return field.NotSupported(root.Child("deletionOrder"), in.DeletionOrder, []string{string(DeletionOrderUsages), string(DeletionOrderNone)})
	}
	if err := storageclass.ValidateRemote(root.Child("remoteStorageClasses"), in.RemoteStorageClasses); err != nil {
		return err
	}
	if err := in.Monitoring.validate(root.Child("monitoring")); err != nil {
		return err
	}
	repoURLs := map[string]string{}
	for _, release := range Releases() {
		src, key := in.Charts.Source(release)
		p := root.Child("charts", key)
		if err := src.validate(p); err != nil {
			return err
		}
		if src.Kind == KindHelmRepository && src.URL != "" {
			if prev, ok := repoURLs[src.Repository]; ok && prev != src.URL {
				return field.Invalid(p.Child("url"), src.URL,
					fmt.Sprintf("repository %q is already used with url %q; one managed HelmRepository per repository name", src.Repository, prev))
			}
			repoURLs[src.Repository] = src.URL
		}
	}
	return nil
}

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

// HostSettings are the input's host settings.
func (in *AddonsInput) HostSettings() function.HostSettings {
	return function.HostSettings{BaseDomain: in.BaseDomain, AllowedSuffixes: in.AllowedHostSuffixes,
		TenantHostSuffixes: in.AllowedTenantHostSuffixes, AllowWildcards: in.AllowWildcardHosts}
}

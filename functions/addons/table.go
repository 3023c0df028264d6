package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
	"github.com/tenantkube/tenantkube/internal/talos"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Addon is one row of the add-on table: everything that
// distinguishes one add-on's HelmRelease from another's. The chart source
// key and default wrapper key are the release name's entry in the input's
// charts (input.Charts.Source).
type Addon struct {
	// Release is the add-on's name: the HelmRelease is N-<Release>, its
	// composed-resource name addon-<Release> and its status.addons key
	// <Release>.
	Release string
	// ReleaseName is the Helm release name when it is not Release.
	ReleaseName string
	// KeepCRDs marks a release that installs the tenant's CRDs: they are
	// annotated so that Helm never deletes them.
	KeepCRDs bool
	// Namespace is the target (and storage) namespace in the tenant cluster.
	Namespace string
	// Base add-ons are always installed.
	Base bool
	// Enabled says whether an optional add-on is installed (nil for base
	// add-ons).
	Enabled func(a *v1alpha1.Addons) bool
	// EnabledBy says whether an optional add-on that spec.addons does not
	// switch is installed (nil for the others).
	EnabledBy func(c *Context) bool
	// Override returns the user's valuesOverride of the add-on and its field
	// path (nil when the add-on has none in the API).
	Override func(a *v1alpha1.Addons) (*apiextensionsv1.JSON, *field.Path)
	// DependsOn returns the releases this one waits for, conditional edges
	// included.
	DependsOn func(a *v1alpha1.Addons) []string
	// Defaults builds the add-on's default values in upstream layout (nil:
	// none).
	Defaults func(c *Context) Values
	// WrapperDefaults builds default values of a Wrapped source's own chart,
	// top level, beside the upstream chart's key wrapperKey (nil: none);
	// unused with an Upstream source.
	WrapperDefaults func(c *Context, wrapperKey string) Values
	// SecretValues builds values the release reads from the Secret
	// N-<release>-values (valuesFrom, key values.yaml) instead of its
	// spec.values: values that must stay out of the HelmRelease (nil:
	// none).
	SecretValues func(c *Context) Values
	// RetryInterval is the release's own RetryOnFailure interval, which the
	// platform's releaseRetryInterval does not replace (0: the platform's).
	RetryInterval time.Duration
}

// Context is what a defaults builder may read.
type Context struct {
	// ID is the tenant cluster's name N and namespace NS.
	ID function.Identity
	// Spec is the defaulted XR spec.
	Spec *v1alpha1.KubernetesClusterSpec
	// Input is the defaulted function input.
	Input *input.AddonsInput
	// TalosTokens are the Talos workers' tokens, derived from the observed
	// Talos CA: nil when no node group boots Talos or the CA is not
	// observed yet.
	TalosTokens *talos.Tokens
}

func addonsPath(name string) *field.Path { return field.NewPath("spec", "addons", name) }

func override(name string, get func(a *v1alpha1.Addons) *apiextensionsv1.JSON) func(*v1alpha1.Addons) (*apiextensionsv1.JSON, *field.Path) {
	path := addonsPath(name).Child("valuesOverride") // built once: a Path is never changed
	return func(a *v1alpha1.Addons) (*apiextensionsv1.JSON, *field.Path) {
		return get(a), path
	}
}

func deps(releases ...string) func(*v1alpha1.Addons) []string {
	return func(*v1alpha1.Addons) []string { return releases }
}

// withGatewayAPI appends gateway-api-crds to base when Gateway API is on.
func withGatewayAPI(base ...string) func(*v1alpha1.Addons) []string {
	return func(a *v1alpha1.Addons) []string {
		if a.GatewayAPI.Enabled {
			return append(append([]string{}, base...), "gateway-api-crds")
		}
		return base
	}
}

func certManagerOn(a *v1alpha1.Addons) bool  { return a.CertManager.Enabled }
func gatewayAPIOn(a *v1alpha1.Addons) bool   { return a.GatewayAPI.Enabled }
func monitoringOn(a *v1alpha1.Addons) bool   { return a.MonitoringAgents.Enabled }
func fluxcdOn(a *v1alpha1.Addons) bool       { return a.FluxCD.Enabled }
func ingressNginxOn(a *v1alpha1.Addons) bool { return a.IngressNginx.Enabled }

// Table is the add-on table of docs/tenant-guide.md, "Add-ons", in install
// order (a release comes after everything it may depend on). Monitoring's
// four releases and their edges follow the seed chart.
var Table = []Addon{
	{
		Release: "gateway-api-crds", Namespace: "kube-system", KeepCRDs: true,
		Enabled: gatewayAPIOn, DependsOn: deps(),
		Defaults: func(*Context) Values {
			return Values{"crds": Values{"gatewayAPI": Values{"enabled": true}, "envoyGateway": Values{"enabled": false}}}
		},
	},
	{
		// The CNI and CSI retry a failed install after 30s, as the chart
		// does: until they run no worker is Ready.
		Release: "cilium", Namespace: "cozy-cilium", Base: true, RetryInterval: 30 * time.Second,
		Override:  override("cilium", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.Cilium.ValuesOverride }),
		DependsOn: withGatewayAPI(),
		Defaults:  ciliumDefaults,
	},
	{
		Release: "coredns", Namespace: "kube-system", Base: true,
		Override:  override("coredns", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.CoreDNS.ValuesOverride }),
		DependsOn: deps("cilium"),
		Defaults:  corednsDefaults,
	},
	{
		Release: "vsnap-crd", Namespace: "cozy-vsnap-crd", Base: true, KeepCRDs: true,
		DependsOn: deps(),
	},
	{
		Release: "csi", Namespace: "cozy-csi", Base: true, RetryInterval: 30 * time.Second,
		DependsOn: deps("vsnap-crd", "cilium"),
		Defaults:  csiDefaults,
	},
	{
		Release: "prometheus-operator-crds", Namespace: "cozy-victoria-metrics-operator", Base: true, KeepCRDs: true,
		DependsOn: deps(),
	},
	{
		Release: "metrics-server", Namespace: "cozy-monitoring", Base: true,
		DependsOn: deps("cilium", "prometheus-operator-crds"),
		Defaults:  metricsServerDefaults,
	},
	{
		Release: "cert-manager-crds", Namespace: "cozy-cert-manager-crds", KeepCRDs: true,
		Enabled: certManagerOn, DependsOn: deps(),
	},
	{
		Release: "cert-manager", Namespace: "cozy-cert-manager",
		Enabled:   certManagerOn,
		Override:  override("certManager", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.CertManager.ValuesOverride }),
		DependsOn: deps("cilium", "cert-manager-crds"),
		Defaults:  certManagerDefaults,
	},
	{
		Release: "ingress-nginx", Namespace: "cozy-ingress-nginx",
		Enabled:   ingressNginxOn,
		Override:  override("ingressNginx", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.IngressNginx.ValuesOverride }),
		DependsOn: deps("cilium"),
		Defaults:  ingressNginxDefaults,
	},
	{
		Release: "gpu-operator", Namespace: "cozy-gpu-operator",
		Enabled:   func(a *v1alpha1.Addons) bool { return a.GPUOperator.Enabled },
		Override:  override("gpuOperator", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.GPUOperator.ValuesOverride }),
		DependsOn: deps("cilium"),
		Defaults: func(c *Context) Values {
			if c.Spec.Addons.HAMi.Enabled {
				return Values{"devicePlugin": Values{"enabled": false}}
			}
			return nil
		},
		WrapperDefaults: gpuOperatorWrapperDefaults,
	},
	{
		Release: "hami", Namespace: "cozy-hami",
		Enabled:   func(a *v1alpha1.Addons) bool { return a.HAMi.Enabled },
		Override:  override("hami", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.HAMi.ValuesOverride }),
		DependsOn: deps("cilium", "gpu-operator"),
	},
	{
		Release: "fluxcd-operator", Namespace: "cozy-fluxcd",
		Enabled: fluxcdOn, DependsOn: deps("cilium"),
	},
	{
		Release: "fluxcd", Namespace: "cozy-fluxcd",
		Enabled:   fluxcdOn,
		Override:  override("fluxcd", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.FluxCD.ValuesOverride }),
		DependsOn: deps("cilium", "fluxcd-operator"),
	},
	{
		Release: "cozy-victoria-metrics-operator", Namespace: "cozy-victoria-metrics-operator",
		Enabled: monitoringOn,
		DependsOn: func(a *v1alpha1.Addons) []string {
			if a.CertManager.Enabled {
				return []string{"cilium", "cert-manager-crds"}
			}
			return []string{"cilium"}
		},
	},
	{
		Release: "vertical-pod-autoscaler-crds", Namespace: "cozy-vertical-pod-autoscaler-crds", KeepCRDs: true,
		Enabled: monitoringOn, DependsOn: deps("cilium"),
	},
	{
		// The platform's dashboards know the agents by the seed chart's
		// release name.
		Release: "monitoring-agents", ReleaseName: "cozy-monitoring-agents", Namespace: "cozy-monitoring",
		Enabled:   monitoringOn,
		Override:  override("monitoringAgents", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.MonitoringAgents.ValuesOverride }),
		DependsOn: deps("cozy-victoria-metrics-operator", "vertical-pod-autoscaler-crds", "prometheus-operator-crds", "metrics-server"),
		Defaults:  monitoringAgentsDefaults,
	},
	{
		Release: "vertical-pod-autoscaler", Namespace: "cozy-vertical-pod-autoscaler",
		Enabled:   monitoringOn,
		Override:  override("verticalPodAutoscaler", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.VerticalPodAutoscaler.ValuesOverride }),
		DependsOn: deps("monitoring-agents"),
		Defaults:  vpaDefaults,
	},
	{
		Release: "velero", Namespace: "cozy-velero",
		Enabled:   func(a *v1alpha1.Addons) bool { return a.Velero.Enabled },
		Override:  override("velero", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.Velero.ValuesOverride }),
		DependsOn: deps("cilium"),
	},
	{
		Release: "ouroboros", Namespace: "cozy-ouroboros",
		Enabled:   func(a *v1alpha1.Addons) bool { return a.Ouroboros.Enabled },
		Override:  override("ouroboros", func(a *v1alpha1.Addons) *apiextensionsv1.JSON { return a.Ouroboros.ValuesOverride }),
		DependsOn: withGatewayAPI("cilium", "coredns", "ingress-nginx"),
		Defaults: func(c *Context) Values {
			return Values{"controller": Values{
				"mode":          "coredns-import",
				"gatewayApi":    Values{"enabled": c.Spec.Addons.GatewayAPI.Enabled},
				"clusterDomain": "cluster.local",
			}}
		},
	},
	{
		// One ClusterRoleBinding per spec.oidc.users entry, installed while
		// the list is not empty (docs/architecture.md, "OIDC").
		Release: OIDCUsersRelease, Namespace: "kube-system",
		EnabledBy: func(c *Context) bool { return len(c.Spec.OIDC.Users) > 0 },
		DependsOn: deps(),
		Defaults:  oidcUsersDefaults,
	},
	{
		// The Talos workers' bootstrap token and the RBAC that lets them
		// join, once the Talos CA the token is derived from is observed
		// (docs/platform-guide.md, "Talos workers"). The token travels in
		// the values Secret, not in the HelmRelease.
		Release: TalosBootstrapTokenRelease, Namespace: "kube-system",
		EnabledBy:    func(c *Context) bool { return c.TalosTokens != nil },
		DependsOn:    deps(),
		SecretValues: talosBootstrapTokenValues,
	},
}

// TalosBootstrapTokenRelease is the release of the Talos workers'
// bootstrap token inside the tenant cluster.
const TalosBootstrapTokenRelease = "talos-bootstrap-token"

// talosBootstrapTokenValues is the chart's values: tokenID and tokenSecret,
// the two parts of the workers' cluster.token.
func talosBootstrapTokenValues(c *Context) Values {
	return Values{"tokenID": c.TalosTokens.BootstrapID, "tokenSecret": c.TalosTokens.BootstrapSecret}
}

// OIDCUsersRelease is the release of the ClusterRoleBindings of
// spec.oidc.users inside the tenant cluster.
const OIDCUsersRelease = "oidc-users"

// ClusterRoles bound to spec.oidc.users roles (the seed chart's mapping).
var oidcClusterRoles = map[v1alpha1.OIDCRole]string{v1alpha1.OIDCRoleAdmin: "cluster-admin", v1alpha1.OIDCRoleView: "view"}

// oidcUsersDefaults is the chart's values: bindings, sorted by email, each
// {name, user, clusterRole}. The name is tenantkube-oidc- and the first 16
// hex digits of the email's SHA-256, a valid object name whatever the email
// holds; the user is the email as the API server's username claim gives it.
func oidcUsersDefaults(c *Context) Values {
	users := append([]v1alpha1.OIDCUser(nil), c.Spec.OIDC.Users...)
	sort.Slice(users, func(i, j int) bool { return users[i].Email < users[j].Email })
	bindings := make([]any, 0, len(users))
	for _, u := range users {
		bindings = append(bindings, Values{
			"name":        OIDCBindingName(u.Email),
			"user":        u.Email,
			"clusterRole": oidcClusterRoles[u.Role],
		})
	}
	return Values{"bindings": bindings}
}

// OIDCBindingName is the ClusterRoleBinding of the user with this email.
func OIDCBindingName(email string) string {
	sum := sha256.Sum256([]byte(email))
	return "tenantkube-oidc-" + hex.EncodeToString(sum[:8])
}

// HelmReleaseName is the Helm release name: ReleaseName, or Release.
func (a *Addon) HelmReleaseName() string {
	if a.ReleaseName != "" {
		return a.ReleaseName
	}
	return a.Release
}

// On reports whether the add-on is installed for c's spec, input and
// observed state.
func (a *Addon) On(c *Context) bool {
	return a.Base || (a.Enabled != nil && a.Enabled(&c.Spec.Addons)) || (a.EnabledBy != nil && a.EnabledBy(c))
}

// ciliumDefaults: the tenant API server through its Service's fully
// qualified name N.NS.svc.<clusterDomain>, port 6443 (Cilium's agents run
// on the worker VMs, whose DNS has no management-cluster search path, and
// resolve it there before any cluster DNS runs);
// tunnel routing, MTU 1350, IPv4 masquerade; kube-proxy replacement (the
// workers skip kube-proxy); with Gateway API, Cilium's Gateway
// API support and its Envoy DaemonSet.
func ciliumDefaults(c *Context) Values {
	v := Values{
		"k8sServiceHost":       c.ID.APIServerServiceFQDN(c.Input.ClusterDomain),
		"k8sServicePort":       6443,
		"routingMode":          "tunnel",
		"MTU":                  1350,
		"enableIPv4Masquerade": true,
		"kubeProxyReplacement": true,
	}
	if c.Spec.Addons.GatewayAPI.Enabled {
		// enableAlpn advertises h2 on the Gateway's TLS listeners: without
		// it browsers fall back to HTTP/1.1 (they negotiate HTTP/2 by ALPN).
		v["gatewayAPI"] = Values{"enabled": true, "enableAlpn": true}
		v["envoy"] = Values{"enabled": true}
	}
	return v
}

// corednsDefaults: the cluster DNS Service on the 10th address of the
// service CIDR; the input was validated, so the CIDR parses.
func corednsDefaults(c *Context) Values {
	ip, _ := input.TenthAddress(c.Input.ServiceCIDR)
	return Values{"service": Values{"clusterIP": ip}}
}

// metricsServerDefaults: kubeadm and Talos kubelets serve a self-signed
// certificate (no serving-certificate CSR is signed for them), so
// metrics-server reads them without verifying it
// (https://github.com/kubernetes-sigs/metrics-server#requirements; the
// chart's args are appended to its defaultArgs). docs/platform-guide.md,
// Security model, states the risk.
func metricsServerDefaults(*Context) Values {
	return Values{"args": []any{"--kubelet-insecure-tls"}}
}

// certManagerDefaults: CRDs come from the cert-manager-crds release; with
// Gateway API the controller's Gateway API support.
func certManagerDefaults(c *Context) Values {
	v := Values{"crds": Values{"enabled": false}}
	if c.Spec.Addons.GatewayAPI.Enabled {
		v["config"] = Values{
			"apiVersion":       "controller.config.cert-manager.io/v1alpha1",
			"kind":             "ControllerConfiguration",
			"enableGatewayAPI": true,
		}
	}
	return v
}

// ingressNginxDefaults: a DaemonSet on the nodes with the ingress-nginx
// role; Proxied: a NodePort Service on 30000/30001, which the management
// cluster's Service N-app-<digest> (ProxyServiceName) targets; LoadBalancer: the chart's own
// Service type; without cert-manager, the admission webhook certificates are
// not requested from cert-manager.
func ingressNginxDefaults(c *Context) Values {
	ctrl := Values{
		"kind":         "DaemonSet",
		"nodeSelector": Values{"node-role.kubernetes.io/ingress-nginx": ""},
	}
	if c.Spec.Addons.IngressNginx.ExposeMethod == v1alpha1.ExposeProxied {
		ctrl["service"] = Values{
			"type":      "NodePort",
			"nodePorts": Values{"http": ProxyHTTPNodePort, "https": ProxyHTTPSNodePort},
		}
	}
	if !c.Spec.Addons.CertManager.Enabled {
		ctrl["admissionWebhooks"] = Values{"certManager": Values{"enabled": false}}
	}
	return Values{"fullnameOverride": "ingress-nginx", "controller": ctrl}
}

// monitoringAgentsDefaults: vmagent writes the cluster's metrics to the
// platform's remote-write endpoint, labelled with the cluster N and tenant
// NS; Fluent Bit enriches container logs with their pod metadata (lifted to
// top-level kubernetes_* keys), labels them with N and NS and sends them as
// JSON lines to the platform's log endpoint (the seed chart's settings, with
// the destinations from the input).
func monitoringAgentsDefaults(c *Context) Values {
	m := c.Input.Monitoring.For(c.ID.Namespace, c.ID.Name, c.Input.ClusterDomain)
	filters := "[FILTER]\n    Name kubernetes\n    Match kube.*\n    Merge_Log On\n    Keep_Log On\n" +
		"    K8S-Logging.Parser On\n    K8S-Logging.Exclude On\n" +
		"[FILTER]\n    Name nest\n    Match *\n    Wildcard pod_name\n    Operation lift\n    Nested_under kubernetes\n    Add_prefix kubernetes_\n" +
		"[FILTER]\n    Name modify\n    Match *\n    Add tenant " + c.ID.Namespace + "\n    Add cluster " + c.ID.Name + "\n"
	return Values{
		"vmagent": Values{
			"externalLabels": Values{"cluster": c.ID.Name, "tenant": c.ID.Namespace},
			"remoteWrite":    Values{"url": m.MetricsWriteURL},
		},
		"fluent-bit": Values{"config": Values{"filters": filters, "outputs": fluentBitOutput(m)}},
	}
}

// fluentBitOutput is the Fluent Bit http output section sending kube.*
// records to m's LogsURL (validated with the input: http or https, a host,
// no whitespace), gzip-compressed JSON lines with ISO 8601 dates, with m's
// headers in key order.
func fluentBitOutput(m input.Monitoring) string {
	u, _ := url.Parse(m.LogsURL)
	port, tls := u.Port(), u.Scheme == "https"
	if port == "" {
		port = map[bool]string{false: "80", true: "443"}[tls]
	}
	var b strings.Builder
	b.WriteString("[OUTPUT]\n    Name http\n    Match kube.*\n")
	b.WriteString("    Host " + u.Hostname() + "\n    Port " + port + "\n    URI " + u.RequestURI() + "\n")
	if tls {
		b.WriteString("    tls On\n")
	}
	b.WriteString("    Compress gzip\n    Format json_lines\n    Json_date_format iso8601\n")
	for _, k := range sortedKeys(m.LogsHeaders) {
		b.WriteString("    Header " + k + " " + m.LogsHeaders[k] + "\n")
	}
	return b.String()
}

// vpaDefaults: the VPA recommender reads usage history from the platform's
// Prometheus-compatible query endpoint (only this cluster's series) instead
// of keeping checkpoints, with the seed chart's label mapping and 1600Mi of
// memory.
func vpaDefaults(c *Context) Values {
	m := c.Input.Monitoring.For(c.ID.Namespace, c.ID.Name, c.Input.ClusterDomain)
	return Values{"recommender": Values{
		"extraArgs": Values{
			"container-name-label":         "container",
			"container-namespace-label":    "namespace",
			"container-pod-name-label":     "pod",
			"storage":                      "prometheus",
			"memory-saver":                 true,
			"pod-label-prefix":             "label_",
			"metric-for-pod-labels":        `kube_pod_labels{job="kube-state-metrics", tenant="` + c.ID.Namespace + `", cluster="` + c.ID.Name + `"}[8d]`,
			"pod-name-label":               "pod",
			"pod-namespace-label":          "namespace",
			"prometheus-address":           m.MetricsReadURL,
			"prometheus-cadvisor-job-name": "cadvisor",
		},
		"resources": Values{
			"limits":   Values{"memory": "1600Mi"},
			"requests": Values{"cpu": "100m", "memory": "1600Mi"},
		},
	}}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Node ports of the tenant ingress-nginx controller when Proxied.
const (
	ProxyHTTPNodePort  = 30000
	ProxyHTTPSNodePort = 30001
)

// The ConfigMap of nvidia kernel module parameters the GPU operator's
// driver container reads (key nvidia.conf, one parameter a line, mounted at
// /drivers; NVIDIA gpu-driver-container, nvidia-driver _get_module_params).
// NVIDIA's chart only names it (driver.kernelModuleConfig.name); a wrapper
// chart with kernelModuleConfig.create renders it (today's chart's wrapper,
// content NVreg_NvLinkDisable=1).
const gpuKernelModuleConfig = "nvidia-kernel-module-params"

// gpuOperatorWrapperDefaults loads the nvidia module with NVLink disabled,
// as today's chart does: GPUs are passed through to worker VMs one by one,
// without their NVSwitches, and the driver of an SXM GPU otherwise waits
// for an NVLink fabric that never comes up, so every CUDA call fails.
// Only a wrapper chart creates the ConfigMap; naming one that does not
// exist stops the operator's driver DaemonSet.
func gpuOperatorWrapperDefaults(_ *Context, wrapperKey string) Values {
	return Values{
		"kernelModuleConfig": Values{"create": true, "content": "NVreg_NvLinkDisable=1\n"},
		wrapperKey:           Values{"driver": Values{"kernelModuleConfig": Values{"name": gpuKernelModuleConfig}}},
	}
}

// csiDefaults are the values of Cozystack's kubevirt-csi-node chart: the
// tenant StorageClasses (storageClasses, storageclass.Tenant) and, for the
// chart that predates them and makes one class kubevirt of it,
// storageClass, the cluster's class.
func csiDefaults(c *Context) Values {
	return Values{
		"storageClass":   c.Spec.StorageClass,
		"storageClasses": storageclass.Tenant(c.Spec.StorageClass, c.Input.RemoteStorageClasses),
	}
}

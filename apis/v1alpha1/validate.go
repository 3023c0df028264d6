package v1alpha1

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxNodeGroupNameLength is the longest node-group name G, so that every
// name derived from N-G stays a DNS label.
const MaxNodeGroupNameLength = 16

// MaxQuantityExponent bounds a quantity's decimal exponent: "1e10000000"
// parses, but exact arithmetic on it takes minutes (10^scale as a big
// integer). The XRD cannot express it; the functions check it.
const MaxQuantityExponent = 30

// Messages of Validate. The XRD's CEL rules (the rule tables) say the
// same, with the field's name in front; test/validation_test.go holds
// both to one table of cases.
const (
	msgNodeGroupName = "node group names must be DNS labels (lower-case letters, digits and hyphens) of at most 16 characters"
	msgResourcesBoth = "resources.cpu and resources.memory must be set together or not at all"
	msgEvictionUnits = "evictionHardMemory and evictionSoftMemory must both be percentages or both absolute quantities"
	msgEvictionOrder = "the hard eviction threshold must be strictly below the soft one"
	msgHAMi          = "hami requires addons.gpuOperator.enabled: true (HAMi runs on top of the NVIDIA GPU operator)"
	msgOuroboros     = "ouroboros requires addons.ingressNginx.enabled: true (it fixes hairpin NAT for the tenant's ingress-nginx)"
	msgPositive      = "must be greater than zero"
	msgWholeCores    = "a VM gets whole cores: must be a whole number of cores such as 4 or 4000m"

	msgReservedFlag      = "is set by the platform, calls out from the management network or spends what tenants share; it cannot be set in extraArgs"
	msgRepeatedFlag      = "each flag at most once (Kamaji keys them by name)"
	msgReservedVolume    = "is a volume of the control plane itself"
	msgOneSource         = "set exactly one source: configMap or secret (the only sources allowed: the pod runs in the management cluster)"
	msgReservedMountPath = "is on or above a path the control plane uses"
	msgCustomConfig      = "mode CustomConfig needs exactly one of customConfig.config (inline AuthenticationConfiguration) and customConfig.secretRef.name (a Secret with key config.yaml)"
	msgVerbosity         = "--v must be a level from 0 to 4: higher levels log request contents into the management cluster's logs"
	msgPeerProxyGate     = "the feature gate UnknownVersionInteroperabilityProxy (the peer proxy, which dials the addresses peers advertise from the management network) cannot be set in extraArgs"
	msgOIDCFlag          = "cannot be set in extraArgs: configure OIDC with spec.oidc (mode System or CustomConfig), from which the platform sets --authentication-config"
)

// ReservedFlagNames are the kube-apiserver flags extraArgs may not set,
// names or name patterns (RE2) without the leading --: what Kamaji and
// tenantkube set (etcd and storage, service network and accounts, serving
// address, port and certificates, kubelet and front-proxy client
// certificates, konnectivity's egress selector, bootstrap tokens for
// joining nodes, authorization, and anonymous access, which the pod's
// probes need), encryption at rest (--encryption-provider-config*: the
// platform's keys), the configuration files whose webhooks and exporters the
// API server would call from the management cluster's network, the
// mixed-version peer proxy's --peer-* (with --peer-ca-file a replica proxies
// requests to the address and port each peer advertises: a tenant's choice
// would have it dial into the management network;
// https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/controlplane/apiserver/config.go
// BuildPeerProxy), and what would spend resources shared with other
// tenants: the audit log and policy (files written on the management
// node's ephemeral storage), --event-ttl and the watch cache (the load and
// size of a shared DataStore), --enable-logs-handler (serves the
// container's files), and the logging flags --vmodule, --log-* and
// --logging-format (the volume and format of logs the management cluster
// collects; --v is bounded by MaxVerbosityFlag).
var ReservedFlagNames = []string{
	"etcd-[-a-z0-9]*", "storage-backend", "storage-media-type", "service-cluster-ip-range",
	"service-account-[-a-z0-9]*", "api-audiences", "advertise-address", "bind-address", "secure-port",
	"cert-dir", "tls-[-a-z0-9]*", "client-ca-file", "kubelet-client-[-a-z0-9]*",
	"kubelet-certificate-authority", "kubelet-preferred-address-types", "proxy-client-[-a-z0-9]*",
	"peer-[-a-z0-9]*", "requestheader-client-ca-file", "egress-selector-config-file",
	"enable-bootstrap-token-auth", "anonymous-auth", "authorization-mode", "authorization-config",
	"authorization-webhook-[-a-z0-9]*", "authentication-token-webhook-[-a-z0-9]*", "audit-webhook-[-a-z0-9]*",
	"admission-control-config-file", "tracing-config-file", "audit-log-[-a-z0-9]*", "audit-policy-file",
	"event-ttl", "watch-cache[-a-z0-9]*", "default-watch-cache-size", "enable-logs-handler", "vmodule",
	"log-[-a-z0-9]*", "logging-format", "encryption-provider-config[-a-z0-9]*",
}

// ReservedFlags matches an extraArgs entry setting one of
// ReservedFlagNames, with or without a value.
var ReservedFlags = `^--(` + strings.Join(ReservedFlagNames, "|") + `)(=.*)?$`

// PeerProxyFeatureGate matches a --feature-gates flag that names the
// UnknownVersionInteroperabilityProxy gate, whatever its value: the gate
// of the peer proxy (ReservedFlags refuses its --peer-* flags).
// kube-apiserver trims Unicode white space around each key=value pair
// (k8s.io/component-base featuregate Set) and gate names are
// case-sensitive, so any occurrence of the name is refused.
const PeerProxyFeatureGate = `^--feature-gates=.*UnknownVersionInteroperabilityProxy`

// OIDCFlags matches the kube-apiserver flags of OIDC authentication,
// refused in extraArgs whatever oidc.mode: OIDC goes only through
// spec.oidc. With mode None they would make the API server fetch issuers
// from the management cluster's network with nothing checking them; with
// a mode, kube-apiserver refuses --authentication-config beside --oidc-*.
const OIDCFlags = `^--(oidc-[-a-z0-9]*|authentication-config)(=.*)?$`

// VerbosityFlag matches --v with or without a value; extraArgs may set it
// only as MaxVerbosityFlag matches: levels above 4 are trace levels, and
// from 6 the API server logs the resources, headers and bodies of requests
// (Kubernetes logging conventions) into the management cluster's logs.
const (
	VerbosityFlag    = `^--v(=.*)?$`
	MaxVerbosityFlag = `^--v=[0-4]$`
)

// The volumes and the container tenantkube adds to the control-plane pod
// (the KamajiControlPlane's spec.deployment): the AuthenticationConfiguration
// of spec.oidc, the Talos CSR signer with its CA and serving
// certificate, and the EncryptionConfiguration of the cluster's keys. The
// functions that add them use these names.
const (
	AuthenticationConfigVolume = "authentication-config"
	TalosCAVolume              = "talos-ca"
	TalosTLSVolume             = "talos-tls-cert"
	TalosSignerContainer       = "talos-csr-signer"
	EncryptionConfigVolume     = "encryption-config"
)

// TenantkubeVolumeNames and TenantkubeContainerNames are the volumes and
// containers tenantkube adds to the control-plane pod.
var (
	// EncryptionKMSVolumes are the hostPath volumes of the KMS plugins'
	// socket directories (a key set reads with at most 2 generations).
	EncryptionKMSVolumes     = []string{"encryption-kms-0", "encryption-kms-1"}
	TenantkubeVolumeNames    = slices.Concat([]string{AuthenticationConfigVolume, TalosCAVolume, TalosTLSVolume, EncryptionConfigVolume}, EncryptionKMSVolumes)
	TenantkubeContainerNames = []string{TalosSignerContainer}
)

// KamajiVolumeNames and KamajiContainerNames are the volumes and
// containers (init containers included) Kamaji gives every control-plane
// pod (Kamaji e51909fa, internal/builders/controlplane/deployment.go:31-51
// and konnectivity_server.go:28-30).
var (
	KamajiVolumeNames = []string{"etc-kubernetes-pki", "etc-ca-certificates",
		"usr-share-ca-certificates", "usr-local-share-ca-certificates", "scheduler-kubeconfig", "controller-manager-kubeconfig",
		"konnectivity-uds", "egress-selector-configuration", "konnectivity-server-kubeconfig", "kine-config", "kine-certs", "kine-uds"}
	KamajiContainerNames = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "konnectivity-server", "kine", "chmod"}
)

// KamajiV1VolumeNames are volumes Kamaji v1.0.0 gives the pod and the
// pinned commit does not; v1.0.0 takes over an extra volume of that name
// (internal/builders/controlplane/deployment.go:34,250-262).
var KamajiV1VolumeNames = []string{"etc-ssl-certs"}

// ReservedVolumeNames are the control-plane pod's own volumes, tenantkube's
// and Kamaji's: an extra volume may not take one.
var ReservedVolumeNames = slices.Concat(TenantkubeVolumeNames, KamajiVolumeNames, KamajiV1VolumeNames)

// ReservedContainerNames are the control-plane pod's own containers.
var ReservedContainerNames = slices.Concat(TenantkubeContainerNames, KamajiContainerNames)

// ReservedMountPaths are directories the kube-apiserver container uses
// (Kamaji's configuration, certificates and konnectivity socket, the
// service account token, the kernel's file systems): an extra mount may be
// neither on, under nor above one.
var ReservedMountPaths = []string{"/etc/kubernetes", "/etc/ca-certificates", "/etc/ssl/certs", "/usr/share/ca-certificates",
	"/usr/local/share/ca-certificates", "/run/konnectivity", "/var/run/secrets/kubernetes.io", "/dev", "/proc", "/sys"}

var (
	// cpuPattern is a CPU value a user may write: whole millicores
	// ("100m") or decimal cores ("0.5", "2").
	cpuPattern = regexp.MustCompile(cpuForm)
	// rolePattern is a node role: the name part of the label
	// node-role.kubernetes.io/<role>.
	rolePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	// percentPattern is a percentage eviction threshold such as "7.5%".
	percentPattern = regexp.MustCompile(percentThresholdForm)
	// hostPattern is an ingress host, optionally a wildcard.
	hostPattern = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// argPattern is a kube-apiserver flag as extraArgs takes it.
	argPattern          = regexp.MustCompile(`^--[a-z0-9][-a-z0-9]*(=.*)?$`)
	verbosityPattern    = regexp.MustCompile(VerbosityFlag)
	maxVerbosityPattern = regexp.MustCompile(MaxVerbosityFlag)
	// mountPathPattern is an absolute path without a trailing slash or ':'.
	mountPathPattern = regexp.MustCompile(`^(/[^/:]+)+$`)
	// emailPattern is an email address whose domain is a DNS name.
	emailPattern = regexp.MustCompile(`^[^@\s:]+@[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)+$`)
)

// Validate returns every problem of a defaulted spec that shows without a
// cluster and without the platform's function input, each naming the field
// and the value. The XRD's schema and CEL rules enforce the same at
// admission; the functions call Validate for what skipped admission
// (render, objects created before a rule existed).
// docs/validation.md lists each rule and its source.
func (s *KubernetesClusterSpec) Validate() field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSubdomain(p.Child("storageClass"), s.StorageClass)...)
	if s.Namespace != "" {
		errs = append(errs, validateLabel(p.Child("namespace"), s.Namespace, validation.DNS1123LabelMaxLength)...)
	}
	if !slices.Contains(Versions, s.Version) {
		errs = append(errs, field.NotSupported(p.Child("version"), s.Version, Versions))
	}
	if s.Host != "" {
		errs = append(errs, validateSubdomain(p.Child("host"), s.Host)...)
	}
	// The number of node groups is bounded by the workers input (default
	// the XRD's 50; benchmarks raise it).
	ngp := p.Child("nodeGroups")
	names := make([]string, 0, len(s.NodeGroups))
	for name := range s.NodeGroups {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		errs = append(errs, nodeGroupNameRules.check(name, ngp)...)
		errs = append(errs, s.NodeGroups[name].Validate(ngp.Key(name))...)
	}
	errs = append(errs, s.NodeHealthCheck.Validate(p.Child("nodeHealthCheck"))...)
	errs = append(errs, provisionTimeRules.check(s, p)...)
	errs = append(errs, s.Addons.Validate(p.Child("addons"))...)
	errs = append(errs, s.ControlPlane.Validate(p.Child("controlPlane"))...)
	if img := s.Images.WaitForKubeconfig; longerThan(img, MaxImageLength) {
		errs = append(errs, tooLong(p.Child("images", "waitForKubeconfig"), img, MaxImageLength))
	}
	errs = append(errs, s.OIDC.Validate(p.Child("oidc"))...)
	errs = append(errs, s.Talos.Validate(p.Child("talos"))...)
	errs = append(errs, s.Backup.Validate(p.Child("backup"))...)
	errs = append(errs, s.Hibernation.Validate(p.Child("hibernation"))...)
	errs = append(errs, s.Restore.Validate(p.Child("restore"))...)
	errs = append(errs, s.Encryption.Validate(p.Child("encryption"))...)
	errs = append(errs, s.Maintenance.Validate(p.Child("maintenance"))...)
	return append(errs, clusterSpecRules.check(s, p)...)
}

// Validate returns every problem of one defaulted node group at path
// (spec.nodeGroups[G]). The platform's ceiling of maxReplicas is the
// workers function's (its input).
func (g NodeGroup) Validate(path *field.Path) field.ErrorList {
	errs := nodeGroupRules.check(g, path)
	errs = append(errs, validateReplicas(path.Child("minReplicas"), deref(g.MinReplicas))...)
	errs = append(errs, validateReplicas(path.Child("maxReplicas"), deref(g.MaxReplicas))...)
	if it := g.InstanceTypeName(); longerThan(it, MaxNameLength) {
		errs = append(errs, tooLong(path.Child("instanceType"), it, MaxNameLength))
	} else if it != "" && !g.explicit() {
		errs = append(errs, validateSubdomain(path.Child("instanceType"), it)...)
	}
	errs = append(errs, diskSize.check(path, string(g.DiskSize))...)
	if g.StorageClass != "" {
		errs = append(errs, validateSubdomain(path.Child("storageClass"), g.StorageClass)...)
	}
	if len(g.Roles) > MaxRoles {
		errs = append(errs, field.TooMany(path.Child("roles"), len(g.Roles), MaxRoles))
	}
	for i, role := range g.Roles {
		rp := path.Child("roles").Index(i)
		switch {
		case longerThan(role, validation.LabelValueMaxLength):
			errs = append(errs, tooLong(rp, role, validation.LabelValueMaxLength))
		case !rolePattern.MatchString(role):
			errs = append(errs, field.Invalid(rp, role, "must be a label name part: lower-case alphanumerics, '-' and '.', starting and ending alphanumeric"))
		}
	}
	rp := path.Child("resources")
	errs = append(errs, nodeGroupResourcesRules.check(g.Resources, rp)...)
	if cpu := string(g.Resources.CPU); cpu != "" {
		ferrs := validateCPU(path, cpu, nodeCPU)
		if len(ferrs) == 0 && g.explicit() {
			if q := resource.MustParse(cpu); q.MilliValue()%1000 != 0 {
				ferrs = append(ferrs, field.Invalid(rp.Child("cpu"), cpu, msgWholeCores))
			}
		}
		errs = append(errs, ferrs...)
	}
	if mem := string(g.Resources.Memory); mem != "" {
		errs = append(errs, nodeMemory.check(path, mem)...)
	}
	if len(g.GPUs) > MaxGPUs {
		errs = append(errs, field.TooMany(path.Child("gpus"), len(g.GPUs), MaxGPUs))
	}
	for i, gpu := range g.GPUs {
		np := path.Child("gpus").Index(i).Child("name")
		switch {
		case gpu.Name == "":
			errs = append(errs, field.Required(np, "a GPU needs a device name such as nvidia.com/AD102GL_L40S"))
		case longerThan(gpu.Name, MaxNameLength):
			errs = append(errs, tooLong(np, gpu.Name, MaxNameLength))
		}
	}
	if g.OS != "" && !slices.Contains(WorkerOSes, g.OS) {
		errs = append(errs, field.NotSupported(path.Child("os"), g.OS, WorkerOSes))
	}
	errs = append(errs, g.validateHealthOverrides(path)...)
	errs = append(errs, g.validateVM(path)...)
	return append(errs, g.Kubelet.Validate(path.Child("kubelet"))...)
}

// validateVM returns the problems of a node group's VM settings at path
// that its rules (nodeGroupRules) leave: podCpuLimit and podCpuRequest in
// cores or whole millicores, greater than zero and at most MaxNodeCPU;
// antiAffinity one of its values. The lower bound from the vCPUs and the
// platform's CPU allocation ratio is the workers function's.
func (g NodeGroup) validateVM(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		b   QuantityBound
		val Quantity
	}{{podCPULimit, g.PodCPULimit}, {podCPURequest, g.PodCPURequest}} {
		if !f.val.IsSet() {
			continue
		}
		if _, err := parsePodCPU(path, f.b, string(f.val)); err != nil {
			errs = append(errs, err)
		}
	}
	switch g.AntiAffinity {
	case "", AntiAffinitySoft, AntiAffinityHard, AntiAffinityNone:
	default:
		errs = append(errs, field.NotSupported(path.Child("antiAffinity"), g.AntiAffinity,
			[]string{string(AntiAffinitySoft), string(AntiAffinityHard), string(AntiAffinityNone)}))
	}
	return errs
}

// parsePodCPU parses a virt-launcher CPU value the user wrote in the node
// group at path: cores or whole millicores, within b (greater than zero:
// zero, or no request, would let a pod escape a CPU quota).
func parsePodCPU(path *field.Path, b QuantityBound, text string) (resource.Quantity, *field.Error) {
	if !cpuPattern.MatchString(text) || !QuantityInRange(text) {
		return resource.Quantity{}, field.Invalid(b.path(path), shorten(text), b.MsgCPUForm())
	}
	return b.Check(path, text)
}

// explicit reports whether a node group sets both resources.cpu and
// resources.memory: its VM then has no instancetype.
func (g NodeGroup) explicit() bool {
	return g.Resources.CPU.IsSet() && g.Resources.Memory.IsSet()
}

// Validate returns every problem of a node group's kubelet settings at path
// (spec.nodeGroups[G].kubelet) that shows without the node's size:
// reservations positive and at most a node's maxima, CPU in cores or whole
// millicores, eviction thresholds in the same units with hard below soft.
// What needs the node's size (reservations below it) is the workers
// function's.
func (k Kubelet) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		b   QuantityBound
		val Quantity
		cpu bool
	}{
		{systemReservedMemory, k.SystemReservedMemory, false},
		{kubeReservedMemory, k.KubeReservedMemory, false},
		{systemReservedCPU, k.SystemReservedCPU, true},
		{kubeReservedCPU, k.KubeReservedCPU, true},
	} {
		switch {
		case f.val == "":
		case f.cpu:
			errs = append(errs, validateCPU(path, string(f.val), f.b)...)
		default:
			errs = append(errs, f.b.check(path, string(f.val))...)
		}
	}
	return append(errs, kubeletRules.check(k, path)...)
}

// ParsedThreshold is an eviction threshold: a fraction of the node's
// memory or an absolute quantity of bytes.
//
// +kubebuilder:object:generate=false
type ParsedThreshold struct {
	Percent bool
	// Fraction is the share of the node's memory when Percent (7% is 7/100).
	Fraction *big.Rat
	// Bytes is the threshold when not Percent.
	Bytes resource.Quantity
}

// Parse reads a threshold the user wrote at path: a percentage in (0, 100]
// or a positive quantity. An empty threshold is the caller's to default.
func (t Threshold) Parse(path *field.Path) (ParsedThreshold, *field.Error) {
	s := string(t)
	if strings.HasSuffix(s, "%") {
		if !percentPattern.MatchString(s) {
			return ParsedThreshold{}, field.Invalid(path, s, "must be a percentage such as 7% or an absolute quantity such as 500Mi")
		}
		v, _ := new(big.Rat).SetString(strings.TrimSuffix(s, "%"))
		if v.Sign() <= 0 || v.Cmp(big.NewRat(100, 1)) > 0 {
			return ParsedThreshold{}, field.Invalid(path, s, "a percentage must be in (0, 100]")
		}
		return ParsedThreshold{Percent: true, Fraction: v.Quo(v, big.NewRat(100, 1))}, nil
	}
	q, err := ParsePositive(path, s)
	if err != nil {
		return ParsedThreshold{}, err
	}
	return ParsedThreshold{Bytes: q}, nil
}

// below reports whether t is strictly below u (both in the same units).
func (t ParsedThreshold) below(u ParsedThreshold) bool {
	if t.Percent {
		return t.Fraction.Cmp(u.Fraction) < 0
	}
	return t.Bytes.Cmp(u.Bytes) < 0
}

// Validate returns every problem of the add-ons at path (spec.addons): the
// dependencies between add-ons, the ingress-nginx hosts' form and count,
// and each valuesOverride an object of at most MaxValuesOverrideKeys keys.
// Hosts held against the tenant's domain and the overrides' total bytes are
// the addons function's (its input).
func (a *Addons) Validate(path *field.Path) field.ErrorList {
	errs := addonsRules.check(a, path)
	ing := path.Child("ingressNginx")
	switch a.IngressNginx.ExposeMethod {
	case ExposeProxied, ExposeLoadBalancer:
	default:
		errs = append(errs, field.NotSupported(ing.Child("exposeMethod"), a.IngressNginx.ExposeMethod,
			[]string{string(ExposeProxied), string(ExposeLoadBalancer)}))
	}
	if n := len(a.IngressNginx.Hosts); n > MaxIngressHosts {
		errs = append(errs, field.TooMany(ing.Child("hosts"), n, MaxIngressHosts))
	}
	for i, h := range a.IngressNginx.Hosts {
		hp := ing.Child("hosts").Index(i)
		switch {
		case longerThan(h, MaxNameLength):
			errs = append(errs, tooLong(hp, h, MaxNameLength))
		case !hostPattern.MatchString(h):
			errs = append(errs, field.Invalid(hp, h, "must be a lower-case DNS name, optionally starting with *."))
		}
	}
	for _, o := range []struct {
		name string
		raw  []byte
	}{
		{"certManager", raw(a.CertManager.ValuesOverride)}, {"cilium", raw(a.Cilium.ValuesOverride)},
		{"ingressNginx", raw(a.IngressNginx.ValuesOverride)}, {"gpuOperator", raw(a.GPUOperator.ValuesOverride)},
		{"hami", raw(a.HAMi.ValuesOverride)}, {"fluxcd", raw(a.FluxCD.ValuesOverride)},
		{"monitoringAgents", raw(a.MonitoringAgents.ValuesOverride)}, {"verticalPodAutoscaler", raw(a.VerticalPodAutoscaler.ValuesOverride)},
		{"velero", raw(a.Velero.ValuesOverride)}, {"coredns", raw(a.CoreDNS.ValuesOverride)},
		{"ouroboros", raw(a.Ouroboros.ValuesOverride)},
	} {
		if o.raw == nil {
			continue
		}
		op := path.Child(o.name, "valuesOverride")
		var m map[string]json.RawMessage
		if err := json.Unmarshal(o.raw, &m); err != nil || (m == nil && string(o.raw) != "null") {
			errs = append(errs, field.Invalid(op, shorten(string(o.raw)), "must be an object of Helm values"))
			continue
		}
		if len(m) > MaxValuesOverrideKeys {
			errs = append(errs, field.TooMany(op, len(m), MaxValuesOverrideKeys))
		}
	}
	return errs
}

// Validate returns every problem of the control plane at path
// (spec.controlPlane): replicas 1..7, each component's explicit resources
// positive and at most the largest preset's, and the API server's extra
// flags, volumes and mounts (APIServer.Validate).
func (c *ControlPlane) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Replicas != nil && (*c.Replicas < 1 || *c.Replicas > 7) {
		errs = append(errs, field.Invalid(path.Child("replicas"), *c.Replicas, "must be between 1 and 7"))
	}
	for _, comp := range []struct {
		path *field.Path
		r    Resources
	}{
		{path.Child("apiServer"), c.APIServer.Resources},
		{path.Child("controllerManager"), c.ControllerManager.Resources},
		{path.Child("scheduler"), c.Scheduler.Resources},
		{path.Child("konnectivity", "server"), c.Konnectivity.Server.Resources},
	} {
		if cpu := string(comp.r.CPU); cpu != "" {
			errs = append(errs, componentCPU.check(comp.path, cpu)...)
		}
		if mem := string(comp.r.Memory); mem != "" {
			errs = append(errs, componentMem.check(comp.path, mem)...)
		}
	}
	return append(errs, c.APIServer.Validate(path.Child("apiServer"))...)
}

// Validate returns every problem of the API server's extra flags, volumes
// and mounts at path (spec.controlPlane.apiServer): flags well formed, each
// at most once and none the platform owns (ReservedFlags) or OIDC's
// (OIDCFlags); volumes named uniquely, not as the control plane's own, each
// from exactly one ConfigMap or Secret; mounts naming a declared volume at
// a unique absolute path off the control plane's paths
// (ReservedMountPaths). A repeated flag, volume name or mount path, and an
// undeclared volume, is named once each.
func (a *APIServer) Validate(path *field.Path) field.ErrorList {
	errs := a.validateExtraArgs(path.Child("extraArgs"))
	errs = append(errs, apiServerArgsRules.check(a, path)...)
	errs = append(errs, a.validateExtraVolumes(path.Child("extraVolumes"))...)
	errs = append(errs, apiServerVolumesRules.check(a, path)...)
	errs = append(errs, a.validateExtraVolumeMounts(path.Child("extraVolumeMounts"))...)
	return append(errs, apiServerMountsRules.check(a, path)...)
}

// validateExtraArgs returns the problems of the extra flags at ap.
func (a *APIServer) validateExtraArgs(ap *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(a.ExtraArgs); n > MaxExtraArgs {
		errs = append(errs, field.TooMany(ap, n, MaxExtraArgs))
	}
	for i, arg := range a.ExtraArgs {
		s := string(arg)
		switch {
		case longerThan(s, MaxExtraArgLength):
			errs = append(errs, tooLong(ap.Index(i), s, MaxExtraArgLength))
		case !argPattern.MatchString(s):
			errs = append(errs, field.Invalid(ap.Index(i), s, "must be a flag --name=value or --name (name in lower case)"))
		default:
			errs = append(errs, apiServerArgRules.check(arg, ap.Index(i))...)
		}
	}
	return errs
}

// validateExtraVolumes returns the problems of the extra volumes at vp.
func (a *APIServer) validateExtraVolumes(vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(a.ExtraVolumes); n > MaxExtraVolumes {
		errs = append(errs, field.TooMany(vp, n, MaxExtraVolumes))
	}
	for i, v := range a.ExtraVolumes {
		ip := vp.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), "a volume needs a name"))
		case len(v.Name) > validation.DNS1123LabelMaxLength || len(validation.IsDNS1123Label(v.Name)) > 0:
			errs = append(errs, validateLabel(ip.Child("name"), v.Name, validation.DNS1123LabelMaxLength)...)
		}
		errs = append(errs, apiServerVolumeRules.check(v, ip)...)
		if v.ConfigMap != nil {
			errs = append(errs, validateSubdomain(ip.Child("configMap", "name"), v.ConfigMap.Name)...)
		}
		if v.Secret != nil {
			errs = append(errs, validateSubdomain(ip.Child("secret", "secretName"), v.Secret.SecretName)...)
		}
	}
	return errs
}

// validateExtraVolumeMounts returns the problems of the mounts at mp.
func (a *APIServer) validateExtraVolumeMounts(mp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(a.ExtraVolumeMounts); n > MaxExtraVolumes {
		errs = append(errs, field.TooMany(mp, n, MaxExtraVolumes))
	}
	for i, m := range a.ExtraVolumeMounts {
		ip := mp.Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), "a mount names a volume of extraVolumes"))
		case longerThan(m.Name, validation.DNS1123LabelMaxLength):
			errs = append(errs, tooLong(ip.Child("name"), m.Name, validation.DNS1123LabelMaxLength))
		}
		pp := ip.Child("mountPath")
		switch {
		case longerThan(m.MountPath, MaxMountPathLength):
			errs = append(errs, tooLong(pp, m.MountPath, MaxMountPathLength))
			continue
		case !mountPathPattern.MatchString(m.MountPath):
			errs = append(errs, field.Invalid(pp, m.MountPath, "must be an absolute path without a trailing slash or ':'"))
		}
		errs = append(errs, apiServerMountRules.check(m, ip)...)
	}
	return errs
}

// repeatedIn returns an error at path for each key (of items, by key)
// held more than once, once per key, in the order of its first entry.
func repeatedIn[T any](path *field.Path, items []T, key func(T) string, msg string) field.ErrorList {
	count := map[string]int{}
	for _, it := range items {
		count[key(it)]++
	}
	var errs field.ErrorList
	for _, it := range items {
		if k := key(it); count[k] > 1 {
			errs = append(errs, field.Invalid(path, k, msg))
			count[k] = 0
		}
	}
	return errs
}

// Flag is the flag's name, "--name" of "--name=value".
func (a APIServerArg) Flag() string {
	name, _, _ := strings.Cut(string(a), "=")
	return name
}

// Validate returns every problem of the OIDC settings at path (spec.oidc)
// that shows without the platform's input: the mode, exactly one custom
// configuration source with CustomConfig, bounds, and the users' emails
// (unique) and roles. Parsing the AuthenticationConfiguration and the
// platform's issuer are the control-plane function's.
func (o *OIDC) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	modes := []string{string(OIDCModeNone), string(OIDCModeSystem), string(OIDCModeCustomConfig)}
	if !slices.Contains(modes, string(o.Mode)) {
		errs = append(errs, field.NotSupported(path.Child("mode"), o.Mode, modes))
	}
	errs = append(errs, oidcConfigRules.check(o, path)...)
	cp := path.Child("customConfig")
	if longerThan(o.CustomConfig.Config, MaxAuthenticationConfigLength) {
		errs = append(errs, field.TooLongCharacters(cp.Child("config"), o.CustomConfig.Config, MaxAuthenticationConfigLength))
	}
	if o.CustomConfig.SecretRef.Name != "" {
		errs = append(errs, validateSubdomain(cp.Child("secretRef", "name"), o.CustomConfig.SecretRef.Name)...)
	}
	up := path.Child("users")
	if n := len(o.Users); n > MaxOIDCUsers {
		errs = append(errs, field.TooMany(up, n, MaxOIDCUsers))
	}
	for i, u := range o.Users {
		ep := up.Index(i).Child("email")
		switch {
		case longerThan(u.Email, MaxEmailLength):
			errs = append(errs, tooLong(ep, u.Email, MaxEmailLength))
		case len(u.Email) < 3 || !emailPattern.MatchString(u.Email):
			errs = append(errs, field.Invalid(ep, u.Email, "must be an email address such as jane@example.com"))
		}
		if u.Role != OIDCRoleAdmin && u.Role != OIDCRoleView {
			errs = append(errs, field.NotSupported(up.Index(i).Child("role"), u.Role, []string{string(OIDCRoleAdmin), string(OIDCRoleView)}))
		}
	}
	return append(errs, oidcUserRules.check(o, path)...)
}

// ParsePositive parses a quantity the user wrote at path ("500m", "2",
// "1Gi", "1e9"). It returns an error naming path and the text when the
// text is longer than MaxQuantityLength or its exponent beyond
// ±MaxQuantityExponent, is not a Kubernetes quantity, or is not greater
// than zero.
func ParsePositive(path *field.Path, text string) (resource.Quantity, *field.Error) {
	if !QuantityInRange(text) {
		return resource.Quantity{}, field.Invalid(path, text, fmt.Sprintf("out of range: at most %d characters and a decimal exponent of at most %d", MaxQuantityLength, MaxQuantityExponent))
	}
	v, err := resource.ParseQuantity(text)
	if err != nil {
		return resource.Quantity{}, field.Invalid(path, text, "must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e9")
	}
	if v.Sign() <= 0 {
		return resource.Quantity{}, field.Invalid(path, text, msgPositive)
	}
	return v, nil
}

// ParseBounded is ParsePositive, also refusing a value above max (a
// quantity text of bounds.go such as "256" or "4Ti").
func ParseBounded(path *field.Path, text, max string) (resource.Quantity, *field.Error) {
	v, err := ParsePositive(path, text)
	if err != nil {
		return v, err
	}
	if v.Cmp(resource.MustParse(max)) > 0 {
		return resource.Quantity{}, field.Invalid(path, text, "must be at most "+max)
	}
	return v, nil
}

// QuantityInRange reports whether a quantity's text is at most
// MaxQuantityLength characters and its decimal exponent (after e or E, if
// any) is within ±MaxQuantityExponent, so arithmetic on it stays cheap.
func QuantityInRange(s string) bool {
	if len(s) > MaxQuantityLength {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 || i == len(s)-1 {
		return true // no exponent, or the SI suffix E (exa)
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil {
		return true // not an exponent: ParseQuantity decides
	}
	return exp >= -MaxQuantityExponent && exp <= MaxQuantityExponent
}

// validateCPU is b.check for a CPU value, which must be written in cores or
// whole millicores.
func validateCPU(path *field.Path, text string, b QuantityBound) field.ErrorList {
	if !cpuPattern.MatchString(text) {
		return field.ErrorList{field.Invalid(b.path(path), text, b.MsgCPUForm())}
	}
	return b.check(path, text)
}

func validateReplicas(path *field.Path, v int32) field.ErrorList {
	if v < 0 || v > MaxReplicasLimit {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("must be between 0 and %d", MaxReplicasLimit))}
	}
	return nil
}

func validateSubdomain(path *field.Path, v string) field.ErrorList {
	if longerThan(v, MaxNameLength) {
		return field.ErrorList{tooLong(path, v, MaxNameLength)}
	}
	if msgs := validation.IsDNS1123Subdomain(v); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, v, msgs[0])}
	}
	return nil
}

func validateLabel(path *field.Path, v string, max int) field.ErrorList {
	if longerThan(v, max) {
		return field.ErrorList{tooLong(path, v, max)}
	}
	if msgs := validation.IsDNS1123Label(v); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, v, msgs[0])}
	}
	return nil
}

// longerThan reports whether s has more than max characters (Unicode code
// points), the unit of the schema's maxLength.
func longerThan(s string, max int) bool {
	return len(s) > max && utf8.RuneCountInString(s) > max
}

// tooLong is field.Invalid naming the value (cut to 64 characters) for a
// value longer than max characters; field.TooLong omits the value.
func tooLong(path *field.Path, value string, max int) *field.Error {
	return field.Invalid(path, shorten(value), fmt.Sprintf("must be at most %d characters (is %d)", max, utf8.RuneCountInString(value)))
}

// shorten cuts s to its first 64 characters.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:64]) + "..."
}

func raw(j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return nil
	}
	return j.Raw
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

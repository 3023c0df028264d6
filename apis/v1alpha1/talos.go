package v1alpha1

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WorkerOS is the operating system of a node group's VMs.
type WorkerOS string

// Worker operating systems.
const (
	// WorkerOSUbuntu is the Ubuntu container disk joined by kubeadm
	// (Cluster API's kubeadm bootstrap provider).
	WorkerOSUbuntu WorkerOS = "Ubuntu"
	// WorkerOSTalos is the Talos disk image of the platform's Image
	// Factory, bootstrapped by Cluster API's Talos bootstrap provider.
	WorkerOSTalos WorkerOS = "Talos"
)

// WorkerOSes are the values of nodeGroups[G].os and of the platform's
// defaultWorkerOS.
var WorkerOSes = []WorkerOS{WorkerOSUbuntu, WorkerOSTalos}

// Talos is the Talos worker image configuration of a cluster: what the
// node groups whose os is Talos boot. The Image Factory and the installer
// repository are the platform's (the workers input's talos).
type Talos struct {
	// Talos release used for the worker OS image and installer, vX.Y.Z.
	// Must satisfy the Talos-Kubernetes support matrix against version
	// (Talos v1.13 runs Kubernetes v1.31 to v1.36).
	// +kubebuilder:default="v1.13.6"
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^v1\.[0-9]{1,3}\.[0-9]{1,3}$`
	// +optional
	Version string `json:"version,omitempty"`

	// Talos Image Factory schematic ID (64 lower-case hex digits): the
	// system extensions and kernel arguments baked into the image.
	// Defaults to the vanilla schematic Cozystack tests.
	// +kubebuilder:default="ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	// +optional
	SchematicID string `json:"schematicID,omitempty"`

	// Talos machine.registries.mirrors of the worker nodes: upstream
	// registry host (or "*") to its mirror endpoints. Talos still falls
	// back to the upstream registry unless skipFallback is true. A change
	// reaches only nodes created after it.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	RegistryMirrors map[string]TalosRegistryMirror `json:"registryMirrors,omitempty"`
}

// TalosRegistryMirror is one host's mirrors (Talos RegistryMirrorConfig).
type TalosRegistryMirror struct {
	// Mirror endpoints, http:// or https:// URLs, tried in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^https?://[^\s]+$`
	Endpoints []string `json:"endpoints"`
	// Do not fall back to the upstream registry when every endpoint fails.
	// +optional
	SkipFallback bool `json:"skipFallback,omitempty"`
}

// Defaults of spec.talos: the Cozystack chart's.
const (
	DefaultTalosVersion     = "v1.13.6"
	DefaultTalosSchematicID = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
)

// Bounds of spec.talos (the markers on Talos carry the same numbers).
const (
	MaxTalosMirrorHosts     = 16
	MaxTalosMirrorEndpoints = 8
	MaxTalosEndpointLength  = 512
)

var (
	talosVersionPattern  = regexp.MustCompile(`^v1\.[0-9]{1,3}\.[0-9]{1,3}$`)
	schematicPattern     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	mirrorHostPattern    = regexp.MustCompile(mirrorHostForm)
	mirrorEndpointPatten = regexp.MustCompile(`^https?://[^\s]+$`)
)

// Default fills the unset fields of t with the chart's defaults.
func (t *Talos) Default() {
	if t.Version == "" {
		t.Version = DefaultTalosVersion
	}
	if t.SchematicID == "" {
		t.SchematicID = DefaultTalosSchematicID
	}
}

// Minor returns "v1.N" of Version "v1.N.P" ("" when it is not one).
func (t Talos) Minor() string {
	if !talosVersionPattern.MatchString(t.Version) {
		return ""
	}
	return t.Version[:strings.LastIndex(t.Version, ".")]
}

// Validate returns every problem of a defaulted spec.talos at path: the
// shapes and the bounds (the support matrix against spec.version is a
// rule of specRules).
func (t Talos) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !talosVersionPattern.MatchString(t.Version) {
		errs = append(errs, field.Invalid(path.Child("version"), t.Version, "must be a Talos release vX.Y.Z such as "+DefaultTalosVersion))
	}
	if !schematicPattern.MatchString(t.SchematicID) {
		errs = append(errs, field.Invalid(path.Child("schematicID"), t.SchematicID, "must be an Image Factory schematic ID: 64 lower-case hex digits"))
	}
	mp := path.Child("registryMirrors")
	if len(t.RegistryMirrors) > MaxTalosMirrorHosts {
		errs = append(errs, field.TooMany(mp, len(t.RegistryMirrors), MaxTalosMirrorHosts))
	}
	hosts := make([]string, 0, len(t.RegistryMirrors))
	for h := range t.RegistryMirrors {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		if herrs := talosMirrorHostRules.check(h, mp); len(herrs) > 0 {
			errs = append(errs, herrs...)
			continue
		}
		eps := t.RegistryMirrors[h].Endpoints
		ep := mp.Key(h).Child("endpoints")
		switch {
		case len(eps) == 0:
			errs = append(errs, field.Required(ep, "a mirror needs at least one endpoint"))
		case len(eps) > MaxTalosMirrorEndpoints:
			errs = append(errs, field.TooMany(ep, len(eps), MaxTalosMirrorEndpoints))
		}
		for i, e := range eps {
			switch {
			case longerThan(e, MaxTalosEndpointLength):
				errs = append(errs, tooLong(ep.Index(i), e, MaxTalosEndpointLength))
			case !mirrorEndpointPatten.MatchString(e):
				errs = append(errs, field.Invalid(ep.Index(i), e, "must be an http:// or https:// URL"))
			}
		}
	}
	return errs
}

// mirrorHostForm is a registry host, optionally with a port, or "*", RE2
// as Go and CEL read it.
const mirrorHostForm = `^([*]|[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?)$`

// msgMirrorHost is the message of a bad spec.talos.registryMirrors key.
const msgMirrorHost = "registry mirror keys must be registry hosts (optionally with a port) or *"

// talosMirrorHostRules are the rules on a key h of spec.talos.registryMirrors;
// the CEL rule is the map's and names the first bad key.
var talosMirrorHostRules = ruleTable[string]{{
	RuleDoc: RuleDoc{ID: "talos.registryMirrors.host", Object: "talos.registryMirrors", Field: "registryMirrors", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		ok := "size(h) <= " + strconv.Itoa(MaxNameLength) + " && h.matches(" + celString(mirrorHostForm) + ")"
		return apiextensionsv1.ValidationRule{
			Rule:              "self.all(h, " + ok + ")",
			MessageExpression: refusal(celExpr("self.filter(h, !("+ok+"))[0]"), msgMirrorHost),
		}
	},
	Check: func(h string, path *field.Path) *field.Error {
		if len(h) > MaxNameLength || !mirrorHostPattern.MatchString(h) {
			return field.Invalid(path, shorten(h), msgMirrorHost)
		}
		return nil
	},
}}

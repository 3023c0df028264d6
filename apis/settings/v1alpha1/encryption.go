package v1alpha1

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/encryption"
)

// Encryption is how the tenant API servers encrypt resources at rest in
// their etcd (docs/platform-guide.md, Secrets encrypted at rest): each
// cluster with keys of its own, derived from the platform's root key.
type Encryption struct {
	// RootKeySecret names the Secret holding the platform's root key in
	// its key "rootKey" (at least 32 bytes; generated once, never
	// replaced: every cluster's keys derive from it). Unset: no cluster
	// encrypts. Only the platform may read its namespace.
	// +optional
	RootKeySecret *SecretRef `json:"rootKeySecret,omitempty"`
	// Resources are the resources encrypted, as kube-apiserver's
	// EncryptionConfiguration names them: "secrets", "configmaps",
	// "<resource>.<group>" (no wildcards: the rewrite of a rotation names
	// each), each a built-in resource every supported tenant API server
	// stores at a GA version (no custom resources: a cluster without the
	// CRD would hold every move and rotation). A change moves every
	// cluster: its objects of the resources added or removed are written
	// again (docs/architecture.md, Resources added or removed).
	// +kubebuilder:default={"secrets"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Resources []string `json:"resources,omitempty"`
	// MinimumKeyGeneration is the least key generation every cluster
	// writes with: raising it rotates the key of each cluster below it,
	// in two phases (docs/architecture.md).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MinimumKeyGeneration int32 `json:"minimumKeyGeneration,omitempty"`
	// KMS is a KMS v2 plugin the platform runs on every node that hosts
	// tenant API servers. Set: every cluster rotates to a generation that
	// writes with it (its keys wrapped by the KMS, never beside the data);
	// unset: keys derived from the root key.
	// +optional
	KMS *KMS `json:"kms,omitempty"`
	// RewriteImageRepository is the kubectl image (without tag) of the
	// Jobs that write objects again (a rotation, a move); the tag
	// is the cluster's Kubernetes patch version.
	// +kubebuilder:default="registry.k8s.io/kubectl"
	// +optional
	RewriteImageRepository string `json:"rewriteImageRepository,omitempty"`
}

// KMS is a KMS v2 plugin (docs/platform-guide.md, KMS v2).
type KMS struct {
	// Name of the plugin, a DNS-1123 label; generation G's provider is
	// "<name>-generation-<G>" and prefixes what it stored
	// (k8s:enc:kms:v2:<name>-generation-<G>:).
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`
	// Endpoint is the plugin's socket on the node: unix:///<absolute
	// path>. Its directory is mounted (hostPath) into the API server pod.
	// +kubebuilder:validation:MaxLength=200
	Endpoint string `json:"endpoint"`
	// Timeout of a call to the plugin, 1s..60s.
	// +kubebuilder:default="3s"
	// +optional
	Timeout string `json:"timeout,omitempty"`
}

// SecretRef names a Secret.
type SecretRef struct {
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Defaults of Encryption.
const (
	DefaultEncryptedResource      = "secrets"
	DefaultRewriteImageRepository = "registry.k8s.io/kubectl"
	// DefaultKMSTimeout is kube-apiserver's (k8s.io/apiserver v0.36.4
	// pkg/apis/apiserver/v1/defaults.go:28).
	DefaultKMSTimeout     = "3s"
	maxKMSNameLength      = 40
	maxKMSEndpoint        = 200
	maxEncryptedResources = 16
	encryptedResourceForm = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

var encryptedResource = regexp.MustCompile(encryptedResourceForm)

// Enabled says the platform encrypts the clusters' resources.
func (e *Encryption) Enabled() bool { return e.RootKeySecret != nil }

func (e *Encryption) defaults() {
	if len(e.Resources) == 0 {
		e.Resources = []string{DefaultEncryptedResource}
	}
	fill(&e.RewriteImageRepository, DefaultRewriteImageRepository)
	if e.KMS != nil {
		fill(&e.KMS.Timeout, DefaultKMSTimeout)
	}
}

// validate returns every problem of e at p.
func (e *Encryption) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r := e.RootKeySecret; r != nil {
		for _, m := range validation.IsDNS1123Label(r.Namespace) {
			errs = append(errs, field.Invalid(p.Child("rootKeySecret", "namespace"), r.Namespace, m))
		}
		for _, m := range validation.IsDNS1123Subdomain(r.Name) {
			errs = append(errs, field.Invalid(p.Child("rootKeySecret", "name"), r.Name, m))
		}
	}
	if len(e.Resources) > maxEncryptedResources {
		errs = append(errs, field.TooMany(p.Child("resources"), len(e.Resources), maxEncryptedResources))
	}
	errs = append(errs, e.validateResources(p.Child("resources"))...)
	if e.KMS != nil {
		errs = append(errs, e.KMS.validate(p.Child("kms"))...)
		if e.RootKeySecret == nil {
			errs = append(errs, field.Required(p.Child("rootKeySecret"), "kms needs the root key: it seals each cluster's key set"))
		}
	}
	if g := e.MinimumKeyGeneration; g < 0 || g > encryption.MaxGeneration {
		errs = append(errs, field.Invalid(p.Child("minimumKeyGeneration"), g, fmt.Sprintf("must be between 0 and %d", encryption.MaxGeneration)))
	}
	if img := e.RewriteImageRepository; len(img) > tkv1alpha1.MaxImageLength || strings.ContainsAny(img, " \t\n:@") {
		errs = append(errs, field.Invalid(p.Child("rewriteImageRepository"), img, "must be an image repository without tag or digest"))
	}
	return errs
}

// EncryptableResources are the resources encryption.resources may name:
// built-in ones every supported tenant API server stores at a GA version
// (encryption.Served), so that a move's Job never names one a cluster
// does not serve.
var EncryptableResources = encryption.Served(tkv1alpha1.OldestMinor)

// validateResources returns every problem of the resources at p: each
// must be a named resource (no wildcards: a rewrite names each), listed
// once, one of EncryptableResources, and one kube-apiserver accepts in an
// EncryptionConfiguration (encryption.CheckResources, its own validation).
func (e *Encryption) validateResources(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var named []string
	var at []int
	seen := map[string]bool{}
	for i, r := range e.Resources {
		switch {
		case len(r) > validation.DNS1123SubdomainMaxLength || !encryptedResource.MatchString(r):
			errs = append(errs, field.Invalid(p.Index(i), r, "must be a resource such as secrets or deployments.apps, without wildcards"))
		case seen[r]:
			errs = append(errs, field.Duplicate(p.Index(i), r))
		case !slices.Contains(EncryptableResources, r):
			if refused := encryption.CheckResources([]string{r}); len(refused) > 0 {
				errs = append(errs, field.Invalid(p.Index(i), r, "kube-apiserver refuses it: "+refused[0].Detail))
				break
			}
			errs = append(errs, field.Invalid(p.Index(i), r, fmt.Sprintf(
				"not a built-in resource every supported tenant API server (v1.%d on) stores at a GA version; a move would fail on it (docs/platform-guide.md, Secrets encrypted at rest)", tkv1alpha1.OldestMinor)))
		default:
			named, at = append(named, r), append(at, i)
		}
		seen[r] = true
	}
	for _, r := range encryption.CheckResources(named) {
		if r.Index < 0 {
			errs = append(errs, field.Invalid(p, named, "kube-apiserver refuses it: "+r.Detail))
			continue
		}
		errs = append(errs, field.Invalid(p.Index(at[r.Index]), named[r.Index], "kube-apiserver refuses it: "+r.Detail))
	}
	return errs
}

// validate returns every problem of k at p: a DNS-1123 label name of at
// most 40 characters, a unix:// endpoint of a clean absolute path below
// a directory other than /, a timeout of 1s..60s; then kube-apiserver's
// own validation of its provider (encryption.CheckKMS).
func (k *KMS) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(k.Name) > maxKMSNameLength {
		errs = append(errs, field.TooLong(p.Child("name"), k.Name, maxKMSNameLength))
	}
	for _, m := range validation.IsDNS1123Label(k.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), k.Name, m))
	}
	sock, ok := strings.CutPrefix(k.Endpoint, "unix://")
	if !ok || len(k.Endpoint) > maxKMSEndpoint || !path.IsAbs(sock) || path.Clean(sock) != sock || path.Dir(sock) == "/" || strings.ContainsAny(sock, " \t\n:") {
		errs = append(errs, field.Invalid(p.Child("endpoint"), k.Endpoint, fmt.Sprintf("must be unix:///<directory>/<socket>, a clean absolute path of at most %d characters", maxKMSEndpoint)))
	}
	if d, err := time.ParseDuration(k.Timeout); err != nil || d < time.Second || d > time.Minute {
		errs = append(errs, field.Invalid(p.Child("timeout"), k.Timeout, "must be a duration from 1s to 60s"))
	}
	if len(errs) > 0 {
		return errs
	}
	for _, e := range encryption.CheckKMS(encryption.KMS{Name: k.Name, Endpoint: k.Endpoint, Timeout: k.Timeout}) {
		errs = append(errs, field.Invalid(p, k.Name, "kube-apiserver refuses it: "+e))
	}
	return errs
}

package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"

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
	// each). Changing the list changes every cluster's configuration.
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
	// RewriteImageRepository is the kubectl image (without tag) of the Job
	// that writes every encrypted object again during a rotation; the tag
	// is the cluster's Kubernetes patch version.
	// +kubebuilder:default="registry.k8s.io/kubectl"
	// +optional
	RewriteImageRepository string `json:"rewriteImageRepository,omitempty"`
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
	maxEncryptedResources         = 16
	encryptedResourceForm         = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

var encryptedResource = regexp.MustCompile(encryptedResourceForm)

// Enabled says the platform encrypts the clusters' resources.
func (e *Encryption) Enabled() bool { return e.RootKeySecret != nil }

func (e *Encryption) defaults() {
	if len(e.Resources) == 0 {
		e.Resources = []string{DefaultEncryptedResource}
	}
	fill(&e.RewriteImageRepository, DefaultRewriteImageRepository)
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
	seen := map[string]bool{}
	for i, r := range e.Resources {
		switch {
		case len(r) > validation.DNS1123SubdomainMaxLength || !encryptedResource.MatchString(r):
			errs = append(errs, field.Invalid(p.Child("resources").Index(i), r, "must be a resource such as secrets or deployments.apps, without wildcards"))
		case seen[r]:
			errs = append(errs, field.Duplicate(p.Child("resources").Index(i), r))
		}
		seen[r] = true
	}
	if g := e.MinimumKeyGeneration; g < 0 || g > encryption.MaxGeneration {
		errs = append(errs, field.Invalid(p.Child("minimumKeyGeneration"), g, fmt.Sprintf("must be between 0 and %d", encryption.MaxGeneration)))
	}
	if img := e.RewriteImageRepository; len(img) > tkv1alpha1.MaxImageLength || strings.ContainsAny(img, " \t\n:@") {
		errs = append(errs, field.Invalid(p.Child("rewriteImageRepository"), img, "must be an image repository without tag or digest"))
	}
	return errs
}

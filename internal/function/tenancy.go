package function

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/distribution/reference"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationTenantHost, on a tenant's Namespace object, sets the tenant
// host of every cluster in that namespace (default <NS>.<baseDomain>). It
// is the platform's: tenants hold no update on Namespace objects
// (docs/platform-guide.md, Security model).
const AnnotationTenantHost = "tenantkube.io/tenant-host"

// RequirementNamespace is the required-resource key of the tenant's
// Namespace object, read for its tenant-host annotation.
const RequirementNamespace = "tenant-namespace"

// MaxBaseDomainLength is the longest base domain for which every default
// cluster host <N>.<NS>.<baseDomain> (N at most 32, NS at most 63
// characters) stays within a DNS name's 253 characters.
const MaxBaseDomainLength = validation.DNS1123SubdomainMaxLength - MaxClusterNameLength - 1 - validation.DNS1123LabelMaxLength - 1

// RequireNamespace asks Crossplane for the tenant's Namespace object.
func RequireNamespace(rsp *fnv1.RunFunctionResponse, id Identity) {
	Require(rsp, RequirementNamespace, NamespaceSelector(id))
}

// NamespaceSelector selects the tenant's Namespace object, required under
// RequirementNamespace (Plan.Require).
func NamespaceSelector(id Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Namespace",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: id.Namespace},
	}
}

// HostPolicy says which hosts on the shared management ingress a tenant's
// cluster may claim.
type HostPolicy struct {
	// TenantHost is the tenant's own host: the Namespace's tenant-host
	// annotation, else <NS>.<baseDomain>.
	TenantHost string
	// Known is false until Crossplane has sent the Namespace (the first
	// call of a reconcile): the tenant host is then the default, and hosts
	// are not held against it, since Crossplane calls the function again
	// with the Namespace before it uses a response (and a Fatal result
	// would end that loop).
	Known bool
	// AllowedSuffixes are further domains any tenant may claim hosts under
	// (platform input).
	AllowedSuffixes []string
	// AllowWildcards lets a host start with "*." (platform input).
	AllowWildcards bool
}

// HostSettings are the platform's host settings of a function input.
type HostSettings struct {
	// BaseDomain: the default tenant host of NS is <NS>.<BaseDomain>.
	BaseDomain string
	// AllowedSuffixes: domains any tenant may claim hosts under.
	AllowedSuffixes []string
	// TenantHostSuffixes: domains a Namespace's tenant-host annotation may
	// name, beside names under BaseDomain.
	TenantHostSuffixes []string
	// AllowWildcards lets a host start with "*.".
	AllowWildcards bool
}

// Validate returns a *field.Error naming the input field (under root) of
// the first bad setting. An allowed suffix may neither contain the base
// domain or a tenant-host suffix nor lie within one: names there are
// tenants' own hosts, which a suffix would open to every tenant.
func (s HostSettings) Validate(root *field.Path) *field.Error {
	if msgs := validation.IsDNS1123Subdomain(s.BaseDomain); len(msgs) > 0 {
		return field.Invalid(root.Child("baseDomain"), s.BaseDomain, msgs[0])
	}
	if len(s.BaseDomain) > MaxBaseDomainLength {
		return TooLong(root.Child("baseDomain"), s.BaseDomain, MaxBaseDomainLength)
	}
	for i, t := range s.TenantHostSuffixes {
		if msgs := validation.IsDNS1123Subdomain(t); len(msgs) > 0 {
			return field.Invalid(root.Child("allowedTenantHostSuffixes").Index(i), t, msgs[0])
		}
	}
	owned := append([]string{s.BaseDomain}, s.TenantHostSuffixes...)
	for i, a := range s.AllowedSuffixes {
		path := root.Child("allowedHostSuffixes").Index(i)
		if msgs := validation.IsDNS1123Subdomain(a); len(msgs) > 0 {
			return field.Invalid(path, a, msgs[0])
		}
		for _, o := range owned {
			if within(o, a) || within(a, o) {
				return field.Invalid(path, a, fmt.Sprintf("must not be, contain or lie under %s: names there are tenants' own hosts", o))
			}
		}
	}
	return nil
}

// PublishedBy returns the domain of s under which tenants publish names
// (BaseDomain, a tenant-host suffix or an allowed suffix) that host is or
// lies under, or, with subdomains, that lies under host; "" for none.
func (s HostSettings) PublishedBy(host string, subdomains bool) string {
	for _, d := range append(append([]string{s.BaseDomain}, s.TenantHostSuffixes...), s.AllowedSuffixes...) {
		if within(host, d) || (subdomains && within(d, host)) {
			return d
		}
	}
	return ""
}

// TooLong is a *field.Error naming path and value (cut to 64 characters)
// for a value longer than max characters; field.TooLong omits the value.
func TooLong(path *field.Path, value string, max int) *field.Error {
	shown := value
	if len(shown) > 64 {
		shown = shown[:64] + "..."
	}
	return field.Invalid(path, shown, fmt.Sprintf("must be at most %d characters (is %d)", max, len(value)))
}

// TenantHostPolicy reads the tenant host of id's namespace from the
// required Namespace (RequireNamespace). It returns a *field.Error naming
// the annotation and its value when that is no DNS name or lies neither
// under the base domain nor within a tenant-host suffix.
func (r *Request) TenantHostPolicy(id Identity, s HostSettings) (HostPolicy, error) {
	p := HostPolicy{TenantHost: id.Namespace + "." + s.BaseDomain, AllowedSuffixes: s.AllowedSuffixes, AllowWildcards: s.AllowWildcards}
	items, arrived := requiredResources(r.req, RequirementNamespace)
	if !arrived {
		return p, nil
	}
	p.Known = true
	for _, ns := range items {
		if valueAt(ns, "metadata", "name").GetStringValue() != id.Namespace {
			continue
		}
		v, ok := valueAt(ns, "metadata", "annotations", AnnotationTenantHost).GetKind().(*structpb.Value_StringValue)
		if !ok {
			continue
		}
		path := field.NewPath("namespace", id.Namespace, "metadata", "annotations").Key(AnnotationTenantHost)
		if msgs := validation.IsDNS1123Subdomain(v.StringValue); len(msgs) > 0 {
			return p, field.Invalid(path, v.StringValue, msgs[0])
		}
		if len(v.StringValue) > MaxBaseDomainLength+validation.DNS1123LabelMaxLength+1 {
			return p, TooLong(path, v.StringValue, MaxBaseDomainLength+validation.DNS1123LabelMaxLength+1)
		}
		if !tenantHostAllowed(v.StringValue, s) {
			allowed := "under " + s.BaseDomain
			if len(s.TenantHostSuffixes) > 0 {
				allowed += " or within " + strings.Join(s.TenantHostSuffixes, ", ")
			}
			return p, field.Invalid(path, v.StringValue, "a tenant host must lie "+allowed+" (input allowedTenantHostSuffixes)")
		}
		p.TenantHost = v.StringValue
	}
	return p, nil
}

// tenantHostAllowed: host is under (not equal to) the base domain, or
// equal to or under a tenant-host suffix.
func tenantHostAllowed(host string, s HostSettings) bool {
	if host != s.BaseDomain && within(host, s.BaseDomain) {
		return true
	}
	for _, t := range s.TenantHostSuffixes {
		if within(host, t) {
			return true
		}
	}
	return false
}

// ClusterHost is the default host of cluster N: <N>.<tenant host>, as the
// seed's <cluster-name>.<tenant-host>.
func (p HostPolicy) ClusterHost(id Identity) string { return id.Name + "." + p.TenantHost }

// Check returns a *field.Error naming path and host when host may not be
// claimed: a wildcard the platform does not allow, a malformed name, or,
// once the tenant host is known, a name neither equal to nor under the
// tenant host or an allowed suffix.
func (p HostPolicy) Check(path *field.Path, host string) *field.Error {
	bare, wildcard := strings.CutPrefix(host, "*.")
	if wildcard && !p.AllowWildcards {
		return field.Forbidden(path, fmt.Sprintf("%q: wildcard hosts are not allowed on this platform", host))
	}
	if len(host) > validation.DNS1123SubdomainMaxLength {
		return TooLong(path, host, validation.DNS1123SubdomainMaxLength)
	}
	if msgs := validation.IsDNS1123Subdomain(bare); len(msgs) > 0 {
		return field.Invalid(path, host, msgs[0])
	}
	if !p.Known {
		return nil
	}
	for _, s := range append([]string{p.TenantHost}, p.AllowedSuffixes...) {
		if within(bare, s) {
			return nil
		}
	}
	allowed := "under " + p.TenantHost
	if len(p.AllowedSuffixes) > 0 {
		allowed += " or " + strings.Join(p.AllowedSuffixes, ", ")
	}
	return field.Forbidden(path, fmt.Sprintf("%q: a host must be the tenant host or lie %s", host, allowed))
}

// within reports whether host is domain or a name under it.
func within(host, domain string) bool {
	return domain != "" && (host == domain || strings.HasSuffix(host, "."+domain))
}

// CheckImage returns image's fully qualified normalized name
// ("busybox:1.36" is "docker.io/library/busybox:1.36"), parsed as the
// container runtime parses it (distribution/reference
// ParseNormalizedNamed), or a *field.Error naming path and image when the
// parser refuses it or its repository lies in none of allowed: a registry
// host ("registry.example.com") or a host and repository prefix
// ("docker.io/library"), matched at '/' boundaries. Compose the returned
// name: it is what was checked.
func CheckImage(path *field.Path, image string, allowed []string) (string, *field.Error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", field.Invalid(path, image, "not an image reference: "+err.Error())
	}
	domain, repo := reference.Domain(named), reference.Path(named)
	for _, a := range allowed {
		host, prefix, _ := strings.Cut(a, "/")
		if host == legacyDockerHub {
			host = dockerHub
		}
		if host != domain {
			continue
		}
		if prefix == "" || repo == prefix || strings.HasPrefix(repo, prefix+"/") {
			return named.String(), nil
		}
	}
	return "", field.Forbidden(path, fmt.Sprintf("%q: images may only come from %s (the platform's allowed registries)", image, strings.Join(allowed, ", ")))
}

// Docker Hub's names: the runtime turns index.docker.io into docker.io
// (distribution/reference normalize.go).
const (
	dockerHub       = "docker.io"
	legacyDockerHub = "index.docker.io"
)

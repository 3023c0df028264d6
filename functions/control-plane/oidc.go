package main

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiserver "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverinstall "k8s.io/apiserver/pkg/apis/apiserver/install"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	apiservervalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// The AuthenticationConfiguration file of a cluster whose spec.oidc.mode is
// not None: key AuthenticationConfigKey of a ConfigMap N-oidc-authn-config
// (or of the tenant's Secret, with customConfig.secretRef), mounted from
// volume AuthenticationConfigVolume at AuthenticationConfigDir and named
// by --authentication-config.
const (
	nameAuthenticationConfig   = "oidc-authn-config"
	AuthenticationConfigKey    = "config.yaml"
	AuthenticationConfigVolume = tkv1alpha1.AuthenticationConfigVolume
	AuthenticationConfigDir    = "/etc/kubernetes/authentication-config"
)

// ServiceAccountIssuer is the --service-account-issuer Kamaji gives every
// tenant kube-apiserver (Kamaji, internal/builders/controlplane/
// deployment.go); extraArgs cannot change it (ReservedFlags).
// kube-apiserver refuses a jwt issuer whose URL is one of its
// service-account issuers, so a configuration naming it would never load.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// authentication is what spec.oidc adds to the control plane: the
// ConfigMap to compose (nil for mode None or a tenant's Secret), and the
// flag, volume and mount of the kube-apiserver (none for mode None).
type authentication struct {
	ConfigMap *corev1.ConfigMap
	Arg       string
	Volume    *corev1.Volume
	Mount     *corev1.VolumeMount
}

// OIDCAudience is the audience a cluster trusts the platform's issuer for
// with spec.oidc.mode System: "<NS>.<N>". It is injective (NS is a DNS
// label, so the first dot splits it), so a token minted for one cluster
// is rejected by every other.
func OIDCAudience(id function.Identity) string {
	return id.Namespace + "." + id.Name
}

// msgSecretRef refuses customConfig.secretRef: kube-apiserver reloads the
// configuration file when it changes (the kubelet updates a mounted
// Secret within about a minute), so a Secret checked once could name any
// issuer after its next edit, with no reconcile to check it again.
const msgSecretRef = "the issuers of an AuthenticationConfiguration in a Secret cannot be checked (kube-apiserver reloads the Secret's edits without a reconcile): give the configuration inline in customConfig.config"

// planAuthentication resolves spec.oidc (docs/architecture.md, OIDC). It
// returns a *field.Error naming spec.oidc.mode when mode System finds no
// platform issuer, one naming spec.oidc.customConfig.secretRef.name for a
// configuration in a Secret (msgSecretRef), and one naming
// spec.oidc.customConfig.config when the inline configuration is not a
// valid AuthenticationConfiguration or names an issuer the tenant's API
// server may not fetch.
func planAuthentication(id function.Identity, o tkv1alpha1.OIDC, in cpinput.OIDCIssuer) (authentication, field.ErrorList) {
	var text string
	source := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: id.Prefixed(nameAuthenticationConfig)},
	}}
	switch o.Mode {
	case tkv1alpha1.OIDCModeSystem:
		if in.IssuerURL == "" {
			return authentication{}, field.ErrorList{field.Invalid(field.NewPath("spec", "oidc", "mode"), o.Mode,
				"the platform trusts no OIDC issuer: its control-plane input oidc.issuerURL is empty; use mode CustomConfig or None")}
		}
		b, err := yaml.Marshal(systemAuthenticationConfig(id, in))
		if err != nil {
			return authentication{}, field.ErrorList{field.InternalError(field.NewPath("spec", "oidc", "mode"), err)}
		}
		text = string(b)
	case tkv1alpha1.OIDCModeCustomConfig:
		if name := o.CustomConfig.SecretRef.Name; name != "" && o.CustomConfig.Config == "" {
			return authentication{}, field.ErrorList{field.Invalid(field.NewPath("spec", "oidc", "customConfig", "secretRef", "name"), name, msgSecretRef)}
		}
		text = o.CustomConfig.Config
		if errs := CheckAuthenticationConfig(field.NewPath("spec", "oidc", "customConfig", "config"), []byte(text), in.CustomConfigIssuerHosts); len(errs) > 0 {
			return authentication{}, errs
		}
	default:
		return authentication{}, nil
	}
	a := authentication{
		Arg:    "--authentication-config=" + AuthenticationConfigDir + "/" + AuthenticationConfigKey,
		Volume: &corev1.Volume{Name: AuthenticationConfigVolume, VolumeSource: source},
		Mount:  &corev1.VolumeMount{Name: AuthenticationConfigVolume, MountPath: AuthenticationConfigDir, ReadOnly: true},
	}
	if source.ConfigMap != nil {
		a.ConfigMap = &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: id.Prefixed(nameAuthenticationConfig), Namespace: id.Namespace, Labels: id.Labels()},
			Data:       map[string]string{AuthenticationConfigKey: text},
		}
	}
	return a, nil
}

// systemAuthenticationConfig trusts the platform's issuer for this
// cluster's audience, the user named by the issuer's username claim
// without a prefix (spec.oidc.users name emails), refusing user names with
// the system: prefix of Kubernetes' own identities (the rule of the
// upstream documentation's example), so a claim the IdP lets a user set
// cannot name a component.
func systemAuthenticationConfig(id function.Identity, in cpinput.OIDCIssuer) *apiserverv1beta1.AuthenticationConfiguration {
	return &apiserverv1beta1.AuthenticationConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: apiserverv1beta1.ConfigSchemeGroupVersion.String(), Kind: "AuthenticationConfiguration"},
		JWT: []apiserverv1beta1.JWTAuthenticator{{
			Issuer: apiserverv1beta1.Issuer{
				URL:                  in.IssuerURL,
				Audiences:            []string{OIDCAudience(id)},
				CertificateAuthority: in.CertificateAuthority,
			},
			ClaimMappings: apiserverv1beta1.ClaimMappings{
				Username: apiserverv1beta1.PrefixedClaimOrExpression{Claim: in.UsernameClaim, Prefix: ptr.To("")},
			},
			ClaimValidationRules: groupsGate(in.GroupsClaim, TenantGroups(id, in.TenantGroups)),
			UserValidationRules: []apiserverv1beta1.UserValidationRule{{
				Expression: "!user.username.startsWith('system:')",
				Message:    "user names with the system: prefix are reserved for Kubernetes components",
			}},
		}},
	}
}

// Placeholders of the control-plane input's oidc.tenantGroups.
const (
	placeholderNamespace = "{namespace}"
	placeholderName      = "{name}"
)

// TenantGroups are the platform's tenant group patterns with the
// cluster's namespace and name in place of their placeholders.
func TenantGroups(id function.Identity, patterns []string) []string {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		out = append(out, strings.NewReplacer(placeholderNamespace, id.Namespace, placeholderName, id.Name).Replace(p))
	}
	return out
}

// groupsGate is the claim validation rule admitting only tokens whose
// claim (a CEL identifier, celIdentifier) holds one of groups (none
// without groups). A token without the claim, or with a claim that is no
// list, fails the rule instead of failing its evaluation; kube-apiserver
// answers both with 401 (k8s.io/apiserver, plugin/pkg/authenticator/token/
// oidc). kube-apiserver hands CEL the claims as an object, which has()
// and field selection read but the in operator does not; its declared
// type is map(string, any): dyn() lets exists() range over the claim.
func groupsGate(claim string, groups []string) []apiserverv1beta1.ClaimValidationRule {
	if claim == "" || len(groups) == 0 {
		return nil
	}
	quoted := make([]string, len(groups))
	for i, g := range groups {
		quoted[i] = celString(g)
	}
	return []apiserverv1beta1.ClaimValidationRule{{
		Expression: fmt.Sprintf("has(claims.%[1]s) && type(claims.%[1]s) == list && dyn(claims.%[1]s).exists(g, g in [%[2]s])", claim, strings.Join(quoted, ", ")),
		Message:    "the token's " + claim + " claim holds none of this cluster's tenant groups",
	}}
}

// celString is s as a CEL string literal: double-quoted, every character
// but ASCII letters, digits and ._:/@=+- as a \u or \U escape
// (https://github.com/google/cel-spec/blob/master/doc/langdef.md#string-and-bytes-values),
// so no text ends the literal.
func celString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (isASCIIAlnum(byte(r)) || strings.ContainsRune(groupPunctuation, r)):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// celIdentifier is a CEL identifier that is no reserved word
// (https://github.com/google/cel-spec/blob/master/doc/langdef.md#syntax).
var celIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// celReserved are CEL's reserved words, which no identifier may be.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true, "continue": true,
	"else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true,
	"package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// groupPunctuation are the characters besides ASCII letters and digits a
// tenant group pattern may hold.
const groupPunctuation = "._:/@=+-"

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// inDNSLabel reports whether c may occur in a DNS label.
func inDNSLabel(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// validateTenantGroups checks the input's groupsClaim and tenantGroups at
// path (input.oidc): set together; the claim a CEL identifier; each pattern of ASCII letters, digits
// and groupPunctuation around {namespace} once and {name} at most once,
// after it; each placeholder next only to an end of the pattern or to a
// character no DNS label holds; the text before {namespace} the same in
// every pattern. Namespaces are DNS labels, so a group's namespace is the
// longest run of DNS label characters after that common text: no two
// namespaces share a group.
func validateTenantGroups(path *field.Path, in cpinput.OIDCIssuer) field.ErrorList {
	var errs field.ErrorList
	switch {
	case in.GroupsClaim == "" && len(in.TenantGroups) > 0:
		errs = append(errs, field.Required(path.Child("groupsClaim"), "tenantGroups are looked for in the token claim groupsClaim names"))
	case in.GroupsClaim != "" && len(in.TenantGroups) == 0:
		errs = append(errs, field.Required(path.Child("tenantGroups"), "groupsClaim is only read to find tenantGroups"))
	}
	if in.GroupsClaim != "" && (!celIdentifier.MatchString(in.GroupsClaim) || celReserved[in.GroupsClaim]) {
		errs = append(errs, field.Invalid(path.Child("groupsClaim"), in.GroupsClaim, "must be a claim name of ASCII letters, digits and _ not starting with a digit, and no CEL reserved word: the rule reads it as claims.<name>"))
	}
	prefix := ""
	for i, p := range in.TenantGroups {
		ip := path.Child("tenantGroups").Index(i)
		ns, name := strings.Index(p, placeholderNamespace), strings.Index(p, placeholderName)
		switch {
		case strings.Count(p, placeholderNamespace) != 1:
			errs = append(errs, field.Invalid(ip, p, "must hold "+placeholderNamespace+" once"))
			continue
		case strings.Count(p, placeholderName) > 1 || (name >= 0 && name < ns):
			errs = append(errs, field.Invalid(ip, p, "may hold "+placeholderName+" once, after "+placeholderNamespace))
			continue
		}
		literal := strings.NewReplacer(placeholderNamespace, "", placeholderName, "").Replace(p)
		if i := strings.IndexFunc(literal, func(r rune) bool {
			return r >= utf8.RuneSelf || !(isASCIIAlnum(byte(r)) || strings.ContainsRune(groupPunctuation, r))
		}); i >= 0 {
			errs = append(errs, field.Invalid(ip, p, "must hold only ASCII letters, digits and "+groupPunctuation+" besides its placeholders"))
			continue
		}
		bad := false
		for _, at := range []struct{ start, end int }{{ns, ns + len(placeholderNamespace)}, {name, name + len(placeholderName)}} {
			if at.start < 0 {
				continue
			}
			if (at.start > 0 && inDNSLabel(p[at.start-1])) || (at.end < len(p) && (inDNSLabel(p[at.end]) || p[at.end] == '{')) {
				bad = true
			}
		}
		if bad {
			errs = append(errs, field.Invalid(ip, p, "a placeholder must be next to an end of the pattern or to a character a DNS label lacks (A-Z . _ : / @ = +): otherwise two namespaces' groups can be the same, as x with {namespace}-super-admin and x-super with {namespace}-admin"))
			continue
		}
		if i == 0 {
			prefix = p[:ns]
		} else if p[:ns] != prefix {
			errs = append(errs, field.Invalid(ip, p, fmt.Sprintf("must have the text before %s of tenantGroups[0] (%q): otherwise a namespace in one pattern can spell another's group", placeholderNamespace, prefix)))
		}
	}
	return errs
}

// authenticationDecoder decodes AuthenticationConfiguration as
// kube-apiserver does: strictly, into the internal type.
var authenticationDecoder = sync.OnceValue(func() runtime.Decoder {
	s := runtime.NewScheme()
	apiserverinstall.Install(s)
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDecoder()
})

// authenticationCompiler compiles the configuration's CEL expressions,
// built once.
var authenticationCompiler = sync.OnceValue(authenticationcel.NewDefaultCompiler)

// CheckAuthenticationConfig checks a tenant's AuthenticationConfiguration
// at path: loadAuthenticationConfig's rules, then, without hosts, no
// issuer url or discoveryURL the management network would answer
// (internalIssuerHost); with hosts, each on one of them
// (allowedIssuerHost) and no distributed claims. Every problem is listed.
func CheckAuthenticationConfig(path *field.Path, data []byte, hosts []string) field.ErrorList {
	cfg, errs := loadAuthenticationConfig(path, data)
	if cfg == nil {
		return errs
	}
	return append(errs, checkIssuerHosts(path, cfg, hosts)...)
}

// loadAuthenticationConfig parses an AuthenticationConfiguration as the
// tenant's kube-apiserver would (strict decoding, then upstream's
// validation) and returns it with every problem at path: apiVersion
// apiserver.config.k8s.io/v1beta1 (served from v1.30, the oldest version
// a tenant runs), kind AuthenticationConfiguration, at least one jwt
// issuer, none of them the tenant's ServiceAccountIssuer. The
// configuration is nil when it does not decode or has no issuer.
func loadAuthenticationConfig(path *field.Path, data []byte) (*apiserver.AuthenticationConfiguration, field.ErrorList) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, field.ErrorList{field.Invalid(path, shorten(string(data)), "must be YAML: "+err.Error())}
	}
	want := metav1.TypeMeta{APIVersion: apiserverv1beta1.ConfigSchemeGroupVersion.String(), Kind: "AuthenticationConfiguration"}
	if tm != want {
		return nil, field.ErrorList{field.Invalid(path, tm.APIVersion+", "+tm.Kind,
			"must be apiVersion "+want.APIVersion+", kind "+want.Kind)}
	}
	obj, _, err := authenticationDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(path, shorten(string(data)), "not an AuthenticationConfiguration: "+err.Error())}
	}
	cfg, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok {
		return nil, field.ErrorList{field.Invalid(path, fmt.Sprintf("%T", obj), "not an AuthenticationConfiguration")}
	}
	if len(cfg.JWT) == 0 {
		return nil, field.ErrorList{field.Required(path, "an AuthenticationConfiguration needs at least one jwt issuer")}
	}
	var errs field.ErrorList
	for _, e := range apiservervalidation.ValidateAuthenticationConfiguration(authenticationCompiler(), cfg, []string{ServiceAccountIssuer}) {
		errs = append(errs, field.Invalid(path, shorten(fmt.Sprint(e.BadValue)), e.Field+": "+e.ErrorBody()))
	}
	return cfg, errs
}

// checkIssuerHosts checks the issuers of a tenant's configuration cfg at
// path against what the tenant API server may fetch: without hosts, no
// internalIssuerHost; with hosts, allowedIssuerHost and no distributed
// claims.
func checkIssuerHosts(path *field.Path, cfg *apiserver.AuthenticationConfiguration, hosts []string) field.ErrorList {
	var errs field.ErrorList
	if len(hosts) == 0 {
		for i, j := range cfg.JWT {
			for _, u := range []struct{ name, url string }{{"url", j.Issuer.URL}, {"discoveryURL", j.Issuer.DiscoveryURL}} {
				if why := internalIssuerHost(u.url); u.url != "" && why != "" {
					errs = append(errs, field.Invalid(path, shorten(u.url), fmt.Sprintf("jwt[%d].issuer.%s: %s", i, u.name, why)))
				}
			}
		}
		return errs
	}
	for i, j := range cfg.JWT {
		// The resolver of distributed claims fetches URLs named in tokens
		// (k8s.io/apiserver oidc authenticator); it is built only for
		// claimMappings.groups.claim.
		if j.ClaimMappings.Groups.Claim != "" {
			errs = append(errs, field.Invalid(path, j.ClaimMappings.Groups.Claim, fmt.Sprintf("jwt[%d].claimMappings.groups.claim: the platform allows only some issuer hosts, and a groups claim would fetch distributed claims from URLs in tokens; use groups.expression (such as claims.groups)", i)))
		}
		for _, u := range []struct{ name, url string }{{"url", j.Issuer.URL}, {"discoveryURL", j.Issuer.DiscoveryURL}} {
			if u.url != "" && !allowedIssuerHost(u.url, hosts) {
				errs = append(errs, field.Invalid(path, shorten(u.url), fmt.Sprintf("jwt[%d].issuer.%s: must be on port 443 of a host the platform allows: %s", i, u.name, strings.Join(hosts, ", "))))
			}
		}
	}
	return errs
}

// internalIssuerHost says why the tenant API server, which runs in the
// management cluster, must not fetch rawURL on a tenant's word whatever
// the platform allows, or "" when it may. An address literal must be
// public (nonPublicAddress). A name must be an ASCII DNS name under a
// public suffix ICANN manages (golang.org/x/net/publicsuffix: its top
// label an ICANN TLD, the name longer than its public suffix): a name
// with no dot or under an unlisted top label (kubernetes.default,
// <service>.<namespace>) resolves through the management cluster's DNS
// search path (<namespace>.svc.cluster.local, svc.cluster.local,
// cluster.local), and a number in the top label's place is read as an
// IP address (0x7f.1, 2130706433: glibc's inet_aton). It must not be a
// name of the cluster's or the cloud's internal DNS: localhost, .svc,
// .cluster.local, .internal, .local, .home.arpa, or a name with a label
// svc after two others (<service>.<namespace>.svc.<cluster domain>,
// whatever the management cluster's domain). A public name may still
// resolve to a management address: oidc.customConfigIssuerHosts is the
// platform's bound.
func internalIssuerHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "must be a URL"
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if a, err := netip.ParseAddr(h); err == nil {
		if r := nonPublicAddress(a); r != "" {
			return "must not be an address of the management network or another non-public range (" + r + "): the tenant's API server runs there"
		}
		return ""
	}
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	switch {
	case h == "":
		return "must name a host"
	case len(labels) == 1:
		return "must be a fully qualified DNS name: a name without a dot resolves through the management cluster's search domains"
	case strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "":
		return "must not be a number in a DNS name's place: resolvers read it as an IP address"
	case len(validation.IsDNS1123Subdomain(h)) > 0:
		return "must be an ASCII DNS name (an internationalized name in its xn-- form)"
	}
	for _, suffix := range []string{"localhost", "svc", "cluster.local", "internal", "local", "home.arpa"} {
		if h == suffix || strings.HasSuffix(h, "."+suffix) {
			return "must not be a name of the management cluster's or the cloud's internal DNS (." + suffix + ")"
		}
	}
	if i := slices.Index(labels, "svc"); i >= 2 {
		return "must not be a Service name of the management cluster's DNS (<service>.<namespace>.svc.<cluster domain>)"
	}
	if _, icann := publicsuffix.PublicSuffix(last); !icann {
		return "must be a fully qualified DNS name under a public top-level domain (" + last + " is none): other names resolve through the management cluster's DNS search path"
	}
	if _, err := publicsuffix.EffectiveTLDPlusOne(h); err != nil {
		return "must be a host name under a public suffix, not the suffix itself"
	}
	return ""
}

// nonPublicAddress names the range of IANA's special-purpose address
// registries (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry) or of
// net/netip's classes that a holds, or "" for a public unicast address. An
// IPv4-mapped IPv6 address is read as its IPv4 address; an address with a
// zone is never public.
func nonPublicAddress(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.Zone() != "":
		return "an address with a zone"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	case !a.IsGlobalUnicast():
		return "not global unicast"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(a) {
			return r.name + " " + r.prefix.String()
		}
	}
	return ""
}

// specialRanges are the special-purpose ranges net/netip has no method
// for, none of them a public unicast address.
var specialRanges = []struct {
	prefix netip.Prefix
	name   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network"`},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (Teredo among them)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4, which embeds an IPv4 address"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// allowedIssuerHost reports whether rawURL is on one of hosts: its host an
// ASCII DNS name, compared case-insensitively (never an IP literal, a zone
// or Unicode, which the HTTP client would resolve or re-encode
// differently), equal to an entry or under an entry that begins with a
// dot, and its port 443.
func allowedIssuerHost(rawURL string, hosts []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Port() != "" && u.Port() != "443") {
		return false
	}
	h := u.Hostname()
	if strings.ContainsFunc(h, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return false
	}
	h = strings.ToLower(h)
	if len(validation.IsDNS1123Subdomain(h)) > 0 || net.ParseIP(h) != nil {
		return false
	}
	for _, e := range hosts {
		if h == e || (strings.HasPrefix(e, ".") && strings.HasSuffix(h, e)) {
			return true
		}
	}
	return false
}

// validateIssuer checks the platform's issuer at path (input.oidc): an
// https URL without query, fragment or user, a PEM certificate bundle,
// a username claim; then the configuration it makes, as the API server
// would. Each of customConfigIssuerHosts must be a DNS name, optionally
// with a leading dot, outside the domains where tenants publish names.
func validateIssuer(path *field.Path, in cpinput.OIDCIssuer, published function.HostSettings) error {
	for i, h := range in.CustomConfigIssuerHosts {
		name := strings.TrimPrefix(h, ".")
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || net.ParseIP(name) != nil {
			return field.Invalid(path.Child("customConfigIssuerHosts").Index(i), h, "must be a lower-case DNS name, optionally with a leading dot")
		}
		if d := published.PublishedBy(name, name != h); d != "" {
			return field.Invalid(path.Child("customConfigIssuerHosts").Index(i), h, "must not be, lie under or (with a leading dot) contain "+d+": tenants publish names there on the shared ingress, which could answer as an issuer")
		}
	}
	if errs := validateTenantGroups(path, in); len(errs) > 0 {
		return errs[0]
	}
	if in.IssuerURL == "" {
		return nil
	}
	u, err := url.Parse(in.IssuerURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return field.Invalid(path.Child("issuerURL"), in.IssuerURL, "must be an https URL without query, fragment or user, such as https://id.example.com/realms/platform")
	}
	if in.CertificateAuthority != "" {
		if _, err := cert.ParseCertsPEM([]byte(in.CertificateAuthority)); err != nil {
			return field.Invalid(path.Child("certificateAuthority"), shorten(in.CertificateAuthority), "must be PEM certificates: "+err.Error())
		}
	}
	b, err := yaml.Marshal(systemAuthenticationConfig(function.Identity{Namespace: "ns", Name: "n"}, in))
	if err != nil {
		return field.InternalError(path, err)
	}
	// The platform's own issuer: valid as kube-apiserver reads it; where
	// it lives (a name of the management cluster's, say) is the
	// platform's choice.
	if _, errs := loadAuthenticationConfig(path, b); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

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
	AuthenticationConfigVolume = "authentication-config"
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

// planAuthentication resolves spec.oidc (docs/architecture.md, OIDC). It
// returns a *field.Error naming spec.oidc.mode when mode System finds no
// platform issuer, and one naming spec.oidc.customConfig.config when the
// inline configuration is not a valid AuthenticationConfiguration.
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
			if len(in.CustomConfigIssuerHosts) > 0 {
				return authentication{}, field.ErrorList{field.Invalid(field.NewPath("spec", "oidc", "customConfig", "secretRef", "name"), name,
					"the platform allows only some issuer hosts (control-plane input oidc.customConfigIssuerHosts) and does not read Secrets to check them; give the configuration inline in customConfig.config")}
			}
			source = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: name,
				Items:      []corev1.KeyToPath{{Key: AuthenticationConfigKey, Path: AuthenticationConfigKey}},
			}}
			break
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
			UserValidationRules: []apiserverv1beta1.UserValidationRule{{
				Expression: "!user.username.startsWith('system:')",
				Message:    "user names with the system: prefix are reserved for Kubernetes components",
			}},
		}},
	}
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

// CheckAuthenticationConfig parses an AuthenticationConfiguration as the
// tenant's kube-apiserver would (strict decoding, then upstream's
// validation) and returns every problem at path: apiVersion
// apiserver.config.k8s.io/v1beta1 (served from v1.30, the oldest version
// a tenant runs), kind AuthenticationConfiguration, at least one jwt
// issuer, none of them the tenant's ServiceAccountIssuer; with hosts, each
// issuer's url and discoveryURL on one of them (allowedIssuerHost).
func CheckAuthenticationConfig(path *field.Path, data []byte, hosts []string) field.ErrorList {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return field.ErrorList{field.Invalid(path, shorten(string(data)), "must be YAML: "+err.Error())}
	}
	want := metav1.TypeMeta{APIVersion: apiserverv1beta1.ConfigSchemeGroupVersion.String(), Kind: "AuthenticationConfiguration"}
	if tm != want {
		return field.ErrorList{field.Invalid(path, tm.APIVersion+", "+tm.Kind,
			"must be apiVersion "+want.APIVersion+", kind "+want.Kind)}
	}
	obj, _, err := authenticationDecoder().Decode(data, nil, nil)
	if err != nil {
		return field.ErrorList{field.Invalid(path, shorten(string(data)), "not an AuthenticationConfiguration: "+err.Error())}
	}
	cfg, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok {
		return field.ErrorList{field.Invalid(path, fmt.Sprintf("%T", obj), "not an AuthenticationConfiguration")}
	}
	if len(cfg.JWT) == 0 {
		return field.ErrorList{field.Required(path, "an AuthenticationConfiguration needs at least one jwt issuer")}
	}
	var errs field.ErrorList
	for _, e := range apiservervalidation.ValidateAuthenticationConfiguration(authenticationCompiler(), cfg, []string{ServiceAccountIssuer}) {
		errs = append(errs, field.Invalid(path, shorten(fmt.Sprint(e.BadValue)), e.Field+": "+e.ErrorBody()))
	}
	if len(hosts) == 0 {
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
	if errs := CheckAuthenticationConfig(path, b, nil); len(errs) > 0 {
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

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// docsConfig is the shape of the AuthenticationConfiguration example of the
// Kubernetes documentation ("Authenticating", structured authentication
// configuration): one issuer, one audience, the username from a claim.
const docsConfig = `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://example.com
    audiences:
    - my-app
  claimMappings:
    username:
      claim: sub
      prefix: ""
`

// testCA is the self-signed certificate of the render test's platform
// settings (test/testdata/control-plane/platform-oidc.yaml).
func testCA(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../test/testdata/control-plane/platform-oidc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ec struct {
		Data struct {
			OIDC cpinput.OIDCIssuer `json:"oidc"`
		} `json:"data"`
	}
	if err := yaml.Unmarshal(b, &ec); err != nil {
		t.Fatal(err)
	}
	return ec.Data.OIDC.CertificateAuthority
}

func TestOIDCAudienceIsInjective(t *testing.T) {
	// The pair a "<NS>-<N>" audience confuses: both are prod-team-a.
	a := OIDCAudience(function.Identity{Namespace: "prod", Name: "team-a"})
	b := OIDCAudience(function.Identity{Namespace: "prod-team", Name: "a"})
	if a != "prod.team-a" || b != "prod-team.a" {
		t.Errorf("OIDCAudience: got %q and %q, want prod.team-a and prod-team.a", a, b)
	}
}

func TestPlanAuthentication(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	issuer := cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test/realms/platform", UsernameClaim: "email"}
	mount := &corev1.VolumeMount{Name: "authentication-config", MountPath: "/etc/kubernetes/authentication-config", ReadOnly: true}
	configMapVolume := &corev1.Volume{Name: "authentication-config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "demo-oidc-authn-config"}}}}
	const flag = "--authentication-config=/etc/kubernetes/authentication-config/config.yaml"
	cfgPath := field.NewPath("spec", "oidc", "customConfig", "config")

	type args struct {
		oidc   tkv1alpha1.OIDC
		issuer cpinput.OIDCIssuer
	}
	type want struct {
		arg    string
		volume *corev1.Volume
		mount  *corev1.VolumeMount
		config string // the ConfigMap's config.yaml; "" for none
		errs   []string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"None": {
			reason: "Mode None adds nothing, even with an issuer configured.",
			args:   args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeNone}, issuer: issuer},
		},
		"SystemWithoutIssuer": {
			reason: "Mode System on a platform with no issuer is Fatal naming spec.oidc.mode.",
			args:   args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeSystem}, issuer: cpinput.OIDCIssuer{UsernameClaim: "email"}},
			want:   want{errs: []string{`spec.oidc.mode: Invalid value: "System": the platform trusts no OIDC issuer: its control-plane input oidc.issuerURL is empty`}},
		},
		"System": {
			reason: "The platform's issuer with the audience <NS>.<N>, the user name from the email claim unprefixed, system: user names refused (the upstream documentation's rule).",
			args:   args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeSystem}, issuer: issuer},
			want: want{arg: flag, volume: configMapVolume, mount: mount, config: `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://id.corp.test/realms/platform
    audiences: [tenant-demo.demo]
  claimMappings:
    username: {claim: email, prefix: ""}
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: "user names with the system: prefix are reserved for Kubernetes components"
`},
		},
		"SystemGroupsGate": {
			reason: "With groupsClaim and tenantGroups, a claim validation rule: the groups claim present, a list, holding one of the tenant's groups.",
			args:   args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeSystem}, issuer: gateIssuer},
			want: want{arg: flag, volume: configMapVolume, mount: mount, config: `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://id.corp.test/realms/platform
    audiences: [tenant-demo.demo]
  claimValidationRules:
  - expression: 'has(claims.groups) && type(claims.groups) == list && dyn(claims.groups).exists(g, g in ["tenant:tenant-demo:view", "tenant:tenant-demo:use", "tenant:tenant-demo:admin", "tenant:tenant-demo:super-admin"])'
    message: "the token's groups claim holds none of this cluster's tenant groups"
  claimMappings:
    username: {claim: email, prefix: ""}
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: "user names with the system: prefix are reserved for Kubernetes components"
`},
		},
		"CustomInline": {
			reason: "An inline configuration goes verbatim into the ConfigMap.",
			args:   args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: docsConfig}}},
			want:   want{arg: flag, volume: configMapVolume, mount: mount, config: docsConfig},
		},
		"CustomSecret": {
			reason: "kube-apiserver reloads a Secret's edits without a reconcile, so a configuration in a Secret could name any issuer after a check: refused whatever the platform allows.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig,
				CustomConfig: tkv1alpha1.OIDCCustomConfig{SecretRef: tkv1alpha1.OIDCSecretRef{Name: "my-authn"}}}},
			want: want{errs: []string{`spec.oidc.customConfig.secretRef.name: Invalid value: "my-authn": the issuers of an AuthenticationConfiguration in a Secret cannot be checked`}},
		},
		"CustomWrongKind": {
			reason: "Only apiserver.config.k8s.io/v1beta1 AuthenticationConfiguration.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(docsConfig, "AuthenticationConfiguration", "AuthorizationConfiguration", 1)}}},
			want: want{errs: []string{cfgPath.String() + `: Invalid value: "apiserver.config.k8s.io/v1beta1, AuthorizationConfiguration": must be apiVersion apiserver.config.k8s.io/v1beta1, kind AuthenticationConfiguration`}},
		},
		"CustomNoIssuer": {
			reason: "At least one jwt issuer.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"}}},
			want: want{errs: []string{cfgPath.String() + ": Required value: an AuthenticationConfiguration needs at least one jwt issuer"}},
		},
		"CustomUnknownField": {
			reason: "Decoded strictly, as kube-apiserver decodes it: a misspelt field is an error, not ignored.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(docsConfig, "audiences:", "audience:", 1)}}},
			want: want{errs: []string{`unknown field "jwt[0].issuer.audience"`}},
		},
		"CustomInvalid": {
			reason: "Upstream validation: an http issuer and an empty audience list are both named.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(strings.Replace(docsConfig, "https://", "http://", 1), "    audiences:\n    - my-app\n", "", 1)}}},
			want: want{errs: []string{"jwt[0].issuer.url: Invalid value: \"http://example.com\": URL scheme must be https", "jwt[0].issuer.audiences: Required value"}},
		},
		"CustomAllowedHost": {
			reason: "With customConfigIssuerHosts, an issuer on a listed host composes as without.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: docsConfig}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{".corp.test", "example.com"}}},
			want: want{arg: flag, volume: configMapVolume, mount: mount, config: docsConfig},
		},
		"CustomHostRefused": {
			reason: "An issuer URL whose host is neither a listed name nor under a dotted entry (example.com is not under .example.com).",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: docsConfig}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{".example.com"}}},
			want: want{errs: []string{cfgPath.String() + `: Invalid value: "https://example.com": jwt[0].issuer.url: must be on port 443 of a host the platform allows: .example.com`}},
		},
		"CustomDiscoveryHostRefused": {
			reason: "The discovery document is fetched from discoveryURL: its host is checked too (here the cloud metadata address).",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(docsConfig, "    url: https://example.com\n", "    url: https://example.com\n    discoveryURL: https://169.254.169.254/latest\n", 1)}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
			want: want{errs: []string{cfgPath.String() + `: Invalid value: "https://169.254.169.254/latest": jwt[0].issuer.discoveryURL: must be on port 443 of a host the platform allows: example.com`}},
		},
		"CustomSecondIssuerRefused": {
			reason: "Every jwt issuer is checked, not only the first.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: docsConfig + strings.Replace(strings.TrimPrefix(docsConfig, "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n"), "https://example.com", "https://other.example.net", 1)}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
			want: want{errs: []string{cfgPath.String() + `: Invalid value: "https://other.example.net": jwt[1].issuer.url: must be on port 443 of a host the platform allows: example.com`}},
		},
		"CustomGroupsClaimWithHosts": {
			reason: "A groups claim makes kube-apiserver resolve distributed claims from URLs inside tokens; with an allow-list of hosts only groups.expression is accepted.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: docsConfig + "    groups:\n      claim: groups\n      prefix: \"\"\n"}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
			want: want{errs: []string{cfgPath.String() + `: Invalid value: "groups": jwt[0].claimMappings.groups.claim: the platform allows only some issuer hosts`}},
		},
		"CustomGroupsExpressionWithHosts": {
			reason: "groups.expression builds no distributed-claims resolver: accepted with an allow-list.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: docsConfig + "    groups:\n      expression: claims.groups\n"}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
			want: want{arg: flag, volume: configMapVolume, mount: mount, config: docsConfig + "    groups:\n      expression: claims.groups\n"},
		},
		"CustomGroupsClaimWithoutHosts": {
			reason: "Without an allow-list a groups claim is accepted, as kube-apiserver accepts it.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: docsConfig + "    groups:\n      claim: groups\n      prefix: \"\"\n"}}},
			want: want{arg: flag, volume: configMapVolume, mount: mount, config: docsConfig + "    groups:\n      claim: groups\n      prefix: \"\"\n"},
		},
		"CustomSecretWithHosts": {
			reason: "With an allow-list of hosts a Secret's configuration is refused too.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig,
				CustomConfig: tkv1alpha1.OIDCCustomConfig{SecretRef: tkv1alpha1.OIDCSecretRef{Name: "my-authn"}}},
				issuer: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
			want: want{errs: []string{`spec.oidc.customConfig.secretRef.name: Invalid value: "my-authn": the issuers of an AuthenticationConfiguration in a Secret cannot be checked`}},
		},
		"CustomServiceAccountIssuer": {
			reason: "kube-apiserver refuses a jwt issuer equal to its --service-account-issuer, which Kamaji sets to https://kubernetes.default.svc.cluster.local; a name of the cluster's DNS is refused besides.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(docsConfig, "https://example.com", "https://kubernetes.default.svc.cluster.local", 1)}}},
			want: want{errs: []string{`jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc.cluster.local": URL must not overlap with disallowed issuers`,
				`jwt[0].issuer.url: must not be a name of the management cluster's or the cloud's internal DNS (.cluster.local)`}},
		},
		"MetadataServiceIssuer": {
			reason: "The tenant API server runs in the management cluster: an issuer at the cloud metadata address would have it fetch from there.",
			args: args{oidc: tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{
				Config: strings.Replace(docsConfig, "https://example.com", "https://169.254.169.254/latest", 1)}}},
			want: want{errs: []string{`Invalid value: "https://169.254.169.254/latest": jwt[0].issuer.url: must not be an address of the management network`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := planAuthentication(id, tc.args.oidc, tc.args.issuer)
			if len(tc.want.errs) != len(errs) {
				t.Fatalf("%s\nplanAuthentication(...): want %d errors, got %v", tc.reason, len(tc.want.errs), errs)
			}
			for i, w := range tc.want.errs {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("%s\nplanAuthentication(...): error %q does not contain %q", tc.reason, errs[i].Error(), w)
				}
			}
			if len(errs) > 0 {
				return
			}
			if diff := cmp.Diff(tc.want.arg, got.Arg); diff != "" {
				t.Errorf("%s\nflag: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.volume, got.Volume); diff != "" {
				t.Errorf("%s\nvolume: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.mount, got.Mount); diff != "" {
				t.Errorf("%s\nmount: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want.config == "" {
				if got.ConfigMap != nil {
					t.Errorf("%s\nwant no ConfigMap, got %v", tc.reason, got.ConfigMap)
				}
				return
			}
			if got.ConfigMap == nil || got.ConfigMap.Name != "demo-oidc-authn-config" || got.ConfigMap.Namespace != "tenant-demo" {
				t.Fatalf("%s\nwant ConfigMap tenant-demo/demo-oidc-authn-config, got %v", tc.reason, got.ConfigMap)
			}
			// Compared as data: the YAML above is written by hand.
			var want, gotData any
			if err := yaml.Unmarshal([]byte(tc.want.config), &want); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(got.ConfigMap.Data["config.yaml"]), &gotData); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, gotData, cmpopts.IgnoreMapEntries(func(k string, v any) bool {
				m, ok := v.(map[string]any)
				return (k == "groups" || k == "uid") && ok && len(m) == 0 // empty mappings of the v1beta1 structs
			})); diff != "" {
				t.Errorf("%s\nconfig.yaml: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidateIssuer(t *testing.T) {
	p := field.NewPath("input", "oidc")
	cases := map[string]struct {
		reason string
		args   cpinput.OIDCIssuer
		want   string // substring of the error; "" for none
	}{
		"Unset":              {reason: "No issuer is valid: mode System is then refused per cluster.", args: cpinput.OIDCIssuer{UsernameClaim: "email"}},
		"Https":              {reason: "An https issuer with a path (Keycloak's realm URL shape).", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test/realms/platform", UsernameClaim: "email"}},
		"WithCA":             {reason: "A PEM CA bundle.", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test", CertificateAuthority: "<ca>", UsernameClaim: "email"}},
		"Http":               {reason: "kube-apiserver needs https.", args: cpinput.OIDCIssuer{IssuerURL: "http://id.corp.test", UsernameClaim: "email"}, want: `input.oidc.issuerURL: Invalid value: "http://id.corp.test"`},
		"Query":              {reason: "No query.", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test/?x=1", UsernameClaim: "email"}, want: "input.oidc.issuerURL"},
		"BadPEM":             {reason: "A CA that is no PEM.", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test", CertificateAuthority: "not a certificate", UsernameClaim: "email"}, want: "input.oidc.certificateAuthority"},
		"NoClaim":            {reason: "A username claim is needed (upstream validation).", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test"}, want: "claimMappings.username"},
		"Hosts":              {reason: "Names and dotted suffixes, without an issuer of the platform's own.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{".corp.test", "login.example.com"}}},
		"BadHost":            {reason: "Entries are lower-case DNS names.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"login.example.com", "Id.Corp.Test"}}, want: `input.oidc.customConfigIssuerHosts[1]: Invalid value: "Id.Corp.Test"`},
		"HostIP":             {reason: "An entry is a DNS name, not an address.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"10.0.0.1"}}, want: `input.oidc.customConfigIssuerHosts[0]: Invalid value: "10.0.0.1"`},
		"HostUnderBase":      {reason: "Tenants publish hosts under baseDomain on the shared ingress.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"id.tenants.example.com"}}, want: `input.oidc.customConfigIssuerHosts[0]: Invalid value: "id.tenants.example.com": must not be, lie under or (with a leading dot) contain tenants.example.com`},
		"DottedOverBase":     {reason: "A dotted entry containing baseDomain covers every tenant host.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{".example.com"}}, want: `input.oidc.customConfigIssuerHosts[0]: Invalid value: ".example.com"`},
		"ExactOverBase":      {reason: "A plain entry is that host only: example.com is not a tenant's, though baseDomain lies under it.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"example.com"}}},
		"UnderAllowedSuffix": {reason: "Tenants may also publish under an allowedHostSuffixes entry.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"id.apps.example.net"}}, want: `input.oidc.customConfigIssuerHosts[0]: Invalid value: "id.apps.example.net": must not be, lie under or (with a leading dot) contain apps.example.net`},
		"TenantGroups":       {reason: "A claim gate of the four groups.", args: gateIssuer},
		"TenantGroupsUnsafe": {reason: "A bad tenantGroups pattern is Fatal naming it.", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test", UsernameClaim: "email", GroupsClaim: "groups", TenantGroups: []string{"{namespace}-admin"}}, want: `input.oidc.tenantGroups[0]: Invalid value: "{namespace}-admin"`},
		"GroupsClaimAlone":   {reason: "groupsClaim without tenantGroups.", args: cpinput.OIDCIssuer{IssuerURL: "https://id.corp.test", UsernameClaim: "email", GroupsClaim: "groups"}, want: "input.oidc.tenantGroups: Required value"},
		"HostURL":            {reason: "An entry is a host, not a URL.", args: cpinput.OIDCIssuer{CustomConfigIssuerHosts: []string{"https://id.corp.test"}}, want: "input.oidc.customConfigIssuerHosts[0]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.args
			if in.CertificateAuthority == "<ca>" {
				in.CertificateAuthority = testCA(t)
			}
			err := validateIssuer(p, in, function.HostSettings{BaseDomain: "tenants.example.com", AllowedSuffixes: []string{"apps.example.net"}})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s\nvalidateIssuer: unexpected error %v", tc.reason, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s\nvalidateIssuer: error %v does not contain %q", tc.reason, err, tc.want)
			}
		})
	}
}

func TestAPIServerComponent(t *testing.T) {
	res := resources("2", "200m", "2Gi")
	auth := authentication{
		Arg:    "--authentication-config=/etc/kubernetes/authentication-config/config.yaml",
		Volume: &corev1.Volume{Name: "authentication-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "demo-oidc-authn-config"}}}},
		Mount:  &corev1.VolumeMount{Name: "authentication-config", MountPath: "/etc/kubernetes/authentication-config", ReadOnly: true},
	}
	spec := func(args ...tkv1alpha1.APIServerArg) tkv1alpha1.APIServer {
		return tkv1alpha1.APIServer{
			ExtraArgs: args,
			ExtraVolumes: []tkv1alpha1.APIServerVolume{
				{Name: "tokens", Secret: &tkv1alpha1.SecretVolume{SecretName: "static-tokens", Optional: ptr.To(true)}},
				{Name: "audit", ConfigMap: &tkv1alpha1.ConfigMapVolume{Name: "audit-policy"}},
			},
			ExtraVolumeMounts: []tkv1alpha1.APIServerVolumeMount{{Name: "tokens", MountPath: "/srv/tokens"}, {Name: "audit", MountPath: "/etc/tenant/audit", ReadOnly: true}},
		}
	}
	sorted := &kamajiv1alpha2.ControlPlaneComponent{
		Resources: &res,
		// Sorted by flag name: cors-allowed-origins < goaway-chance < profiling < v.
		ExtraArgs: []string{"--cors-allowed-origins=https://console.corp.test", "--goaway-chance=0.001", "--profiling", "--v=2"},
		ExtraVolumeMounts: []corev1.VolumeMount{
			{Name: "audit", MountPath: "/etc/tenant/audit", ReadOnly: true},
			{Name: "tokens", MountPath: "/srv/tokens"},
		},
	}
	volumes := &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{
		{Name: "audit", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "audit-policy"}}}},
		{Name: "tokens", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "static-tokens", Optional: ptr.To(true)}}},
	}}
	withAuth := sorted.DeepCopy()
	withAuth.ExtraArgs = []string{"--authentication-config=/etc/kubernetes/authentication-config/config.yaml",
		"--cors-allowed-origins=https://console.corp.test", "--goaway-chance=0.001", "--profiling", "--v=2"}
	withAuth.ExtraVolumeMounts = append([]corev1.VolumeMount{*auth.Mount}, withAuth.ExtraVolumeMounts...)
	authVolumes := &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{volumes.ExtraVolumes[0], *auth.Volume, volumes.ExtraVolumes[1]}}

	type args struct {
		spec tkv1alpha1.APIServer
		auth authentication
	}
	type want struct {
		component  *kamajiv1alpha2.ControlPlaneComponent
		deployment *kamajiv1alpha2.DeploymentSpec
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Defaults": {
			reason: "No extras: resources only and no deployment.",
			args:   args{spec: tkv1alpha1.APIServer{}},
			want:   want{component: &kamajiv1alpha2.ControlPlaneComponent{Resources: &res}},
		},
		"Sorted": {
			reason: "Flags by name, volumes by name, mounts by path.",
			args:   args{spec: spec("--v=2", "--profiling", "--cors-allowed-origins=https://console.corp.test", "--goaway-chance=0.001")},
			want:   want{component: sorted, deployment: volumes},
		},
		"Reordered": {
			reason: "Another order of the same flags renders the same bytes (kamaji #1154).",
			args:   args{spec: spec("--goaway-chance=0.001", "--profiling", "--v=2", "--cors-allowed-origins=https://console.corp.test")},
			want:   want{component: sorted, deployment: volumes},
		},
		"WithOIDC": {
			reason: "The platform's flag, volume and mount join the tenant's, sorted in.",
			args:   args{spec: spec("--v=2", "--profiling", "--cors-allowed-origins=https://console.corp.test", "--goaway-chance=0.001"), auth: auth},
			want:   want{component: withAuth, deployment: authVolumes},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, d := apiServerComponent(tc.args.spec, res, tc.args.auth)
			if diff := cmp.Diff(tc.want.component, c, quantities); diff != "" {
				t.Errorf("%s\napiServer: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.deployment, d); diff != "" {
				t.Errorf("%s\ndeployment: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanOIDCErrors: plan answers a bad spec.oidc with every problem at
// once, beside the others.
func TestPlanOIDCErrors(t *testing.T) {
	_, errs := planOf(t, fntest.Call{Spec: `{oidc: {mode: System}, controlPlane: {replicas: 0}}`}, `{}`)
	want := field.ErrorList{
		field.Invalid(field.NewPath("spec", "controlPlane", "replicas"), int32(0), "must be between 1 and 7"),
		field.Invalid(field.NewPath("spec", "oidc", "mode"), tkv1alpha1.OIDCModeSystem,
			"the platform trusts no OIDC issuer: its control-plane input oidc.issuerURL is empty; use mode CustomConfig or None"),
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("plan(...): -want errors, +got:\n%s", diff)
	}
}

// Hosts a tenant's CustomConfig may never name, whatever the platform
// allows: each an address or name that reaches the management network
// (RFC 1918, RFC 3927 link-local, RFC 4193 unique local, loopback), a form
// glibc's inet_aton reads as 169.254.169.254 (0xa9fea9fe, 2852039166), a
// search-domain name, cluster and cloud internal DNS, a name under no
// ICANN top-level domain, and the address ranges of IANA's special-purpose
// registries; public names and addresses stay accepted.
func TestInternalIssuerHost(t *testing.T) {
	for _, tc := range []struct {
		url      string
		internal bool
	}{
		// Names the management cluster's DNS search path answers.
		{"https://kubernetes.default", true},
		{"https://kubernetes.default/", true},
		{"https://keycloak.auth", true},
		{"https://keycloak.auth:8443/realms/x", true},
		{"https://kubernetes.default.svc", true},
		{"https://keycloak.auth.svc.k8s.example.com/", true}, // a cluster domain of the platform's
		{"https://id.corp.test/", true},                      // test, example, invalid: no ICANN TLD
		{"https://id.example/", true},
		{"https://id.invalid/", true},
		{"https://router.home.arpa/", true},
		{"https://co.uk/", true}, // a public suffix is no host
		{"https://b\u00fccher.example.com/", true},
		// Address literals of non-public ranges.
		{"https://100.64.0.1/", true}, // carrier-grade NAT
		{"https://100.127.255.254/", true},
		{"https://[64:ff9b::a9fe:a9fe]/", true}, // NAT64 of 169.254.169.254
		{"https://[64:ff9b:1::a00:1]/", true},   // local-use NAT64
		{"https://[fc00::1]/", true},            // unique local
		{"https://[::]/", true},                 // unspecified
		{"https://[ff02::1]/", true},            // multicast
		{"https://239.1.1.1/", true},
		{"https://255.255.255.255/", true},
		{"https://192.0.2.1/", true}, // documentation
		{"https://198.51.100.7/", true},
		{"https://203.0.113.9/", true},
		{"https://[2001:db8::1]/", true},
		{"https://198.18.0.1/", true},            // benchmarking
		{"https://240.0.0.1/", true},             // reserved
		{"https://0.1.2.3/", true},               // "this network"
		{"https://192.0.0.9/", true},             // IETF protocol assignments
		{"https://[::10.0.0.1]/", true},          // IPv4-compatible
		{"https://[2002:a9fe:a9fe::1]/", true},   // 6to4 of 169.254.169.254
		{"https://[2001:0:a9fe:a9fe::1]/", true}, // Teredo
		{"https://[fe80::1%25eth0]/", true},      // a zone
		{"https://[fec0::1]/", true},             // site-local
		// Public, accepted.
		{"https://login.microsoftonline.com/common/v2.0", false},
		{"https://tenant.github.io/", false}, // a private suffix under an ICANN TLD
		{"https://id.example.co.uk/", false},
		{"https://1.1.1.1/", false},
		{"https://169.254.169.254/latest", true},
		{"https://[::ffff:169.254.169.254]/", true},
		{"https://[fe80::1]/", true},
		{"https://127.0.0.1/", true},
		{"https://[::1]/", true},
		{"https://0.0.0.0/", true},
		{"https://10.0.0.1/", true},
		{"https://172.16.5.4/", true},
		{"https://192.168.1.1/", true},
		{"https://[fd00::1]/", true},
		{"https://224.0.0.1/", true},
		{"https://2852039166/", true},
		{"https://0xa9fea9fe/", true},
		{"https://0x7f.1/", true},
		{"https://10.1/", true},
		{"https://keycloak/", true},
		{"https://localhost/", true},
		{"https://id.localhost/", true},
		{"https://keycloak.auth.svc/", true},
		{"https://keycloak.auth.svc.cluster.local/", true},
		{"https://KEYCLOAK.auth.SVC.cluster.local./", true},
		{"https://metadata.google.internal/", true},
		{"https://printer.local/", true},
		{"https://id.example.com/realms/x", false},
		{"https://accounts.google.com", false},
		{"https://8.8.8.8/", false},
		{"https://[2001:4860:4860::8888]/", false},
		{"https://svc.example.com/", false},
		{"https://internal.example.com/", false},
	} {
		if got := internalIssuerHost(tc.url) != ""; got != tc.internal {
			t.Errorf("internalIssuerHost(%q) refuses: %v, want %v", tc.url, got, tc.internal)
		}
	}
}

// TestTenantIssuersRefused: with the platform's default empty
// customConfigIssuerHosts, an inline configuration whose issuer url or
// discoveryURL the management network would answer is a Fatal naming
// spec.oidc.customConfig.config, the URL and the field inside, every one
// at once; a public issuer composes.
func TestTenantIssuersRefused(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	config := func(urls ...string) string {
		out := "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n"
		for i, u := range urls {
			out += "- issuer:\n    url: " + u + "\n    audiences: [a" + strconv.Itoa(i) + "]\n  claimMappings:\n    username: {claim: sub, prefix: \"\"}\n"
		}
		return out
	}
	refused := []string{"https://kubernetes.default", "https://keycloak.auth", "https://kubernetes.default.svc",
		"https://100.64.0.1", "https://[64:ff9b::a9fe:a9fe]", "https://[64:ff9b:1::a00:1]", "https://[fd00::1]", "https://10.0.0.1"}
	_, errs := planAuthentication(id, tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: config(refused...)}}, cpinput.OIDCIssuer{})
	msg := errs.ToAggregate().Error()
	for i, u := range refused {
		if w := fmt.Sprintf(`spec.oidc.customConfig.config: Invalid value: %q: jwt[%d].issuer.url: must`, u, i); !strings.Contains(msg, w) {
			t.Errorf("the Fatal does not name %s:\n%s", w, msg)
		}
	}
	discovery := strings.Replace(config("https://id.example.com"), "    audiences:", "    discoveryURL: https://keycloak.auth/.well-known/openid-configuration\n    audiences:", 1)
	if _, errs := planAuthentication(id, tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: discovery}}, cpinput.OIDCIssuer{}); !strings.Contains(errs.ToAggregate().Error(),
		`Invalid value: "https://keycloak.auth/.well-known/openid-configuration": jwt[0].issuer.discoveryURL: must be a fully qualified DNS name under a public top-level domain (auth is none)`) {
		t.Errorf("discoveryURL on a search-path name: %v", errs)
	}
	for _, u := range []string{"https://accounts.google.com", "https://id.example.com/realms/tenant"} {
		a, errs := planAuthentication(id, tkv1alpha1.OIDC{Mode: tkv1alpha1.OIDCModeCustomConfig, CustomConfig: tkv1alpha1.OIDCCustomConfig{Config: config(u)}}, cpinput.OIDCIssuer{})
		if len(errs) > 0 || a.ConfigMap == nil {
			t.Errorf("public issuer %s: %v", u, errs)
		}
	}
}

func TestAllowedIssuerHost(t *testing.T) {
	cases := []struct {
		url   string
		hosts []string
		want  bool
	}{
		{"https://id.corp.test/realms/x", []string{"id.corp.test"}, true},
		{"https://ID.Corp.Test:443/", []string{"id.corp.test"}, true},        // ASCII case ignored
		{"https://%E2%84%AAey.corp.test/", []string{"key.corp.test"}, false}, // the Kelvin sign lower-cases to k: refused before lowering
		{"https://a.b.corp.test", []string{".corp.test"}, true},
		{"https://corp.test", []string{".corp.test"}, false},     // a dotted entry covers only names under it
		{"https://evilcorp.test", []string{".corp.test"}, false}, // a suffix at a label boundary only
		{"https://id.corp.test.evil.example", []string{"id.corp.test"}, false},
		{"https://x.id.corp.test", []string{"id.corp.test"}, false}, // an entry without a dot is that host only
		{"https://evilid.corp.test", []string{"id.corp.test"}, false},
		{"https://169.254.169.254/", []string{"id.corp.test"}, false},
		{"https:///path", []string{"id.corp.test"}, false}, // no host
		{"https://id.corp.test", nil, false},
		{"https://id.corp.test:443/", []string{"id.corp.test"}, true},
		{"https://id.corp.test:10250/", []string{"id.corp.test"}, false},                  // port 443 only
		{"https://[::ffff:169.254.169.254%25.corp.test]/", []string{".corp.test"}, false}, // an IPv6 literal whose zone ends in the suffix
		{"https://169.254.169.254%25.corp.test/", []string{".corp.test"}, false},
		{"https://[::1]/", []string{".corp.test"}, false},
		{"https://10.0.0.1/", []string{"10.0.0.1"}, false},              // IP literals never match
		{"https://\u0130d.corp.test/", []string{"id.corp.test"}, false}, // Unicode: the HTTP client would look up its IDNA form
		{"https://%C4%B0d.corp.test/", []string{"id.corp.test"}, false},
		{"https://id.corp.test./", []string{"id.corp.test"}, false}, // trailing dot
	}
	for _, tc := range cases {
		if got := allowedIssuerHost(tc.url, tc.hosts); got != tc.want {
			t.Errorf("allowedIssuerHost(%q, %q) = %v, want %v", tc.url, tc.hosts, got, tc.want)
		}
	}
}

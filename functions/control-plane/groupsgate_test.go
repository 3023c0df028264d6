package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/pkg/cel/lazy"
	"sigs.k8s.io/yaml"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// gateIssuer is a platform issuer with a claim gate of four tenant groups,
// the shape of the four per-tenant Keycloak groups of today's chart
// (view, use, admin, super-admin) with a delimiter no DNS label holds.
var gateIssuer = cpinput.OIDCIssuer{
	IssuerURL:     "https://id.corp.test/realms/platform",
	UsernameClaim: "email",
	GroupsClaim:   "groups",
	TenantGroups:  []string{"tenant:{namespace}:view", "tenant:{namespace}:use", "tenant:{namespace}:admin", "tenant:{namespace}:super-admin"},
}

// admits compiles the claim validation rules of the System configuration
// of id as kube-apiserver does (after the YAML round trip of the composed
// ConfigMap) and evaluates them on the token claims claimsJSON: whether
// every rule holds, and the evaluation error.
func admits(t *testing.T, id function.Identity, in cpinput.OIDCIssuer, claimsJSON string) (bool, error) {
	t.Helper()
	b, err := yaml.Marshal(systemAuthenticationConfig(id, in))
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := loadAuthenticationConfig(field.NewPath("config"), b); len(errs) > 0 {
		t.Fatalf("the System configuration of %v does not load: %v", id, errs)
	}
	var cfg apiserverv1beta1.AuthenticationConfiguration
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var results []authenticationcel.CompilationResult
	for _, r := range cfg.JWT[0].ClaimValidationRules {
		res, err := authenticationCompiler().CompileClaimsExpression(&authenticationcel.ClaimValidationCondition{Expression: r.Expression, Message: r.Message})
		if err != nil {
			t.Fatalf("rule %q does not compile: %v", r.Expression, err)
		}
		results = append(results, res)
	}
	var claims map[string]any
	if err := yaml.Unmarshal([]byte(claimsJSON), &claims); err != nil {
		t.Fatal(err)
	}
	// As kube-apiserver hands claims to CEL: a lazy map of object type
	// kubernetes.claims, each claim decoded from JSON on access
	// (k8s.io/apiserver plugin/pkg/authenticator/token/oidc newClaimsValue).
	lazyClaims := lazy.NewMapValue(types.NewObjectType("kubernetes.claims"))
	for name, v := range claims {
		lazyClaims.Append(name, func(*lazy.MapValue) ref.Val { return types.DefaultTypeAdapter.NativeToValue(v) })
	}
	evals, err := authenticationcel.NewClaimsMapper(results).EvalClaimMappings(context.Background(), lazyClaims)
	if err != nil {
		return false, err
	}
	for _, e := range evals {
		if e.EvalResult != types.True {
			return false, nil
		}
	}
	return true, nil
}

func TestGroupsGate(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	cases := map[string]struct {
		reason string
		in     cpinput.OIDCIssuer
		claims string
		want   bool
	}{
		"TenantGroup":  {reason: "A token carrying one of the tenant's groups, among others, passes.", in: gateIssuer, claims: `{"email": "a@corp.test", "groups": ["staff", "tenant:tenant-demo:view"]}`, want: true},
		"SuperAdmin":   {reason: "Each of the four patterns is a tenant group.", in: gateIssuer, claims: `{"groups": ["tenant:tenant-demo:super-admin"]}`, want: true},
		"OtherTenant":  {reason: "Another tenant's group does not pass: the cross-tenant gate.", in: gateIssuer, claims: `{"groups": ["tenant:tenant-other:admin", "tenant:tenant-demo-x:admin"]}`},
		"NoGroups":     {reason: "A platform user in no group.", in: gateIssuer, claims: `{"groups": []}`},
		"ClaimMissing": {reason: "A token without the groups claim fails the rule without an evaluation error.", in: gateIssuer, claims: `{"email": "a@corp.test"}`},
		"ClaimString":  {reason: "A groups claim that is a string, even the group's name, fails without an evaluation error.", in: gateIssuer, claims: `{"groups": "tenant:tenant-demo:view"}`},
		"ClaimNumbers": {reason: "Non-string entries never equal a group.", in: gateIssuer, claims: `{"groups": [1, true, {"a": "b"}]}`},
		"OtherClaim":   {reason: "The tenant group in another claim does not count.", in: gateIssuer, claims: `{"roles": ["tenant:tenant-demo:view"]}`},
		"ClusterPlaceholder": {reason: "{name} is the cluster's name: another cluster's group of the tenant does not pass.",
			in:     cpinput.OIDCIssuer{IssuerURL: gateIssuer.IssuerURL, UsernameClaim: "email", GroupsClaim: "groups", TenantGroups: []string{"k8s/{namespace}/{name}"}},
			claims: `{"groups": ["k8s/tenant-demo/other"]}`},
		"ClusterPlaceholderOwn": {reason: "{name} is the cluster's name.",
			in:     cpinput.OIDCIssuer{IssuerURL: gateIssuer.IssuerURL, UsernameClaim: "email", GroupsClaim: "groups", TenantGroups: []string{"k8s/{namespace}/{name}"}},
			claims: `{"groups": ["k8s/tenant-demo/demo"]}`, want: true},
		"NoGate": {reason: "Without tenantGroups every token of the audience passes, as before.",
			in: cpinput.OIDCIssuer{IssuerURL: gateIssuer.IssuerURL, UsernameClaim: "email"}, claims: `{"email": "a@corp.test"}`, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := admits(t, id, tc.in, tc.claims)
			if err != nil {
				t.Fatalf("%s\nevaluation error (kube-apiserver logs it): %v", tc.reason, err)
			}
			if got != tc.want {
				t.Errorf("%s\nadmits %s: got %v, want %v", tc.reason, tc.claims, got, tc.want)
			}
		})
	}
}

func TestValidateTenantGroups(t *testing.T) {
	p := field.NewPath("input", "oidc")
	cases := map[string]struct {
		reason string
		claim  string
		groups []string
		want   []string // substrings of the errors, in order
	}{
		"Unset":         {reason: "No gate."},
		"Four":          {reason: "The four groups of gateIssuer.", claim: "groups", groups: gateIssuer.TenantGroups},
		"Bare":          {reason: "The namespace itself.", claim: "groups", groups: []string{"{namespace}"}},
		"WithName":      {reason: "{name} after {namespace}, both delimited.", claim: "groups", groups: []string{"/tenants/{namespace}/clusters/{name}", "/tenants/{namespace}/admins"}},
		"NoClaim":       {reason: "Groups need the claim.", groups: []string{"{namespace}"}, want: []string{"input.oidc.groupsClaim: Required value"}},
		"NoGroups":      {reason: "The claim alone gates nothing.", claim: "groups", want: []string{"input.oidc.tenantGroups: Required value"}},
		"NoNamespace":   {reason: "A pattern without {namespace} is one group for every tenant.", claim: "groups", groups: []string{"admins"}, want: []string{`input.oidc.tenantGroups[0]: Invalid value: "admins": must hold {namespace} once`}},
		"TwoNamespaces": {reason: "{namespace} once.", claim: "groups", groups: []string{"{namespace}:{namespace}"}, want: []string{"tenantGroups[0]"}},
		"NameFirst":     {reason: "{name} after {namespace}.", claim: "groups", groups: []string{"{name}:{namespace}"}, want: []string{"may hold {name} once, after {namespace}"}},
		"ChartDash": {reason: "Today's chart's <namespace>-admin and <namespace>-super-admin: namespaces x-super and x share x-super-admin.", claim: "groups",
			groups: []string{"{namespace}-admin", "{namespace}-super-admin"},
			want:   []string{`tenantGroups[0]: Invalid value: "{namespace}-admin": a placeholder must be next to`, `tenantGroups[1]: Invalid value: "{namespace}-super-admin"`}},
		"DashBefore":     {reason: "A DNS label character before {namespace}: namespaces a-b and b with prefixes x- and x-a- collide.", claim: "groups", groups: []string{"x-{namespace}"}, want: []string{"a placeholder must be next to"}},
		"Adjacent":       {reason: "{namespace}{name}: no split between them.", claim: "groups", groups: []string{"{namespace}{name}"}, want: []string{"a placeholder must be next to"}},
		"NameDash":       {reason: "{name} is delimited too.", claim: "groups", groups: []string{"{namespace}/{name}-admin"}, want: []string{"a placeholder must be next to"}},
		"OtherPrefix":    {reason: "a:{namespace} and {namespace}:view spell a:view for namespaces view and a.", claim: "groups", groups: []string{"{namespace}:view", "a:{namespace}"}, want: []string{`tenantGroups[1]: Invalid value: "a:{namespace}": must have the text before {namespace} of tenantGroups[0] ("")`}},
		"Quote":          {reason: "Only letters, digits and ._:/@=+-.", claim: "groups", groups: []string{`{namespace}"||true||"`}, want: []string{"must hold only ASCII letters"}},
		"Brace":          {reason: "An unknown placeholder.", claim: "groups", groups: []string{"{namespace}:{cluster}"}, want: []string{"must hold only ASCII letters"}},
		"ClaimColon":     {reason: "A claim name the rule cannot select (Cognito's cognito:groups).", claim: "cognito:groups", groups: []string{"{namespace}"}, want: []string{`input.oidc.groupsClaim: Invalid value: "cognito:groups"`}},
		"ClaimReserved":  {reason: "A CEL reserved word.", claim: "in", groups: []string{"{namespace}"}, want: []string{`input.oidc.groupsClaim: Invalid value: "in"`}},
		"ClaimInjection": {reason: "No expression text in the claim.", claim: "groups) || true || (x", groups: []string{"{namespace}"}, want: []string{"input.oidc.groupsClaim"}},
		"Unicode":        {reason: "ASCII only.", claim: "groups", groups: []string{"{namespace}:ädmin"}, want: []string{"must hold only ASCII letters"}},
		"AllAtOnce": {reason: "Every bad pattern is named.", claim: "groups", groups: []string{"{namespace}:view", "admins", "{namespace}-use"},
			want: []string{"tenantGroups[1]", "tenantGroups[2]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validateTenantGroups(p, cpinput.OIDCIssuer{GroupsClaim: tc.claim, TenantGroups: tc.groups})
			if len(errs) != len(tc.want) {
				t.Fatalf("%s\nvalidateTenantGroups: want %d errors, got %v", tc.reason, len(tc.want), errs)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("%s\nerror %q does not contain %q", tc.reason, errs[i].Error(), w)
				}
			}
		})
	}
}

// FuzzTenantGroupsDisjoint: for any patterns the input validation accepts
// and any two clusters in distinct namespaces, no token carrying only the
// groups of one passes the other's gate, and each cluster's own groups
// pass it. Judged by kube-apiserver's CEL on the composed configuration.
func FuzzTenantGroupsDisjoint(f *testing.F) {
	for _, s := range [][5]string{
		{"tenant:{namespace}:view\ntenant:{namespace}:admin\ntenant:{namespace}:super-admin", "x", "x-super", "a", "a"},
		{"{namespace}\n{namespace}.admin", "a", "a-b", "c", "c"},
		{"/t/{namespace}/{name}\n/t/{namespace}", "prod", "prod-team", "a", "team-a"},
		{"{namespace}:{name}", "n", "nn", "nn", "n"},
		{"{namespace}-admin\n{namespace}-super-admin", "x", "x-super", "a", "a"},
		{"A{namespace}", "a", "b", "c", "c"},
		{"{namespace}:view\na:{namespace}", "a", "view", "c", "c"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, patterns, ns1, ns2, n1, n2 string) {
		in := cpinput.OIDCIssuer{IssuerURL: gateIssuer.IssuerURL, UsernameClaim: "email", GroupsClaim: "groups", TenantGroups: strings.Split(patterns, "\n")}
		if len(in.TenantGroups) > 16 || ns1 == ns2 || len(validateTenantGroups(field.NewPath("input", "oidc"), in)) > 0 {
			return
		}
		for _, s := range []string{ns1, ns2, n1, n2} {
			if len(validation.IsDNS1123Label(s)) > 0 {
				return
			}
		}
		a, b := function.Identity{Namespace: ns1, Name: n1}, function.Identity{Namespace: ns2, Name: n2}
		for _, g := range TenantGroups(b, in.TenantGroups) {
			if ok, err := admits(t, a, in, `{"groups": [`+jsonString(g)+`]}`); ok || err != nil {
				t.Fatalf("patterns %q: %v's group %q passes %v's gate (error %v)", in.TenantGroups, b, g, a, err)
			}
		}
		for _, g := range TenantGroups(a, in.TenantGroups) {
			if ok, err := admits(t, a, in, `{"groups": [`+jsonString(g)+`]}`); !ok || err != nil {
				t.Fatalf("patterns %q: %v's own group %q does not pass its gate (error %v)", in.TenantGroups, a, g, err)
			}
		}
	})
}

// FuzzCELString: any text, quoted by celString, is one CEL string literal
// equal to the text (invalid UTF-8 reads as U+FFFD, as in Go).
func FuzzCELString(f *testing.F) {
	for _, s := range []string{"", "a", `"`, `\`, `" || true || "`, "\n", "ä", "😀", "\x00", "'", "${x}", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.ToValidUTF8(s, "\uFFFD")
		res, err := authenticationCompiler().CompileClaimsExpression(&authenticationcel.ClaimValidationCondition{
			Expression: "claims.v == " + celString(s), Message: "m"})
		if err != nil {
			t.Fatalf("celString(%q) = %s does not compile: %v", s, celString(s), err)
		}
		evals, err := authenticationcel.NewClaimsMapper([]authenticationcel.CompilationResult{res}).EvalClaimMappings(context.Background(),
			types.DefaultTypeAdapter.NativeToValue(map[string]any{"v": want}).(traits.Mapper))
		if err != nil || evals[0].EvalResult != types.True {
			t.Fatalf("celString(%q) = %s is not the text: %v %v", s, celString(s), evals, err)
		}
	})
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

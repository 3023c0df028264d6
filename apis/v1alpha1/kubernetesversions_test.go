package v1alpha1

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// withV136 is a copy of the version table with a row v1.36 added as the
// default, as adding a minor does (the one edit).
func withV136() []KubernetesVersion {
	table := []KubernetesVersion{{Minor: "v1.36", Patch: "v1.36.1", Default: true}}
	for _, v := range KubernetesVersions {
		v.Default = false
		table = append(table, v)
	}
	return table
}

// specCEL runs rules, as the API server does, on a spec {version,
// talos.version} updated from old (nil: a create).
func specCEL(t *testing.T, rules []apiextensionsv1.ValidationRule, spec, old map[string]any) field.ErrorList {
	t.Helper()
	str := apiextensions.JSONSchemaProps{Type: "string"}
	props := &apiextensions.JSONSchemaProps{Type: "object", Properties: map[string]apiextensions.JSONSchemaProps{
		"version": str,
		"talos":   {Type: "object", Properties: map[string]apiextensions.JSONSchemaProps{"version": str}},
	}}
	for _, r := range rules {
		props.XValidations = append(props.XValidations, apiextensions.ValidationRule{Rule: r.Rule, MessageExpression: r.MessageExpression, FieldPath: r.FieldPath})
	}
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	errs, _ := cel.NewValidator(s, false, celconfig.PerCallLimit).Validate(context.Background(), field.NewPath("spec"), s, spec, oldObj, celconfig.RuntimeCELCostBudget)
	return errs
}

// TestVersionTableDerivations adds v1.36 to a copy of the version table
// and checks that each place derived from it follows: the minors and the
// default, spec.version's enum and default markers, and, run by the API
// server's CEL, the upgrade rule's and the Talos rule's verdicts and
// messages. The expected texts are written here by hand.
func TestVersionTableDerivations(t *testing.T) {
	table := withV136()
	if got := minors(table); !slices.Equal(got, []string{"v1.36", "v1.35", "v1.34", "v1.33", "v1.32", "v1.31"}) {
		t.Errorf("minors = %v", got)
	}
	if got := defaultMinor(table); got != "v1.36" {
		t.Errorf("default = %s, want v1.36", got)
	}
	lines := map[string]string{}
	for _, l := range VersionSourceLines(table, TalosSupport) {
		lines[l.Prefix] = l.Prefix + l.Text
	}
	for prefix, want := range map[string]string{
		"// +kubebuilder:default=":         "// +kubebuilder:default=v1.36",
		"// +kubebuilder:validation:Enum=": "// +kubebuilder:validation:Enum=v1.36;v1.35;v1.34;v1.33;v1.32;v1.31",
		"// (Talos ":                       "// (Talos v1.13 runs Kubernetes v1.31 to v1.36).",
	} {
		if lines[prefix] != want {
			t.Errorf("source line %q, want %q", lines[prefix], want)
		}
	}
	rules := specRules(table, TalosSupport)
	cels := []apiextensionsv1.ValidationRule{ruleByID(t, rules, "spec.version.upgrade"), ruleByID(t, rules, "spec.talos.version.supported")}
	v := func(version string) map[string]any { return map[string]any{"version": version} }
	for _, c := range []struct {
		old, new map[string]any
		want     string // "" for accepted
	}{
		{v("v1.35"), v("v1.36"), ""},
		{v("v1.36"), v("v1.36"), ""},
		{v("v1.34"), v("v1.36"), "from v1.34 the allowed versions are v1.34 and v1.35, not v1.36"},
		{v("v1.36"), v("v1.35"), "from v1.36 the allowed versions are v1.36, not v1.35"},
		{v("v1.30"), v("v1.32"), "from v1.30 the allowed versions are v1.31, not v1.32"},
		{nil, map[string]any{"version": "v1.36", "talos": map[string]any{"version": "v1.13.6"}}, ""},
		{nil, map[string]any{"version": "v1.36", "talos": map[string]any{"version": "v1.12.4"}},
			"Talos v1.12.4 does not support Kubernetes v1.36 (the support matrix: Talos v1.13 runs Kubernetes v1.31 to v1.36)"},
	} {
		errs := specCEL(t, cels, c.new, c.old)
		if got := errs.ToAggregate(); (c.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), c.want)) {
			t.Errorf("%v -> %v: got %v, want %q", c.old, c.new, got, c.want)
		}
	}
}

// TestTalosMatrixDerivations narrows a copy of the Talos matrix and
// checks the XRD's rule and Validate's check both follow, with one text.
func TestTalosMatrixDerivations(t *testing.T) {
	matrix := map[string][2]int{"v1.13": {31, 34}, "v1.14": {33, 36}}
	rules := specRules(KubernetesVersions, matrix)
	talos := ruleByID(t, rules, "spec.talos.version.supported")
	want := "Talos v1.13.6 does not support Kubernetes v1.35 (the support matrix: Talos v1.13 runs Kubernetes v1.31 to v1.34; Talos v1.14 runs Kubernetes v1.33 to v1.36)"
	spec := map[string]any{"version": "v1.35", "talos": map[string]any{"version": "v1.13.6"}}
	if got := specCEL(t, []apiextensionsv1.ValidationRule{talos}, spec, nil).ToAggregate(); got == nil || !strings.Contains(got.Error(), want) {
		t.Errorf("CEL: %v, want %q", got, want)
	}
	s := &KubernetesClusterSpec{Version: "v1.35", Talos: Talos{Version: "v1.13.6"}}
	if got := rules.check(s, field.NewPath("spec")).ToAggregate(); got == nil || !strings.Contains(got.Error(), want) || !strings.Contains(got.Error(), "spec.talos.version") {
		t.Errorf("Go: %v, want spec.talos.version: %q", got, want)
	}
	spec["talos"] = map[string]any{"version": "v1.14.0"}
	s.Talos.Version = "v1.14.0"
	if got := specCEL(t, []apiextensionsv1.ValidationRule{talos}, spec, nil); len(got) > 0 {
		t.Errorf("CEL refuses Talos v1.14 on v1.35: %v", got)
	}
	if got := rules.check(s, field.NewPath("spec")); len(got) > 0 {
		t.Errorf("Go refuses Talos v1.14 on v1.35: %v", got)
	}
}

// ruleByID is the CEL rule of the rule of table with id.
func ruleByID[T any](t *testing.T, table ruleTable[T], id string) apiextensionsv1.ValidationRule {
	t.Helper()
	for _, r := range table {
		if r.ID == id && r.CEL != nil {
			return r.CEL()
		}
	}
	t.Fatalf("no CEL rule %s", id)
	return apiextensionsv1.ValidationRule{}
}

// TestVersionTableShape: minors newest first, one step apart, exactly one
// default, a patch of each minor.
func TestVersionTableShape(t *testing.T) {
	defaults := 0
	for i, v := range KubernetesVersions {
		if i > 0 && minorNumber(KubernetesVersions[i-1].Minor) != minorNumber(v.Minor)+1 {
			t.Errorf("%s follows %s: minors go down one at a time", v.Minor, KubernetesVersions[i-1].Minor)
		}
		if !strings.HasPrefix(v.Patch, v.Minor+".") {
			t.Errorf("%s deploys %s", v.Minor, v.Patch)
		}
		if v.Default {
			defaults++
		}
	}
	if defaults != 1 {
		t.Errorf("%d default rows, want 1", defaults)
	}
}

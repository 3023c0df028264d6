package v1alpha1

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Where a rule is enforced besides the XRD's CEL (Rule.Go).
const (
	// EnforcedValidate: Validate runs the rule's Check.
	EnforcedValidate = "Validate"
	// EnforcedOldObject: CEL only, the rule compares with the old object,
	// which Validate never sees.
	EnforcedOldObject = "CEL only (needs the old object)"
)

// RuleDoc is what docs/validation.md's generated section says of a rule.
// +kubebuilder:object:generate=false
type RuleDoc struct {
	// ID names the rule: object.field.what.
	ID string
	// Object is the path in the spec schema of the object holding the
	// rule ("" for spec, "nodeGroups.*" for a map's values).
	Object string
	// Field is the field the rule refuses, below Object.
	Field string
	// Go is where the rule is enforced besides CEL: EnforcedValidate,
	// EnforcedOldObject, or a function checking observed state.
	Go string
}

// Rule is one validation rule on objects of type T, written once: the
// XRD's CEL rule (`make generate` adds it to the XRDs, xrdVersion) and
// the Go check Validate runs on T, each with the message Msg gives.
// +kubebuilder:object:generate=false
type Rule[T any] struct {
	RuleDoc
	// CEL is the rule on the object at Object; nil for a Go-only rule.
	CEL func() apiextensionsv1.ValidationRule
	// Check returns the rule's refusal of v at path (the object's), or
	// nil; nil when Go does not check it in Validate.
	Check func(v T, path *field.Path) *field.Error
	// CheckEach, for a rule on a list, returns a refusal of each
	// offending entry (the CEL rule names the first); nil for a rule with
	// Check, or none.
	CheckEach func(v T, path *field.Path) field.ErrorList
}

// rules is a table of rules of any object type, as xrdVersion and the
// documentation read it: each rule's RuleDoc and CEL rule (nil for none).
type rules interface {
	entries() []RuleEntry
}

// RuleEntry is a rule without its Go check.
// +kubebuilder:object:generate=false
type RuleEntry struct {
	Doc RuleDoc
	CEL *apiextensionsv1.ValidationRule
}

// ruleTable is the rules of one object type.
type ruleTable[T any] []Rule[T]

func (t ruleTable[T]) entries() []RuleEntry {
	out := make([]RuleEntry, len(t))
	for i, r := range t {
		out[i].Doc = r.RuleDoc
		if r.CEL != nil {
			rule := r.CEL()
			out[i].CEL = &rule
		}
	}
	return out
}

// check runs the Go checks of the rules of t on v at path, in table order.
func (t ruleTable[T]) check(v T, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range t {
		if r.Check != nil {
			if err := r.Check(v, path); err != nil {
				errs = append(errs, err)
			}
		}
		if r.CheckEach != nil {
			errs = append(errs, r.CheckEach(v, path)...)
		}
	}
	return errs
}

// RuleDocs returns every rule of the tables with its CEL rule, in table
// order, spec first, then the Tenant's (IDs tenant.*).
func RuleDocs() []RuleEntry {
	var out []RuleEntry
	for _, t := range append(ruleTables(), tenantRuleTables()...) {
		out = append(out, t.entries()...)
	}
	return out
}

// clusterSpecRules are specRules of the version table and Talos matrix.
var clusterSpecRules = specRules(KubernetesVersions, TalosSupport)

// ruleTables are the XKubernetesCluster spec's tables.
func ruleTables() []rules {
	return []rules{clusterSpecRules, provisionTimeRules, nodeHealthCheckRules, backupRules, nodeGroupNameRules, nodeGroupRules,
		nodeGroupHealthRules, nodeGroupResourcesRules, kubeletRules, addonsRules, oidcConfigRules, oidcUserRules,
		talosMirrorHostRules, apiServerArgsRules, apiServerVolumesRules, apiServerMountsRules, apiServerArgRules,
		apiServerVolumeRules, apiServerMountRules, hibernationRules, encryptionRules, maintenanceWindowRules}
}

// withTableRules returns spec with the CEL rules of the tables appended
// to the objects they name, in table order; spec's own maps are left as
// they are.
func withTableRules(spec apiextensionsv1.JSONSchemaProps, tables []rules) (apiextensionsv1.JSONSchemaProps, error) {
	for _, t := range tables {
		byObject := map[string][]apiextensionsv1.ValidationRule{}
		var order []string
		for _, e := range t.entries() {
			if e.CEL == nil {
				continue
			}
			if _, ok := byObject[e.Doc.Object]; !ok {
				order = append(order, e.Doc.Object)
			}
			byObject[e.Doc.Object] = append(byObject[e.Doc.Object], *e.CEL)
		}
		for _, object := range order {
			var err error
			if spec, err = withRules(spec, objectSteps(object), byObject[object]); err != nil {
				return spec, fmt.Errorf("rules of %q: %w", object, err)
			}
		}
	}
	return spec, nil
}

// objectSteps splits an object path ("" is the root).
func objectSteps(object string) []string {
	if object == "" {
		return nil
	}
	return strings.Split(object, ".")
}

// celString is s as a CEL string literal.
func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// addonsRules are the rules of spec.addons: an add-on that runs on top of
// another needs that one enabled.
var addonsRules = ruleTable[*Addons]{
	requiresRule("hami", "gpuOperator", msgHAMi, func(a *Addons) (bool, bool) { return a.HAMi.Enabled, a.GPUOperator.Enabled }),
	requiresRule("ouroboros", "ingressNginx", msgOuroboros, func(a *Addons) (bool, bool) { return a.Ouroboros.Enabled, a.IngressNginx.Enabled }),
}

// requiresRule refuses add-on name enabled while add-on dep is not (get
// returns both switches), at name's enabled, with msg.
func requiresRule(name, dep, msg string, get func(*Addons) (bool, bool)) Rule[*Addons] {
	return Rule[*Addons]{
		RuleDoc: RuleDoc{ID: "addons." + name + ".requires." + dep, Object: "addons", Field: name + ".enabled", Go: EnforcedValidate},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule: "!has(self." + name + ") || !has(self." + name + ".enabled) || !self." + name + ".enabled || " +
					"(has(self." + dep + ") && has(self." + dep + ".enabled) && self." + dep + ".enabled)",
				Message:   msg,
				FieldPath: "." + name + ".enabled",
			}
		},
		Check: func(a *Addons, path *field.Path) *field.Error {
			if on, depOn := get(a); on && !depOn {
				return field.Invalid(path.Child(name, "enabled"), true, msg)
			}
			return nil
		},
	}
}

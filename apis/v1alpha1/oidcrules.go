package v1alpha1

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// msgEmailOnce is the message of a repeated user email.
const msgEmailOnce = "each email at most once"

// oidcConfigRules are the rules of spec.oidc's custom configuration: with
// mode CustomConfig exactly one source, inline or a Secret.
var oidcConfigRules = ruleTable[*OIDC]{{
	RuleDoc: RuleDoc{ID: "oidc.customConfig.exactlyOne", Object: "oidc", Field: "customConfig", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{
			Rule: "!has(self.mode) || self.mode != " + celString(string(OIDCModeCustomConfig)) + " || (has(self.customConfig) && " +
				"((has(self.customConfig.config) && size(self.customConfig.config) > 0) != " +
				"(has(self.customConfig.secretRef) && has(self.customConfig.secretRef.name) && size(self.customConfig.secretRef.name) > 0)))",
			Message:   msgCustomConfig,
			FieldPath: ".customConfig",
		}
	},
	Check: func(o *OIDC, path *field.Path) *field.Error {
		inline, ref := o.CustomConfig.Config != "", o.CustomConfig.SecretRef.Name != ""
		if o.Mode != OIDCModeCustomConfig || inline != ref {
			return nil
		}
		return field.Invalid(path.Child("customConfig"), fmt.Sprintf("config set: %t, secretRef.name set: %t", inline, ref), msgCustomConfig)
	},
}}

// oidcUserRules are the rules of spec.oidc's users: each email once.
var oidcUserRules = ruleTable[*OIDC]{{
	RuleDoc: RuleDoc{ID: "oidc.users.emailOnce", Object: "oidc", Field: "users", Go: EnforcedValidate},
	CEL: celRule("!has(self.users) || self.users.all(u, self.users.exists_one(v, v.email == u.email))",
		celFormat("users: "+msgEmailOnce+": %s is repeated", celExpr("self.users.map(u, u.email).filter(e, !self.users.exists_one(v, v.email == e))[0]")), ".users"),
	CheckEach: func(o *OIDC, path *field.Path) field.ErrorList {
		return repeatedIn(path.Child("users"), o.Users, func(u OIDCUser) string { return u.Email }, msgEmailOnce)
	},
}}

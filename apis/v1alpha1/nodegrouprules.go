package v1alpha1

import (
	"fmt"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nodeGroupRules are the rules on one node group (spec.nodeGroups[G]).
var nodeGroupRules = ruleTable[NodeGroup]{{
	RuleDoc: RuleDoc{ID: "nodeGroups.minReplicas.atMostMax", Object: "nodeGroups.*", Field: "minReplicas", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{
			Rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
			MessageExpression: refusal(digits("self.minReplicas", MaxReplicasLimit), msgMinAboveMax,
				digits("self.maxReplicas", MaxReplicasLimit)),
			FieldPath: ".minReplicas",
		}
	},
	Check: func(g NodeGroup, path *field.Path) *field.Error {
		if minR, maxR := deref(g.MinReplicas), deref(g.MaxReplicas); minR > maxR {
			return field.Invalid(path.Child("minReplicas"), minR, fmt.Sprintf(msgMinAboveMax, strconv.Itoa(int(maxR))))
		}
		return nil
	},
}}

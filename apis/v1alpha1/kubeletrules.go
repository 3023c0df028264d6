package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// percentThresholdForm is an eviction threshold's percentage, RE2 as Go
// (percentPattern) and CEL read it.
const percentThresholdForm = `^[0-9]+([.][0-9]+)?%$`

// msgPercentRange is the message of a percentage outside (0, 100].
const msgPercentRange = "a percentage must be in (0, 100]"

// kubeletObject is the kubelet settings' path in the spec schema.
const kubeletObject = "nodeGroups.*.kubelet"

// thresholdRules are the two rules of an eviction threshold field of a
// node group's kubelet: a percentage in (0, 100], else a quantity
// greater than zero. A percentage not in percentThresholdForm and a text
// that is no quantity are left to the schema's pattern (Threshold) in
// CEL; Go refuses them under the rule of their form.
func thresholdRules(name string, get func(Kubelet) Threshold) []Rule[Kubelet] {
	v := "string(self." + name + ")"
	percent := func(k Kubelet) bool { return len(get(k)) > 0 && get(k)[len(get(k))-1] == '%' }
	// check returns Parse's error when the value is a percentage or not.
	check := func(asPercent bool) func(Kubelet, *field.Path) *field.Error {
		return func(k Kubelet, path *field.Path) *field.Error {
			if percent(k) != asPercent {
				return nil
			}
			_, err := get(k).Parse(path.Child(name))
			return err
		}
	}
	return []Rule[Kubelet]{{
		RuleDoc: RuleDoc{ID: "nodeGroups.kubelet." + name + ".percentage", Object: kubeletObject, Field: name, Go: EnforcedValidate},
		CEL: celRule("!has(self."+name+") || !"+v+".endsWith('%') || !"+v+".matches("+celString(percentThresholdForm)+") || "+
			"(double("+v+".substring(0, size("+v+") - 1)) > 0.0 && double("+v+".substring(0, size("+v+") - 1)) <= 100.0)",
			refusal(celExpr(v), name+": "+msgPercentRange), "."+name),
		Check: check(true),
	}, {
		RuleDoc: RuleDoc{ID: "nodeGroups.kubelet." + name + ".positive", Object: kubeletObject, Field: name, Go: EnforcedValidate},
		CEL: celRule("!has(self."+name+") || "+v+".endsWith('%') || !isQuantity("+v+") || quantity("+v+").compareTo(quantity('0')) > 0",
			refusal(celExpr(v), name+" "+msgPositive), "."+name),
		Check: check(false),
	}}
}

// bothThresholds returns the parsed hard and soft thresholds of k and
// whether both parse (else their own rules refuse them).
func bothThresholds(k Kubelet, path *field.Path) (hard, soft ParsedThreshold, ok bool) {
	hard, herr := k.EvictionHardMemory.Parse(path.Child("evictionHardMemory"))
	soft, serr := k.EvictionSoftMemory.Parse(path.Child("evictionSoftMemory"))
	return hard, soft, herr == nil && serr == nil
}

// kubeletRules are the rules of a node group's kubelet settings.
var kubeletRules = concat(
	thresholdRules("evictionHardMemory", func(k Kubelet) Threshold { return k.EvictionHardMemory }),
	thresholdRules("evictionSoftMemory", func(k Kubelet) Threshold { return k.EvictionSoftMemory }),
	[]Rule[Kubelet]{{
		RuleDoc: RuleDoc{ID: "nodeGroups.kubelet.eviction.sameUnits", Object: kubeletObject, Field: "evictionHardMemory", Go: EnforcedValidate},
		CEL: celRule("!has(self.evictionHardMemory) || !has(self.evictionSoftMemory) || "+hardS+".endsWith('%') == "+softS+".endsWith('%')",
			celFormat(msgEvictionUnits+", not %s and %s", celExpr(hardS), celExpr(softS)), ".evictionHardMemory"),
		Check: func(k Kubelet, path *field.Path) *field.Error {
			if hard, soft, ok := bothThresholds(k, path); !ok || hard.Percent == soft.Percent {
				return nil
			}
			return field.Invalid(path.Child("evictionHardMemory"), string(k.EvictionHardMemory),
				fmt.Sprintf("%s (evictionSoftMemory is %q)", msgEvictionUnits, k.EvictionSoftMemory))
		},
	}, {
		RuleDoc: RuleDoc{ID: "nodeGroups.kubelet.eviction.hardBelowSoft", Object: kubeletObject, Field: "evictionHardMemory", Go: EnforcedValidate},
		CEL: celRule(evictionOrderCEL,
			celFormat(msgEvictionOrder+", not evictionHardMemory %s against evictionSoftMemory %s", celExpr(hardS), celExpr(softS)), ".evictionHardMemory"),
		Check: func(k Kubelet, path *field.Path) *field.Error {
			if hard, soft, ok := bothThresholds(k, path); !ok || hard.Percent != soft.Percent || hard.below(soft) {
				return nil
			}
			return field.Invalid(path.Child("evictionHardMemory"), string(k.EvictionHardMemory),
				fmt.Sprintf("%s (evictionSoftMemory is %q)", msgEvictionOrder, k.EvictionSoftMemory))
		},
	}},
)

// The thresholds as CEL strings, and the order rule: percentages compared
// as numbers, quantities as quantities.
const (
	hardS            = "string(self.evictionHardMemory)"
	softS            = "string(self.evictionSoftMemory)"
	hardPct          = "double(" + hardS + ".substring(0, size(" + hardS + ") - 1))"
	softPct          = "double(" + softS + ".substring(0, size(" + softS + ") - 1))"
	evictionOrderCEL = "!has(self.evictionHardMemory) || !has(self.evictionSoftMemory) || " + hardS + ".endsWith('%') != " + softS + ".endsWith('%') || (" +
		hardS + ".endsWith('%') ? (!" + hardS + ".matches('" + percentThresholdForm + "') || !" + softS + ".matches('" + percentThresholdForm + "') || " +
		hardPct + " < " + softPct + ") : (!isQuantity(" + hardS + ") || !isQuantity(" + softS + ") || quantity(" + hardS + ").compareTo(quantity(" + softS + ")) < 0))"
)

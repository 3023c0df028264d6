package v1alpha1

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages of the table's rules: fmt formats whose %s are filled with
// the values in Go and with CEL expressions in the XRD (celFormat).
const (
	msgTalosUnsupported = "Talos %s does not support Kubernetes %s (the support matrix: %s)"
	msgUpgradeOneMinor  = "version may only go up one minor at a time: from %s the allowed versions are %s"
	msgMinAboveMax      = "minReplicas must be less than or equal to maxReplicas (%s)"
)

// celExpr is a CEL expression among celFormat's arguments (any other
// argument is a literal text).
type celExpr string

// celFormat is format's CEL string expression: each %s is an argument, a
// celExpr as it is, any other value as a literal folded into the text
// around it.
func celFormat(format string, args ...any) string {
	parts := strings.Split(format, "%s")
	var out []string
	text := parts[0]
	for i, a := range args {
		if e, ok := a.(celExpr); ok {
			if text != "" {
				out = append(out, celString(text))
			}
			out = append(out, string(e))
			text = ""
		} else {
			text += fmt.Sprint(a)
		}
		text += parts[i+1]
	}
	if text != "" {
		out = append(out, celString(text))
	}
	return strings.Join(out, " + ")
}

// refusal is a CEL messageExpression of format naming value (a CEL
// expression) after it: "<message>, not <value>".
func refusal(value celExpr, format string, args ...any) string {
	return celFormat(format+", not %s", append(args, value)...)
}

// specRules are the rules on spec, the version rules derived from the
// version table and the Talos support matrix.
func specRules(table []KubernetesVersion, matrix map[string][2]int) ruleTable[*KubernetesClusterSpec] {
	return ruleTable[*KubernetesClusterSpec]{{
		RuleDoc: RuleDoc{ID: "spec.storageClass.immutable", Field: "storageClass", Go: EnforcedOldObject},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule:              "!has(oldSelf.storageClass) || (has(self.storageClass) && self.storageClass == oldSelf.storageClass)",
				MessageExpression: "'storageClass is immutable: it was ' + oldSelf.storageClass + ', not ' + (has(self.storageClass) ? self.storageClass : 'unset')",
			}
		},
	}, {
		RuleDoc: RuleDoc{ID: "spec.version.upgrade", Field: "version", Go: "control-plane function (checkUpgrade), against the observed KamajiControlPlane"},
		CEL:     func() apiextensionsv1.ValidationRule { return upgradeRule(table) },
	}, {
		RuleDoc: RuleDoc{ID: "spec.restore.fixed", Field: "restore", Go: EnforcedOldObject},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule:              "has(self.restore) == has(oldSelf.restore)",
				MessageExpression: "has(oldSelf.restore) ? 'spec.restore cannot be removed: the cluster was restored from backup ' + oldSelf.restore.backup + ': its CA and service-account keys come from that backup' : 'spec.restore cannot be added: a cluster restores a backup only when it is created'",
				FieldPath:         ".restore",
			}
		},
	}, {
		RuleDoc: RuleDoc{ID: "restore.unchanged", Object: "restore", Field: "restore", Go: EnforcedOldObject},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "restore cannot change once the cluster exists"}
		},
	}, {
		RuleDoc: RuleDoc{ID: "spec.talos.version.supported", Field: "talos.version", Go: EnforcedValidate},
		CEL:     func() apiextensionsv1.ValidationRule { return talosRule(table, matrix) },
		Check: func(s *KubernetesClusterSpec, path *field.Path) *field.Error {
			if !talosVersionPattern.MatchString(s.Talos.Version) || !slices.Contains(minors(table), s.Version) {
				return nil // refused by their own rules
			}
			if msg := talosSupports(matrix, s.Talos.Version, s.Talos.Minor(), s.Version); msg != "" {
				return field.Invalid(path.Child("talos", "version"), s.Talos.Version, msg)
			}
			return nil
		},
	}}
}

// upgradeRule is spec's transition rule on version: one minor up at a
// time, never down; the message lists the minors of the table a spec at
// the old version may move to.
func upgradeRule(table []KubernetesVersion) apiextensionsv1.ValidationRule {
	olds, allowed := upgradeTargets(table)
	choice := ""
	for _, old := range olds {
		choice += "oldSelf.version == " + celString(old) + " ? " + celString(strings.Join(allowed[old], " and ")) + " : "
	}
	delta := "int(self.version.substring(3)) - int(oldSelf.version.substring(3))"
	return apiextensionsv1.ValidationRule{
		Rule:              "!has(oldSelf.version) || !has(self.version) || " + delta + " == 0 || " + delta + " == 1",
		MessageExpression: refusal("self.version", msgUpgradeOneMinor, celExpr("oldSelf.version"), celExpr("("+choice+"oldSelf.version)")),
	}
}

// talosRule is spec's rule holding talos.version and version to the
// support matrix, for a version of the table and a well-formed Talos
// release (others are refused by their own rules).
func talosRule(table []KubernetesVersion, matrix map[string][2]int) apiextensionsv1.ValidationRule {
	quoted := make([]string, 0, len(table))
	for _, m := range minors(table) {
		quoted = append(quoted, celString(m))
	}
	n := "int(self.version.substring(3))"
	var runs []string
	for _, tm := range sortedKeys(matrix) {
		r := matrix[tm]
		runs = append(runs, fmt.Sprintf("(self.talos.version.matches('^%s[.]') && %s >= %d && %s <= %d)",
			strings.ReplaceAll(tm, ".", "[.]"), n, r[0], n, r[1]))
	}
	return apiextensionsv1.ValidationRule{
		Rule: "!has(self.talos) || !has(self.talos.version) || !self.talos.version.matches('^v1[.][0-9]{1,3}[.][0-9]{1,3}$') || " +
			"!has(self.version) || !(self.version in [" + strings.Join(quoted, ", ") + "]) || " + strings.Join(runs, " || "),
		MessageExpression: celFormat(msgTalosUnsupported, celExpr("self.talos.version"), celExpr("self.version"), talosMatrixText(matrix)),
		FieldPath:         ".talos.version",
	}
}

// talosSupports returns "" when Talos release (of minor tm) runs
// Kubernetes minor version ("v1.35") by matrix, else why not, naming
// both and the matrix.
func talosSupports(matrix map[string][2]int, release, tm, version string) string {
	r, ok := matrix[tm]
	if n := minorNumber(version); ok && n >= r[0] && n <= r[1] {
		return ""
	}
	return fmt.Sprintf(msgTalosUnsupported, release, version, talosMatrixText(matrix))
}

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// digits is a CEL string expression of the integer v (0 to 10^width - 1)
// spelled digit by digit: Kubernetes bounds no string() of an integer in
// its cost estimate of a messageExpression, a list index is bounded.
func digits(v string, max int) celExpr {
	list := "['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']"
	width := len(strconv.Itoa(max))
	var parts []string
	for p := width - 1; p >= 1; p-- {
		div := strconv.Itoa(pow10(p))
		parts = append(parts, "("+v+" >= "+div+" ? "+list+"["+v+" / "+div+" % 10] : \"\")")
	}
	return celExpr(strings.Join(append(parts, list+"["+v+" % 10]"), " + "))
}

// pow10 is 10^p.
func pow10(p int) int {
	n := 1
	for range p {
		n *= 10
	}
	return n
}

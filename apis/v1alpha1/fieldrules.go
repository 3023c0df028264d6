package v1alpha1

import (
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Forms of a Duration and an IntOrPercent, RE2 as Go and CEL read them
// (durationPattern, machinesPattern, percentPatternWhole).
const (
	durationForm = `^([0-9]{1,5}h)?([0-9]{1,5}m)?([0-9]{1,5}s)?$`
	machinesForm = `^(0|[1-9][0-9]{0,3})$`
	percentForm  = `^(0|[1-9][0-9]?|100)%$`
)

// msgDurationRange is the message of a Duration outside [lo, hi].
const msgDurationRange = "must be at least %s and at most %s"

// durationRules are the two rules of a Duration field of T, at object
// (the field's path in the spec schema): the form, and the bounds [lo,
// hi] of a value in that form. An empty value passes both: it is the
// default, or in a node group the cluster-wide value.
func durationRules[T any](id, object, name string, lo, hi Duration, get func(T) Duration) []Rule[T] {
	// check returns d.Parse's error at path.Child(name) when form says
	// whether it is the form's.
	check := func(form bool) func(T, *field.Path) *field.Error {
		return func(v T, path *field.Path) *field.Error {
			d := get(v)
			if d == "" {
				return nil
			}
			if _, err := d.Parse(child(path, name), lo, hi); err != nil && (err.Detail == msgDurationForm) == form {
				return err
			}
			return nil
		}
	}
	return []Rule[T]{{
		RuleDoc: RuleDoc{ID: id + ".form", Object: object, Field: name, Go: EnforcedValidate},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule:              "size(self) == 0 || self.matches(" + celString(durationForm) + ")",
				MessageExpression: refusal("self", msgDurationForm),
			}
		},
		Check: check(true),
	}, {
		RuleDoc: RuleDoc{ID: id + ".range", Object: object, Field: name, Go: EnforcedValidate},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule: "size(self) == 0 || !self.matches(" + celString(durationForm) + ") || (duration(self) >= duration(" +
					celString(string(lo)) + ") && duration(self) <= duration(" + celString(string(hi)) + "))",
				MessageExpression: refusal("self", msgDurationRange, lo, hi),
			}
		},
		Check: check(false),
	}}
}

// maxUnhealthyRule is the rule of an IntOrPercent field of T at object: a
// whole number of machines up to MaxReplicasLimit or a whole percentage;
// an empty value passes.
func maxUnhealthyRule[T any](id, object, name string, get func(T) IntOrPercent) Rule[T] {
	return Rule[T]{
		RuleDoc: RuleDoc{ID: id, Object: object, Field: name, Go: EnforcedValidate},
		CEL: func() apiextensionsv1.ValidationRule {
			return apiextensionsv1.ValidationRule{
				Rule: "size(self) == 0 || (self.matches(" + celString(machinesForm) + ") && int(self) <= " +
					strconv.Itoa(MaxReplicasLimit) + ") || self.matches(" + celString(percentForm) + ")",
				MessageExpression: refusal("self", msgIntOrPercent),
			}
		},
		Check: func(v T, path *field.Path) *field.Error {
			if s := get(v); s != "" {
				if _, err := s.Parse(child(path, name)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// nodeHealthCheckRules are the rules of spec.nodeHealthCheck.
var nodeHealthCheckRules = concat(
	[]Rule[NodeHealthCheck]{maxUnhealthyRule("nodeHealthCheck.maxUnhealthy", "nodeHealthCheck.maxUnhealthy", "maxUnhealthy",
		func(h NodeHealthCheck) IntOrPercent { return h.MaxUnhealthy })},
	durationRules("nodeHealthCheck.nodeStartupTimeout", "nodeHealthCheck.nodeStartupTimeout", "nodeStartupTimeout",
		MinNodeStartupTimeout, MaxTimeout, func(h NodeHealthCheck) Duration { return h.NodeStartupTimeout }),
	durationRules("nodeHealthCheck.readyUnknownTimeout", "nodeHealthCheck.readyUnknownTimeout", "readyUnknownTimeout",
		MinTimeout, MaxTimeout, func(h NodeHealthCheck) Duration { return h.ReadyUnknownTimeout }),
	durationRules("nodeHealthCheck.readyFalseTimeout", "nodeHealthCheck.readyFalseTimeout", "readyFalseTimeout",
		MinTimeout, MaxTimeout, func(h NodeHealthCheck) Duration { return h.ReadyFalseTimeout }),
)

// nodeGroupHealthRules are the rules of a node group's overrides of the
// health check (spec.nodeGroups[G]).
var nodeGroupHealthRules = concat(
	[]Rule[NodeGroup]{maxUnhealthyRule("nodeGroups.maxUnhealthy", "nodeGroups.*.maxUnhealthy", "maxUnhealthy",
		func(g NodeGroup) IntOrPercent { return g.MaxUnhealthy })},
	durationRules("nodeGroups.nodeStartupTimeout", "nodeGroups.*.nodeStartupTimeout", "nodeStartupTimeout",
		MinNodeStartupTimeout, MaxTimeout, func(g NodeGroup) Duration { return g.NodeStartupTimeout }),
)

// provisionTimeRules are the rules of spec.maxNodeProvisionTime.
var provisionTimeRules = concat(durationRules("maxNodeProvisionTime", "maxNodeProvisionTime", "maxNodeProvisionTime",
	MinTimeout, MaxTimeout, func(s *KubernetesClusterSpec) Duration { return s.MaxNodeProvisionTime }))

// backupRules are the rules of spec.backup.
var backupRules = concat(durationRules("backup.interval", "backup.interval", "interval",
	MinBackupInterval, MaxBackupInterval, func(b Backup) Duration { return b.Interval }))

// child is path's descendant at a dotted path below it (interval,
// backup.interval).
func child(path *field.Path, dotted string) *field.Path {
	for _, p := range strings.Split(dotted, ".") {
		path = path.Child(p)
	}
	return path
}

// concat is the rules of tables, in order.
func concat[T any](tables ...[]Rule[T]) ruleTable[T] {
	var out ruleTable[T]
	for _, t := range tables {
		out = append(out, t...)
	}
	return out
}

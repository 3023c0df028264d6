package v1alpha1

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// QuantityBound is a quantity field a tenant writes that must be greater
// than zero and, when Max is set, at most Max. It is the one source of the
// bound and its messages: the XRD's CEL rules are generated from it
// (Rules, written by xrdVersion) and Validate checks it (Check).
// +kubebuilder:object:generate=false
type QuantityBound struct {
	// Field is the field's path below the object holding the rule, as
	// its message names it (diskSize, resources.cpu).
	Field string
	// Max is the largest value, a quantity text of bounds.go; empty for
	// none.
	Max string
	// Unit is written after Max in the message (" (cores)").
	Unit string
	// CPU, when set, are examples of the two forms a CPU value is
	// written in (cpuForm), whole millicores and decimal cores: the
	// field takes no other.
	CPU *[2]string
}

// cpuForm is a CPU value a user may write: whole millicores ("100m") or
// decimal cores ("0.5", "2"); RE2, as Go and CEL read it.
const cpuForm = `^([0-9]+m|[0-9]+([.][0-9]+)?|[.][0-9]+)$`

var (
	nodeCPUExamples     = &[2]string{"4000m", "4"}
	podCPUExamples      = &[2]string{"1500m", "1.5"}
	reservedCPUExamples = &[2]string{"100m", "0.5"}
)

// Bounds of the quantity fields. ClusterQuantityBounds and
// TenantQuantityBounds key them by their object's path in the spec schema
// ("*" stands for a map's values).
var (
	nodeCPU       = QuantityBound{Field: "resources.cpu", Max: MaxNodeCPU, Unit: " (cores)", CPU: nodeCPUExamples}
	nodeMemory    = QuantityBound{Field: "resources.memory", Max: MaxNodeMemory}
	componentCPU  = QuantityBound{Field: "resources.cpu", Max: MaxComponentCPU, Unit: " (cores)"}
	componentMem  = QuantityBound{Field: "resources.memory", Max: MaxComponentMemory}
	diskSize      = QuantityBound{Field: "diskSize", Max: MaxDiskSize}
	podCPULimit   = QuantityBound{Field: "podCpuLimit", Max: MaxNodeCPU, Unit: " (cores)", CPU: podCPUExamples}
	podCPURequest = QuantityBound{Field: "podCpuRequest", Max: MaxNodeCPU, Unit: " (cores)", CPU: podCPUExamples}
	etcdStorage   = QuantityBound{Field: "storageSize", Max: MaxTenantEtcdStorageSize}

	systemReservedMemory = QuantityBound{Field: "systemReservedMemory", Max: MaxNodeMemory}
	kubeReservedMemory   = QuantityBound{Field: "kubeReservedMemory", Max: MaxNodeMemory}
	systemReservedCPU    = QuantityBound{Field: "systemReservedCpu", Max: MaxNodeCPU, Unit: " (cores)", CPU: reservedCPUExamples}
	kubeReservedCPU      = QuantityBound{Field: "kubeReservedCpu", Max: MaxNodeCPU, Unit: " (cores)", CPU: reservedCPUExamples}

	// ClusterQuantityBounds are the XKubernetesCluster spec's.
	ClusterQuantityBounds = map[string][]QuantityBound{
		"nodeGroups.*":                     {nodeCPU, nodeMemory, diskSize, podCPULimit, podCPURequest},
		"nodeGroups.*.kubelet":             {systemReservedMemory, kubeReservedMemory, systemReservedCPU, kubeReservedCPU},
		"controlPlane.apiServer":           {componentCPU, componentMem},
		"controlPlane.controllerManager":   {componentCPU, componentMem},
		"controlPlane.scheduler":           {componentCPU, componentMem},
		"controlPlane.konnectivity.server": {componentCPU, componentMem},
	}
	// TenantQuantityBounds are the Tenant spec's.
	TenantQuantityBounds = map[string][]QuantityBound{
		"etcd": {etcdStorage},
	}
)

// MsgAtMost is the message of a value above Max.
func (b QuantityBound) MsgAtMost() string { return b.Field + " must be at most " + b.Max + b.Unit }

// MsgPositive is the message of a value not above zero.
func (b QuantityBound) MsgPositive() string { return b.Field + " must be greater than zero" }

// MsgCPUForm is the message of a CPU value in neither form.
func (b QuantityBound) MsgCPUForm() string {
	return b.Field + " must be whole millicores such as " + b.CPU[0] + " or decimal cores such as " + b.CPU[1]
}

// path is the field's path on the object at path.
func (b QuantityBound) path(path *field.Path) *field.Path {
	for _, p := range strings.Split(b.Field, ".") {
		path = path.Child(p)
	}
	return path
}

// Rules are b's CEL rules on the object holding the field: a CPU value
// in neither form, a quantity above Max, and one not above zero, is
// refused, naming the value. A text that is no quantity is left to the
// schema's pattern.
func (b QuantityBound) Rules() []apiextensionsv1.ValidationRule {
	parts := strings.Split(b.Field, ".")
	var has []string
	for i := range parts {
		has = append(has, "!has(self."+strings.Join(parts[:i+1], ".")+")")
	}
	absent := strings.Join(has, " || ")
	v := "string(self." + b.Field + ")"
	rule := func(rule, msg string) apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{Rule: absent + " || " + rule, MessageExpression: "'" + msg + ", not ' + " + v, FieldPath: "." + b.Field}
	}
	bound := func(q, cmp, msg string) apiextensionsv1.ValidationRule {
		return rule("!isQuantity("+v+") || quantity("+v+").compareTo(quantity('"+q+"')) "+cmp, msg)
	}
	var rules []apiextensionsv1.ValidationRule
	if b.CPU != nil {
		rules = append(rules, rule(v+".matches('"+cpuForm+"')", b.MsgCPUForm()))
	}
	if b.Max != "" {
		rules = append(rules, bound(b.Max, "<= 0", b.MsgAtMost()))
	}
	return append(rules, bound("0", "> 0", b.MsgPositive()))
}

// Check parses text, the field's value on the object at path: the error
// names the field's path and the value when text is out of range
// (QuantityInRange), no quantity, not above zero or above Max.
func (b QuantityBound) Check(path *field.Path, text string) (resource.Quantity, *field.Error) {
	path = b.path(path)
	v, err := ParsePositive(path, text)
	if err != nil {
		if err.Detail == msgPositive {
			err.Detail = b.MsgPositive()
		}
		return v, err
	}
	if b.Max != "" && v.Cmp(resource.MustParse(b.Max)) > 0 {
		return resource.Quantity{}, field.Invalid(path, text, b.MsgAtMost())
	}
	return v, nil
}

// check is Check for Validate's error list.
func (b QuantityBound) check(path *field.Path, text string) field.ErrorList {
	if _, err := b.Check(path, text); err != nil {
		return field.ErrorList{err}
	}
	return nil
}

// withQuantityRules returns spec with each bound's CEL rules appended to
// its object's; spec's own maps are left as they are.
func withQuantityRules(spec apiextensionsv1.JSONSchemaProps, bounds map[string][]QuantityBound) (apiextensionsv1.JSONSchemaProps, error) {
	for object, bs := range bounds {
		var rules []apiextensionsv1.ValidationRule
		for _, b := range bs {
			rules = append(rules, b.Rules()...)
		}
		var err error
		if spec, err = withRules(spec, strings.Split(object, "."), rules); err != nil {
			return spec, fmt.Errorf("quantity bounds of %s: %w", object, err)
		}
	}
	return spec, nil
}

// withRules returns s with rules appended to the object at path (steps;
// "*" is a map's values or a list's items).
func withRules(s apiextensionsv1.JSONSchemaProps, path []string, rules []apiextensionsv1.ValidationRule) (apiextensionsv1.JSONSchemaProps, error) {
	if len(path) == 0 {
		s.XValidations = append(append(apiextensionsv1.ValidationRules{}, s.XValidations...), rules...)
		return s, nil
	}
	if path[0] == "*" && s.Items != nil && s.Items.Schema != nil {
		child, err := withRules(*s.Items.Schema, path[1:], rules)
		if err != nil {
			return s, err
		}
		s.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &child}
		return s, nil
	}
	if path[0] == "*" {
		if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			return s, fmt.Errorf("no map values at %s", strings.Join(path, "."))
		}
		child, err := withRules(*s.AdditionalProperties.Schema, path[1:], rules)
		if err != nil {
			return s, err
		}
		s.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: s.AdditionalProperties.Allows, Schema: &child}
		return s, nil
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		return s, fmt.Errorf("no property %s", strings.Join(path, "."))
	}
	child, err := withRules(child, path[1:], rules)
	if err != nil {
		return s, err
	}
	props := make(map[string]apiextensionsv1.JSONSchemaProps, len(s.Properties))
	for k, v := range s.Properties {
		props[k] = v
	}
	props[path[0]] = child
	s.Properties = props
	return s, nil
}

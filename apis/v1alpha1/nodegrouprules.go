package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages of the node group's rules (fmt formats, as specrules.go's).
const (
	msgEphemeralStorage = "ephemeralStorage was renamed to diskSize (persistent disk for kubelet and containerd data): set nodeGroups[name].diskSize instead"
	msgPodCPUSizing     = "%s cannot be combined with instanceType sizing (instanceType is %s): KubeVirt refuses a VM with an instancetype and domain.resources.cpu. Set resources.cpu and resources.memory, which drop the instancetype"
	msgPodCPUOrder      = "podCpuRequest must be at most podCpuLimit (%s)"
	msgInstanceType     = "instanceType must be a DNS subdomain (lower-case letters, digits, hyphens and dots)"
)

// Node-group CEL fragments: the VM is sized by resources (no
// instancetype), a whole number of cores, a DNS subdomain.
const (
	celExplicit   = "(has(self.resources) && has(self.resources.cpu) && has(self.resources.memory))"
	wholeCoresCEL = `^([0-9]+|[0-9]*000m|[0-9]+[.]0+)$`
	subdomainCEL  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

// dnsLabelForm is a DNS label (RFC 1123; k8s.io/apimachinery's
// validation.IsDNS1123Label), RE2 as Go and CEL read it.
const dnsLabelForm = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`

var dnsLabelPattern = regexp.MustCompile(dnsLabelForm)

// nodeGroupNameRules are the rules on a node group's name G, a key of
// spec.nodeGroups; the CEL rule is the map's and names the first bad key.
var nodeGroupNameRules = ruleTable[string]{{
	RuleDoc: RuleDoc{ID: "nodeGroups.name.label", Object: "nodeGroups", Field: "nodeGroups", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		ok := "size(g) <= " + strconv.Itoa(MaxNodeGroupNameLength) + " && g.matches(" + celString(dnsLabelForm) + ")"
		return apiextensionsv1.ValidationRule{
			Rule:              "self.all(g, " + ok + ")",
			MessageExpression: refusal(celExpr("self.filter(g, !("+ok+"))[0]"), msgNodeGroupName),
		}
	},
	Check: func(name string, path *field.Path) *field.Error {
		if len(name) > MaxNodeGroupNameLength || !dnsLabelPattern.MatchString(name) {
			return field.Invalid(path, name, msgNodeGroupName)
		}
		return nil
	},
}}

// nodeGroupResourcesRules are the rules on a node group's resources
// (spec.nodeGroups[G].resources): cpu and memory set together.
var nodeGroupResourcesRules = ruleTable[Resources]{
	resourcesPairRule("cpu", "memory", func(r Resources) (Quantity, Quantity) { return r.CPU, r.Memory }),
	resourcesPairRule("memory", "cpu", func(r Resources) (Quantity, Quantity) { return r.Memory, r.CPU }),
}

// resourcesPairRule refuses resources.<name> set without resources.<other>
// (get returns both), naming the missing field.
func resourcesPairRule(name, other string, get func(Resources) (Quantity, Quantity)) Rule[Resources] {
	return Rule[Resources]{
		RuleDoc: RuleDoc{ID: "nodeGroups.resources." + other + ".with." + name, Object: "nodeGroups.*.resources", Field: other, Go: EnforcedValidate},
		CEL: celRule("!has(self."+name+") || has(self."+other+")",
			celFormat(msgResourcesBoth+" (resources."+name+" is %s, resources."+other+" unset)", celExpr("string(self."+name+")")), "."+other),
		Check: func(r Resources, path *field.Path) *field.Error {
			if v, o := get(r); v.IsSet() && !o.IsSet() {
				return field.Required(path.Child(other), fmt.Sprintf("%s (resources.%s is %q)", msgResourcesBoth, name, v))
			}
			return nil
		},
	}
}

// nodeGroupRules are the rules on one node group (spec.nodeGroups[G]).
var nodeGroupRules = concat([]Rule[NodeGroup]{{
	RuleDoc: RuleDoc{ID: "nodeGroups.ephemeralStorage.renamed", Object: "nodeGroups.*", Field: "ephemeralStorage", Go: EnforcedValidate},
	CEL:     celRule("!has(self.ephemeralStorage)", refusal("string(self.ephemeralStorage)", msgEphemeralStorage), ".ephemeralStorage"),
	Check: func(g NodeGroup, path *field.Path) *field.Error {
		if g.EphemeralStorage == nil {
			return nil
		}
		return field.Invalid(path.Child("ephemeralStorage"), string(*g.EphemeralStorage), msgEphemeralStorage)
	},
}, {
	RuleDoc: RuleDoc{ID: "nodeGroups.minReplicas.atMostMax", Object: "nodeGroups.*", Field: "minReplicas", Go: EnforcedValidate},
	CEL: celRule("!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
		refusal(digits("self.minReplicas", MaxReplicasLimit), msgMinAboveMax, digits("self.maxReplicas", MaxReplicasLimit)), ".minReplicas"),
	Check: func(g NodeGroup, path *field.Path) *field.Error {
		if minR, maxR := deref(g.MinReplicas), deref(g.MaxReplicas); minR > maxR {
			return field.Invalid(path.Child("minReplicas"), minR, fmt.Sprintf(msgMinAboveMax, strconv.Itoa(int(maxR))))
		}
		return nil
	},
}, {
	RuleDoc: RuleDoc{ID: "nodeGroups.resources.cpu.wholeCores", Object: "nodeGroups.*", Field: "resources.cpu", Go: "Validate (hand-written: after the quantity bounds of resources.cpu)"},
	CEL: celRule("!has(self.resources) || !has(self.resources.cpu) || !has(self.resources.memory) || string(self.resources.cpu).matches("+celString(wholeCoresCEL)+")",
		refusal("string(self.resources.cpu)", "resources.cpu: "+msgWholeCores), ".resources.cpu"),
}, {
	RuleDoc: RuleDoc{ID: "nodeGroups.instanceType.subdomain", Object: "nodeGroups.*", Field: "instanceType", Go: "Validate (hand-written: validateSubdomain, its own message)"},
	CEL: celRule("!has(self.instanceType) || size(self.instanceType) == 0 || "+celExplicit+" || self.instanceType.matches("+celString(subdomainCEL)+")",
		refusal("self.instanceType", msgInstanceType), ".instanceType"),
}}, podCPUSizingRule("podCpuLimit", func(g NodeGroup) Quantity { return g.PodCPULimit }),
	podCPUSizingRule("podCpuRequest", func(g NodeGroup) Quantity { return g.PodCPURequest }),
	[]Rule[NodeGroup]{{
		RuleDoc: RuleDoc{ID: "nodeGroups.podCpuRequest.atMostLimit", Object: "nodeGroups.*", Field: "podCpuRequest", Go: EnforcedValidate},
		CEL: celRule("!has(self.podCpuRequest) || !has(self.podCpuLimit) || !isQuantity(string(self.podCpuRequest)) || !isQuantity(string(self.podCpuLimit)) || "+
			"quantity(string(self.podCpuRequest)).compareTo(quantity(string(self.podCpuLimit))) <= 0",
			refusal("string(self.podCpuRequest)", msgPodCPUOrder, celExpr("string(self.podCpuLimit)")), ".podCpuRequest"),
		Check: func(g NodeGroup, path *field.Path) *field.Error {
			if !g.PodCPULimit.IsSet() || !g.PodCPURequest.IsSet() {
				return nil
			}
			lim, lerr := parsePodCPU(path, podCPULimit, string(g.PodCPULimit))
			req, rerr := parsePodCPU(path, podCPURequest, string(g.PodCPURequest))
			if lerr != nil || rerr != nil || req.Cmp(lim) <= 0 {
				return nil // a value out of its bounds is refused by them
			}
			return field.Invalid(path.Child("podCpuRequest"), string(g.PodCPURequest), fmt.Sprintf(msgPodCPUOrder, g.PodCPULimit))
		},
	}},
)

// podCPUSizingRule is the rule of a virt-launcher CPU field (podCpuLimit,
// podCpuRequest) of a node group: only on a VM without instancetype
// (resources.cpu and resources.memory set, or instanceType ""; an absent
// instanceType is the default).
func podCPUSizingRule(name string, get func(NodeGroup) Quantity) []Rule[NodeGroup] {
	it := celExpr("(has(self.instanceType) ? self.instanceType : " + celString(DefaultInstanceType) + ")")
	return []Rule[NodeGroup]{{
		RuleDoc: RuleDoc{ID: "nodeGroups." + name + ".noInstancetype", Object: "nodeGroups.*", Field: name, Go: EnforcedValidate},
		CEL: celRule("!has(self."+name+") || (has(self.instanceType) && size(self.instanceType) == 0) || "+celExplicit,
			celFormat(msgPodCPUSizing+"; %s is %s", name, it, name, celExpr("string(self."+name+")")), "."+name),
		Check: func(g NodeGroup, path *field.Path) *field.Error {
			v := get(g)
			if !v.IsSet() || g.InstanceTypeName() == "" || g.explicit() {
				return nil
			}
			return field.Invalid(path.Child(name), string(v), fmt.Sprintf(msgPodCPUSizing, name, g.InstanceTypeName()))
		},
	}}
}

// celRule is a rule's CEL: rule, messageExpression and fieldPath.
func celRule(rule, message, fieldPath string) func() apiextensionsv1.ValidationRule {
	return func() apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{Rule: rule, MessageExpression: message, FieldPath: fieldPath}
	}
}

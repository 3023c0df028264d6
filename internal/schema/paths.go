package schema

import (
	"regexp"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldPath writes p, a path as the pruning and the OpenAPI validator
// write it (a map key as a field, spec.nodeGroups.md0.x; an index as
// a[0]: kube-openapi pkg/validation/validate/slice_validator.go:58,
// apiextensions-apiserver pkg/apiserver/schema/options.go:66), in
// field.Path's form, as the CEL rules and the functions' field.ErrorList
// write it: spec.nodeGroups[md0].x. The schema s of the object tells a map
// key from a field; the key of a map of scalars is the rest of p (a label
// key may hold dots). Below a node s does not describe, each segment is a
// field.
func fieldPath(p string, s *structuralschema.Structural) *field.Path {
	out, _ := fieldPathIn(p, s)
	return out
}

// fieldPathIn is fieldPath, and the schema of the object that holds p's
// last field (nil when s does not describe it).
func fieldPathIn(p string, s *structuralschema.Structural) (out *field.Path, parent *structuralschema.Structural) {
	if p == "" {
		return nil, nil
	}
	child := func(name string) {
		if out == nil {
			out = field.NewPath(name)
		} else {
			out = out.Child(name)
		}
	}
	segs := strings.Split(p, ".")
	for i := 0; i < len(segs); i++ {
		parent = s
		name, indices := cutIndices(segs[i])
		switch {
		case s == nil || out == nil:
			child(name)
			s = property(s, name)
		case hasProperty(s, name):
			child(name)
			s = property(s, name)
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			val := s.AdditionalProperties.Structural
			if len(indices) == 0 && scalar(val) {
				return out.Key(strings.Join(segs[i:], ".")), s
			}
			out, s = out.Key(name), val
		default:
			child(name)
			s = nil
		}
		for _, n := range indices {
			out = out.Index(n)
			if s != nil {
				s = s.Items
			}
		}
	}
	return out, parent
}

// cutIndices splits a pruning path segment "a[0][1]" into "a" and 0, 1.
func cutIndices(seg string) (string, []int) {
	var idx []int
	for strings.HasSuffix(seg, "]") {
		open := strings.LastIndexByte(seg, '[')
		if open < 0 {
			break
		}
		n, err := strconv.Atoi(seg[open+1 : len(seg)-1])
		if err != nil {
			break
		}
		idx = append([]int{n}, idx...)
		seg = seg[:open]
	}
	return seg, idx
}

func hasProperty(s *structuralschema.Structural, name string) bool {
	_, ok := s.Properties[name]
	return ok
}

func property(s *structuralschema.Structural, name string) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[name]; ok {
		return &p
	}
	return nil
}

// scalar reports whether s describes no object or list below it.
func scalar(s *structuralschema.Structural) bool {
	return len(s.Properties) == 0 && s.Items == nil && s.AdditionalProperties == nil
}

// bodyPrefix is how the OpenAPI validator starts a message: the path,
// then " in body " (k8s.io/kube-openapi pkg/validation/errors/schema.go:30,
// patternFail "%s in %s should match '%s'", and its siblings).
var bodyPrefix = regexp.MustCompile(`^\S+ in body `)

// Patterns with a message a tenant reads instead of the expression.
// quantityPattern is controller-gen's for resource.Quantity
// (sigs.k8s.io/controller-tools pkg/crd/known_types.go:63);
// thresholdPattern is a percentage or such a quantity
// (apis/v1alpha1 Threshold, the kubelet's eviction thresholds).
const (
	quantityPattern  = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
	thresholdPattern = `^([0-9]+(\.[0-9]+)?%|(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$`
)

var patternMessages = map[string]string{
	"should match '" + quantityPattern + "'":  "must be a quantity such as 20Gi",
	"should match '" + thresholdPattern + "'": "must be a percentage such as 7% or a quantity such as 500Mi",
}

// schemaErrors writes the OpenAPI validator's errors as the rest: each
// field a field.Path (fieldPath), each message without the path the
// validator repeats in it, and a quantity's pattern as words.
func schemaErrors(errs field.ErrorList, s *structuralschema.Structural) field.ErrorList {
	for _, e := range errs {
		if p := fieldPath(e.Field, s); p != nil {
			e.Field = p.String()
		}
		e.Detail = bodyPrefix.ReplaceAllString(e.Detail, "")
		if m, ok := patternMessages[e.Detail]; ok {
			e.Detail = m
		}
	}
	return errs
}

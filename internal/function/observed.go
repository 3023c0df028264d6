package function

import (
	"iter"
	"maps"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// observedResource returns the object of the observed composed resource
// called name, or nil when there is none.
func observedResource(req *fnv1.RunFunctionRequest, name string) *structpb.Struct {
	return req.GetObserved().GetResources()[name].GetResource()
}

// observedExists reports whether the composed resource called name is in
// req's observed state (it has been created). Templates, ConfigMaps,
// ServiceAccounts and RBAC objects are ready once they exist.
func observedExists(req *fnv1.RunFunctionRequest, name string) bool {
	return observedResource(req, name) != nil
}

// observedNames yields the names of the observed composed resources, in
// map order.
func observedNames(req *fnv1.RunFunctionRequest) iter.Seq[string] {
	return maps.Keys(req.GetObserved().GetResources())
}

// observedValue returns the value at path (map keys) of the observed
// composed resource called name, or nil when the resource or the path is
// absent; with no path, the whole object.
func observedValue(req *fnv1.RunFunctionRequest, name string, path ...string) *structpb.Value {
	return valueAt(observedResource(req, name), path...)
}

// observedComposite returns the observed composite resource's object, or
// nil when there is none.
func observedComposite(req *fnv1.RunFunctionRequest) *structpb.Struct {
	return req.GetObserved().GetComposite().GetResource()
}

// observedCompositeValue is observedValue of the observed composite
// resource.
func observedCompositeValue(req *fnv1.RunFunctionRequest, path ...string) *structpb.Value {
	return valueAt(observedComposite(req), path...)
}

// valueAt returns the value at path (map keys) of s, or nil when s is nil
// or the path is absent; the whole object as a Value for no path.
func valueAt(s *structpb.Struct, path ...string) *structpb.Value {
	if s == nil {
		return nil
	}
	if len(path) == 0 {
		return structpb.NewStructValue(s)
	}
	v := s.GetFields()[path[0]]
	for _, p := range path[1:] {
		if v = v.GetStructValue().GetFields()[p]; v == nil {
			return nil
		}
	}
	return v
}

// conditionOf returns the status ("True", "False", "Unknown") of the
// condition of type typ in status.conditions of obj, with its reason and
// message; status is "" when obj or the condition is absent. It works for
// metav1.Condition, CAPI v1beta2 and cert-manager conditions alike.
func conditionOf(obj *structpb.Struct, typ string) (status, reason, message string) {
	for _, c := range valueAt(obj, "status", "conditions").GetListValue().GetValues() {
		f := c.GetStructValue().GetFields()
		if f["type"].GetStringValue() == typ {
			return f["status"].GetStringValue(), f["reason"].GetStringValue(), f["message"].GetStringValue()
		}
	}
	return "", "", ""
}

// ReadyIf returns READY_TRUE when ok, else READY_FALSE: readiness is only
// ever derived from observed status, never assumed.
func ReadyIf(ok bool) fnv1.Ready {
	if ok {
		return fnv1.Ready_READY_TRUE
	}
	return fnv1.Ready_READY_FALSE
}

// Require adds a required resource to rsp under key (Crossplane v2
// requirements.resources): Crossplane fetches what selector matches and
// sends it in the next request's required resources under the same key.
func Require(rsp *fnv1.RunFunctionResponse, key string, selector *fnv1.ResourceSelector) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[key] = selector
}

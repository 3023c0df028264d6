package function

import (
	"iter"
	"maps"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function/wire"
)

// observedResource returns the object of the observed composed resource
// called name, or nil when there is none. An object UnmarshalRequest kept
// encoded is decoded now, once (see wire/encodedobjects.go): this and the other
// Observed* functions are the only way a function reads observed composed
// resources.
func observedResource(req *fnv1.RunFunctionRequest, name string) *structpb.Struct {
	return wire.Decode(req.GetObserved().GetResources()[name])
}

// observedExists reports whether the composed resource called name is in
// req's observed state (it has been created). Templates, ConfigMaps,
// ServiceAccounts and RBAC objects are ready once they exist.
func observedExists(req *fnv1.RunFunctionRequest, name string) bool {
	return wire.HasObject(req.GetObserved().GetResources()[name])
}

// observedNames yields the names of the observed composed resources, in
// map order, without decoding any object.
func observedNames(req *fnv1.RunFunctionRequest) iter.Seq[string] {
	return maps.Keys(req.GetObserved().GetResources())
}

// observedValue returns the value at path (map keys) of the observed
// composed resource called name, or nil when the resource or the path is
// absent. Of an object kept encoded (UnmarshalRequest) it decodes only the
// value found; with no path it returns the whole object.
func observedValue(req *fnv1.RunFunctionRequest, name string, path ...string) *structpb.Value {
	return wire.Value(req.GetObserved().GetResources()[name], path)
}

// observedString returns the string at path (map keys, at least one) of
// the observed composed resource called name: "" when the resource or the
// path is absent or the value is no string, as
// observedValue(...).GetStringValue() gives, without decoding a Value of an
// object kept encoded.
func observedString(req *fnv1.RunFunctionRequest, name string, path ...string) string {
	return wire.String(req.GetObserved().GetResources()[name], path)
}

// observedNumber returns the number at path (map keys, at least one) of
// the observed composed resource called name: 0 when the resource or the
// path is absent or the value is no number, as
// observedValue(...).GetNumberValue() gives, without decoding a Value of an
// object kept encoded.
func observedNumber(req *fnv1.RunFunctionRequest, name string, path ...string) float64 {
	return wire.Number(req.GetObserved().GetResources()[name], path)
}

// observedCompositeValue is observedValue of the observed composite
// resource: the value at path, or nil when the XR or the path is absent,
// decoding only the value found.
func observedCompositeValue(req *fnv1.RunFunctionRequest, path ...string) *structpb.Value {
	return wire.Value(req.GetObserved().GetComposite(), path)
}

// observedCompositeString is observedString of the observed composite
// resource: the string at path, "" when the XR or the path is absent or
// the value is no string.
func observedCompositeString(req *fnv1.RunFunctionRequest, path ...string) string {
	return wire.String(req.GetObserved().GetComposite(), path)
}

// observedCompositeExists reports whether req has an observed composite
// resource with an object.
func observedCompositeExists(req *fnv1.RunFunctionRequest) bool {
	return wire.HasObject(req.GetObserved().GetComposite())
}

// observedCompositeSpec returns the observed XR's spec, nil when there is
// none. Of an XR kept encoded, a spec that is an object is decoded only in
// the members keep accepts (the members a typed spec can take, not the
// resourceRefs and other references Crossplane writes into it); the
// caller must not look at the others.
func observedCompositeSpec(req *fnv1.RunFunctionRequest, keep func(key string) bool) *structpb.Value {
	return wire.Member(req.GetObserved().GetComposite(), "spec", keep)
}

// observedConditionStatus returns the status ("True", "False", "Unknown")
// of the condition of type typ in status.conditions of the observed composed
// resource called name, with its reason and message; status is "" when the
// resource or the condition is absent. It works for metav1.Condition, CAPI
// v1beta2 and cert-manager conditions alike.
func observedConditionStatus(req *fnv1.RunFunctionRequest, name, typ string) (status, reason, message string) {
	return wire.Condition(req.GetObserved().GetResources()[name], typ)
}

// observedCompositeCondition is observedConditionStatus of the observed
// composite resource.
func observedCompositeCondition(req *fnv1.RunFunctionRequest, typ string) (status, reason, message string) {
	return wire.Condition(req.GetObserved().GetComposite(), typ)
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

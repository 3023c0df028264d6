package function

import (
	"encoding/json"
	"iter"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Request is what a function reads from a RunFunctionRequest: the observed
// XR (as a Tenant), the observed composed resources, the required
// resources and the step's input. It hides how the request was decoded:
// the functions never see protobuf messages, bytes or encoders.
type Request struct {
	req *fnv1.RunFunctionRequest
}

// NewRequest is the read side of req.
func NewRequest(req *fnv1.RunFunctionRequest) *Request { return &Request{req: req} }

// Cluster decodes the observed XR (see readCluster).
func (r *Request) Cluster() (*Cluster, error) { return readCluster(r.req) }

// Input decodes the step's input into in (a pointer to the input type);
// an absent input leaves in as it is.
func (r *Request) Input(in runtime.Object) error {
	if r.req.GetInput() == nil {
		return nil
	}
	return request.GetInput(r.req, in)
}

// ObservedExists reports whether the composed resource called name has
// been observed (it exists).
func (r *Request) ObservedExists(name string) bool { return observedExists(r.req, name) }

// ObservedNames yields the names of the observed composed resources, in no
// particular order.
func (r *Request) ObservedNames() iter.Seq[string] { return observedNames(r.req) }

// ObservedString is the string at path (map keys) of the observed composed
// resource called name; "" when absent or not a string.
func (r *Request) ObservedString(name string, path ...string) string {
	return observedValue(r.req, name, path...).GetStringValue()
}

// ObservedNumber is the number at path of the observed composed resource
// called name; 0 when absent or not a number.
func (r *Request) ObservedNumber(name string, path ...string) float64 {
	return observedValue(r.req, name, path...).GetNumberValue()
}

// ObservedNumberAt is the number at path of the observed composed
// resource called name, and whether there is one.
func (r *Request) ObservedNumberAt(name string, path ...string) (float64, bool) {
	n, ok := observedValue(r.req, name, path...).GetKind().(*structpb.Value_NumberValue)
	if !ok {
		return 0, false
	}
	return n.NumberValue, true
}

// ObservedBool is the boolean at path of the observed composed resource
// called name; false when absent or not a boolean.
func (r *Request) ObservedBool(name string, path ...string) bool {
	return observedValue(r.req, name, path...).GetBoolValue()
}

// CompositeString is the string at path (map keys) of the observed XR; ""
// when absent or not a string.
func (r *Request) CompositeString(path ...string) string {
	return observedCompositeValue(r.req, path...).GetStringValue()
}

// CompositeComposed reports whether the observed XR lists a composed
// resource (spec.crossplane.resourceRefs, a Crossplane v2 XR's): whether
// it has composed anything.
func (r *Request) CompositeComposed() bool {
	return len(observedCompositeValue(r.req, "spec", "crossplane", "resourceRefs").GetListValue().GetValues()) > 0
}

// ObservedCondition is the condition of type typ in status.conditions of
// the observed composed resource called name: status ("True", "False",
// "Unknown"; "" when absent), reason and message.
func (r *Request) ObservedCondition(name, typ string) (status, reason, message string) {
	return conditionOf(observedResource(r.req, name), typ)
}

// CompositeCondition is the condition of type typ in status.conditions of
// the observed XR: status ("True", "False", "Unknown"; "" when absent),
// reason and message. Crossplane keeps a condition a function set until a
// function sets it again, so a function reads it to replace one it no
// longer computes.
func (r *Request) CompositeCondition(typ string) (status, reason, message string) {
	return conditionOf(observedComposite(r.req), typ)
}

// Observed decodes the observed composed resource called name into a T (a
// typed Kubernetes object). It reports false when there is none, and the
// decoding error.
func Observed[T any](r *Request, name string) (*T, bool, error) {
	out := new(T)
	found, err := observedInto(r.req, name, out)
	if !found || err != nil {
		return nil, found, err
	}
	return out, true, nil
}

// Required decodes the objects Crossplane sent for the required resources
// of key into Ts. arrived is false until Crossplane has answered the
// requirement (with objects or with none).
func Required[T any](r *Request, key string) (items []*T, arrived bool, err error) {
	structs, arrived := requiredResources(r.req, key)
	for _, s := range structs {
		out := new(T)
		if err := decodeStruct(s, out); err != nil {
			return nil, true, err
		}
		items = append(items, out)
	}
	return items, arrived, nil
}

// RequiredArrived reports whether Crossplane has answered the requirement
// of key, and with how many objects.
func (r *Request) RequiredArrived(key string) (n int, arrived bool) {
	items, arrived := requiredResources(r.req, key)
	return len(items), arrived
}

// DesiredExists reports whether an earlier step put a composed resource
// called name into the desired state.
func (r *Request) DesiredExists(name string) bool {
	_, ok := r.req.GetDesired().GetResources()[name]
	return ok
}

// ControlPlaneComposed reports whether a KamajiControlPlane is in the
// desired state an earlier step (control-plane, first in the pipeline)
// left, or observed. A namespaced cluster waiting for its tenant's
// DataStore has neither.
func (r *Request) ControlPlaneComposed() bool {
	return r.DesiredExists(KamajiControlPlaneResourceName) || r.ObservedExists(KamajiControlPlaneResourceName)
}

// CompositeSpec decodes the observed XR's spec into out (a pointer to a
// typed spec); an absent spec leaves out as it is. It returns a
// *field.Error under "spec" naming the field whose value has the wrong
// type.
func (r *Request) CompositeSpec(out any) error {
	spec := observedCompositeValue(r.req, "spec")
	if spec == nil {
		return nil
	}
	if spec.GetStructValue() == nil {
		return field.Invalid(field.NewPath("spec"), spec.AsInterface(), "must be an object")
	}
	v := spec.AsInterface()
	raw, err := json.Marshal(v)
	if err != nil {
		return field.Invalid(field.NewPath("spec"), "<unencodable>", err.Error())
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return decodeError(v, err)
	}
	return nil
}

// CompositeInto decodes the value at path (map keys) of the observed XR
// into out (JSON-like); false when absent.
func (r *Request) CompositeInto(out any, path ...string) (bool, error) {
	v := observedCompositeValue(r.req, path...)
	if v == nil {
		return false, nil
	}
	raw, err := json.Marshal(v.AsInterface())
	if err != nil {
		return true, err
	}
	return true, json.Unmarshal(raw, out)
}

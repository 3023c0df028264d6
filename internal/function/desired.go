package function

import (
	"encoding/json"
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// ToStruct converts a typed Kubernetes object (a struct with TypeMeta and
// ObjectMeta, or a map) into the structpb.Struct a RunFunctionResponse
// carries. It marshals once to JSON and drops what a composed resource must
// not carry: top-level status, and null values anywhere (encoding/json
// writes null for unset metav1.Time and nil maps in nested templates). It
// returns an error when the object does not marshal.
func ToStruct(obj any) (*structpb.Struct, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	// One pass from JSON to structpb, dropping nulls as it goes: the same
	// Struct as protojson.Unmarshal followed by dropping null members,
	// several times faster (jsonstruct.go; TestToStructMatchesProtojson
	// holds them equal).
	s, err := jsonToStruct(raw)
	if err != nil {
		return nil, err
	}
	delete(s.Fields, "status")
	return s, nil
}

// SetDesired puts obj into rsp's desired composed resources under the
// composed-resource name, with the given readiness, replacing any earlier
// entry of that name and leaving every other entry untouched. It returns an
// error when obj does not convert (see ToStruct).
func SetDesired(rsp *fnv1.RunFunctionResponse, name string, obj any, ready fnv1.Ready) error {
	s, err := ToStruct(obj)
	if err != nil {
		return fmt.Errorf("cannot convert composed resource %q: %w", name, err)
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[name] = &fnv1.Resource{Resource: s, Ready: ready}
	return nil
}

// omitPath removes the field at path from s, copying each struct on the way
// so the observed object it came from is left intact.
func omitPath(s *structpb.Struct, path []string) {
	if len(path) == 1 {
		delete(s.Fields, path[0])
		return
	}
	child := s.Fields[path[0]].GetStructValue()
	if child == nil {
		return
	}
	c := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(child.Fields))}
	for k, v := range child.Fields {
		c.Fields[k] = v
	}
	omitPath(c, path[1:])
	s.Fields[path[0]] = structpb.NewStructValue(c)
}

// KeepObserved copies the observed composed resource called name into rsp's
// desired state unchanged (apart from its status, server-set metadata, the
// labels and annotations other controllers wrote (see keptMetadata), and
// the dotted field paths in omit, e.g. "spec.replicas" of a
// MachineDeployment that cluster-autoscaler owns), so that a part the
// function cannot compute this time is not deleted by Crossplane. It
// reports false when nothing of that name was observed.
func KeepObserved(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, name string, omit ...string) bool {
	r, ok := req.GetObserved().GetResources()[name]
	if !ok || r.GetResource() == nil {
		return false
	}
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(r.GetResource().GetFields()))}
	for k, v := range r.GetResource().GetFields() {
		if k == "status" {
			continue
		}
		s.Fields[k] = v
	}
	if _, ok := s.Fields["metadata"]; ok {
		s.Fields["metadata"] = structpb.NewStructValue(keptMetadata(r.GetResource()))
	}
	for _, p := range omit {
		omitPath(s, strings.Split(p, "."))
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[name] = &fnv1.Resource{Resource: s}
	return true
}

package function

import (
	"encoding/json"
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// setDesired puts obj into rsp's desired composed resources under the
// composed-resource name, with the given readiness, replacing any earlier
// entry of that name and leaving every other entry untouched. obj is a
// *structpb.Struct, taken as it is, or a typed object (converted by
// toStruct). It returns an error when obj does not convert.
func setDesired(rsp *fnv1.RunFunctionResponse, name string, obj any, ready fnv1.Ready) error {
	s, ok := obj.(*structpb.Struct)
	if !ok {
		var err error
		if s, err = toStruct(obj); err != nil {
			return fmt.Errorf("cannot convert composed resource %q: %w", name, err)
		}
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

// toStruct converts a typed Kubernetes object (a struct with TypeMeta and
// ObjectMeta, or a map) into the structpb.Struct a composed resource's
// object is, through its encoding/json output, without what a composed
// resource must not carry: the top-level status, and null members of
// objects at any depth (encoding/json writes null for an unset metav1.Time
// and for nil maps in nested templates). It returns an error when the
// object does not marshal to a JSON object.
func toStruct(obj any) (*structpb.Struct, error) {
	var m map[string]any
	if err := jsonRoundTrip(obj, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%T does not encode to a JSON object", obj)
	}
	delete(m, "status")
	dropNulls(m)
	return structpb.NewStruct(m)
}

// toValue converts a JSON-marshallable value (a typed one too) into a
// structpb.Value through its encoding/json output, dropping nothing.
func toValue(obj any) (*structpb.Value, error) {
	var v any
	if err := jsonRoundTrip(obj, &v); err != nil {
		return nil, err
	}
	return structpb.NewValue(v)
}

// jsonRoundTrip decodes encoding/json's encoding of obj into out.
func jsonRoundTrip(obj, out any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// dropNulls deletes the null members of every object in v (JSON decoded
// into an any), at any depth; null list items stay.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
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

// keepObserved copies the observed composed resource called name into rsp's
// desired state unchanged (apart from its status, server-set metadata, the
// labels and annotations other controllers wrote (see keptMetadata), and
// the dotted field paths in omit, e.g. "spec.replicas" of a
// MachineDeployment that cluster-autoscaler owns), so that a part the
// function cannot compute this time is not deleted by Crossplane. It
// reports false when nothing of that name was observed.
func keepObserved(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, name string, omit ...string) bool {
	obj := observedResource(req, name)
	if obj == nil {
		return false
	}
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(obj.GetFields()))}
	for k, v := range obj.GetFields() {
		if k == "status" {
			continue
		}
		s.Fields[k] = v
	}
	if _, ok := s.Fields["metadata"]; ok {
		s.Fields["metadata"] = structpb.NewStructValue(keptMetadata(obj))
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

package function

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function/wire"
)

// setDesired puts obj into rsp's desired composed resources under the
// composed-resource name, with the given readiness, replacing any earlier
// entry of that name and leaving every other entry untouched. obj is a
// typed object (encoded at once, see wire.EncodeObject) or a
// *structpb.Struct. It returns an error when obj does not convert.
func setDesired(rsp *fnv1.RunFunctionResponse, name string, obj any, ready fnv1.Ready) error {
	r, err := wire.NewResource(obj, ready)
	if err != nil {
		return fmt.Errorf("cannot convert composed resource %q: %w", name, err)
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[name] = r
	return nil
}

// toValue converts a JSON-marshallable value into a structpb.Value through
// its encoding/json output, dropping nothing (wire.ToValue).
func toValue(obj any) (*structpb.Value, error) { return wire.ToValue(obj) }

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

package function

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// ToStruct converts a typed Kubernetes object (a struct with TypeMeta and
// ObjectMeta, or a map) into the structpb.Struct a composed resource's
// object is. It marshals once to JSON and drops what a composed resource
// must not carry: top-level status, and null values anywhere (encoding/json
// writes null for unset metav1.Time and nil maps in nested templates).
// SetDesired does not build this Struct but writes its wire form straight
// from the JSON (EncodeObject); ToStruct is what tests hold that to. It
// returns an error when the object does not marshal.
func ToStruct(obj any) (*structpb.Struct, error) {
	var s *structpb.Struct
	err := WithJSON(obj, func(raw []byte) error {
		// One pass from JSON to structpb, dropping nulls as it goes: the
		// same Struct as protojson.Unmarshal followed by dropping null
		// members, several times faster (jsonstruct.go;
		// TestToStructMatchesProtojson holds them equal). The status is
		// checked, not built. It copies what it keeps, so raw may be
		// reused.
		var err error
		s, _, err = jsonToStructMember(raw, "", "status")
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ToValue converts a JSON-marshallable value (a typed one too) into a
// structpb.Value through its encoding/json output, dropping nothing: what
// structpb.NewValue makes of that JSON decoded into an any, without the
// map[string]any. It returns an error when obj does not marshal.
func ToValue(obj any) (*structpb.Value, error) {
	var v *structpb.Value
	err := WithJSON(obj, func(raw []byte) error {
		var err error
		v, err = jsonToValue(raw)
		return err
	})
	return v, err
}

// WithJSON calls f with encoding/json's encoding of obj (the bytes
// json.Marshal returns, followed by a newline), and returns f's error, or
// the marshalling error. The bytes are in a buffer reused by later calls:
// f must not keep them.
func WithJSON(obj any, f func(raw []byte) error) error {
	e := jsonEncoders.Get().(*jsonEncoder)
	defer e.release()
	if err := e.enc.Encode(obj); err != nil {
		return err
	}
	return f(e.buf.Bytes())
}

// jsonEncoder is a json.Encoder writing to its own buffer, reused through
// jsonEncoders. (An Encoder keeps no state between calls apart from a
// write error, which a bytes.Buffer never returns.)
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonEncoders = sync.Pool{New: func() any {
	e := &jsonEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// maxPooledJSON is the largest buffer kept for reuse, so one huge object
// does not keep its buffer alive.
const maxPooledJSON = 1 << 20

func (e *jsonEncoder) release() {
	if e.buf.Cap() <= maxPooledJSON {
		e.buf.Reset()
		jsonEncoders.Put(e)
	}
}

// SetDesired puts obj into rsp's desired composed resources under the
// composed-resource name, with the given readiness, replacing any earlier
// entry of that name and leaving every other entry untouched. obj is a
// typed object (encoded at once, see EncodeObject), an EncodedObject, or a
// *structpb.Struct. It returns an error when obj does not convert (see
// ToStruct).
func SetDesired(rsp *fnv1.RunFunctionResponse, name string, obj any, ready fnv1.Ready) error {
	r := &fnv1.Resource{Ready: ready}
	switch o := obj.(type) {
	case *structpb.Struct:
		r.Resource = o
	case EncodedObject:
		if simpleWire {
			r.Resource = o.Struct()
			break
		}
		r.ProtoReflect().SetUnknown(o.record)
	default:
		if simpleWire {
			s, err := ToStruct(obj)
			if err != nil {
				return fmt.Errorf("cannot convert composed resource %q: %w", name, err)
			}
			r.Resource = s
			break
		}
		enc, err := EncodeObject(obj)
		if err != nil {
			return fmt.Errorf("cannot convert composed resource %q: %w", name, err)
		}
		r.ProtoReflect().SetUnknown(enc.record)
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

// EncodedObject is a desired composed resource's object already in its
// protobuf wire form, a google.protobuf.Struct, as EncodeObject makes it.
// SetDesired puts it into a Resource as an object kept encoded (see
// encodedobjects.go): the served codec writes it out as it is, and
// DesiredResource decodes it when something reads it.
type EncodedObject struct {
	// record is the Resource's field 1: tag, length, Struct.
	record []byte
}

// Struct decodes o into a structpb.Struct: ToStruct of the object o was
// made from. For tests and tools; it panics if o was not made by
// EncodeObject.
func (o EncodedObject) Struct() *structpb.Struct {
	return decodeObject(encodedResource(o))
}

// encodedResource is a Resource holding o as an object kept encoded.
func encodedResource(o EncodedObject) *fnv1.Resource {
	r := &fnv1.Resource{}
	r.ProtoReflect().SetUnknown(o.record)
	return r
}

// EncodeObject converts a typed Kubernetes object (or a map) into the
// wire form of the structpb.Struct ToStruct makes of it, straight from its
// encoding/json output (structWriter), without building the Struct: same
// map entries and values, top-level status and null members dropped alike.
// Unlike a Struct's, its map entries are in a fixed order (the JSON's), so
// the same object always gives the same bytes. It returns an error when
// obj does not marshal.
func EncodeObject(obj any) (EncodedObject, error) {
	o, _, err := encodeObject(obj, "", nil)
	return o, err
}

// EncodeObjectSpecSum is EncodeObject of obj with CanonicalSHA256 of obj's
// spec (the value of its top-level "spec" member), from one marshal: the
// sum is what CanonicalSHA256 gives for the spec marshalled on its own
// (encoding/json writes a struct's field as it writes the field's value). When name is not nil, the
// object's metadata.name is name(the spec's sum): obj must then have
// metadata and no name of its own (an object named by a hash of its spec).
// It returns an error when obj does not marshal, has no spec, or, with
// name, has no metadata or a name already.
func EncodeObjectSpecSum(obj any, name func(specSum [sha256.Size]byte) string) (EncodedObject, [sha256.Size]byte, error) {
	return encodeObject(obj, "spec", name)
}

func encodeObject(obj any, sumKey string, name func([sha256.Size]byte) string) (EncodedObject, [sha256.Size]byte, error) {
	var out EncodedObject
	var sum [sha256.Size]byte
	err := WithJSON(obj, func(raw []byte) error {
		w := structWriters.Get().(*structWriter)
		defer w.release()
		w.buf, w.dropKey, w.memberKey = raw, "status", sumKey
		if name != nil {
			w.deferKey = "metadata"
		}
		if err := w.writeTop(); err != nil {
			return err
		}
		if sumKey != "" {
			if w.member == nil {
				return fmt.Errorf("%T has no %s", obj, sumKey)
			}
			var err error
			if sum, err = CanonicalSHA256(w.member); err != nil {
				return err
			}
		}
		if name != nil {
			if w.deferred == nil {
				return fmt.Errorf("%T has no metadata", obj)
			}
			if err := w.appendDeferred("name", name(sum)); err != nil {
				return err
			}
		}
		out.record = structRecord(w.out)
		return nil
	})
	return out, sum, err
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
	obj := ObservedResource(req, name)
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

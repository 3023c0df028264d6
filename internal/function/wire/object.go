package wire

import (
	"bytes"
	"encoding/json"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// ToStruct converts a typed Kubernetes object (a struct with TypeMeta and
// ObjectMeta, or a map) into the structpb.Struct a composed resource's
// object is. It marshals once to JSON and drops what a composed resource
// must not carry: top-level status, and null values anywhere (encoding/json
// writes null for unset metav1.Time and nil maps in nested templates).
// NewResource does not build this Struct but writes its wire form straight
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

// Object is a desired composed resource's object already in its
// protobuf wire form, a google.protobuf.Struct, as EncodeObject makes it.
// NewResource puts it into a Resource as an object kept encoded (see
// encodedobjects.go): the served codec writes it out as it is, and Decode
// decodes it when something reads it.
type Object struct {
	// record is the Resource's field 1: tag, length, Struct.
	record []byte
}

// Struct decodes o into a structpb.Struct: ToStruct of the object o was
// made from. For tests and tools; it panics if o was not made by
// EncodeObject.
func (o Object) Struct() *structpb.Struct {
	return Decode(encodedResource(o))
}

// encodedResource is a Resource holding o as an object kept encoded.
func encodedResource(o Object) *fnv1.Resource {
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
func EncodeObject(obj any) (Object, error) {
	var out Object
	err := WithJSON(obj, func(raw []byte) error {
		w := structWriters.Get().(*structWriter)
		defer w.release()
		w.buf, w.dropKey = raw, "status"
		if err := w.writeTop(); err != nil {
			return err
		}
		out.record = structRecord(w.out)
		return nil
	})
	return out, err
}

// NewResource is a desired composed resource holding obj with the given
// readiness: a *structpb.Struct as it is, an Object kept encoded (the
// served codec writes it out as it is), any other (typed) object encoded
// at once by EncodeObject. It returns an error when obj does not convert.
func NewResource(obj any, ready fnv1.Ready) (*fnv1.Resource, error) {
	r := &fnv1.Resource{Ready: ready}
	switch o := obj.(type) {
	case *structpb.Struct:
		r.Resource = o
	case Object:
		if simpleWire {
			r.Resource = o.Struct()
			break
		}
		r.ProtoReflect().SetUnknown(o.record)
	default:
		if simpleWire {
			s, err := ToStruct(obj)
			if err != nil {
				return nil, err
			}
			r.Resource = s
			break
		}
		enc, err := EncodeObject(obj)
		if err != nil {
			return nil, err
		}
		r.ProtoReflect().SetUnknown(enc.record)
	}
	return r, nil
}

// Value is the value at path of r's object (the whole object with no path),
// nil when r, its object or the path is absent. It, String and Number read an object kept encoded with their
// raw reader and fall back to the decoded object; they are three small
// copies rather than one generic function taking the reader, since calling
// it through a function value would move every caller's path to the heap.
func Value(r *fnv1.Resource, path []string) *structpb.Value {
	if encoded, ok := encodedObject(r); ok && len(path) > 0 {
		if v, ok := rawValueAt(encoded, path); ok {
			return v
		}
	}
	return ValueAt(Decode(r), path...)
}

// String is the string at path of r's object (function.Request.ObservedString).
func String(r *fnv1.Resource, path []string) string {
	if encoded, ok := encodedObject(r); ok && len(path) > 0 {
		if s, ok := rawStringAt(encoded, path); ok {
			return s
		}
	}
	return ValueAt(Decode(r), path...).GetStringValue()
}

// Number is the number at path of r's object (function.Request.ObservedNumber).
func Number(r *fnv1.Resource, path []string) float64 {
	if encoded, ok := encodedObject(r); ok && len(path) > 0 {
		if n, ok := rawNumberAt(encoded, path); ok {
			return n
		}
	}
	return ValueAt(Decode(r), path...).GetNumberValue()
}

// ValueAt returns the value at path (map keys) of s, or nil when s is nil
// or the path is absent; the whole object as a Value for no path.
func ValueAt(s *structpb.Struct, path ...string) *structpb.Value {
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

// HasObject reports whether r holds an object, decoded or kept encoded
// (false for a nil r).
func HasObject(r *fnv1.Resource) bool {
	if r.GetResource() != nil {
		return true
	}
	_, encoded := encodedObject(r)
	return encoded
}

// Member is the member key of r's object, or nil. Of an object kept
// encoded whose member is an object, only its members keep accepts are
// decoded: the caller must not look at the others.
func Member(r *fnv1.Resource, key string, keep func(key string) bool) *structpb.Value {
	if encoded, ok := encodedObject(r); ok {
		if v, ok := rawValueWhere(encoded, key, keep); ok {
			return v
		}
	}
	return Decode(r).GetFields()[key]
}

// Condition is the condition of type typ in status.conditions of r's
// object: status ("" when absent), reason and message.
func Condition(r *fnv1.Resource, typ string) (status, reason, message string) {
	if encoded, ok := encodedObject(r); ok {
		if status, reason, message, ok := rawCondition(encoded, typ); ok {
			return status, reason, message
		}
	}
	for _, c := range Value(r, []string{"status", "conditions"}).GetListValue().GetValues() {
		f := c.GetStructValue().GetFields()
		if f["type"].GetStringValue() == typ {
			return f["status"].GetStringValue(), f["reason"].GetStringValue(), f["message"].GetStringValue()
		}
	}
	return "", "", ""
}

// Encoded returns the bytes of the object r keeps encoded (a Struct's wire
// form) and whether it keeps one; WellFormed reports whether such bytes are
// in the shape protobuf-go writes (read where they lie, decoded by
// vtprotobuf). For the accessors' tests.
func Encoded(r *fnv1.Resource) ([]byte, bool) { return encodedObject(r) }

// WellFormed: see Encoded.
func WellFormed(b []byte) bool { return wellFormedStruct(b, 0) }

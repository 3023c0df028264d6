package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	vtstructpb "github.com/planetscale/vtprotobuf/types/known/structpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// A composed resource (observed or desired) and the observed composite
// resource decoded by UnmarshalRequest, and a desired composed resource
// NewResource encoded, keep their object encoded, as the Resource's unknown
// fields hold a field protobuf does not know: one record with field number
// 1 (Resource.resource), wire type bytes, whose payload is the
// google.protobuf.Struct. protobuf-go treats it as it treats any unknown
// field (proto.Marshal writes it back unchanged, so an earlier step's
// desired Resource passed on in a response still carries its object), and
// function.Request's reads (Decode, Value, String, Number, Condition)
// decode it on first use.
// Nothing else in a function may read such an object:
// TestComposedObjectsReadThroughAccessors enforces it. Decoding
// writes into the request, so one request is read by one goroutine at a
// time (as RunFunction does).

// errEncodedTwice is returned by keepEncoded for a second occurrence of an
// object it already keeps: the whole request then goes to protobuf-go.
var errEncodedTwice = errors.New("object given twice")

// MaxEncodedDepth is the deepest nesting of Structs and lists
// wellFormedStruct accepts, below the Struct or Value it is given: a whole
// object nested deeper is decoded by protobuf-go rather than vtprotobuf.
const MaxEncodedDepth = 100

// keepEncoded stores field, the whole field (tag, length, bytes) holding
// the encoded object of the Resource m, in m's unknown fields when m holds
// no decoded object. It reports whether it did; the caller decodes the
// object otherwise. A second encoded object for m is an error. field is
// kept, not copied: it points into the request's bytes, as the decoded
// strings do. The object is not checked: as with any field protobuf does
// not know, its bytes are only known to fit in the message. What a
// function reads of it is checked when read (see the raw readers and
// Decode). What it does not read is not looked at: an earlier
// step's desired object goes back to Crossplane byte for byte (whose
// protobuf-go decoding rejects malformed bytes), an observed one is
// dropped with the request.
func keepEncoded(m protoreflect.Message, field []byte) (bool, error) {
	r, ok := m.Interface().(*fnv1.Resource)
	if !ok || r.Resource != nil {
		return false, nil
	}
	if _, kept := encodedRecord(r); kept {
		return false, errEncodedTwice
	}
	if u := m.GetUnknown(); len(u) > 0 {
		m.SetUnknown(append(u[:len(u):len(u)], field...))
	} else {
		// Capacity capped: an append to the unknown fields copies rather
		// than overwrite the request bytes that follow.
		m.SetUnknown(field[:len(field):len(field)])
	}
	return true, nil
}

// encodedObject returns the object r keeps encoded (see keepEncoded), and
// whether it keeps one.
func encodedObject(r *fnv1.Resource) ([]byte, bool) {
	if r.GetResource() != nil {
		return nil, false // replaced in place: see Decode
	}
	return encodedRecord(r)
}

// encodedRecord is encodedObject whether or not r also holds a decoded
// object.
func encodedRecord(r *fnv1.Resource) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	u := r.ProtoReflect().GetUnknown()
	for len(u) > 0 {
		num, typ, n := protowire.ConsumeTag(u)
		if n < 0 {
			return nil, false
		}
		if num == fieldResourceObject.Number() && typ == protowire.BytesType {
			v, vn := protowire.ConsumeBytes(u[n:])
			return v, vn >= 0
		}
		vn := protowire.ConsumeFieldValue(num, typ, u[n:])
		if vn < 0 {
			return nil, false
		}
		u = u[n+vn:]
	}
	return nil, false
}

// Decode decodes the object r keeps encoded into r.Resource and drops
// the record from r's unknown fields, then returns r.Resource (nil for a
// nil r). When code replaced the object in place (set r.Resource while one
// was kept encoded), the new object wins and the encoded one is dropped.
// Bytes in the shape protobuf-go writes (wellFormedStruct) are decoded by
// vtprotobuf, any others by protobuf-go. Bytes that are no Struct at all
// panic with a MalformedObjectError, rather than show the function an
// empty object (or pass an empty object on as desired): the served
// function answers the call with the error (GuardMalformedObjects), as
// protobuf-go's decoding of the request would have. (Like the rest of the
// codec, it accepts strings that are not valid UTF-8, which protobuf-go
// rejects.)
func Decode(r *fnv1.Resource) *structpb.Struct {
	v, ok := encodedRecord(r)
	if !ok {
		return r.GetResource()
	}
	if r.Resource != nil {
		// Replaced in place: the new object wins.
		r.ProtoReflect().SetUnknown(withoutEncodedObject(r.ProtoReflect().GetUnknown()))
		return r.Resource
	}
	s := &structpb.Struct{}
	if !wellFormedStruct(v, 0) || (*vtstructpb.Struct)(s).UnmarshalVTUnsafe(v) != nil {
		s = &structpb.Struct{}
		if err := proto.Unmarshal(v, s); err != nil {
			panic(&MalformedObjectError{err: err})
		}
	}
	r.ProtoReflect().SetUnknown(withoutEncodedObject(r.ProtoReflect().GetUnknown()))
	r.Resource = s
	return s
}

// MalformedObjectError is the panic value of reading an object of a
// request (a composed or composite resource's) whose bytes are not a
// google.protobuf.Struct: UnmarshalRequest keeps objects unchecked, so the
// error shows when a function reads one. GuardMalformedObjects turns it
// into the call's error.
type MalformedObjectError struct{ err error }

// Error names the failure and protobuf-go's decoding error.
func (e *MalformedObjectError) Error() string {
	return "the request holds an object that is not a valid google.protobuf.Struct: " + e.err.Error()
}

// Unwrap returns protobuf-go's decoding error.
func (e *MalformedObjectError) Unwrap() error { return e.err }

// withoutEncodedObject returns the unknown fields u of a Resource without
// the object kept encoded (a copy: u is left as it is).
func withoutEncodedObject(u []byte) []byte {
	var rest []byte
	for len(u) > 0 {
		num, typ, n := protowire.ConsumeTag(u)
		if n < 0 {
			return append(rest, u...)
		}
		vn := protowire.ConsumeFieldValue(num, typ, u[n:])
		if vn < 0 {
			return append(rest, u...)
		}
		if num != fieldResourceObject.Number() || typ != protowire.BytesType {
			rest = append(rest, u[:n+vn]...)
		}
		u = u[n+vn:]
	}
	return rest
}

// Single-byte tags (field number << 3 | wire type) of the shape
// wellFormedStruct accepts: protobuf-go writes every tag of these small
// field numbers in one byte.
const (
	tagStructEntry = 1<<3 | 2 // Struct.fields entry; also ListValue.values
	tagEntryKey    = 1<<3 | 2 // a map entry's key (any protobuf map)
	tagEntryValue  = 2<<3 | 2 // a map entry's value
	tagNullValue   = 1<<3 | 0
	tagNumberValue = 2<<3 | 1
	tagStringValue = 3<<3 | 2
	tagBoolValue   = 4<<3 | 0
	tagStructValue = 5<<3 | 2
	tagListValue   = 6<<3 | 2
)

// wellFormedStruct reports whether b is a google.protobuf.Struct in the
// shape protobuf-go writes, at most MaxEncodedDepth deep: only map entries
// (field 1), each a key (field 1, a string) followed by a value (field 2);
// each google.protobuf.Value with exactly one of its six fields, of the
// right wire type; lists (ListValue) of values (field 1); every tag in one
// byte. It allocates nothing. It decides whether vtprotobuf may decode a
// Struct (vtprotobuf reads some other shapes differently from protobuf-go)
// and checks each value a raw reader decodes.
func wellFormedStruct(b []byte, depth int) bool {
	if depth > MaxEncodedDepth {
		return false
	}
	for i := 0; i < len(b); {
		at, entryEnd := fieldAt(b, i, tagStructEntry)
		if at < 0 {
			return false
		}
		entry := b[:entryEnd]
		keyAt, keyEnd := fieldAt(entry, at, tagEntryKey)
		if keyAt < 0 {
			return false
		}
		valueAt, valueEnd := fieldAt(entry, keyEnd, tagEntryValue)
		if valueAt < 0 || valueEnd != entryEnd || !wellFormedValue(entry[valueAt:], depth) {
			return false
		}
		i = entryEnd
	}
	return true
}

// wellFormedValue reports whether b is a google.protobuf.Value with exactly
// one field set, of its wire type, nested values well formed.
func wellFormedValue(b []byte, depth int) bool {
	if len(b) < 2 {
		return false
	}
	switch b[0] {
	case tagNullValue, tagBoolValue:
		_, n := protowire.ConsumeVarint(b[1:])
		return n > 0 && 1+n == len(b)
	case tagNumberValue:
		return len(b) == 9
	case tagStringValue, tagStructValue, tagListValue:
		at, end := fieldAt(b, 0, b[0])
		if at < 0 || end != len(b) {
			return false
		}
		switch b[0] {
		case tagStructValue:
			return wellFormedStruct(b[at:], depth+1)
		case tagListValue:
			return wellFormedList(b[at:], depth+1)
		}
		return true
	}
	return false
}

// wellFormedList reports whether b is a google.protobuf.ListValue of
// well-formed values.
func wellFormedList(b []byte, depth int) bool {
	if depth > MaxEncodedDepth {
		return false
	}
	for i := 0; i < len(b); {
		at, end := fieldAt(b, i, tagStructEntry)
		if at < 0 || !wellFormedValue(b[at:end], depth) {
			return false
		}
		i = end
	}
	return true
}

// fieldAt reads the length-delimited field with the one-byte tag at b[i:]
// and returns where its payload starts and ends, or at < 0 when b has no
// such field there (another tag, a length of more than five varint bytes
// or past the end). Small enough to be inlined.
func fieldAt(b []byte, i int, tag byte) (at, end int) {
	if i >= len(b) || b[i] != tag {
		return -1, 0
	}
	size := 0
	for n := uint(0); n < 5; n++ {
		i++
		if i >= len(b) {
			break
		}
		size |= int(b[i]&0x7f) << (7 * n)
		if b[i] < 0x80 {
			if size > len(b)-i-1 {
				break
			}
			return i + 1, i + 1 + size
		}
	}
	return -1, 0
}

// lengthDelimited reads, from the start of b, a length-delimited field
// with the one-byte tag: its payload and what follows it; ok is false when
// b starts otherwise or is cut short.
func lengthDelimited(b []byte, tag byte) (payload, rest []byte, ok bool) {
	at, end := fieldAt(b, 0, tag)
	if at < 0 {
		return nil, nil, false
	}
	return b[at:end], b[end:], true
}

// The raw readers below read an object kept encoded where it lies. They
// trust nothing: UnmarshalRequest keeps an object without checking it, as
// protobuf keeps a field it does not know. Each reader checks the shape of
// what it walks (every entry of each Struct on its path: a key, then a
// value, one-byte tags, lengths within bounds; each Value on the path one
// field) and the whole of each value it decodes (wellFormedValue). When
// the bytes it walks are in any other shape (protobuf that protobuf-go
// writes differently, or no protobuf at all) it reports !ok, and the
// accessor decodes the whole object instead (Decode), which decodes
// or rejects it as protobuf-go does.

// rawValueAt returns the value at path (map keys, at least one) of the
// encoded Struct b, decoded, or nil when the path is absent — what ValueAt
// returns for the decoded Struct, without decoding anything but the value
// found. A key given twice in a Struct takes its last value, as decoding
// does. ok is false when b is not in the shape it reads.
func rawValueAt(b []byte, path []string) (v *structpb.Value, ok bool) {
	field, found, ok := rawFieldAt(b, path)
	if !ok || !found {
		return nil, ok
	}
	return rawDecodeValue(field)
}

// rawFieldAt returns the encoded Value at path (map keys, at least one) of
// the encoded Struct b, undecoded and unchecked, and whether there is one.
// ok is false when b is not in the shape it reads.
func rawFieldAt(b []byte, path []string) (value []byte, found, ok bool) {
	for i, key := range path {
		field, found, ok := rawField(b, key)
		if !ok || !found || i == len(path)-1 {
			return field, found, ok
		}
		st, isStruct, ok := rawValueOf(field, tagStructValue)
		if !ok || !isStruct {
			return nil, false, ok // not a Struct: nothing below it
		}
		b = st
	}
	return nil, false, true
}

// rawStringAt returns the string at path (map keys, at least one) of the
// encoded Struct b: "" when the path is absent or its value another kind,
// as GetStringValue of rawValueAt's value gives. The string points into b,
// like every string UnmarshalRequest decodes. ok is false when b is not in
// the shape it reads.
func rawStringAt(b []byte, path []string) (string, bool) {
	field, found, ok := rawFieldAt(b, path)
	if !ok || !found {
		return "", ok
	}
	s, isString, ok := rawValueOf(field, tagStringValue)
	if !isString || len(s) == 0 {
		return "", ok
	}
	return unsafe.String(&s[0], len(s)), true
}

// rawNumberAt returns the number at path (map keys, at least one) of the
// encoded Struct b: 0 when the path is absent or its value another kind,
// as GetNumberValue of rawValueAt's value gives. ok is false when b is not
// in the shape it reads.
func rawNumberAt(b []byte, path []string) (float64, bool) {
	field, found, ok := rawFieldAt(b, path)
	if !ok || !found {
		return 0, ok
	}
	if len(field) == 9 && field[0] == tagNumberValue {
		return math.Float64frombits(binary.LittleEndian.Uint64(field[1:])), true
	}
	return 0, wellFormedValue(field, 0)
}

// rawDecodeValue decodes the encoded Value v, when it is well formed.
func rawDecodeValue(v []byte) (*structpb.Value, bool) {
	if !wellFormedValue(v, 0) {
		return nil, false
	}
	out := &structpb.Value{}
	if err := (*vtstructpb.Value)(out).UnmarshalVTUnsafe(v); err != nil {
		return nil, false
	}
	return out, true
}

// rawValueOf returns the payload of the encoded Value v when v's one field
// has the (length-delimited) tag; is is false when v is a well-formed Value
// of another kind, ok false when v is not well formed.
func rawValueOf(v []byte, tag byte) (payload []byte, is, ok bool) {
	if p, rest, found := lengthDelimited(v, tag); found && len(rest) == 0 {
		return p, true, true
	}
	return nil, false, wellFormedValue(v, 0)
}

// rawValueWhere returns the value of key in the encoded Struct b, decoded,
// or nil when there is none; a value that is a Struct is decoded only in
// the members keep accepts. A key given twice takes its last value, as
// decoding does. ok is false when b is not in the shape it reads.
func rawValueWhere(b []byte, key string, keep func(key string) bool) (v *structpb.Value, ok bool) {
	field, found, ok := rawField(b, key)
	if !ok || !found {
		return nil, ok
	}
	st, isStruct, ok := rawValueOf(field, tagStructValue)
	if !ok || !isStruct {
		if !ok {
			return nil, false
		}
		return rawDecodeValue(field)
	}
	out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for len(st) > 0 {
		k, value, rest, ok := rawEntry(st)
		if !ok {
			return nil, false
		}
		st = rest
		// The key points into b, as the strings UnmarshalVTUnsafe decodes.
		key := unsafe.String(unsafe.SliceData(k), len(k))
		if !keep(key) {
			continue
		}
		item, ok := rawDecodeValue(value)
		if !ok {
			return nil, false
		}
		out.Fields[key] = item
	}
	return structpb.NewStructValue(out), true
}

// rawCondition is ObservedConditionStatus on the encoded object b: it
// reads status.conditions item by item, comparing each "type" where it
// lies, and decodes only the three strings of the condition found (the
// first of type typ). ok is false when b is not in the shape it reads.
func rawCondition(b []byte, typ string) (status, reason, message string, ok bool) {
	st, ok := rawStructAt(b, "status")
	if !ok || st == nil {
		return "", "", "", ok
	}
	field, found, ok := rawField(st, "conditions")
	if !ok || !found {
		return "", "", "", ok
	}
	list, isList, ok := rawValueOf(field, tagListValue)
	if !ok || !isList {
		return "", "", "", ok
	}
	for len(list) > 0 {
		item, rest, found := lengthDelimited(list, tagStructEntry)
		if !found {
			return "", "", "", false
		}
		list = rest
		c, isStruct, ok := rawValueOf(item, tagStructValue)
		if !ok {
			return "", "", "", false
		}
		if !isStruct {
			if typ == "" {
				return "", "", "", true // an item that is no object has no type, as decoded
			}
			continue
		}
		t, ok := rawStringAt(c, []string{"type"})
		if !ok {
			return "", "", "", false
		}
		if t != typ {
			continue
		}
		var okStatus, okReason, okMessage bool
		status, okStatus = rawStringAt(c, []string{"status"})
		reason, okReason = rawStringAt(c, []string{"reason"})
		message, okMessage = rawStringAt(c, []string{"message"})
		return status, reason, message, okStatus && okReason && okMessage
	}
	return "", "", "", true
}

// rawStructAt returns the encoded Struct that is the value of key in the
// encoded Struct b, nil when key is absent or its value another kind.
func rawStructAt(b []byte, key string) (st []byte, ok bool) {
	field, found, ok := rawField(b, key)
	if !ok || !found {
		return nil, ok
	}
	st, isStruct, ok := rawValueOf(field, tagStructValue)
	if !isStruct {
		return nil, ok
	}
	return st, true
}

// rawField returns the encoded Value of key in the encoded Struct b (the
// last entry with that key), and whether there is one; ok is false when
// an entry of b is not a key followed by a value.
func rawField(b []byte, key string) (value []byte, found, ok bool) {
	for len(b) > 0 {
		k, v, rest, ok := rawEntry(b)
		if !ok {
			return nil, false, false
		}
		if string(k) == key {
			value, found = v, true
		}
		b = rest
	}
	return value, found, true
}

// rawEntry reads the map entry b starts with: its key, its encoded Value
// and what follows the entry; ok is false when b does not start with an
// entry of exactly a key and a value.
func rawEntry(b []byte) (key, value, rest []byte, ok bool) {
	entry, rest, ok := lengthDelimited(b, tagStructEntry)
	if !ok {
		return nil, nil, nil, false
	}
	key, entry, ok = lengthDelimited(entry, tagEntryKey)
	if !ok {
		return nil, nil, nil, false
	}
	value, entry, ok = lengthDelimited(entry, tagEntryValue)
	return key, value, rest, ok && len(entry) == 0
}

// DecodeKeptObjects decodes every object state keeps encoded (its composed
// resources' and its composite resource's, see UnmarshalRequest, and those
// NewResource encoded), so that state equals what proto.Unmarshal gives for
// the same bytes (which must be valid UTF-8: see Decode). It panics
// with a MalformedObjectError when an object is no Struct. For tests and tools that read a whole state; a function
// reads objects through function.Request instead, which decode only what they return.
func DecodeKeptObjects(state *fnv1.State) {
	Decode(state.GetComposite())
	for _, r := range state.GetResources() {
		Decode(r)
	}
}

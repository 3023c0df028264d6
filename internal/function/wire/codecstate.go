package wire

import (
	"errors"
	"unicode/utf8"
	"unsafe"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	vtstructpb "github.com/planetscale/vtprotobuf/types/known/structpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// The State and Resource messages carry every composed resource of a
// response; StructCodec encodes them by hand, at their exact size computed
// first, rather than through protoreflect with a buffer per message that is
// then copied into its parent's. Field numbers as in the function
// protocol (apiextensions.fn.proto.v1): State.composite = 1,
// State.resources = 2 (map<string, Resource>); Resource.resource = 1,
// Resource.connection_details = 2 (map<string, bytes>), Resource.ready = 3
// (enum); a map entry's key and value are tagEntryKey and tagEntryValue.
// Output is what proto.Marshal writes, map entries in Go's map order.
const (
	tagStateComposite      = 1<<3 | 2
	tagStateResources      = 2<<3 | 2
	tagResourceObject      = 1<<3 | 2
	tagResourceConnDetails = 2<<3 | 2
	tagResourceReady       = 3<<3 | 0
)

// stateShapeKnown reports whether State and Resource have exactly the
// fields above: a later protocol version with more falls back to the
// generic encoding instead of dropping them.
var stateShapeKnown = func() bool {
	has := func(md protoreflect.MessageDescriptor, names ...protoreflect.Name) bool {
		if md.Fields().Len() != len(names) {
			return false
		}
		for i, n := range names {
			fd := md.Fields().ByName(n)
			if fd == nil || int(fd.Number()) != i+1 {
				return false
			}
		}
		return true
	}
	return has((&fnv1.State{}).ProtoReflect().Descriptor(), "composite", "resources") &&
		has((&fnv1.Resource{}).ProtoReflect().Descriptor(), "resource", "connection_details", "ready")
}()

// resourceSize is the encoded size of r, with the size of its object
// (-1 when it has none): the object's is needed again to encode it.
func resourceSize(r *fnv1.Resource) (size, objectSize int) {
	objectSize = -1
	if r.Resource != nil {
		objectSize = (*vtstructpb.Struct)(r.Resource).SizeVT()
		size += 1 + protowire.SizeBytes(objectSize)
	}
	for k, v := range r.ConnectionDetails {
		entry := 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(len(v))
		size += 1 + protowire.SizeBytes(entry)
	}
	if r.Ready != 0 {
		size += 1 + protowire.SizeVarint(uint64(r.Ready))
	}
	return size + len(resourceUnknown(r)), objectSize
}

// appendResource appends r's encoding (without a length prefix), its
// object's size given by resourceSize.
func appendResource(b []byte, r *fnv1.Resource, objectSize int) ([]byte, error) {
	if objectSize >= 0 {
		b = append(b, tagResourceObject)
		b = protowire.AppendVarint(b, uint64(objectSize))
		start := len(b)
		b = append(b, make([]byte, objectSize)...)
		if err := marshalStructSized((*vtstructpb.Struct)(r.Resource), b[start:]); err != nil {
			return nil, err
		}
	}
	for k, v := range r.ConnectionDetails {
		entry := 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(len(v))
		b = append(b, tagResourceConnDetails)
		b = protowire.AppendVarint(b, uint64(entry))
		b = append(b, tagEntryKey)
		b = protowire.AppendString(b, k)
		b = append(b, tagEntryValue)
		b = protowire.AppendBytes(b, v)
	}
	if r.Ready != 0 {
		b = append(b, tagResourceReady)
		b = protowire.AppendVarint(b, uint64(r.Ready))
	}
	return append(b, resourceUnknown(r)...), nil
}

// resourceUnknown is r's unknown fields as encoded: without an object kept
// encoded (encodedobjects.go) when r also holds a decoded one, set by code
// that replaced the object in place: that one wins, as it does when read.
func resourceUnknown(r *fnv1.Resource) []byte {
	u := r.ProtoReflect().GetUnknown()
	if r.Resource == nil || len(u) == 0 {
		return u
	}
	return withoutEncodedObject(u)
}

// appendResourceField appends r with its length prefix.
func appendResourceField(b []byte, r *fnv1.Resource) ([]byte, error) {
	size, objectSize := resourceSize(r)
	b = protowire.AppendVarint(b, uint64(size))
	return appendResource(b, r, objectSize)
}

// stateEntry is one composed resource of a State being encoded.
type stateEntry struct {
	key        string
	r          *fnv1.Resource
	size       int
	objectSize int
}

// stateSize is the encoded size of s, with the sizes of its composite
// resource and of each composed resource (in the order they are written).
func stateSize(s *fnv1.State) (size int, composite stateEntry, entries []stateEntry) {
	if s.Composite != nil {
		composite.size, composite.objectSize = resourceSize(s.Composite)
		size += 1 + protowire.SizeBytes(composite.size)
	}
	entries = make([]stateEntry, 0, len(s.Resources))
	for k, r := range s.Resources {
		e := stateEntry{key: k, r: r, objectSize: -1}
		if r != nil {
			e.size, e.objectSize = resourceSize(r)
		}
		entries = append(entries, e)
		entry := 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(e.size)
		size += 1 + protowire.SizeBytes(entry)
	}
	return size + len(s.ProtoReflect().GetUnknown()), composite, entries
}

// appendStateField appends s with its length prefix: every size is
// computed once, then every byte written once.
func appendStateField(b []byte, s *fnv1.State) ([]byte, error) {
	size, composite, entries := stateSize(s)
	b = protowire.AppendVarint(b, uint64(size))
	var err error
	if s.Composite != nil {
		b = append(b, tagStateComposite)
		b = protowire.AppendVarint(b, uint64(composite.size))
		if b, err = appendResource(b, s.Composite, composite.objectSize); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		entry := 1 + protowire.SizeBytes(len(e.key)) + 1 + protowire.SizeBytes(e.size)
		b = append(b, tagStateResources)
		b = protowire.AppendVarint(b, uint64(entry))
		b = append(b, tagEntryKey)
		b = protowire.AppendString(b, e.key)
		b = append(b, tagEntryValue)
		b = protowire.AppendVarint(b, uint64(e.size))
		if e.r != nil {
			if b, err = appendResource(b, e.r, e.objectSize); err != nil {
				return nil, err
			}
		}
	}
	return append(b, s.ProtoReflect().GetUnknown()...), nil
}

// errUnusualShape is returned by the hand decoding of a State for bytes in
// a shape other than the one protobuf-go writes: the generic decoding then
// takes the State.
var errUnusualShape = errors.New("not in the shape protobuf-go writes")

// unmarshalState decodes b, an observed or desired State of a request,
// into s, which must be empty, by hand: its composite resource (field 1)
// and its composed resources (field 2, map entries of a key then a value),
// each object kept encoded (keepEncoded), the composite's only when
// keepComposite; the rest of each Resource (connection details, readiness)
// decoded. It returns errUnusualShape, s then partly filled, for anything
// else (another field, another wire type, a field given twice, an entry in
// another shape), and the caller decodes b generically; what it decodes
// equals what protobuf-go decodes (FuzzStructCodec), except that the
// connection details' values point into b rather than being copies.
func unmarshalState(b []byte, s *fnv1.State, keepComposite bool) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return errUnusualShape
		}
		v, vn := protowire.ConsumeBytes(b[n:])
		if vn < 0 {
			return errUnusualShape
		}
		b = b[n+vn:]
		switch num {
		case 1:
			if s.Composite != nil {
				return errUnusualShape
			}
			s.Composite = &fnv1.Resource{}
			if err := unmarshalResource(v, s.Composite, keepComposite); err != nil {
				return err
			}
		case 2:
			key, value, ok := mapEntry(v)
			if !ok {
				return errUnusualShape
			}
			r := &fnv1.Resource{}
			if err := unmarshalResource(value, r, true); err != nil {
				return err
			}
			if s.Resources == nil {
				s.Resources = map[string]*fnv1.Resource{}
			}
			s.Resources[key] = r // a later entry wins, as in protobuf-go
		default:
			return errUnusualShape
		}
	}
	return nil
}

// unmarshalResource decodes b into r (empty) by hand, keeping its object
// encoded when keep (see unmarshalState).
func unmarshalResource(b []byte, r *fnv1.Resource, keep bool) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errUnusualShape
		}
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, vn := protowire.ConsumeBytes(b[n:])
			if vn < 0 || r.Resource != nil {
				return errUnusualShape
			}
			field := b[:n+vn]
			b = b[n+vn:]
			if keep {
				if kept, err := keepEncoded(r.ProtoReflect(), field); err != nil || !kept {
					return errUnusualShape
				}
				continue
			}
			s := &structpb.Struct{}
			if err := unmarshalValueMessage(v, s.ProtoReflect(), modeEager); err != nil {
				return errUnusualShape
			}
			r.Resource = s
		case num == 2 && typ == protowire.BytesType:
			v, vn := protowire.ConsumeBytes(b[n:])
			if vn < 0 {
				return errUnusualShape
			}
			b = b[n+vn:]
			key, value, ok := mapEntry(v)
			if !ok {
				return errUnusualShape
			}
			if r.ConnectionDetails == nil {
				r.ConnectionDetails = map[string][]byte{}
			}
			// Points into the request's bytes, as the decoded strings do.
			r.ConnectionDetails[key] = value[:len(value):len(value)]
		case num == 3 && typ == protowire.VarintType:
			v, vn := protowire.ConsumeVarint(b[n:])
			if vn < 0 {
				return errUnusualShape
			}
			b = b[n+vn:]
			r.Ready = fnv1.Ready(int32(v))
		default:
			return errUnusualShape
		}
	}
	return nil
}

// mapEntry reads a map<string, bytes or message> entry in the shape
// protobuf-go writes: a key (field 1) then a value (field 2), nothing else;
// the key valid UTF-8, as protobuf-go requires of a string.
func mapEntry(b []byte) (key string, value []byte, ok bool) {
	k, rest, ok := lengthDelimited(b, tagEntryKey)
	if !ok || !utf8.Valid(k) {
		return "", nil, false
	}
	value, rest, ok = lengthDelimited(rest, tagEntryValue)
	if !ok || len(rest) != 0 {
		return "", nil, false
	}
	return unsafe.String(unsafe.SliceData(k), len(k)), value, true
}

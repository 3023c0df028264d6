package wire

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	vtstructpb "github.com/planetscale/vtprotobuf/types/known/structpb"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// StructCodec is the gRPC codec the function binaries serve with: the wire
// format is protobuf, unchanged, but every google.protobuf.Struct inside a
// message is decoded and encoded by vtprotobuf's generated code for the
// well-known Struct types instead of protobuf-go's reflection-driven map
// handling, which spends most of its time on per-entry allocations. A
// RunFunctionRequest is almost all Struct (every observed and desired
// object, the XR, the input): on the reference bench input this halves the
// decode and quarters the encode of a served call (see BenchmarkWire).
//
// The messages it produces are the same Go types protobuf-go produces
// (fnv1.RunFunctionRequest with *structpb.Struct fields), so the SDK's
// request and response helpers see no difference; TestStructCodec*
// compares both paths on every bench input and a fuzz target on arbitrary
// bytes. vtprotobuf decodes only Structs in the shape protobuf-go writes
// (wellFormedStruct); any other Struct goes to protobuf-go. Two
// differences are deliberate, in input no protobuf-go client (Crossplane)
// can send: vtprotobuf accepts invalid UTF-8 inside a Struct string, which
// protobuf-go refuses to encode, and encodes a Struct, Value or ListValue
// without the unknown fields it may carry (only a decoded odd Struct
// does; Structs a function builds never have any). Unknown fields of the
// function protocol's own messages are kept.
//
// Fields that hold no Struct, at any depth, and Structs inside a real
// oneof are left to protobuf-go in one proto.Unmarshal / proto.Marshal of
// the rest of the message.
type StructCodec struct {
	// fallback is the codec registered for "proto" before this one: for
	// values that are not protobuf-go messages (protoadapt v1 messages).
	fallback encoding.CodecV2
}

var registerCodec sync.Once

// RegisterStructCodec installs StructCodec as this process's gRPC "proto"
// codec (what both ends of a Crossplane function call name in their
// content-subtype). It must run before the gRPC server starts, as gRPC's
// encoding registry is not safe for concurrent use; Main calls it.
func RegisterStructCodec() {
	registerCodec.Do(func() {
		encoding.RegisterCodecV2(&StructCodec{fallback: encoding.GetCodecV2(grpcproto.Name)})
	})
}

// Name is the content-subtype this codec serves: "proto".
func (c *StructCodec) Name() string { return grpcproto.Name }

// Marshal encodes v, a protobuf message, into its wire format, in a buffer
// of responseBuffers sized by messageSize.
func (c *StructCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return c.fallback.Marshal(v)
	}
	if simpleWire {
		b, err := proto.Marshal(m)
		return mem.BufferSlice{mem.SliceBuffer(b)}, err
	}
	// Written into a buffer of responseBuffers, which gRPC returns to it
	// once the message is sent: no fresh, zeroed half-megabyte per
	// response.
	size := messageSize(m.ProtoReflect())
	pool := responseBuffers
	buf := pool.Get(size)
	b, err := appendMessage((*buf)[:0], m.ProtoReflect())
	if err != nil {
		pool.Put(buf)
		return nil, err
	}
	if len(b) != size || (size > 0 && &b[0] != &(*buf)[0]) {
		// Not reached (messageSize is exact; TestMessageSizeExact). b may
		// share buf's memory: neither goes back to the pool.
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// responseBuffers is the pool StructCodec.Marshal writes messages into;
// gRPC puts a buffer back once its message is sent.
var responseBuffers = &dirtyBufferPool{}

// maxPooledMessage is the largest buffer responseBuffers keeps, in bytes.
const maxPooledMessage = 8 << 20

// dirtyBufferPool is a gRPC mem.BufferPool whose buffers are not zeroed
// when handed out again (gRPC's default pool clears a buffer's whole
// capacity, a megabyte for a half-megabyte response, on every Get): its
// user overwrites every byte it uses.
type dirtyBufferPool struct{ pool sync.Pool }

// Get returns a buffer of length bytes, with stale contents.
func (p *dirtyBufferPool) Get(length int) *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok && cap(*b) >= length {
		*b = (*b)[:length]
		return b
	}
	// Room for a slightly larger message next time.
	b := make([]byte, length, length+length/8)
	return &b
}

// Put keeps b for a later Get, unless it is larger than maxPooledMessage.
func (p *dirtyBufferPool) Put(b *[]byte) {
	if cap(*b) <= maxPooledMessage {
		p.pool.Put(b)
	}
}

// Unmarshal decodes the wire bytes data into v, a protobuf message.
func (c *StructCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.fallback.Unmarshal(data, v)
	}
	// A fresh copy, never returned to a pool: the decoded Structs' strings
	// and the objects kept encoded point into it.
	if req, ok := m.(*fnv1.RunFunctionRequest); ok {
		return UnmarshalRequest(data.Materialize(), req)
	}
	return UnmarshalMessage(data.Materialize(), m.ProtoReflect())
}

// structName is the full name of google.protobuf.Struct.
var structName = (&structpb.Struct{}).ProtoReflect().Descriptor().FullName()

// holdsStruct reports whether field fd is a message field (singular, list
// or map value) outside a real oneof whose message is, or contains at any
// depth, a google.protobuf.Struct: the fields StructCodec walks itself.
// Results are cached per field; descriptors are immutable.
func holdsStruct(fd protoreflect.FieldDescriptor) bool {
	if v, ok := holdsStructCache.Load(fd); ok {
		return v.(bool)
	}
	v := fieldHoldsStruct(fd, map[protoreflect.FullName]bool{})
	holdsStructCache.Store(fd, v)
	return v
}

var holdsStructCache sync.Map // protoreflect.FieldDescriptor → bool

func fieldHoldsStruct(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]bool) bool {
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return false
	}
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Kind() != protoreflect.MessageKind {
		return false
	}
	md := fd.Message()
	if md.FullName() == structName {
		return true
	}
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		if fieldHoldsStruct(fields.Get(i), seen) {
			return true
		}
	}
	return false
}

// UnmarshalMessage decodes the protobuf wire bytes b into m, which must be
// empty, as proto.Unmarshal does: the fields that hold a
// google.protobuf.Struct through unmarshalFields (Structs with vtprotobuf),
// every other field, including unknown ones, with protobuf-go. Input that
// path does not take as is (invalid wire format, a known field with another
// wire type, a map entry with unknown fields) is decoded again, whole, by
// protobuf-go, whose result or error stands. The decoded Structs' strings
// point into b (vtprotobuf's UnmarshalVTUnsafe): b must not change while m
// is in use.
func UnmarshalMessage(b []byte, m protoreflect.Message) error {
	return unmarshalOrFallBack(b, m, modeEager)
}

// UnmarshalRequest decodes the protobuf wire bytes b into req, which must
// be empty, as UnmarshalMessage does, except that the object of each
// composed resource, observed and desired (observed.resources[name].resource,
// desired.resources[name].resource), and the observed composite resource's
// (observed.composite.resource) are left encoded: kept unchecked, as
// protobuf keeps a field it does not know, in the Resource's unknown
// fields (encodedobjects.go). An observed object is decoded when a function reads
// it through function.Request (Decode, Value and the other reads of this
// package), an earlier step's desired object through Decode;
// one the function does not read goes back into the response as it came
// (proto.Marshal and AppendMessage write unknown fields unchanged). A
// function reads a handful of the observed objects and few of their
// fields, and passes the earlier steps' desired objects on; together they
// are most of the bytes of a Crossplane request (334 + 47 of 448 KB for the
// addons step of the reference bench input), so a served call does not
// builds and re-encodes tens of thousands of structpb values it never
// looks at (nor the XR's Crossplane-written spec.resourceRefs and status),
// nor even checks it. What a function reads is checked as it is read: an
// object that is no google.protobuf.Struct fails the call when read
// (MalformedObjectError); an earlier step's desired object not read goes
// back to Crossplane as it came, for its protobuf-go decoding to reject,
// and an observed one not read is dropped unseen. The desired XR, required resources, input and context are decoded
// as UnmarshalMessage does. b must not change while req is in
// use.
func UnmarshalRequest(b []byte, req *fnv1.RunFunctionRequest) error {
	if simpleWire {
		return UnmarshalMessage(b, req.ProtoReflect())
	}
	return unmarshalOrFallBack(b, req.ProtoReflect(), modeRequest)
}

// unmarshalOrFallBack decodes b into m in mode, or, when that path does not
// take b as is, decodes it again, whole, with protobuf-go.
func unmarshalOrFallBack(b []byte, m protoreflect.Message, mode decodeMode) error {
	if err := unmarshalFields(b, m, mode); err != nil {
		proto.Reset(m.Interface())
		return proto.Unmarshal(b, m.Interface())
	}
	return nil
}

// decodeMode says where in a RunFunctionRequest unmarshalFields is, for
// the composed resources' objects UnmarshalRequest keeps encoded.
type decodeMode uint8

const (
	// modeEager decodes every field.
	modeEager decodeMode = iota
	// modeRequest is a RunFunctionRequest decoded by UnmarshalRequest.
	modeRequest
	// modeObservedState is its observed State, modeDesiredState its
	// desired State.
	modeObservedState
	modeDesiredState
	// modeKeptObject is a Resource whose object is kept encoded: one of
	// those States' composed resources, or the observed composite resource.
	modeKeptObject
)

// Descriptors of the fields on the way to a composed resource's object.
var (
	fieldRequestObserved = (&fnv1.RunFunctionRequest{}).ProtoReflect().Descriptor().Fields().ByName("observed")
	fieldRequestDesired  = (&fnv1.RunFunctionRequest{}).ProtoReflect().Descriptor().Fields().ByName("desired")
	fieldStateResources  = (&fnv1.State{}).ProtoReflect().Descriptor().Fields().ByName("resources")
	fieldStateComposite  = (&fnv1.State{}).ProtoReflect().Descriptor().Fields().ByName("composite")
	fieldResourceObject  = (&fnv1.Resource{}).ProtoReflect().Descriptor().Fields().ByName("resource")
)

// childMode is the mode of field fd of a message decoded in mode.
func (mode decodeMode) childMode(fd protoreflect.FieldDescriptor) decodeMode {
	switch {
	case mode == modeRequest && fd == fieldRequestObserved:
		return modeObservedState
	case mode == modeRequest && fd == fieldRequestDesired:
		return modeDesiredState
	case (mode == modeObservedState || mode == modeDesiredState) && fd == fieldStateResources,
		mode == modeObservedState && fd == fieldStateComposite:
		return modeKeptObject
	}
	return modeEager
}

// unmarshalFields merges b into m field by field (see UnmarshalMessage and
// UnmarshalRequest for mode).
func unmarshalFields(b []byte, m protoreflect.Message, mode decodeMode) error {
	if mode == modeObservedState || mode == modeDesiredState {
		if s, ok := m.Interface().(*fnv1.State); ok && stateShapeKnown && proto.Size(s) == 0 {
			if unmarshalState(b, s, mode == modeObservedState) == nil {
				return nil
			}
			proto.Reset(s) // an unusual shape: decoded below instead
		}
	}
	fields := m.Descriptor().Fields()
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%s: %w", m.Descriptor().FullName(), protowire.ParseError(n))
		}
		fd := fields.ByNumber(num)
		if fd == nil || typ != protowire.BytesType || !holdsStruct(fd) {
			vn := protowire.ConsumeFieldValue(num, typ, b[n:])
			if vn < 0 {
				return fmt.Errorf("%s field %d: %w", m.Descriptor().FullName(), num, protowire.ParseError(vn))
			}
			rest = append(rest, b[:n+vn]...)
			b = b[n+vn:]
			continue
		}
		v, vn := protowire.ConsumeBytes(b[n:])
		if vn < 0 {
			return fmt.Errorf("%s field %d: %w", m.Descriptor().FullName(), num, protowire.ParseError(vn))
		}
		field := b[:n+vn]
		b = b[n+vn:]
		if mode == modeKeptObject && fd == fieldResourceObject {
			if kept, err := keepEncoded(m, field); kept || err != nil {
				if err != nil {
					return fmt.Errorf("%s.%s: %w", m.Descriptor().FullName(), fd.Name(), err)
				}
				continue
			}
		}
		child := mode.childMode(fd)
		var err error
		switch {
		case fd.IsMap():
			err = unmarshalMapEntry(v, fd, m.Mutable(fd).Map(), child)
		case fd.IsList():
			l := m.Mutable(fd).List()
			e := l.NewElement()
			if err = unmarshalValueMessage(v, e.Message(), child); err == nil {
				l.Append(e)
			}
		default:
			err = unmarshalValueMessage(v, m.Mutable(fd).Message(), child)
		}
		if err != nil {
			return fmt.Errorf("%s.%s: %w", m.Descriptor().FullName(), fd.Name(), err)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return proto.UnmarshalOptions{Merge: true}.Unmarshal(rest, m.Interface())
}

// unmarshalValueMessage merges b into m (a repeated occurrence into the
// first, as protobuf-go does): when m is a Struct, with vtprotobuf if b is
// in the shape protobuf-go writes (wellFormedStruct), else with
// protobuf-go, which reads odd input (a map entry's field with another
// wire type, unknown fields) differently from vtprotobuf; other messages
// field by field in mode.
func unmarshalValueMessage(b []byte, m protoreflect.Message, mode decodeMode) error {
	if s, ok := m.Interface().(*structpb.Struct); ok {
		if wellFormedStruct(b, 0) {
			return (*vtstructpb.Struct)(s).UnmarshalVTUnsafe(b)
		}
		return proto.UnmarshalOptions{Merge: true}.Unmarshal(b, s)
	}
	return unmarshalFields(b, m, mode)
}

// unmarshalMapEntry decodes one map entry (key = 1, value = 2) of map
// field fd into mp; a later entry with the same key replaces an earlier
// one, as in protobuf-go.
func unmarshalMapEntry(b []byte, fd protoreflect.FieldDescriptor, mp protoreflect.Map, mode decodeMode) error {
	var key protoreflect.MapKey
	keySet := false
	val := mp.NewValue()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1:
			kb, vn, err := consumeMapKey(b, typ, fd.MapKey())
			if err != nil {
				return err
			}
			key, keySet, b = kb, true, b[vn:]
		case num == 2 && typ == protowire.BytesType:
			v, vn := protowire.ConsumeBytes(b)
			if vn < 0 {
				return protowire.ParseError(vn)
			}
			if err := unmarshalValueMessage(v, val.Message(), mode); err != nil {
				return err
			}
			b = b[vn:]
		default:
			return fmt.Errorf("map entry field %d, wire type %d: not decoded here", num, typ)
		}
	}
	if !keySet {
		key = fd.MapKey().Default().MapKey()
	}
	mp.Set(key, val)
	return nil
}

// consumeMapKey decodes a map key of kind string (the only map keys a
// Struct-holding message of the function protocol has); any other key kind
// is an error so the codec never guesses.
func consumeMapKey(b []byte, typ protowire.Type, kd protoreflect.FieldDescriptor) (protoreflect.MapKey, int, error) {
	if kd.Kind() != protoreflect.StringKind || typ != protowire.BytesType {
		return protoreflect.MapKey{}, 0, fmt.Errorf("map key of kind %s, wire type %d: not supported", kd.Kind(), typ)
	}
	s, n := protowire.ConsumeString(b)
	if n < 0 {
		return protoreflect.MapKey{}, 0, protowire.ParseError(n)
	}
	return protoreflect.ValueOfString(s).MapKey(), n, nil
}

// AppendMessage appends the protobuf wire encoding of m to b: the fields
// that hold a google.protobuf.Struct encoded by StructCodec (Structs with
// vtprotobuf), every other field and the unknown fields by protobuf-go.
// Map entries come out in Go map order, as with proto.Marshal's default
// (non-deterministic) options; it returns protobuf-go's error for a field
// it cannot encode. b grows once, to the size messageSize computes first.
func AppendMessage(b []byte, m protoreflect.Message) ([]byte, error) {
	return appendMessage(slices.Grow(b, messageSize(m)), m)
}

// messageSize is the size of AppendMessage's encoding of m.
func messageSize(m protoreflect.Message) int {
	rest := m.New()
	size := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !holdsStruct(fd) {
			rest.Set(fd, v)
			return true
		}
		tag := protowire.SizeTag(fd.Number())
		switch {
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				entry := protowire.SizeTag(1) + protowire.SizeBytes(len(k.String())) + protowire.SizeTag(2) + protowire.SizeBytes(bodySize(mv.Message()))
				size += tag + protowire.SizeBytes(entry)
				return true
			})
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				size += tag + protowire.SizeBytes(bodySize(l.Get(i).Message()))
			}
		default:
			size += tag + protowire.SizeBytes(bodySize(v.Message()))
		}
		return true
	})
	rest.SetUnknown(m.GetUnknown())
	return size + proto.Size(rest.Interface())
}

// bodySize is the size of m's encoding by appendLengthPrefixed, without
// the length prefix.
func bodySize(m protoreflect.Message) int {
	if stateShapeKnown {
		switch v := m.Interface().(type) {
		case *fnv1.State:
			size, _, _ := stateSize(v)
			return size
		case *fnv1.Resource:
			size, _ := resourceSize(v)
			return size
		}
	}
	if s, ok := m.Interface().(*structpb.Struct); ok {
		return (*vtstructpb.Struct)(s).SizeVT()
	}
	return messageSize(m)
}

// appendMessage is AppendMessage without growing b first.
func appendMessage(b []byte, m protoreflect.Message) ([]byte, error) {
	rest := m.New()
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !holdsStruct(fd) {
			rest.Set(fd, v)
			return true
		}
		switch {
		case fd.IsMap():
			if fd.MapKey().Kind() != protoreflect.StringKind {
				err = fmt.Errorf("%s: map key of kind %s not supported", fd.FullName(), fd.MapKey().Kind())
				return false
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				b, err = appendMapEntry(b, fd.Number(), k.String(), mv.Message())
				return err == nil
			})
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if b, err = appendField(b, fd.Number(), l.Get(i).Message()); err != nil {
					break
				}
			}
		default:
			b, err = appendField(b, fd.Number(), v.Message())
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	rest.SetUnknown(m.GetUnknown())
	return proto.MarshalOptions{}.MarshalAppend(b, rest.Interface())
}

// appendField appends message m as field num (tag, length, bytes).
func appendField(b []byte, num protowire.Number, m protoreflect.Message) ([]byte, error) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return appendLengthPrefixed(b, m)
}

// appendMapEntry appends one entry of a map<string, message> field num.
func appendMapEntry(b []byte, num protowire.Number, key string, m protoreflect.Message) ([]byte, error) {
	entry := protowire.SizeTag(1) + protowire.SizeBytes(len(key)) + protowire.SizeTag(2) + protowire.SizeBytes(bodySize(m))
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(entry))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return appendLengthPrefixed(b, m)
}

// errStructSize is marshalStructSized's error: vtprotobuf's size of a
// Struct holding a Value whose struct or list is a nil pointer (which
// structpb never makes, but code could) is one byte more than it writes.
var errStructSize = errors.New("cannot encode a google.protobuf.Struct: a Value holds a nil struct or list")

// marshalStructSized writes s into b, exactly SizeVT bytes, or returns an
// error rather than leave bytes of b unwritten.
func marshalStructSized(s *vtstructpb.Struct, b []byte) error {
	n, err := s.MarshalToSizedBufferVT(b)
	if err == nil && n != len(b) {
		err = errStructSize
	}
	return err
}

// appendLengthPrefixed appends m's encoding preceded by its length: a
// State or Resource by hand (codecstate.go), a Struct with vtprotobuf,
// other messages through AppendMessage.
func appendLengthPrefixed(b []byte, m protoreflect.Message) ([]byte, error) {
	if stateShapeKnown {
		switch v := m.Interface().(type) {
		case *fnv1.State:
			return appendStateField(b, v)
		case *fnv1.Resource:
			return appendResourceField(b, v)
		}
	}
	if s, ok := m.Interface().(*structpb.Struct); ok {
		vs := (*vtstructpb.Struct)(s)
		size := vs.SizeVT()
		b = protowire.AppendVarint(b, uint64(size))
		start := len(b)
		b = append(b, make([]byte, size)...)
		if err := marshalStructSized(vs, b[start:]); err != nil {
			return nil, err
		}
		return b, nil
	}
	b = protowire.AppendVarint(b, uint64(messageSize(m)))
	return appendMessage(b, m)
}

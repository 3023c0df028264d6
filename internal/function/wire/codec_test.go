package wire

import (
	"errors"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function/wire/wiretest"
)

// codecResponse is a RunFunctionResponse with desired state, results,
// conditions, requirements, context and output.
func codecResponse(t testing.TB) *fnv1.RunFunctionResponse {
	req := codecRequest(t)
	reason := "Reason"
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: "tag", Ttl: durationpb.New(60e9)},
		Desired: req.GetDesired(),
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_WARNING, Message: "m", Reason: &reason}},
		Context: req.GetContext(),
		Requirements: &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
			"s": {ApiVersion: "v1", Kind: "Secret", Match: &fnv1.ResourceSelector_MatchName{MatchName: "n"}},
		}},
		Conditions: []*fnv1.Condition{{Type: "Ready", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "R"}},
		Output:     codecStruct(t, map[string]any{"o": 1.0}),
	}
}

// TestStructCodecRoundTrips checks that StructCodec decodes what
// protobuf-go encodes, and encodes what protobuf-go decodes, into equal
// messages, for a request and a response using every Struct-holding field.
// A request's observed composed resources come out with their objects
// kept encoded (UnmarshalRequest), observed and desired, equal once
// DecodeKeptObjects has run.
func TestStructCodecRoundTrips(t *testing.T) {
	c := &StructCodec{}
	for name, msg := range map[string]proto.Message{"request": codecRequest(t), "response": codecResponse(t)} {
		t.Run(name, func(t *testing.T) {
			wire, err := proto.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			got := msg.ProtoReflect().New().Interface()
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if req, ok := got.(*fnv1.RunFunctionRequest); ok {
				for _, state := range []*fnv1.State{req.GetObserved(), req.GetDesired()} {
					for name, r := range state.GetResources() {
						if _, encoded := encodedObject(r); !encoded || r.GetResource() != nil {
							t.Errorf("%q: object kept encoded = %v, decoded = %v; want only encoded", name, encoded, r.GetResource() != nil)
						}
					}
					DecodeKeptObjects(state)
				}
			}
			if diff := cmp.Diff(msg, got, protocmp.Transform()); diff != "" {
				t.Errorf("StructCodec.Unmarshal of proto.Marshal (-want +got):\n%s", diff)
			}
			enc, err := c.Marshal(msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if len(enc.Materialize()) != proto.Size(msg) {
				t.Errorf("StructCodec.Marshal wrote %d bytes, proto.Size is %d", len(enc.Materialize()), proto.Size(msg))
			}
			back := msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(enc.Materialize(), back); err != nil {
				t.Fatalf("proto.Unmarshal of StructCodec.Marshal: %v", err)
			}
			if diff := cmp.Diff(msg, back, protocmp.Transform()); diff != "" {
				t.Errorf("proto.Unmarshal of StructCodec.Marshal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStructCodecMergesAndKeepsUnknownFields checks protobuf's merge rules
// on the fields the codec decodes itself: a repeated map key keeps the
// last entry, a repeated singular Struct field merges, and unknown fields
// (here field 999 of the request and of a nested Resource) survive a round
// trip.
func TestStructCodecMergesAndKeepsUnknownFields(t *testing.T) {
	first := &fnv1.RunFunctionRequest{
		Input:    codecStruct(t, map[string]any{"a": "1", "b": "1"}),
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"r": {Resource: codecStruct(t, map[string]any{"v": "first"})}}},
	}
	second := &fnv1.RunFunctionRequest{
		Input:    codecStruct(t, map[string]any{"b": "2"}),
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"r": {Resource: codecStruct(t, map[string]any{"v": "second"})}}},
	}
	var wire []byte
	for _, m := range []proto.Message{first, second} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, b...)
	}
	wire = protowire.AppendTag(wire, 999, protowire.BytesType)
	wire = protowire.AppendString(wire, "unknown")

	want := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(wire, want); err != nil {
		t.Fatal(err)
	}
	got := &fnv1.RunFunctionRequest{}
	if err := UnmarshalMessage(wire, got.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-proto.Unmarshal +UnmarshalMessage):\n%s", diff)
	}
	if got.GetInput().GetFields()["a"].GetStringValue() != "1" || got.GetInput().GetFields()["b"].GetStringValue() != "2" {
		t.Errorf("input = %v, want the two occurrences merged {a: 1, b: 2}", got.GetInput())
	}
	if len(got.ProtoReflect().GetUnknown()) == 0 {
		t.Errorf("unknown field 999 was dropped")
	}
	enc, err := AppendMessage(nil, got.ProtoReflect())
	if err != nil {
		t.Fatal(err)
	}
	back := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(enc, back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back, protocmp.Transform()); diff != "" {
		t.Errorf("round trip through AppendMessage (-want +got):\n%s", diff)
	}
}

// TestStructCodecRejectsBrokenWire checks that truncated input is an error,
// not a panic or a partial message passed on as whole.
func TestStructCodecRejectsBrokenWire(t *testing.T) {
	wire, err := proto.Marshal(codecRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 2, 10, len(wire) / 2, len(wire) - 1} {
		if err := UnmarshalMessage(wire[:cut], (&fnv1.RunFunctionRequest{}).ProtoReflect()); err == nil {
			t.Errorf("UnmarshalMessage of the first %d of %d bytes: no error", cut, len(wire))
		}
	}
}

// FuzzStructCodec feeds arbitrary bytes to both decoders: whatever
// protobuf-go accepts, StructCodec must accept and decode to an equal
// message, and re-encode so that protobuf-go reads it back equal (unknown
// fields inside a Struct aside, see StructCodec). It must never panic on
// input either rejects. (FuzzObservedReads in package function holds the
// accessors reading objects kept encoded to the decoded ones on the same
// inputs.)
func FuzzStructCodec(f *testing.F) {
	for _, m := range []proto.Message{codecRequest(f), codecResponse(f)} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		want := &fnv1.RunFunctionRequest{}
		wantErr := proto.Unmarshal(wire, want)
		got := &fnv1.RunFunctionRequest{}
		gotErr := UnmarshalMessage(wire, got.ProtoReflect())
		if wantErr != nil {
			return // StructCodec may accept invalid UTF-8 in a Struct; see StructCodec.
		}
		if gotErr != nil {
			t.Fatalf("protobuf-go decodes, StructCodec fails: %v", gotErr)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Fatalf("(-proto.Unmarshal +UnmarshalMessage):\n%s", diff)
		}
		enc, err := AppendMessage(nil, got.ProtoReflect())
		if err != nil {
			t.Fatalf("AppendMessage: %v", err)
		}
		back := &fnv1.RunFunctionRequest{}
		if err := proto.Unmarshal(enc, back); err != nil {
			t.Fatalf("proto.Unmarshal of AppendMessage: %v", err)
		}
		if diff := cmp.Diff(want, back, protocmp.Transform(), protocmp.IgnoreUnknown()); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// TestMessageSizeExact holds messageSize to the length AppendMessage
// writes, on a request and a response whose objects are decoded, kept
// encoded (as served) and encoded by NewResource: StructCodec.Marshal writes
// into a pooled buffer of that size.
func TestMessageSizeExact(t *testing.T) {
	rsp := codecResponse(t)
	encoded, err := NewResource(map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": strings.Repeat("v", 200)}}, fnv1.Ready_READY_TRUE)
	if err != nil {
		t.Fatal(err)
	}
	rsp.Desired.Resources["encoded"] = encoded
	wire, err := proto.Marshal(codecRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	served := &fnv1.RunFunctionRequest{}
	if err := UnmarshalRequest(wire, served); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]proto.Message{"request": codecRequest(t), "request as served": served, "response": rsp} {
		b, err := AppendMessage(nil, m.ProtoReflect())
		if err != nil {
			t.Fatal(err)
		}
		if size := messageSize(m.ProtoReflect()); size != len(b) {
			t.Errorf("%s: messageSize %d, AppendMessage wrote %d bytes", name, size, len(b))
		}
		out, err := (&StructCodec{}).Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		// Map entries come in Go's map order: compared decoded.
		got, want := m.ProtoReflect().New().Interface(), m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(out.Materialize(), got); err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(b, want); err != nil {
			t.Fatal(err)
		}
		if out.Len() != len(b) || !proto.Equal(got, want) {
			t.Errorf("%s: StructCodec.Marshal wrote other bytes (%d) than AppendMessage (%d)", name, out.Len(), len(b))
		}
		out.Free()
	}
}

// TestDirtyBufferPool checks the pool responses are written into: a buffer
// of the length asked for, the one put back when it is large enough, and
// none kept beyond maxPooledMessage.
func TestDirtyBufferPool(t *testing.T) {
	p := &dirtyBufferPool{}
	b := p.Get(1000)
	if len(*b) != 1000 {
		t.Fatalf("Get(1000) gave %d bytes", len(*b))
	}
	(*b)[0] = 7
	p.Put(b)
	// sync.Pool may drop what it holds at any time (a collection): only
	// what it hands back is checked.
	if again := p.Get(900); len(*again) != 900 {
		t.Errorf("Get(900) gave %d bytes", len(*again))
	} else if again == b && (*again)[0] != 7 {
		t.Error("a reused buffer was cleared")
	}
	if bigger := p.Get(5000); len(*bigger) != 5000 {
		t.Errorf("Get(5000) gave %d bytes", len(*bigger))
	}
	huge := make([]byte, maxPooledMessage+1)
	p.Put(&huge)
	for range 10 {
		if got := p.Get(10); cap(*got) > maxPooledMessage {
			t.Fatal("a buffer beyond maxPooledMessage was kept")
		}
	}
}

// TestUnmarshalStateByHand checks that the States of a request in the
// shape protobuf-go writes are decoded by hand (unmarshalState), to what
// protobuf-go decodes, and that other shapes are left to the generic
// decoding.
func TestUnmarshalStateByHand(t *testing.T) {
	req := codecRequest(t)
	req.Observed.Resources["details"] = &fnv1.Resource{ConnectionDetails: map[string][]byte{"k": []byte("v"), "empty": {}}, Ready: fnv1.Ready_READY_FALSE}
	for name, state := range map[string]*fnv1.State{"observed": req.GetObserved(), "desired": req.GetDesired()} {
		wire, err := proto.Marshal(state)
		if err != nil {
			t.Fatal(err)
		}
		got := &fnv1.State{}
		if err := unmarshalState(wire, got, name == "observed"); err != nil {
			t.Fatalf("%s: unmarshalState: %v", name, err)
		}
		DecodeKeptObjects(got)
		if diff := cmp.Diff(state, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: unmarshalState (-proto.Marshal'ed +decoded):\n%s", name, diff)
		}
	}
	entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "r")
	for name, wire := range map[string][]byte{
		"unknown field":       protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1),
		"entry without value": protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), entry),
		"composite twice":     []byte{0x0a, 0x00, 0x0a, 0x00},
		"key not UTF-8":       protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte{0x0a, 0x01, 0xff, 0x12, 0x00}),
	} {
		if err := unmarshalState(wire, &fnv1.State{}, true); !errors.Is(err, errUnusualShape) {
			t.Errorf("%s: unmarshalState error %v, want errUnusualShape", name, err)
		}
	}
}

// TestNilStructValueIsAnError checks that a Value holding a nil struct or
// list, which vtprotobuf sizes one byte larger than it writes, makes
// encoding fail rather than send a byte that was never written.
func TestNilStructValueIsAnError(t *testing.T) {
	for name, v := range map[string]*structpb.Value{
		"struct": {Kind: &structpb.Value_StructValue{}},
		"list":   {Kind: &structpb.Value_ListValue{}},
	} {
		obj := &structpb.Struct{Fields: map[string]*structpb.Value{"v": v}}
		rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{"r": {Resource: obj}}}}
		if _, err := AppendMessage(nil, rsp.ProtoReflect()); !errors.Is(err, errStructSize) {
			t.Errorf("%s: AppendMessage error %v, want errStructSize", name, err)
		}
		if _, err := (&StructCodec{}).Marshal(&fnv1.RunFunctionResponse{Context: obj}); !errors.Is(err, errStructSize) {
			t.Errorf("%s: StructCodec.Marshal of a context error %v, want errStructSize", name, err)
		}
	}
}

// The shared codec fixtures, under the names this package's tests use.
var (
	codecStruct  = wiretest.Struct
	codecRequest = wiretest.Request
	randomObject = wiretest.RandomObject
	randomValue  = wiretest.RandomValue
	randomString = wiretest.RandomString
)

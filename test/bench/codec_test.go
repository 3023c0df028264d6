package bench

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnwire "github.com/tenantkube/tenantkube/internal/function/wire"
)

// TestStructCodecOnInputs decodes every step's recorded small and
// reference request with the served functions' StructCodec and with
// protobuf-go, and encodes it back with StructCodec: the messages must be
// equal both ways, so the served functions see exactly what protobuf-go
// would have given them; and as the served functions decode it, with the
// composed resources' objects kept encoded (checkAsServed).
func TestStructCodecOnInputs(t *testing.T) {
	for _, input := range []string{Small, Reference} {
		for _, step := range Steps {
			req, err := LoadRequest(input, step)
			if err != nil {
				t.Fatal(err)
			}
			wire, err := proto.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			want := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(wire, want); err != nil {
				t.Fatal(err)
			}
			got := &fnv1.RunFunctionRequest{}
			if err := fnwire.UnmarshalMessage(wire, got.ProtoReflect()); err != nil {
				t.Fatalf("%s/%s: UnmarshalMessage: %v", input, step, err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s/%s: UnmarshalMessage (-proto.Unmarshal +got):\n%s", input, step, diff)
			}
			enc, err := fnwire.AppendMessage(nil, got.ProtoReflect())
			if err != nil {
				t.Fatalf("%s/%s: AppendMessage: %v", input, step, err)
			}
			if len(enc) != len(wire) {
				t.Errorf("%s/%s: AppendMessage wrote %d bytes, proto.Marshal %d", input, step, len(enc), len(wire))
			}
			back := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(enc, back); err != nil {
				t.Fatalf("%s/%s: proto.Unmarshal of AppendMessage: %v", input, step, err)
			}
			if diff := cmp.Diff(want, back, protocmp.Transform()); diff != "" {
				t.Errorf("%s/%s: AppendMessage round trip (-want +got):\n%s", input, step, diff)
			}
			checkAsServed(t, input+"/"+step, wire, want)
		}
	}
}

// maxReadDepth is how deep checkAsServed reads into each observed object:
// status.conditions and metadata.labels.<key> are within it; deeper paths
// (managedFields' fieldsV1) multiply the reads without reaching new code.
const maxReadDepth = 4

// checkAsServed decodes wire as the served functions do
// (fnwire.UnmarshalRequest: composed resources' objects kept encoded)
// and compares with want, protobuf-go's decoding: every observed object's
// values at every path through its Structs, read with
// fnwire.Value, and the whole request once its objects are
// decoded.
func checkAsServed(t *testing.T, name string, wire []byte, want *fnv1.RunFunctionRequest) {
	t.Helper()
	got := &fnv1.RunFunctionRequest{}
	if err := fnwire.UnmarshalRequest(wire, got); err != nil {
		t.Fatalf("%s: UnmarshalRequest: %v", name, err)
	}
	reads := 0
	for res, r := range want.GetObserved().GetResources() {
		var walk func(s *structpb.Struct, path []string)
		walk = func(s *structpb.Struct, path []string) {
			for k, v := range s.GetFields() {
				p := append(append([]string{}, path...), k)
				reads++
				if read := fnwire.Value(got.GetObserved().GetResources()[res], p); !proto.Equal(v, read) {
					t.Errorf("%s: Value(%q, %q) (-decoded +kept encoded):\n%s", name, res, p, cmp.Diff(v, read, protocmp.Transform()))
				}
				if len(p) < maxReadDepth {
					walk(v.GetStructValue(), p)
				}
			}
		}
		walk(r.GetResource(), nil)
	}
	if len(want.GetObserved().GetResources()) > 0 && reads == 0 {
		t.Errorf("%s: no observed value read", name)
	}
	fnwire.DecodeKeptObjects(got.GetObserved())
	fnwire.DecodeKeptObjects(got.GetDesired())
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("%s: UnmarshalRequest + DecodeKeptObjects (-proto.Unmarshal +got):\n%s", name, diff)
	}
}

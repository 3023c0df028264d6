package bench

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/tenantkube/tenantkube/internal/function"
)

// TestStructCodecOnInputs decodes every step's recorded small and
// reference request with the served functions' StructCodec and with
// protobuf-go, and encodes it back with StructCodec: the messages must be
// equal both ways, so the served functions see exactly what protobuf-go
// would have given them.
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
			if err := function.UnmarshalMessage(wire, got.ProtoReflect()); err != nil {
				t.Fatalf("%s/%s: UnmarshalMessage: %v", input, step, err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s/%s: UnmarshalMessage (-proto.Unmarshal +got):\n%s", input, step, diff)
			}
			enc, err := function.AppendMessage(nil, got.ProtoReflect())
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
		}
	}
}

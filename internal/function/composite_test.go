package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestSetCompositeStatus: JSON-like and typed values land in the desired
// XR's status as encoding/json writes them (a typed value's omitempty
// fields left out); other status keys stay.
func TestSetCompositeStatus(t *testing.T) {
	type args struct {
		fields map[string]any
	}
	type want struct {
		status map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"JSONLike": {
			reason: "A JSON-like value is set as it is.",
			args:   args{fields: map[string]any{"version": "v1.35.1"}},
			want:   want{status: map[string]any{"version": "v1.35.1", "earlier": "kept"}},
		},
		"Typed": {
			reason: "A typed value is set as encoding/json writes it: no message when it is empty (omitempty).",
			args: args{fields: map[string]any{"addons": map[string]v1alpha1.AddonStatus{
				"cilium": {Ready: true},
				"csi":    {Message: "install retries exhausted"},
			}}},
			want: want{status: map[string]any{"earlier": "kept", "addons": map[string]any{
				"cilium": map[string]any{"ready": true},
				"csi":    map[string]any{"ready": false, "message": "install retries exhausted"},
			}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			earlier, err := structpb.NewStruct(map[string]any{"status": map[string]any{"earlier": "kept"}})
			if err != nil {
				t.Fatal(err)
			}
			rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: earlier}}}
			if err := setCompositeStatus(rsp, tc.args.fields); err != nil {
				t.Fatalf("%s\nSetCompositeStatus(...): %v", tc.reason, err)
			}
			want, err := structpb.NewStruct(tc.want.status)
			if err != nil {
				t.Fatal(err)
			}
			got := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nSetCompositeStatus(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

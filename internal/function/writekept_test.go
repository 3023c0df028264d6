package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestWriteKeptReadinessAndTypedStatus checks two rules of Write: a kept
// object gets the Kept's readiness (none when not observed), and a typed
// status value is written as encoding/json writes it.
func TestWriteKeptReadinessAndTypedStatus(t *testing.T) {
	tmpl, err := structpb.NewStruct(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"kept-ready": {Resource: tmpl}, "kept": {Resource: tmpl}}},
	}
	type group struct {
		Replicas int32  `json:"replicas"`
		CPU      string `json:"cpu,omitempty"`
	}
	p := &Plan{
		Kept: []Kept{{Name: "kept-ready", Ready: fnv1.Ready_READY_TRUE}, {Name: "kept"}, {Name: "not-observed", Ready: fnv1.Ready_READY_TRUE}},
		Status: map[string]any{
			"groups": map[string]group{"md0": {Replicas: 2}},
			"nodes":  "1/2",
			"raw":    structpb.NewBoolValue(true),
		},
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := Write(rsp, NewRequest(req), p); err != nil {
		t.Fatal(err)
	}
	gotReady := map[string]fnv1.Ready{}
	for name, r := range rsp.GetDesired().GetResources() {
		gotReady[name] = r.GetReady()
	}
	wantReady := map[string]fnv1.Ready{"kept-ready": fnv1.Ready_READY_TRUE, "kept": fnv1.Ready_READY_UNSPECIFIED}
	if d := cmp.Diff(wantReady, gotReady); d != "" {
		t.Errorf("readiness of kept objects (-want +got):\n%s", d)
	}
	wantStatus := map[string]any{"groups": map[string]any{"md0": map[string]any{"replicas": float64(2)}}, "nodes": "1/2", "raw": true}
	if d := cmp.Diff(wantStatus, rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
}

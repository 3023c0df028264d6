package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestKeepObservedOmitsOwnedByOthers(t *testing.T) {
	md, err := structpb.NewStruct(map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo", "uid": "u1", "resourceVersion": "7",
			"labels": map[string]any{"a": "b"}, "managedFields": []any{map[string]any{"manager": "x"}}},
		"spec":   map[string]any{"replicas": 3, "clusterName": "demo"},
		"status": map[string]any{"readyReplicas": 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"md": {Resource: md}}}}
	rsp := &fnv1.RunFunctionResponse{}
	if !keepObserved(req, rsp, "md", "spec.replicas", "spec.absent.field") {
		t.Fatal("not kept")
	}
	if keepObserved(req, rsp, "not-observed") {
		t.Error("kept an object that was not observed")
	}
	want := map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"clusterName": "demo"},
	}
	if d := cmp.Diff(want, rsp.GetDesired().GetResources()["md"].GetResource().AsMap()); d != "" {
		t.Errorf("kept object (-want +got):\n%s", d)
	}
	if got := md.AsMap()["spec"].(map[string]any)["replicas"]; got != float64(3) {
		t.Errorf("the observed object was modified: replicas %v", got)
	}
}

// A kept object carries only the labels and annotations Crossplane applied:
// applying another controller's metadata with the values of this
// observation would undo that controller's later changes.
func TestKeepObservedLeavesOtherControllersMetadata(t *testing.T) {
	md, err := structpb.NewStruct(map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
		"metadata": map[string]any{
			"name": "demo-md0", "namespace": "tenant-demo",
			"labels":      map[string]any{"tenantkube.io/cluster": "demo"},
			"annotations": map[string]any{"machinedeployment.clusters.x-k8s.io/revision": "2"},
			"managedFields": []any{
				map[string]any{"manager": "apiextensions.crossplane.io/composed/ab12", "operation": "Apply",
					"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:tenantkube.io/cluster": map[string]any{}}}}},
				map[string]any{"manager": "manager", "operation": "Update",
					"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:machinedeployment.clusters.x-k8s.io/revision": map[string]any{}}}}},
			},
		},
		"spec": map[string]any{"clusterName": "demo"},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"md": {Resource: md}}}}
	rsp := &fnv1.RunFunctionResponse{}
	if !keepObserved(req, rsp, "md") {
		t.Fatal("not kept")
	}
	want := map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo", "labels": map[string]any{"tenantkube.io/cluster": "demo"}},
		"spec":     map[string]any{"clusterName": "demo"},
	}
	if d := cmp.Diff(want, rsp.GetDesired().GetResources()["md"].GetResource().AsMap()); d != "" {
		t.Errorf("kept object (-want +got):\n%s", d)
	}
}

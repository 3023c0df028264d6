package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSetDesiredConverts holds the object setDesired puts into the
// response to the Kubernetes JSON of a Deployment written out by hand:
// numbers as JSON numbers, no top-level status, and no null members
// (encoding/json writes null for the unset creationTimestamp of the object
// and of its pod template and for the nil selector; "resources": {} is
// kept: it is empty, not null).
func TestSetDesiredConverts(t *testing.T) {
	replicas := int32(2)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{"app": "d"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		},
		Status: appsv1.DeploymentStatus{Replicas: 1},
	}
	want, err := structpb.NewStruct(map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "d", "namespace": "ns", "labels": map[string]any{"app": "d"}},
		"spec": map[string]any{
			"replicas": 2.0,
			"strategy": map[string]any{},
			"template": map[string]any{
				"metadata": map[string]any{},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i", "resources": map[string]any{}}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier": {}}}}
	if err := setDesired(rsp, "d", d, fnv1.Ready_READY_TRUE); err != nil {
		t.Fatal(err)
	}
	wantRsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{
		"earlier": {},
		"d":       {Resource: want, Ready: fnv1.Ready_READY_TRUE},
	}}}
	if diff := cmp.Diff(wantRsp, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestToValueKeepsNulls: toValue drops nothing, a null member included.
func TestToValueKeepsNulls(t *testing.T) {
	got, err := toValue(struct {
		A *string `json:"a"`
		B []int   `json:"b"`
	}{B: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	want := structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"a": structpb.NewNullValue(),
		"b": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(1)}}),
	}})
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("toValue (-want +got):\n%s", diff)
	}
}

package function

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	codec "github.com/tenantkube/tenantkube/internal/function/wire"
)

// TestSetDesiredEncodes holds an object setDesired encodes to what the
// response carries to Crossplane (the served codec's bytes, decoded by
// protobuf-go) and to what desiredResource reads back: wire.ToStruct of it.
func TestSetDesiredEncodes(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Data:       map[string]string{"k": strings.Repeat("v", 300)},
	}
	want, err := codec.ToStruct(cm)
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{}
	rsp := &fnv1.RunFunctionResponse{}
	if err := setDesired(rsp, "cm", cm, fnv1.Ready_READY_TRUE); err != nil {
		t.Fatal(err)
	}
	if rsp.Desired.Resources["cm"].Resource != nil {
		t.Fatal("setDesired decoded the object it encoded")
	}
	wire, err := codec.AppendMessage(nil, rsp.ProtoReflect())
	if err != nil {
		t.Fatal(err)
	}
	received := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(wire, received); err != nil {
		t.Fatal(err)
	}
	wantRsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{
		"cm": {Resource: want, Ready: fnv1.Ready_READY_TRUE},
	}}}
	if diff := cmp.Diff(wantRsp, received, protocmp.Transform()); diff != "" {
		t.Errorf("response as Crossplane receives it (-want +got):\n%s", diff)
	}
	req.Desired = rsp.Desired // a response shares the request's desired state
	if diff := cmp.Diff(want, desiredResource(req, "cm"), protocmp.Transform()); diff != "" {
		t.Errorf("desiredResource (-want +got):\n%s", diff)
	}
}

package function_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/internal/function"
)

// TestControllerClusterRoleBinding: the CSI binding of cluster demo in
// tenant-a, written out by hand from docs/architecture.md.
func TestControllerClusterRoleBinding(t *testing.T) {
	got := function.Identity{Name: "demo", Namespace: "tenant-a"}.ControllerClusterRoleBinding(function.CSIControllerComponent, function.CSIPersistentVolumesClusterRole, "tenant-a")
	want := &rbacv1.ClusterRoleBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenantkube:kcsi-controller:tenant-a.demo", Labels: map[string]string{
			"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo",
			"app.kubernetes.io/component": "kcsi-controller", "tenantkube.io/namespace": "tenant-a",
		}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tenantkube:kcsi-persistentvolumes"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "demo-kcsi-controller", Namespace: "tenant-a"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-want, +got:\n%s", d)
	}
}

// TestCompositeSpec: the observed XR's spec decodes into a typed spec; a
// value of the wrong type is named by its field path.
func TestCompositeSpec(t *testing.T) {
	type spec struct {
		Etcd struct {
			Replicas *int32 `json:"replicas"`
		} `json:"etcd"`
	}
	type want struct {
		replicas int32
		err      string
	}
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   want
	}{
		"Decodes": {reason: "A spec decodes.", xr: map[string]any{"kind": "Tenant", "spec": map[string]any{"etcd": map[string]any{"replicas": 5}}}, want: want{replicas: 5}},
		"NoSpec":  {reason: "No spec leaves the value as it is.", xr: map[string]any{"kind": "Tenant"}},
		"WrongType": {reason: "The error names the field.", xr: map[string]any{"kind": "Tenant", "spec": map[string]any{"etcd": map[string]any{"replicas": "five"}}},
			want: want{err: `spec.etcd.replicas: Invalid value: "five": a JSON string cannot be a int32`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr, err := structpb.NewStruct(tc.xr)
			if err != nil {
				t.Fatal(err)
			}
			var s spec
			err = function.NewRequest(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}).CompositeSpec(&s)
			var g want
			if err != nil {
				g.err = err.Error()
			} else if s.Etcd.Replicas != nil {
				g.replicas = *s.Etcd.Replicas
			}
			if d := cmp.Diff(tc.want, g, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, d)
			}
		})
	}
}

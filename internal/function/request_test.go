package function

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestDecodeSpecNamesTheField(t *testing.T) {
	cases := map[string][]string{
		`{nodeGroups: {md0: {}, gpu: {kubelet: {systemReservedMemory: {a: 1}}}}}`: {"spec.nodeGroups[gpu].kubelet.systemReservedMemory", "a JSON object cannot be a string"},
		`{nodeGroups: {md0: {minReplicas: "two"}}}`:                               {`spec.nodeGroups[md0].minReplicas: Invalid value: "two": a JSON string cannot be a int32`},
		`{nodeGroups: {md0: {roles: ingress}}}`:                                   {`spec.nodeGroups[md0].roles: Invalid value: "ingress"`},
		`{controlPlane: {replicas: true}}`:                                        {"spec.controlPlane.replicas: Invalid value: true: a JSON bool"},
		`{controlPlane: {Replicas: "two"}}`:                                       {`spec.controlPlane.replicas: Invalid value: "two"`},
		`{addons: {certManager: {enabled: "yes"}}}`:                               {"spec.addons.certManager.enabled"},
	}
	for in, want := range cases {
		var spec any
		if err := yaml.Unmarshal([]byte(in), &spec); err != nil {
			t.Fatal(err)
		}
		_, err := decodeSpec(spec)
		if err == nil {
			t.Errorf("%s: decoded", in)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", in, err, w)
			}
		}
	}
}

func TestDecodeSpecAcceptsNumbersForQuantities(t *testing.T) {
	var spec any
	if err := yaml.Unmarshal([]byte(`{nodeGroups: {md0: {diskSize: 1e10, kubelet: {systemReservedMemory: 500e6, evictionHardMemory: 7%, kubeReservedCpu: 0.5}}}}`), &spec); err != nil {
		t.Fatal(err)
	}
	s, err := decodeSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	k := s.NodeGroups["md0"].Kubelet
	if k.SystemReservedMemory != "500000000" || k.KubeReservedCPU != "0.5" || k.EvictionHardMemory != "7%" || s.NodeGroups["md0"].DiskSize != "10000000000" {
		t.Errorf("decoded %+v disk %s", k, s.NodeGroups["md0"].DiskSize)
	}
}

// TestDecodeStructMatchesStructInto holds decodeStruct to structInto of the
// object as an unstructured map, managedFields apart, and checks
// requiredResources against the request.
func TestDecodeStructMatchesStructInto(t *testing.T) {
	obj, err := structpb.NewStruct(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "labels": map[string]any{"a": "b"}, "generation": 3.0,
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply"}}},
		"data": map[string]any{"k": "v<&>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got, want corev1.ConfigMap
	if err := decodeStruct(obj, &got); err != nil {
		t.Fatal(err)
	}
	if err := structInto(obj.AsMap(), &want); err != nil {
		t.Fatal(err)
	}
	if len(want.ManagedFields) != 1 || len(got.ManagedFields) != 0 {
		t.Errorf("managedFields: structInto %d, decodeStruct %d; want 1 and 0", len(want.ManagedFields), len(got.ManagedFields))
	}
	want.ManagedFields = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-structInto +decodeStruct):\n%s", d)
	}

	req := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"cms": {Items: []*fnv1.Resource{{Resource: obj}}}, "none": {}}}
	if items, arrived := requiredResources(req, "cms"); !arrived || len(items) != 1 || items[0] != obj {
		t.Errorf("cms: %v, %v", items, arrived)
	}
	if items, arrived := requiredResources(req, "none"); !arrived || len(items) != 0 {
		t.Errorf("none: %v, %v", items, arrived)
	}
	if _, arrived := requiredResources(req, "absent"); arrived {
		t.Error("absent: arrived")
	}
}

func TestStructIntoTyped(t *testing.T) {
	type inner struct {
		N int64   `json:"n"`
		F float64 `json:"f"`
	}
	var out struct {
		Name  string  `json:"name"`
		Items []inner `json:"items"`
	}
	if err := structInto(map[string]any{"name": "x", "items": []any{map[string]any{"n": 3.0, "f": 1e-7}}}, &out); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out); got != "{x [{3 1e-07}]}" {
		t.Errorf("structInto decoded %s", got)
	}
}

// TestCompositeCondition reads a condition of the observed XR's
// status.conditions: the one of the type asked, "" when absent.
func TestCompositeCondition(t *testing.T) {
	xr := `apiVersion: tenantkube.io/v1alpha1
kind: XKubernetesCluster
metadata: {name: demo-x7k2p}
status:
  conditions:
  - {type: Synced, status: "True", reason: ReconcileSuccess}
  - {type: CapacityFits, status: "False", reason: MaximumExceedsQuota, message: too small}`
	type want struct{ Status, Reason, Message string }
	cases := map[string]struct {
		reason string
		xr     string
		typ    string
		want   want
	}{
		"Present":  {"The second condition, by type.", xr, "CapacityFits", want{"False", "MaximumExceedsQuota", "too small"}},
		"Absent":   {"No condition of that type.", xr, "WorkersReady", want{}},
		"NoStatus": {"An XR without status.", "apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nmetadata: {name: demo-x7k2p}", "Synced", want{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(tc.xr), &m); err != nil {
				t.Fatal(err)
			}
			s, err := structpb.NewStruct(m)
			if err != nil {
				t.Fatal(err)
			}
			r := NewRequest(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}})
			var got want
			got.Status, got.Reason, got.Message = r.CompositeCondition(tc.typ)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCompositeCondition(%q): -want, +got:\n%s", tc.reason, tc.typ, diff)
			}
		})
	}
}

package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// toStructReference is the plain way to build a Struct: JSON, then
// protojson, then pruneNulls. jsonToStruct must give exactly its result.
func toStructReference(obj any) (*structpb.Struct, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, s); err != nil {
		return nil, err
	}
	delete(s.Fields, "status")
	pruneNulls(s)
	return s, nil
}

func TestToStructMatchesProtojson(t *testing.T) {
	replicas := int32(3)
	typed := []any{
		&appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{"a": "b<&>"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptrTo(intstr.FromString("25%"))}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "c", Image: "i:1", Args: []string{"--x=\"q\"", "tab\there", "uni ✓ \u2028"},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
					}},
				}}}},
			},
			Status: appsv1.DeploymentStatus{Replicas: 1},
		},
		map[string]any{"status": "dropped", "a": nil, "b": []any{nil, map[string]any{"x": nil, "y": 1.5}, []any{map[string]any{"keep": nil}}}},
		map[string]any{"n": []any{1e300, -0.0, 123456789012345678, math.SmallestNonzeroFloat64, 0.1}},
		map[string]any{"i": []any{0, math.Copysign(0, -1), 7, -7, 999999999999999, -999999999999999, 1000000000000000, int64(1) << 53}},
		map[string]any{},
	}
	for i, o := range typed {
		compareToStruct(t, fmt.Sprintf("typed[%d]", i), o)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		compareToStruct(t, fmt.Sprintf("random[%d]", i), randomObject(r, 0))
	}
}

func compareToStruct(t *testing.T, name string, o any) {
	t.Helper()
	want, werr := toStructReference(o)
	got, gerr := ToStruct(o)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: error mismatch: reference %v, ToStruct %v", name, werr, gerr)
	}
	if werr == nil && !proto.Equal(want, got) {
		t.Fatalf("%s: ToStruct differs from the protojson path:\nwant %v\ngot  %v", name, want, got)
	}
}

func TestJSONToStructRejectsBadJSON(t *testing.T) {
	for _, in := range []string{``, `[]`, `null`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`,
		`{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\ud800"}`, `{"a":1}x`, `{"a":tru}`, `{"a":1,"a":2}`, `{"a":1,"a":null}`, `{"b":[{"a":"x","c":0,"a":"y"}]}`,
		`{"m":{"creationTimestamp":null,"a":1,"b":2,"a":3}}`, "{\"a\":\"\xff\"}"} {
		if _, err := jsonToStruct([]byte(in)); err == nil {
			t.Errorf("jsonToStruct(%q): want an error", in)
		}
		s := &structpb.Struct{}
		if err := protojson.Unmarshal([]byte(in), s); err == nil {
			t.Errorf("protojson accepts %q: the cases must be ones it rejects", in)
		}
	}
}

// TestJSONToStructDrop holds the dropped member (ToStruct's status) to
// the same checks as a built one: it is left out of the Struct, yet bad
// JSON inside it, or a second member of its name, is still an error.
func TestJSONToStructDrop(t *testing.T) {
	for _, in := range []string{`{"status":{"a":}}`, `{"status":[1,}`, `{"status":[1 2]}`, `{"status":tru}`, `{"status":"\q"}`,
		`{"status":01}`, `{"status":{"a":1]}`, `{"status":{}`, `{"status":{},"status":1}`, `{"status":{"a":{"b":[{"c":"\ud800"}]}}}`} {
		if _, _, err := jsonToStructMember([]byte(in), "", "status"); err == nil {
			t.Errorf("jsonToStructMember(%q) dropping status: want an error", in)
		}
	}
	for _, in := range []string{`{"status":{}}`, `{"a":1,"status":{"x":[1,{"y":null},[]],"z":"s\n","e":{}},"b":[true,false,null]}`,
		`{"status":null,"m":{"status":2}}`, `{"status":-1.5e3}`} {
		want, err := jsonToStruct([]byte(in))
		if err != nil {
			t.Fatalf("jsonToStruct(%q): %v", in, err)
		}
		delete(want.Fields, "status")
		got, _, err := jsonToStructMember([]byte(in), "", "status")
		if err != nil {
			t.Fatalf("jsonToStructMember(%q) dropping status: %v", in, err)
		}
		if !proto.Equal(want, got) {
			t.Errorf("jsonToStructMember(%q) dropping status:\nwant %v\ngot  %v", in, want, got)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func BenchmarkToStruct(b *testing.B) {
	replicas := int32(3)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{"a": "b", "c": "d"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "i:1", Args: []string{"--a=1", "--b=2", "--c=3"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}}}}},
	}
	b.Run("impl=protojson", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := toStructReference(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=direct", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := ToStruct(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// pruneNulls drops null members of objects from s after protojson parsed
// it: the reference jsonToStruct is compared with (it drops them while
// parsing).
func pruneNulls(s *structpb.Struct) {
	for k, v := range s.Fields {
		switch x := v.Kind.(type) {
		case *structpb.Value_NullValue:
			delete(s.Fields, k)
		case *structpb.Value_StructValue:
			pruneNulls(x.StructValue)
		case *structpb.Value_ListValue:
			for _, item := range x.ListValue.Values {
				if st := item.GetStructValue(); st != nil {
					pruneNulls(st)
				}
			}
		}
	}
}

// TestJSONToStructNumbers checks numbers bit for bit (proto.Equal takes -0
// for 0, the wire does not): integers of up to 15 digits take a shortcut,
// the others strconv.ParseFloat.
func TestJSONToStructNumbers(t *testing.T) {
	for _, n := range []string{"0", "-0", "7", "-7", "999999999999999", "-999999999999999", "1000000000000000", "9007199254740993", "0.1", "-0.0", "1e2", "1E-7", "123456789012345678"} {
		s, err := jsonToStruct([]byte(`{"n":` + n + `}`))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseFloat(n, 64)
		if got := s.Fields["n"].GetNumberValue(); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: %v (bits %x), want %v (bits %x)", n, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

// TestToValueMatchesNewValue holds ToValue to structpb.NewValue of the
// value's JSON decoded by encoding/json (nulls kept).
func TestToValueMatchesNewValue(t *testing.T) {
	type typed struct {
		N  int32             `json:"n"`
		S  string            `json:"s,omitempty"`
		P  *string           `json:"p"`
		M  map[string]string `json:"m"`
		In struct {
			CPU string `json:"cpu,omitempty"`
		} `json:"in"`
	}
	values := []any{nil, "x<&>", 1.5, []any{nil, 1}, map[string]typed{"md0": {N: 3, S: "s"}, "status": {}}, typed{M: map[string]string{"a": "b"}}}
	r := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		values = append(values, randomValue(r, 0))
	}
	for i, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var decoded any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		want, err := structpb.NewValue(decoded)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ToValue(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !proto.Equal(want, got) {
			t.Fatalf("value %d %s:\nwant %v\ngot  %v", i, raw, want, got)
		}
	}
}

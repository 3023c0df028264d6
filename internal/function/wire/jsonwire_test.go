package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStruct runs a structWriter over raw as EncodeObject does, and
// returns its output (a copy) and its error.
func writeStruct(raw []byte, drop string) ([]byte, error) {
	w := structWriters.Get().(*structWriter)
	defer w.release()
	w.buf, w.dropKey = raw, drop
	err := w.writeTop()
	return bytes.Clone(w.out), err
}

// deterministic is s encoded by protobuf-go with sorted map entries: equal
// bytes mean equal Structs, numbers bit for bit.
func deterministic(t testing.TB, s *structpb.Struct) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkStructWriter holds the structWriter's output for raw to what
// jsonToStructMember builds from it (spec recorded, status dropped): an
// error for the same inputs, otherwise a Struct that protobuf-go decodes
// to the same one, in the shape wellFormedStruct accepts, and the same
// spec.
func checkStructWriter(t testing.TB, raw []byte) {
	t.Helper()
	want, _, werr := jsonToStructMember(raw, "", "status")
	got, gerr := writeStruct(raw, "status")
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%q: error mismatch: jsonToStructMember %v, structWriter %v", raw, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !wellFormedStruct(got, 0) {
		t.Fatalf("%q: the structWriter's output is not a well-formed Struct: %x", raw, got)
	}
	decoded := &structpb.Struct{}
	if err := proto.Unmarshal(got, decoded); err != nil {
		t.Fatalf("%q: protobuf-go does not decode the output: %v", raw, err)
	}
	if !bytes.Equal(deterministic(t, want), deterministic(t, decoded)) {
		t.Fatalf("%q: the structWriter's Struct differs:\nwant %v\ngot  %v", raw, want, decoded)
	}
}

func TestStructWriterMatchesJSONToStruct(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var inputs [][]byte
	for range 2000 {
		raw, err := json.Marshal(randomObject(r, 0))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, raw)
	}
	for _, s := range structWriterSeeds() {
		inputs = append(inputs, []byte(s))
	}
	for _, raw := range inputs {
		checkStructWriter(t, raw)
	}
}

// TestStructWriterLengths writes nested messages around every length where
// a varint takes another byte (128, 16384, 2097152 bytes), through objects
// and lists, so each length prefix is written short, as reserved and long.
func TestStructWriterLengths(t *testing.T) {
	for _, n := range []int{0, 1, 100, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129,
		16360, 16370, 16371, 16372, 16373, 16374, 16375, 16376, 16377, 16378, 16379, 16380, 16381, 16382, 16383, 16384, 16385,
		2097140, 2097152, 2097160} {
		s := strings.Repeat("x", n)
		for _, raw := range []string{
			`{"a":"` + s + `"}`,
			`{"spec":{"b":{"c":"` + s + `","d":null}},"e":[{"f":"` + s + `"},["` + s + `"]]}`,
			`{"l":[[[{"m":{"n":"` + s + `"}}]]],"status":{"x":"` + s + `"}}`,
		} {
			checkStructWriter(t, []byte(raw))
		}
	}
}

// structWriterSeeds are inputs jsonToStructMember rejects, or treats
// specially (nulls, duplicate keys, the dropped status, numbers).
func structWriterSeeds() []string {
	return []string{``, `[]`, `null`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`,
		`{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\ud800"}`, `{"a":1}x`, `{"a":tru}`, `{"a":1,"a":2}`, `{"a":1,"a":null}`,
		`{"a":null,"a":1}`, `{"a":null,"a":null}`, `{"b":[{"a":"x","c":0,"a":"y"}]}`, `{"b":[[{"a":null,"a":null}]]}`,
		`{"m":{"creationTimestamp":null,"a":1,"b":2,"a":3}}`, "{\"a\":\"\xff\"}", `{"a":"é\u00e9\ud83d\ude00\n\"\\\/"}`,
		`{"status":{"a":}}`, `{"status":{},"status":1}`, `{"status":null,"m":{"status":2}}`, `{"spec":1,"spec":2}`,
		`{"spec":{"z":[1,{"y":null},[null,{"x":null}]]},"n":[0,-0,-0.0,1e308,1e309,5e-324,123456789012345678,0.1]}`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":null,"k1":0}`,
		`{"k1":null,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":null,"k1":0}`,
		` { "a" : [ true , false , null ] , "b" : { } , "c" : [ ] } `,
	}
}

func FuzzStructWriter(f *testing.F) {
	for _, s := range structWriterSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkStructWriter(t, raw) })
}

// TestEncodeObject holds EncodeObject to ToStruct of the same typed
// object.
func TestEncodeObject(t *testing.T) {
	replicas := int32(2)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i:1"}},
		}}},
		Status: appsv1.DeploymentStatus{Replicas: 1},
	}
	want, err := ToStruct(d)
	if err != nil {
		t.Fatal(err)
	}
	o, err := EncodeObject(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, o.Struct(), protocmp.Transform()); diff != "" {
		t.Errorf("EncodeObject (-ToStruct +got):\n%s", diff)
	}
	// The same object gives the same bytes.
	again, err := EncodeObject(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(o.record, again.record) {
		t.Error("EncodeObject gave different bytes for the same object")
	}
	if _, err := EncodeObject(map[string]any{"spec": make(chan int)}); err == nil {
		t.Error("EncodeObject of a value encoding/json rejects gave no error")
	}
}

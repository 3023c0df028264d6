// Package wiretest holds the fixtures the codec's tests share: a request
// using every Struct-holding field of the function protocol, and random JSON
// values. It is imported only by tests.
package wiretest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Struct builds a Struct from v, failing t on a value structpb rejects.
func Struct(t testing.TB, v map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Request is a RunFunctionRequest using every Struct-holding field of the
// function protocol (observed and desired composite and composed resources,
// input, context, required and extra resources) and several that hold none
// (meta, connection details, credentials, readiness).
func Request(t testing.TB) *fnv1.RunFunctionRequest {
	obj := func(kind, name string) *structpb.Struct {
		return Struct(t, map[string]any{
			"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"name": name, "labels": map[string]any{"a": "b"}, "managedFields": []any{
				map[string]any{"manager": "apiextensions.crossplane.io/composed/x", "fieldsV1": map[string]any{"f:metadata": map[string]any{}}},
			}},
			"spec": map[string]any{"replicas": 3.0, "paused": false, "none": nil, "list": []any{"x", 1.5, true, nil, []any{}, map[string]any{}}},
		})
	}
	return &fnv1.RunFunctionRequest{
		Meta: &fnv1.RequestMeta{Tag: "tag"},
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: obj("XKubernetesCluster", "xr"), ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")}},
			Resources: map[string]*fnv1.Resource{
				"a": {Resource: obj("ConfigMap", "a"), Ready: fnv1.Ready_READY_TRUE},
				"b": {Resource: obj("Secret", "b")},
				"":  {Resource: &structpb.Struct{}},
			},
		},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: Struct(t, map[string]any{"status": map[string]any{"ready": true}})},
			Resources: map[string]*fnv1.Resource{"a": {Resource: obj("ConfigMap", "a"), Ready: fnv1.Ready_READY_FALSE}},
		},
		Input:   obj("Input", "in"),
		Context: Struct(t, map[string]any{"apiextensions.crossplane.io/environment": map[string]any{"k": "v"}}),
		RequiredResources: map[string]*fnv1.Resources{
			"secrets": {Items: []*fnv1.Resource{{Resource: obj("Secret", "s1")}, {Resource: obj("Secret", "s2")}}},
			"none":    {},
		},
		ExtraResources: map[string]*fnv1.Resources{"x": {Items: []*fnv1.Resource{{Resource: obj("ConfigMap", "x")}}}},
		Credentials: map[string]*fnv1.Credentials{"c": {Source: &fnv1.Credentials_CredentialData{
			CredentialData: &fnv1.CredentialData{Data: map[string][]byte{"k": []byte("v")}},
		}}},
	}
}

// RandomObject is a JSON object of up to five members with random keys and
// values nested below depth (at most five levels).
func RandomObject(r *rand.Rand, depth int) map[string]any {
	out := map[string]any{}
	for range r.IntN(6) {
		out[RandomString(r)] = RandomValue(r, depth+1)
	}
	return out
}

// RandomValue is a random JSON value: null, a bool, a float spanning 40
// decimal orders of magnitude, an integer up to 2^53, a string, a list or
// (below depth 5) an object.
func RandomValue(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth > 4 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	case 3:
		return r.Int64N(1 << 53)
	case 4:
		return RandomString(r)
	case 5, 6:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = RandomValue(r, depth+1)
		}
		return l
	default:
		return RandomObject(r, depth)
	}
}

// RandomString is up to 11 runes drawn from characters JSON must escape or
// that encoders treat specially (control characters, quotes, HTML
// characters, U+2028/9, a surrogate pair, DEL).
func RandomString(r *rand.Rand) string {
	const alphabet = "abcXYZ09 -_./\"\\\n\t\b\f\r\x01<>&é✓\u2028\u2029\U0001F600\x7f"
	runes := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

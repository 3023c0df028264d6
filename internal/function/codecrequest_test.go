package function

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function/wire"
)

// The codec's entry points the accessor tests drive (their locals are often
// called wire).
var (
	unmarshalRequest  = wire.UnmarshalRequest
	appendMessage     = wire.AppendMessage
	decodeKeptObjects = wire.DecodeKeptObjects
)

// codecStruct builds a Struct from v, failing t on a value structpb rejects.
func codecStruct(t testing.TB, v map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// codecRequest is a RunFunctionRequest using every Struct-holding field of
// the function protocol (observed and desired composite and composed
// resources, input, context, required and extra resources) and several that
// hold none (meta, connection details, credentials, readiness).
func codecRequest(t testing.TB) *fnv1.RunFunctionRequest {
	obj := func(kind, name string) *structpb.Struct {
		return codecStruct(t, map[string]any{
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
			Composite: &fnv1.Resource{Resource: codecStruct(t, map[string]any{"status": map[string]any{"ready": true}})},
			Resources: map[string]*fnv1.Resource{"a": {Resource: obj("ConfigMap", "a"), Ready: fnv1.Ready_READY_FALSE}},
		},
		Input:   obj("Input", "in"),
		Context: codecStruct(t, map[string]any{"apiextensions.crossplane.io/environment": map[string]any{"k": "v"}}),
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

// randomObject, randomValue and randomString: as in wire/jsonstruct_test.go.
func randomObject(r *rand.Rand, depth int) map[string]any {
	out := map[string]any{}
	for range r.IntN(6) {
		out[randomString(r)] = randomValue(r, depth+1)
	}
	return out
}

func randomValue(r *rand.Rand, depth int) any {
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
		return randomString(r)
	case 5, 6:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		return l
	default:
		return randomObject(r, depth)
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "abcXYZ09 -_./\"\\\n\t\b\f\r\x01<>&é✓\u2028\u2029\U0001F600\x7f"
	runes := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// desiredResource returns the object of the desired composed resource
// called name in req (an earlier step's, or this function's once it is
// set: a response shares the request's desired state), or nil when there
// is none. An object UnmarshalRequest kept encoded is decoded now, once.
func desiredResource(req *fnv1.RunFunctionRequest, name string) *structpb.Struct {
	return wire.Decode(req.GetDesired().GetResources()[name])
}

// observedComposite returns the observed composite resource's object (the
// XR as Crossplane sent it), or nil when there is none. An object
// UnmarshalRequest kept encoded is decoded now, once: a function that needs
// a few fields reads them with observedCompositeValue instead.
func observedComposite(req *fnv1.RunFunctionRequest) *structpb.Struct {
	return wire.Decode(req.GetObserved().GetComposite())
}

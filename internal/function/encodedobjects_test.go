package function

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	codec "github.com/tenantkube/tenantkube/internal/function/wire"
)

// structPaths returns every path (map keys) through the nested Structs of
// s, and for each a key that s does not have at that level.
func structPaths(s *structpb.Struct, prefix []string) [][]string {
	var out [][]string
	out = append(out, append(append([]string{}, prefix...), "no-such-key"))
	for k, v := range s.GetFields() {
		p := append(append([]string{}, prefix...), k)
		out = append(out, p)
		if sv := v.GetStructValue(); sv != nil {
			out = append(out, structPaths(sv, p)...)
		} else {
			out = append(out, append(append([]string{}, p...), "below-a-leaf"))
		}
	}
	return out
}

// orEmpty is v, or an empty Value for nil: a Struct map entry without a
// value (which protobuf-go never writes) decodes to an empty Value with
// protobuf-go and to nil with vtprotobuf; both read as no value.
func orEmpty(v *structpb.Value) *structpb.Value {
	if v == nil {
		return &structpb.Value{}
	}
	return v
}

// checkEncodedObservedReads compares, for every observed composed resource
// of want (decoded by protobuf-go), what the Observed* accessors return on
// a fresh UnmarshalRequest of wire with what valueAt returns on want, at
// every path of the object, and what desiredResource returns for every
// desired one, then that the whole request, once DecodeKeptObjects
// has run on both states, equals want.
func checkEncodedObservedReads(t *testing.T, encoded []byte, want *fnv1.RunFunctionRequest, opts ...cmp.Option) {
	t.Helper()
	got := &fnv1.RunFunctionRequest{}
	if err := unmarshalRequest(encoded, got); err != nil {
		t.Fatalf("UnmarshalRequest: %v", err)
	}
	opts = append(opts, protocmp.Transform())
	for name, r := range want.GetObserved().GetResources() {
		if gotExists, wantExists := observedExists(got, name), r.GetResource() != nil; gotExists != wantExists {
			t.Errorf("observedExists(%q) = %v, want %v", name, gotExists, wantExists)
		}
		types := []string{"", "no-such-type"}
		for _, c := range codec.ValueAt(r.GetResource(), "status", "conditions").GetListValue().GetValues() {
			types = append(types, c.GetStructValue().GetFields()["type"].GetStringValue())
		}
		for _, typ := range types {
			ws, wr, wm := observedConditionStatus(want, name, typ)
			if gs, gr, gm := observedConditionStatus(got, name, typ); gs != ws || gr != wr || gm != wm {
				t.Errorf("observedConditionStatus(%q, %q) = %q, %q, %q kept encoded, %q, %q, %q decoded", name, typ, gs, gr, gm, ws, wr, wm)
			}
		}
		for _, p := range structPaths(r.GetResource(), nil) {
			want := codec.ValueAt(r.GetResource(), p...)
			if diff := cmp.Diff(orEmpty(want), orEmpty(observedValue(got, name, p...)), opts...); diff != "" {
				t.Errorf("observedValue(%q, %q) (-decoded +kept encoded):\n%s", name, p, diff)
			}
		}
	}
	checkEncodedScalarReads(t, encoded, want)
	checkEncodedCompositeReads(t, got, want, opts...)
	if observedExists(got, "no-such-resource") || observedValue(got, "no-such-resource", "kind") != nil || observedResource(got, "no-such-resource") != nil {
		t.Errorf("an absent observed resource reads as present")
	}
	for name, r := range want.GetObserved().GetResources() {
		if diff := cmp.Diff(r.GetResource(), observedResource(got, name), opts...); diff != "" {
			t.Errorf("observedResource(%q) (-want +got):\n%s", name, diff)
		}
	}
	for name, r := range want.GetDesired().GetResources() {
		if diff := cmp.Diff(r.GetResource(), desiredResource(got, name), opts...); diff != "" {
			t.Errorf("desiredResource(%q) (-want +got):\n%s", name, diff)
		}
	}
	if desiredResource(got, "no-such-resource") != nil {
		t.Errorf("an absent desired resource reads as present")
	}
	decodeKeptObjects(got.GetObserved())
	decodeKeptObjects(got.GetDesired())
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("UnmarshalRequest + DecodeKeptObjects (-proto.Unmarshal +got):\n%s", diff)
	}
}

// checkEncodedScalarReads compares observedString, observedNumber and
// observedCompositeString, at every path of every observed object and of
// the observed XR of want (decoded by protobuf-go), with the string and
// number valueAt finds there, on a fresh UnmarshalRequest of wire that no
// other accessor has read (one that decodes a whole object would leave
// these only the decoded fallback to take). An object in the shape
// protobuf-go writes stays encoded: they read it where it lies.
func checkEncodedScalarReads(t *testing.T, encoded []byte, want *fnv1.RunFunctionRequest) {
	t.Helper()
	got := &fnv1.RunFunctionRequest{}
	if err := unmarshalRequest(encoded, got); err != nil {
		t.Fatalf("UnmarshalRequest: %v", err)
	}
	wellFormed := func(r *fnv1.Resource) bool {
		b, ok := codec.Encoded(r)
		return ok && codec.WellFormed(b)
	}
	stillEncoded := func(what string, before bool, r *fnv1.Resource) {
		if _, ok := codec.Encoded(r); before && !ok {
			t.Errorf("%s: a well-formed object kept encoded was decoded by a scalar read", what)
		}
	}
	for name, r := range want.GetObserved().GetResources() {
		res := got.GetObserved().GetResources()[name]
		before := wellFormed(res)
		for _, p := range structPaths(r.GetResource(), nil) {
			v := codec.ValueAt(r.GetResource(), p...)
			if s := observedString(got, name, p...); s != v.GetStringValue() {
				t.Errorf("observedString(%q, %q) = %q kept encoded, %q decoded", name, p, s, v.GetStringValue())
			}
			if n := observedNumber(got, name, p...); math.Float64bits(n) != math.Float64bits(v.GetNumberValue()) {
				t.Errorf("observedNumber(%q, %q) = %v kept encoded, %v decoded", name, p, n, v.GetNumberValue())
			}
		}
		stillEncoded(name, before, res)
	}
	xr := want.GetObserved().GetComposite().GetResource()
	before := wellFormed(got.GetObserved().GetComposite())
	for _, p := range structPaths(xr, nil) {
		if s, v := observedCompositeString(got, p...), codec.ValueAt(xr, p...).GetStringValue(); s != v {
			t.Errorf("observedCompositeString(%q) = %q kept encoded, %q decoded", p, s, v)
		}
	}
	stillEncoded("the observed XR", before, got.GetObserved().GetComposite())
	if observedString(got, "no-such-resource", "kind") != "" || observedNumber(got, "no-such-resource", "metadata", "generation") != 0 {
		t.Errorf("an absent observed resource reads as present")
	}
}

// checkEncodedCompositeReads holds what a function reads of the observed
// XR of got (decoded by UnmarshalRequest) to the same reads of want
// (decoded by protobuf-go): every value by observedCompositeValue, the
// spec's members readCluster decodes, readCluster itself, then the whole XR.
func checkEncodedCompositeReads(t *testing.T, got, want *fnv1.RunFunctionRequest, opts ...cmp.Option) {
	t.Helper()
	xr := want.GetObserved().GetComposite().GetResource()
	for _, p := range structPaths(xr, nil) {
		if diff := cmp.Diff(orEmpty(codec.ValueAt(xr, p...)), orEmpty(observedCompositeValue(got, p...)), opts...); diff != "" {
			t.Errorf("observedCompositeValue(%q) (-decoded +kept encoded):\n%s", p, diff)
		}
	}
	// The members a spec takes: all observedCompositeSpec promises.
	specMembers := func(spec *structpb.Value) *structpb.Value {
		st := spec.GetStructValue()
		if st == nil {
			return spec
		}
		kept := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for k, v := range st.GetFields() {
			if specField(k) {
				kept.Fields[k] = v
			}
		}
		return structpb.NewStructValue(kept)
	}
	if diff := cmp.Diff(orEmpty(specMembers(codec.ValueAt(xr, "spec"))), orEmpty(specMembers(observedCompositeSpec(got, specField))), opts...); diff != "" {
		t.Errorf("observedCompositeSpec (-decoded, members a spec takes +kept encoded):\n%s", diff)
	}
	wantTenant, wantErr := readCluster(want)
	gotTenant, gotErr := readCluster(got)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Errorf("readCluster error %v kept encoded, %v decoded", gotErr, wantErr)
	}
	if diff := cmp.Diff(wantTenant, gotTenant); diff != "" {
		t.Errorf("readCluster (-decoded +kept encoded):\n%s", diff)
	}
	if diff := cmp.Diff(xr, observedComposite(got), opts...); diff != "" {
		t.Errorf("observedComposite (-want +got):\n%s", diff)
	}
}

// TestObservedReadsOfObjectsKeptEncoded checks the accessors on objects
// UnmarshalRequest keeps encoded against protobuf-go's decoding, on the
// codec's test request and on objects with every kind of value.
func TestObservedReadsOfObjectsKeptEncoded(t *testing.T) {
	req := codecRequest(t)
	req.Observed.Resources["values"] = &fnv1.Resource{Resource: codecStruct(t, map[string]any{
		"kind": "Values", "null": nil, "num": -1.25e300, "int": 7.0, "true": true, "false": false, "str": "", "unicode": "größe ✓",
		"list": []any{[]any{map[string]any{"deep": []any{"x"}}}, nil, 1.0},
		"status": map[string]any{"conditions": []any{
			"not an object", map[string]any{"status": "NoType"}, map[string]any{"type": 7.0},
			map[string]any{"type": "Ready", "status": "True", "reason": "Done", "message": "ready"},
			map[string]any{"type": "Ready", "status": "False"},
		}, "empty": map[string]any{}},
	})}
	req.Observed.Resources["empty-object"] = &fnv1.Resource{Resource: &structpb.Struct{}}
	req.Observed.Resources["no-object"] = &fnv1.Resource{Ready: fnv1.Ready_READY_TRUE}
	wire, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(wire, want); err != nil {
		t.Fatal(err)
	}
	checkEncodedObservedReads(t, wire, want)

	got := &fnv1.RunFunctionRequest{}
	if err := unmarshalRequest(wire, got); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := observedConditionStatus(got, "values", "Ready"); s != "True" {
		t.Errorf("observedConditionStatus(values, Ready) = %q, want True", s)
	}
	if _, encoded := codec.Encoded(got.GetObserved().GetResources()["values"]); !encoded {
		t.Errorf("reading one condition decoded the whole object")
	}
	if !observedExists(got, "empty-object") || observedExists(got, "no-object") {
		t.Errorf("observedExists: empty-object %v (want true), no-object %v (want false)", observedExists(got, "empty-object"), observedExists(got, "no-object"))
	}
}

// TestEncodedObjectsTravelUnchanged checks that an observed Resource whose
// object is kept encoded encodes, by StructCodec and by protobuf-go, to a
// Resource that carries the object.
func TestEncodedObjectsTravelUnchanged(t *testing.T) {
	req := codecRequest(t)
	wire, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := &fnv1.RunFunctionRequest{}
	if err := unmarshalRequest(wire, got); err != nil {
		t.Fatal(err)
	}
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": got.GetObserved().GetResources()["a"]}}}
	want := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": req.GetObserved().GetResources()["a"]}}}
	for encoder, encode := range map[string]func() ([]byte, error){
		"AppendMessage": func() ([]byte, error) { return appendMessage(nil, rsp.ProtoReflect()) },
		"proto.Marshal": func() ([]byte, error) { return proto.Marshal(rsp) },
	} {
		enc, err := encode()
		if err != nil {
			t.Fatalf("%s: %v", encoder, err)
		}
		back := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(enc, back); err != nil {
			t.Fatalf("proto.Unmarshal of %s: %v", encoder, err)
		}
		if diff := cmp.Diff(want, back, protocmp.Transform()); diff != "" {
			t.Errorf("%s of a Resource kept encoded (-want +got):\n%s", encoder, diff)
		}
	}
}

// TestUnmarshalRequestKeepsOddObjects checks that an observed object not
// in the shape protobuf-go writes is kept encoded like any other, and reads
// as protobuf-go decodes it, and that an object given twice sends the
// whole request to protobuf-go.
func TestUnmarshalRequestKeepsOddObjects(t *testing.T) {
	valueTwoFields := protowire.AppendTag(nil, 3, protowire.BytesType)
	valueTwoFields = protowire.AppendString(valueTwoFields, "s")
	valueTwoFields = protowire.AppendTag(valueTwoFields, 4, protowire.VarintType)
	valueTwoFields = protowire.AppendVarint(valueTwoFields, 1)
	entry := func(key string, value []byte) []byte {
		e := protowire.AppendTag(nil, 1, protowire.BytesType)
		e = protowire.AppendString(e, key)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		return protowire.AppendBytes(e, value)
	}
	structOf := func(entries ...[]byte) []byte {
		var s []byte
		for _, e := range entries {
			s = protowire.AppendTag(s, 1, protowire.BytesType)
			s = protowire.AppendBytes(s, e)
		}
		return s
	}
	stringValue := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "v")
	deep := stringValue
	for range codec.MaxEncodedDepth + 2 {
		deep = protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), structOf(entry("k", deep)))
	}
	resource := func(objects ...[]byte) []byte {
		var r []byte
		for _, o := range objects {
			r = protowire.AppendTag(r, 1, protowire.BytesType)
			r = protowire.AppendBytes(r, o)
		}
		return r
	}
	request := func(name string, res []byte) []byte {
		state := protowire.AppendTag(nil, 2, protowire.BytesType) // State.resources
		state = protowire.AppendBytes(state, entry(name, res))
		req := protowire.AppendTag(nil, 2, protowire.BytesType) // RunFunctionRequest.observed
		return protowire.AppendBytes(req, state)
	}
	for _, tc := range []struct {
		name         string
		object       []byte
		wantDecoded  bool
		wantEncoded  bool
		ignoreUnkown bool
	}{
		{name: "well formed", object: resource(structOf(entry("kind", stringValue))), wantEncoded: true},
		{name: "value with two fields", object: resource(structOf(entry("kind", valueTwoFields))), wantEncoded: true},
		{name: "entry with its key twice", object: resource(structOf(append(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k"), entry("kind", stringValue)...))), wantEncoded: true},
		{name: "too deep", object: resource(structOf(entry("k", deep))), wantEncoded: true},
		{name: "unknown field in a Struct", object: resource(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)), wantEncoded: true, ignoreUnkown: true},
		{name: "status with two fields", object: resource(structOf(entry("status", append(protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), structOf(entry("conditions", stringValue))), stringValue...)))), wantEncoded: true},
		{name: "key given twice: the last value", object: resource(structOf(entry("kind", stringValue), entry("kind", protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "last")))), wantEncoded: true},
		{name: "number, then a string of the same key", object: resource(structOf(entry("n", protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), math.Float64bits(2))), entry("n", stringValue))), wantEncoded: true},
		{name: "given twice", object: resource(structOf(entry("a", stringValue)), structOf(entry("b", stringValue))), wantDecoded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := request("r", tc.object)
			want := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(wire, want); err != nil {
				t.Fatal(err)
			}
			got := &fnv1.RunFunctionRequest{}
			if err := unmarshalRequest(wire, got); err != nil {
				t.Fatal(err)
			}
			r := got.GetObserved().GetResources()["r"]
			_, encoded := codec.Encoded(r)
			if decoded := r.GetResource() != nil; decoded != tc.wantDecoded || encoded != tc.wantEncoded {
				t.Errorf("decoded = %v, kept encoded = %v; want %v, %v", decoded, encoded, tc.wantDecoded, tc.wantEncoded)
			}
			var opts []cmp.Option
			if tc.ignoreUnkown {
				opts = append(opts, protocmp.IgnoreUnknown())
			}
			checkEncodedObservedReads(t, wire, want, opts...)
		})
	}
}

// TestMalformedObjectFailsTheCall checks an observed object whose bytes are
// no Struct (protobuf-go rejects the request): UnmarshalRequest keeps it
// unchecked; a function that reads it fails the served call with
// InvalidArgument (guardMalformedObjects), one that does not passes it on
// byte for byte, for Crossplane's decoding to reject.
func TestMalformedObjectFailsTheCall(t *testing.T) {
	garbage := []byte{0x0a, 0x05, 0x0a, 0x01} // an entry longer than its Struct
	record := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), garbage)
	state := protowire.AppendTag(nil, 2, protowire.BytesType) // State.resources
	entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "r")
	entry = protowire.AppendBytes(protowire.AppendTag(entry, 2, protowire.BytesType), record)
	state = protowire.AppendBytes(state, entry)
	wire := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), state) // RunFunctionRequest.observed
	if err := proto.Unmarshal(wire, &fnv1.RunFunctionRequest{}); err == nil {
		t.Fatal("protobuf-go decodes the malformed request: the case must be one it rejects")
	}
	reads := map[string]func(req *fnv1.RunFunctionRequest){
		"observedResource":        func(req *fnv1.RunFunctionRequest) { observedResource(req, "r") },
		"observedValue":           func(req *fnv1.RunFunctionRequest) { observedValue(req, "r", "kind") },
		"observedString":          func(req *fnv1.RunFunctionRequest) { observedString(req, "r", "kind") },
		"observedNumber":          func(req *fnv1.RunFunctionRequest) { observedNumber(req, "r", "metadata", "generation") },
		"observedConditionStatus": func(req *fnv1.RunFunctionRequest) { observedConditionStatus(req, "r", "Ready") },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{}
			if err := unmarshalRequest(wire, req); err != nil {
				t.Fatalf("UnmarshalRequest: %v", err)
			}
			_, err := guardMalformedObjects(readRunner{read: func(req *fnv1.RunFunctionRequest) {
				read(req)
				t.Error("the read returned")
			}}).RunFunction(context.Background(), req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "not a valid google.protobuf.Struct") {
				t.Errorf("served call error %v, want InvalidArgument naming the malformed object", err)
			}
		})
	}
	req := &fnv1.RunFunctionRequest{}
	if err := unmarshalRequest(wire, req); err != nil {
		t.Fatalf("UnmarshalRequest: %v", err)
	}
	if !observedExists(req, "r") {
		t.Error("the malformed object reads as absent")
	}
	out, err := appendMessage(nil, req.ProtoReflect())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, wire) {
		t.Errorf("re-encoded %x, want the bytes received %x", out, wire)
	}
}

// TestGuardPassesOtherPanics checks that guardMalformedObjects recovers
// only a codec.MalformedObjectError: a function's own panic is not turned into an
// answer.
func TestGuardPassesOtherPanics(t *testing.T) {
	defer func() {
		if p := recover(); p != "a bug" {
			t.Errorf("recovered %v, want the function's own panic", p)
		}
	}()
	_, _ = guardMalformedObjects(readRunner{read: func(*fnv1.RunFunctionRequest) { panic("a bug") }}).RunFunction(context.Background(), &fnv1.RunFunctionRequest{})
	t.Error("the panic did not go on")
}

// readRunner is a function that calls read and answers an empty response.
type readRunner struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	read func(req *fnv1.RunFunctionRequest)
}

func (r readRunner) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r.read(req)
	return &fnv1.RunFunctionResponse{}, nil
}

// TestComposedObjectsReadThroughAccessors enforces what UnmarshalRequest
// relies on: outside observed.go and wire/encodedobjects.go, no code of a
// function (functions/, internal/ with the render tests' function; test files
// aside) reads the observed composed resources or the observed composite
// resource of a request directly, nor the object of a desired composed
// resource (rsp.Desired.Resources[name].Resource, or ranging over them),
// nor uses the SDK's request helpers for them: all would see an object
// kept encoded as absent. The functions' plans read through
// function.Request and never see the request; this holds RunFunction and
// the shared code behind Request and Write to the same rule.
func TestComposedObjectsReadThroughAccessors(t *testing.T) {
	root := filepath.Join("..", "..")
	allowed := map[string]bool{
		filepath.Join("internal", "function", "observed.go"):               true,
		filepath.Join("internal", "function", "wire", "encodedobjects.go"): true,
	}
	sdkReaders := map[string]bool{
		"GetObservedComposedResources": true, "GetObservedComposedResource": true,
		"GetDesiredComposedResources": true, "GetDesiredComposedResource": true,
		"GetObservedCompositeResource": true,
	}
	checked := 0
	for _, dir := range []string{"functions", "internal"} { // internal holds the render tests' function (internal/render/testdata/testfn)
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if strings.HasPrefix(rel, filepath.Join("internal", "fntest")+string(filepath.Separator)) {
				return nil // tests' request builders: they write requests, never serve them
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			checked++
			if allowed[rel] {
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if sdkReaders[n.Sel.Name] {
						t.Errorf("%s: calls %s; use function.Request", rel, n.Sel.Name)
					}
					if composedResources(n, "Observed") {
						t.Errorf("%s: reads the observed composed resources directly; use function.Request", rel)
					}
					if (n.Sel.Name == "Composite" || n.Sel.Name == "GetComposite") && ofState(n.X, "Observed") {
						t.Errorf("%s: reads the observed composite resource directly; use Request.CompositeString", rel)
					}
					if ix, ok := n.X.(*ast.IndexExpr); ok && (n.Sel.Name == "Resource" || n.Sel.Name == "GetResource") && composedResources(ix.X, "Desired") {
						t.Errorf("%s: reads a desired composed resource's object directly; use function.Request", rel)
					}
				case *ast.RangeStmt:
					if n.Value != nil && composedResources(n.X, "Desired") {
						t.Errorf("%s: ranges over the desired composed resources' objects; use function.Request", rel)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: wrong root?", checked)
	}
}

// composedResources reports whether x is s.GetResources() or s.Resources
// of a state s that is X.Get<state>() or X.<state> (state "Observed" or
// "Desired").
func composedResources(x ast.Expr, state string) bool {
	var of ast.Expr
	switch e := x.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "GetResources" {
			return false
		}
		of = sel.X
	case *ast.SelectorExpr:
		if e.Sel.Name != "Resources" {
			return false
		}
		of = e.X
	default:
		return false
	}
	return ofState(of, state)
}

// ofState reports whether x is X.Get<state>() or X.<state>.
func ofState(x ast.Expr, state string) bool {
	switch e := x.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Get"+state
	case *ast.SelectorExpr:
		return e.Sel.Name == state
	}
	return false
}

// TestObjectReplacedInPlaceWins checks that when code replaces the object
// of a composed resource kept encoded (r.Resource = x), x is what the
// accessors read and what is encoded: the encoded object is dropped, not
// merged into it.
func TestObjectReplacedInPlaceWins(t *testing.T) {
	wire, err := proto.Marshal(codecRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	replacement := codecStruct(t, map[string]any{"kind": "Replacement"})
	for _, read := range []bool{false, true} {
		got := &fnv1.RunFunctionRequest{}
		if err := unmarshalRequest(wire, got); err != nil {
			t.Fatal(err)
		}
		r := got.GetDesired().GetResources()["a"]
		r.Resource = replacement
		got.GetObserved().GetResources()["a"].Resource = replacement
		if k := observedValue(got, "a", "kind").GetStringValue(); k != "Replacement" {
			t.Errorf("observedValue(a, kind) after replacing the object = %q, want Replacement", k)
		}
		if read {
			if diff := cmp.Diff(replacement, desiredResource(got, "a"), protocmp.Transform()); diff != "" {
				t.Errorf("desiredResource after replacing the object (-want +got):\n%s", diff)
			}
		}
		rsp := &fnv1.RunFunctionResponse{Desired: got.GetDesired()}
		enc, err := appendMessage(nil, rsp.ProtoReflect())
		if err != nil {
			t.Fatal(err)
		}
		back := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(enc, back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(replacement, back.GetDesired().GetResources()["a"].GetResource(), protocmp.Transform()); diff != "" {
			t.Errorf("read first = %v: encoded object after replacing it (-want +got):\n%s", read, diff)
		}
	}
}

// FuzzObservedScalars holds observedString and observedNumber to
// observedValue's GetStringValue and GetNumberValue on arbitrary bytes as
// an observed object's Struct, at a path of one or two keys, each on its
// own fresh UnmarshalRequest: the same value, or both failing the read
// with a codec.MalformedObjectError.
func FuzzObservedScalars(f *testing.F) {
	entry := func(key string, value []byte) []byte {
		e := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), key)
		return protowire.AppendBytes(protowire.AppendTag(e, 2, protowire.BytesType), value)
	}
	structOf := func(entries ...[]byte) []byte {
		var s []byte
		for _, e := range entries {
			s = protowire.AppendBytes(protowire.AppendTag(s, 1, protowire.BytesType), e)
		}
		return s
	}
	str := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), s)
	}
	num := func(n float64) []byte {
		return protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), math.Float64bits(n))
	}
	sub := func(b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), b)
	}
	f.Add(structOf(entry("kind", str("Deployment"))), "kind", "")
	f.Add(structOf(entry("metadata", sub(structOf(entry("generation", num(3)))))), "metadata", "generation")
	f.Add(structOf(entry("kind", str("a")), entry("kind", num(1))), "kind", "")
	f.Add(structOf(entry("kind", append(str("a"), num(1)...))), "kind", "")
	f.Add([]byte{0x0a, 0x05, 0x0a, 0x01}, "kind", "")
	f.Fuzz(func(t *testing.T, object []byte, k1, k2 string) {
		record := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), object)
		state := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), entry("r", record))
		wire := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), state)
		path := []string{k1}
		if k2 != "" {
			path = append(path, k2)
		}
		// read runs f on a fresh decoding of wire and returns its result,
		// or whether it failed with a codec.MalformedObjectError.
		read := func(f func(req *fnv1.RunFunctionRequest) any) (v any, malformed bool) {
			req := &fnv1.RunFunctionRequest{}
			if err := unmarshalRequest(wire, req); err != nil {
				t.Fatalf("UnmarshalRequest: %v", err) // not reached: the object is kept unchecked
			}
			defer func() {
				if p := recover(); p != nil {
					if _, ok := p.(*codec.MalformedObjectError); !ok {
						panic(p)
					}
					v, malformed = nil, true
				}
			}()
			return f(req), false
		}
		for _, c := range []struct {
			name        string
			scalar, ref func(req *fnv1.RunFunctionRequest) any
		}{
			{"observedString",
				func(req *fnv1.RunFunctionRequest) any { return observedString(req, "r", path...) },
				func(req *fnv1.RunFunctionRequest) any { return observedValue(req, "r", path...).GetStringValue() }},
			{"observedNumber",
				func(req *fnv1.RunFunctionRequest) any { return math.Float64bits(observedNumber(req, "r", path...)) },
				func(req *fnv1.RunFunctionRequest) any {
					return math.Float64bits(observedValue(req, "r", path...).GetNumberValue())
				}},
		} {
			got, gotMalformed := read(c.scalar)
			want, wantMalformed := read(c.ref)
			if got != want || gotMalformed != wantMalformed {
				t.Errorf("%s(%q) = %v (malformed %v), observedValue gives %v (malformed %v)", c.name, path, got, gotMalformed, want, wantMalformed)
			}
		}
	})
}

// FuzzObservedReads: on whatever protobuf-go accepts, UnmarshalRequest,
// with its composed resources' objects kept encoded, must read the same
// through the Observed* accessors at every path of every object, and equal
// protobuf-go's message once they are decoded. Its corpus is
// wire.FuzzStructCodec's.
func FuzzObservedReads(f *testing.F) {
	b, err := proto.Marshal(codecRequest(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, wire []byte) {
		want := &fnv1.RunFunctionRequest{}
		if proto.Unmarshal(wire, want) != nil {
			return
		}
		checkEncodedObservedReads(t, wire, want)
	})
}

// TestFunctionsSeeNoWire holds the functions (non-test files under
// functions/) to the typed API of Request and Plan: none imports the codec
// or structpb.
func TestFunctionsSeeNoWire(t *testing.T) {
	banned := map[string]bool{
		"github.com/tenantkube/tenantkube/internal/function/wire": true,
		"google.golang.org/protobuf/types/known/structpb":         true,
	}
	checked := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "functions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); banned[p] {
				t.Errorf("%s imports %s; read through function.Request, write through function.Plan", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: wrong root?", checked)
	}
}

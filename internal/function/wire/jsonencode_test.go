package wire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// TestAppendJSONMatchesEncodingJSON holds appendJSON to encoding/json:
// the same bytes and the same decoded value.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	cases := []any{
		nil, map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"b": 1.0, "a": "x\"y\\z\n\t\b\f\r\x01\x1f\x7f <a&b> é ✓ \u2028\u2029 \xff\xe2\x80", "B": true, "c": nil, "d": []any{1e21, 1e-7, 1e-6, 123456789.0, -0.0, 0.5, int64(-7), 3}},
		map[string]any{"f": []any{math.MaxFloat64, math.SmallestNonzeroFloat64, 1e20, 999999999999999999999.0}},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		cases = append(cases, randomObject(r, 0))
	}
	for i, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendJSON(nil, c)
		if !ok {
			t.Fatalf("case %d: appendJSON refused %v", i, c)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("case %d: appendJSON wrote invalid JSON %s: %v", i, got, err)
		}
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("case %d: decoded values differ:\nencoding/json %s\nappendJSON    %s", i, want, got)
		}
		if string(want) != string(got) {
			t.Fatalf("case %d: bytes differ:\nencoding/json %s\nappendJSON    %s", i, want, got)
		}
	}
	for _, c := range []any{json.Number("1450"), json.Number(""), json.Number("-0.5e+10"), json.Number("12345678901234567890"),
		map[string]any{"n": []any{json.Number("1"), json.Number("0"), json.Number("1E-7")}}} {
		want, _ := json.Marshal(c)
		got, err := MarshalJSON(c)
		if err != nil || string(got) != string(want) {
			t.Errorf("MarshalJSON(%v) = %s, %v; want %s", c, got, err, want)
		}
	}
	for _, bad := range []string{"01", "1.", ".5", "-", "+1", "1e", "0x10", "1 ", "NaN", "--1", "1.5.2"} {
		_, werr := json.Marshal(json.Number(bad))
		if _, err := MarshalJSON(map[string]any{"n": json.Number(bad)}); err == nil || werr == nil {
			t.Errorf("json.Number(%q): MarshalJSON error %v, json.Marshal error %v; want both", bad, err, werr)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": struct{}{}}, []any{int32(1)}, json.Number("01")} {
		if _, ok := appendJSON(nil, bad); ok {
			t.Errorf("appendJSON(%v): want a refusal", bad)
		}
	}
}

// TestAppendValueJSONMatchesAsInterface holds appendValueJSON to appendJSON
// of AsInterface, for random values and the kinds AsInterface special-cases.
func TestAppendValueJSONMatchesAsInterface(t *testing.T) {
	values := []*structpb.Value{
		nil, {}, structpb.NewNullValue(), structpb.NewNumberValue(math.NaN()), structpb.NewNumberValue(math.Inf(1)),
		structpb.NewNumberValue(math.Inf(-1)), {Kind: (*structpb.Value_StructValue)(nil)}, {Kind: &structpb.Value_StructValue{}},
		{Kind: &structpb.Value_ListValue{}}, structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{nil, {}}}),
		structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": nil, "b": {}}}),
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		v, err := structpb.NewValue(randomObject(r, 0))
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	for i, v := range values {
		want, ok := appendJSON(nil, v.AsInterface())
		if !ok {
			t.Fatalf("value %d: appendJSON refused %v", i, v)
		}
		if got := appendValueJSON(nil, v); string(got) != string(want) {
			t.Fatalf("value %d:\nwant %s\ngot  %s", i, want, got)
		}
	}
}

package function

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestAppendJSONMatchesEncodingJSON holds appendJSON to encoding/json:
// the same bytes (apart from HTML escaping, which decoding ignores) and the
// same decoded value.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	cases := []any{
		nil, map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"b": 1.0, "a": "x\"y\\z\n\t\x01\x1f é ✓ \u2028 \xff", "B": true, "c": nil, "d": []any{1e21, 1e-7, 1e-6, 123456789.0, -0.0, 0.5, int64(-7), 3}},
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
		if unHTML(want) != string(got) {
			t.Fatalf("case %d: bytes differ:\nencoding/json %s\nappendJSON    %s", i, want, got)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": struct{}{}}, []any{int32(1)}} {
		if _, ok := appendJSON(nil, bad); ok {
			t.Errorf("appendJSON(%v): want a refusal", bad)
		}
	}
}

// unHTML undoes encoding/json's HTML escaping of <, > and &, and of U+2028
// and U+2029, which appendJSON does not do.
func unHTML(b []byte) string {
	out := string(b)
	for _, r := range []struct{ esc, raw string }{{`\u003c`, "<"}, {`\u003e`, ">"}, {`\u0026`, "&"}, {`\u2028`, "\u2028"}, {`\u2029`, "\u2029"}} {
		out = strings.ReplaceAll(out, r.esc, r.raw)
	}
	return out
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
	if err := StructInto(map[string]any{"name": "x", "items": []any{map[string]any{"n": 3.0, "f": 1e-7}}}, &out); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out); got != "{x [{3 1e-07}]}" {
		t.Errorf("StructInto decoded %s", got)
	}
}

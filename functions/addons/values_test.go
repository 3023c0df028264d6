package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func decode(t *testing.T, s string) Values {
	t.Helper()
	v, err := DecodeOverride(&apiextensionsv1.JSON{Raw: []byte(s)}, field.NewPath("x"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDeepMerge(t *testing.T) {
	cases := map[string]struct{ base, override, want string }{
		"user wins key by key":        {`{"a":1,"b":2}`, `{"b":3}`, `{"a":1,"b":3}`},
		"nested maps merge":           {`{"a":{"x":1,"y":{"z":1}}}`, `{"a":{"y":{"w":2}}}`, `{"a":{"x":1,"y":{"w":2,"z":1}}}`},
		"lists are replaced":          {`{"a":[1,2,3]}`, `{"a":[4]}`, `{"a":[4]}`},
		"map replaced by scalar":      {`{"a":{"x":1}}`, `{"a":"s"}`, `{"a":"s"}`},
		"scalar replaced by map":      {`{"a":"s"}`, `{"a":{"x":1}}`, `{"a":{"x":1}}`},
		"null deletes (Helm)":         {`{"a":{"x":1,"y":2}}`, `{"a":{"x":null}}`, `{"a":{"y":2}}`},
		"new key added":               {`{"a":1}`, `{"b":{"c":[1]}}`, `{"a":1,"b":{"c":[1]}}`},
		"empty override":              {`{"a":1}`, `{}`, `{"a":1}`},
		"big integers stay exact":     {`{}`, `{"n":9007199254740993}`, `{"n":9007199254740993}`},
		"false overrides true":        {`{"a":true}`, `{"a":false}`, `{"a":false}`},
		"empty map merges to nothing": {`{"a":{"x":1}}`, `{"a":{}}`, `{"a":{"x":1}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			base, ov := decode(t, c.base), decode(t, c.override)
			baseBefore, _ := json.Marshal(base)
			got, err := json.Marshal(DeepMerge(base, ov))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			if after, _ := json.Marshal(base); string(after) != string(baseBefore) {
				t.Errorf("base modified: %s → %s", baseBefore, after)
			}
		})
	}
}

func TestDeepMergeNoAliasing(t *testing.T) {
	ov := decode(t, `{"l":[{"a":1}],"m":{"k":"v"}}`)
	out := DeepMerge(Values{}, ov)
	out["m"].(map[string]any)["k"] = "changed"
	out["l"].([]any)[0].(map[string]any)["a"] = 2
	if d := cmp.Diff(decode(t, `{"l":[{"a":1}],"m":{"k":"v"}}`), ov); d != "" {
		t.Errorf("override modified through the result:\n%s", d)
	}
}

func TestDecodeOverride(t *testing.T) {
	for _, ok := range []string{`{}`, `null`, ``, `{"a":1}`} {
		if _, err := DecodeOverride(&apiextensionsv1.JSON{Raw: []byte(ok)}, field.NewPath("p")); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if v, err := DecodeOverride(nil, field.NewPath("p")); err != nil || len(v) != 0 {
		t.Errorf("nil: %v %v", v, err)
	}
	for _, bad := range []string{`[1]`, `"s"`, `1`, `{`} {
		_, err := DecodeOverride(&apiextensionsv1.JSON{Raw: []byte(bad)}, field.NewPath("spec", "addons", "cilium", "valuesOverride"))
		if fe, ok := err.(*field.Error); !ok || fe.Field != "spec.addons.cilium.valuesOverride" {
			t.Errorf("%q: want a field error on the override, got %v", bad, err)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, s := range []string{`true`, `"true"`, `"True"`, `"TRUE"`, `"yes"`, `"Yes"`, `"on"`, `"On"`, `"y"`, `"Y"`, `1`, `"1"`, `1.0`} {
		v := decode(t, `{"v":`+s+`}`)["v"]
		if !Truthy(v) {
			t.Errorf("%s not truthy", s)
		}
	}
	for _, s := range []string{`false`, `"false"`, `"no"`, `"off"`, `0`, `2`, `""`, `{}`, `[]`, `"enabled"`} {
		v := decode(t, `{"v":`+s+`}`)["v"]
		if Truthy(v) {
			t.Errorf("%s truthy", s)
		}
	}
}

func TestWrap(t *testing.T) {
	if d := cmp.Diff(Values{"cilium": Values{"MTU": 1}}, Wrap("cilium", Values{"MTU": 1})); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff(Values{"MTU": 1}, Wrap("", Values{"MTU": 1})); d != "" {
		t.Error(d)
	}
}

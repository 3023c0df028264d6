package wire

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// canonicalReference is the canonical form as first defined: decode with
// encoding/json into an any, delete null members of objects, encode with
// encoding/json. AppendCanonicalJSON must give exactly its bytes.
func canonicalReference(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(dropNullMembers(v))
}

func dropNullMembers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNullMembers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNullMembers(e)
		}
	}
	return v
}

// canonicalCases are JSON texts with what encoding/json output for typed
// values can hold (custom marshallers and RawMessage included): escapes,
// whitespace, repeated keys, nulls at every depth, numbers of every form.
var canonicalCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `"x"`, `{}`, `[]`, `[null]`, `{"a":null}`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1,"a":null}`, `{"a":null,"a":1}`, `{"b":null,"a":1,"b":2,"a":null}`,
	` { "z" : [ 1.0 , 2e3 , -0 , 1E-7 , 1.0e+2 , null , { "n" : null } ] , "a" : { } } `,
	`{"a":[null,[null,{"x":null,"y":[]}]],"b":{"c":{"d":null,"e":[{"f":null}]}}}`,
	`{"\u0062":1,"a":2,"\u0061\u0062":3,"a\/b":4,"<":5,"&":6,">":7,"":8,"é":9,"z\u00e9":10}`,
	`{"s":"\u003c\u003e\u0026 \u2028\u2029 \b\f\n\r\t\u0001\u001f\u007f \"\\\/ é ✓ 😀"}`,
	`{"s":"\ud83d\ude00 \ud800 \udc00 \ud800\u0041 \ud800\ud800\udc00 \uDBFF\uDFFF \uD800x"}`,
	"{\"s\":\"\xff \xe2\x80 \xc0\xaf ok\",\"\xfe\":1}",
	`[1,12,123456789012345,1234567890123456,12345678901234567890,9007199254740993,-9007199254740993]`,
	`[0.1,0.5,1e20,1e21,1e-6,1e-7,123456789e-20,1e308,1e-400,4.9e-324,2.5E+10,-1.5e-10,100,1e2,0e0,-0.0]`,
	`{"k8s":{"metadata":{"name":"demo","labels":{"b":"2","a":"1"},"creationTimestamp":null},"spec":{"replicas":3}}}`,
}

func TestAppendCanonicalJSONMatchesReference(t *testing.T) {
	for i, c := range canonicalCases {
		compareCanonical(t, fmt.Sprintf("case %d", i), []byte(c))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 3000 {
		raw, err := json.Marshal(randomValue(r, 0))
		if err != nil {
			t.Fatal(err)
		}
		compareCanonical(t, fmt.Sprintf("random %d", i), raw)
	}
}

func TestAppendCanonicalJSONRejects(t *testing.T) {
	for _, c := range []string{``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `-`, `1e`, `tru`, `nul`,
		`"\x01"`, `"\q"`, `"\'"`, `"\u12"`, `"abc`, `1 2`, `[1e400]`, `{"a":-1e999}`} {
		if _, err := canonicalReference([]byte(c)); err == nil {
			t.Fatalf("the reference accepts %q: the cases must be ones it rejects", c)
		}
		if got, err := AppendCanonicalJSON(nil, []byte(c)); err == nil {
			t.Errorf("AppendCanonicalJSON(%q) = %s, want an error", c, got)
		}
		if _, err := CanonicalSHA256([]byte(c)); err == nil {
			t.Errorf("CanonicalSHA256(%q): want an error", c)
		}
	}
}

func compareCanonical(t *testing.T, name string, raw []byte) {
	t.Helper()
	want, werr := canonicalReference(raw)
	got, gerr := AppendCanonicalJSON([]byte("prefix"), raw)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s %q: error mismatch: reference %v, AppendCanonicalJSON %v", name, raw, werr, gerr)
	}
	if werr == nil && "prefix"+string(want) != string(got) {
		t.Fatalf("%s %q:\nwant prefix%s\ngot  %s", name, raw, want, got)
	}
	// CanonicalSHA256 reuses its buffers from call to call.
	sum, serr := CanonicalSHA256(raw)
	if (werr != nil) != (serr != nil) || werr == nil && sum != sha256.Sum256(want) {
		t.Fatalf("%s %q: CanonicalSHA256 = %x, %v; want the SHA-256 of %s, %v", name, raw, sum, serr, want, werr)
	}
}

func FuzzAppendCanonicalJSON(f *testing.F) {
	for _, c := range canonicalCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := canonicalReference(raw)
		got, gerr := AppendCanonicalJSON(nil, raw)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: error mismatch: reference %v, AppendCanonicalJSON %v", raw, werr, gerr)
		}
		if werr == nil && string(want) != string(got) {
			t.Fatalf("%q:\nwant %s\ngot  %s", raw, want, got)
		}
	})
}

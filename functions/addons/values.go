package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Values is a Helm values tree as decoded from JSON with numbers kept
// exact (json.Number), so an override of 1450 stays 1450 and a 64-bit
// integer is not rounded through float64.
type Values = map[string]any

// DecodeOverride decodes a valuesOverride into a Values tree. A nil or JSON
// null override is an empty tree. It returns a *field.Error at path when the
// override is not a JSON object (the XRD declares type: object; docs/validation.md
// re-checks it because render and old objects skip admission).
func DecodeOverride(raw *apiextensionsv1.JSON, path *field.Path) (Values, error) {
	if raw == nil || len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
		return Values{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, field.Invalid(path, string(raw.Raw), "not valid JSON: "+err.Error())
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, field.Invalid(path, string(raw.Raw), "must be an object of Helm values")
	}
	return m, nil
}

// DeepMerge returns a new tree: base with override merged over it, key by
// key (docs/architecture.md: the user wins). Nested objects are merged recursively;
// every other value, lists included, is replaced by the override's. A null
// in the override deletes the key, as it does in Helm. Neither input is
// modified, and the result shares no map or slice with them.
func DeepMerge(base, override Values) Values {
	out := DeepCopy(base)
	for k, ov := range override {
		if ov == nil {
			delete(out, k)
			continue
		}
		om, oIsMap := ov.(map[string]any)
		bm, bIsMap := out[k].(map[string]any)
		if oIsMap && bIsMap {
			out[k] = DeepMerge(bm, om)
			continue
		}
		out[k] = deepCopyValue(ov)
	}
	return out
}

// DeepCopy returns a copy of v sharing no map or slice with it; nulls inside
// nested objects are dropped (Helm treats them as absent).
func DeepCopy(v Values) Values {
	out := make(Values, len(v))
	for k, x := range v {
		if x == nil {
			continue
		}
		out[k] = deepCopyValue(x)
	}
	return out
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return DeepCopy(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return x
	}
}

// Wrap nests values under key (a Wrapped chart layout); an empty
// key returns values unchanged.
func Wrap(key string, values Values) Values {
	if key == "" {
		return values
	}
	return Values{key: values}
}

// Lookup walks a values tree along keys and returns the value found and
// whether every key was present.
func Lookup(v Values, keys ...string) (any, bool) {
	var cur any = v
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Truthy reports whether a Helm value is one of the spellings YAML 1.1 and
// Helm's string conversion treat as "on": the boolean true; a string that is,
// ignoring case, true, yes, on, y or 1; the number 1. (The seed chart's
// ouroboros guard accepts the same set.)
func Truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "y", "1":
			return true
		}
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 1
	case float64:
		return x == 1
	case int:
		return x == 1
	case int64:
		return x == 1
	}
	return false
}

// MarshalValues encodes a values tree as JSON with sorted keys
// (encoding/json's bytes, function.JSON), so the same input always gives the
// same bytes. It returns the encoding error.
func MarshalValues(v Values) (*apiextensionsv1.JSON, error) {
	raw, err := function.JSON(v)
	if err != nil {
		return nil, fmt.Errorf("cannot encode Helm values: %w", err)
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}

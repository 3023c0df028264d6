// Package upstreamtest holds the test helpers that prove the hand-written
// upstream types against the CRDs in ../shared/crds with package
// internal/schema. It is imported only by tests.
package upstreamtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "sigs.k8s.io/json"

	"github.com/tenantkube/tenantkube/internal/schema"
)

// ownPkgPrefix is the import-path prefix of the types whose fields
// UnsetFields inspects.
const ownPkgPrefix = "github.com/tenantkube/tenantkube/internal/upstream/"

// ToUnstructured converts obj to an unstructured object through JSON, as
// a function's output reaches the API server. It fails the test if obj
// does not encode to a JSON object.
func ToUnstructured(t testing.TB, obj any) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("marshal %T: %v", obj, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("unmarshal %T as object: %v", obj, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// MustLoadShared returns schema.LoadShared's validator, failing the test
// if the shared CRDs cannot be loaded.
func MustLoadShared(t testing.TB) *schema.Validator {
	t.Helper()
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatalf("load shared CRDs: %v", err)
	}
	return v
}

// Validate validates u against the shared CRDs (schema.LoadShared) and
// fails the test with every problem (including fields that would be
// pruned) if there is any.
func Validate(t testing.TB, u *unstructured.Unstructured) {
	t.Helper()
	if err := MustLoadShared(t).Validate(u); err != nil {
		t.Errorf("object does not validate against its CRD:\n%v", err)
	}
}

// StrictDecode decodes JSON data into out, failing the test on malformed
// JSON, unknown fields, duplicate fields or case-mismatched field names.
func StrictDecode(t testing.TB, data []byte, out any) {
	t.Helper()
	strictErrs, err := kjson.UnmarshalStrict(data, out)
	if err != nil {
		t.Fatalf("decode into %T: %v", out, err)
	}
	for _, e := range strictErrs {
		t.Errorf("decode into %T: %v", out, e)
	}
}

// CheckObject proves obj (a pointer to a typed object) against its CRD:
// it converts obj to unstructured via JSON, validates it (zero errors,
// zero pruned fields), strictly decodes the JSON back into a new value of
// the same type and requires it to be semantically equal to obj.
func CheckObject[T any](t *testing.T, obj *T) {
	t.Helper()
	u := ToUnstructured(t, obj)
	Validate(t, u)
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	back := new(T)
	StrictDecode(t, data, back)
	if !equality.Semantic.DeepEqual(obj, back) {
		a, _ := json.MarshalIndent(obj, "", "  ")
		b, _ := json.MarshalIndent(back, "", "  ")
		t.Errorf("JSON round trip changed %T (-before +after):\n%s", obj, cmp.Diff(string(a), string(b)))
	}
}

// CheckStatusJSON proves that statusJSON (a status shaped as the CRD
// defines it) is valid for the CRD, by validating base (a valid object of
// the kind) with its status replaced by statusJSON, and then strictly
// decodes statusJSON into out (a pointer to the status type).
func CheckStatusJSON(t *testing.T, base any, statusJSON string, out any) {
	t.Helper()
	u := ToUnstructured(t, base)
	status := map[string]any{}
	if err := json.Unmarshal([]byte(statusJSON), &status); err != nil {
		t.Fatalf("status JSON: %v", err)
	}
	u.Object["status"] = status
	Validate(t, u)
	StrictDecode(t, []byte(statusJSON), out)
}

// UnsetFields returns "Type.Field" for every field of this module's
// upstream types, reachable from objs, that is zero in every occurrence in
// objs; an empty result means the objects together set every field.
// Fields of embedded metav1 types and the insides of types from other
// packages (corev1, metav1) are not inspected.
func UnsetFields(objs ...any) []string {
	seen := map[string]bool{}
	for _, o := range objs {
		walk(reflect.ValueOf(o), seen)
	}
	var out []string
	for k, set := range seen {
		if !set {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func own(t reflect.Type) bool {
	return strings.HasPrefix(t.PkgPath(), ownPkgPrefix)
}

func walk(v reflect.Value, seen map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), seen)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walk(v.MapIndex(k), seen)
		}
	case reflect.Struct:
		t := v.Type()
		if !own(t) {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || (f.Anonymous && !own(f.Type)) {
				continue
			}
			key := fmt.Sprintf("%s.%s", t.Name(), f.Name)
			fv := v.Field(i)
			if _, ok := seen[key]; !ok {
				seen[key] = false
			}
			if !fv.IsZero() || (f.Type.Kind() == reflect.Struct && f.Type.NumField() == 0) {
				seen[key] = true
			}
			walk(fv, seen)
		}
	}
}

// Package platform reads the platform settings every tenantkube function
// shares: one cluster-scoped Crossplane EnvironmentConfig
// (apiextensions.crossplane.io/v1beta1) named tenantkube, whose data holds
// function input fields by their JSON names. A platform team edits that one
// object; no package is rebuilt.
//
// The settings are the fields of settings.Settings
// (apis/settings/v1alpha1), which every function input embeds; the
// functions read them with Functions.
//
// Each function requests the EnvironmentConfig as a required resource (the
// Composition also declares it as each step's bootstrap requirement, so
// Crossplane fetches it before the first call) and merges its data over the
// step's input from the Composition, which keeps the documented defaults:
// Go defaults < Composition input < EnvironmentConfig. A key names one
// setting, the same for every function.
//
// What arrives:
//   - the EnvironmentConfig: its data is merged (objects recursively, as a
//     JSON merge patch, RFC 7386; null unsets a field), decoded strictly into
//     the input's Go type and validated by the function; an unknown key, a
//     wrong type or a bad value is a Fatal result naming the data field, so
//     nothing already running is touched;
//   - no such object (Crossplane answered the requirement with nothing): the
//     input and its defaults apply, so a platform that installs nothing
//     extra works;
//   - the requirement not answered yet (a first call without the bootstrap
//     requirement, render without it, tests): the input and its defaults
//     apply too. Such a response is never the one Crossplane applies: it
//     asks for a resource the request did not carry, so Crossplane fetches
//     it and calls the function again, and only the response whose
//     requirements no longer change is used. An object not fetched yet
//     therefore never shrinks the applied desired state; an EnvironmentConfig
//     Crossplane cannot read fails the whole reconcile instead.
package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	jsonpatch "github.com/evanphx/json-patch/v5"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	settings "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/suggest"
)

// The platform settings object.
const (
	APIVersion = "apiextensions.crossplane.io/v1beta1"
	Kind       = "EnvironmentConfig"
	// Name is the EnvironmentConfig's metadata.name.
	Name = "tenantkube"
	// RequirementKey is the required-resources key it arrives under, in
	// the functions' requirements and the Composition's bootstrap
	// requirements alike.
	RequirementKey = "platform-settings"
)

// Selector selects the platform settings object.
func Selector() *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: APIVersion, Kind: Kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: Name}}
}

// Reader reads the platform settings over one function's input. The keys
// it accepts are the fields of every input type it was made with, so a key
// meant for another function is not refused by this one.
type Reader struct {
	// known are the data keys some input has.
	known map[string]bool
	// unknown is the detail of an error naming a data field no input has.
	unknown string
}

// Functions reads the platform settings over any function input, each of
// which embeds settings.Settings.
var Functions = newReader(settings.Inputs, &settings.Settings{})

// NewReader returns the Reader of the settings of inputs, pointers to the
// function input types (Go structs whose JSON fields are the settings).
func NewReader(inputs ...any) *Reader {
	names := make([]string, 0, len(inputs))
	for _, in := range inputs {
		names = append(names, reflect.TypeOf(in).Elem().Name())
	}
	return newReader(names, inputs...)
}

// newReader returns the Reader of the fields of types, pointers to Go
// structs, naming the inputs in errors.
func newReader(inputs []string, types ...any) *Reader {
	rd := &Reader{known: map[string]bool{}}
	for _, t := range types {
		for _, k := range Keys(t) {
			rd.known[k] = true
		}
	}
	rd.unknown = "unknown setting: no field of a tenantkube function input (" + strings.Join(inputs, ", ") + ") has this name"
	return rd
}

// Settings says where a function's input came from.
type Settings struct {
	// Arrived is true when Crossplane answered the requirement (with the
	// object or with nothing).
	Arrived bool
	// Found is true when the EnvironmentConfig exists.
	Found bool
	// set are the data keys the EnvironmentConfig gave this input.
	set map[string]bool
}

// Read requests the platform settings in rsp and merges the
// EnvironmentConfig's data, when r carries it, over in: a pointer to a
// function input already decoded from the Composition's step. It returns an
// error naming the data field for an unknown key or a value the input type
// cannot take; in is unchanged then.
func (rd *Reader) Read(r *function.Request, rsp *fnv1.RunFunctionResponse, in any) (Settings, error) {
	function.Require(rsp, RequirementKey, Selector())
	items, arrived, err := function.Required[environmentConfig](r, RequirementKey)
	s := Settings{Arrived: arrived}
	if err != nil {
		return s, field.InternalError(dataPath(), err)
	}
	if len(items) == 0 {
		return s, nil
	}
	s.Found = true
	data, _ := items[0].Data.(map[string]any)
	return s, s.merge(rd, data, in)
}

// environmentConfig is the part of the EnvironmentConfig read: its data, a
// JSON object (anything else sets nothing, as an empty object).
type environmentConfig struct {
	Data any `json:"data"`
}

func (s *Settings) merge(rd *Reader, data map[string]any, in any) error {
	root := dataPath()
	own := map[string]bool{}
	for _, k := range Keys(in) {
		own[k] = true
	}
	patch := map[string]any{}
	for _, k := range sortedKeys(data) {
		if !rd.known[k] {
			known := knownKeys(rd.known)
			return field.Forbidden(root.Child(k), rd.unknown+suggest.DidYouMean(k, known)+"; the settings are "+strings.Join(known, ", "))
		}
		if own[k] {
			patch[k] = data[k]
		}
	}
	if len(patch) == 0 {
		return nil
	}
	base, err := json.Marshal(in)
	if err != nil {
		return field.InternalError(root, err)
	}
	p, err := json.Marshal(patch)
	if err != nil {
		return field.InternalError(root, err)
	}
	merged, err := jsonpatch.MergePatch(base, p)
	if err != nil {
		return field.InternalError(root, err)
	}
	out := reflect.New(reflect.TypeOf(in).Elem()).Interface()
	strict, err := kjson.UnmarshalStrict(merged, out)
	if err != nil {
		return decodeError(root, patch, err)
	}
	if len(strict) > 0 {
		return strictError(root, strict[0], rd.unknown, reflect.TypeOf(in).Elem())
	}
	reflect.ValueOf(in).Elem().Set(reflect.ValueOf(out).Elem())
	s.set = map[string]bool{}
	for k := range patch {
		s.set[k] = true
	}
	return nil
}

// Attribute names the EnvironmentConfig's field in err (a *field.Error of
// the input's validation, its path under "input", or an aggregate of them)
// when the EnvironmentConfig set that field; any other error is returned
// as is.
func (s Settings) Attribute(err error) error {
	if len(s.set) == 0 || err == nil {
		return err
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		out := make([]error, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			out = append(out, s.Attribute(e))
		}
		return utilerrors.NewAggregate(out)
	}
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err
	}
	return s.attribute(fe)
}

func (s Settings) attribute(fe *field.Error) *field.Error {
	rest, ok := strings.CutPrefix(fe.Field, "input.")
	if !ok {
		return fe
	}
	top := rest
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		top = rest[:i]
	}
	if !s.set[top] {
		return fe
	}
	out := *fe
	out.Field = dataPath().String() + "." + rest
	return &out
}

// dataPath is the root of the field paths naming the EnvironmentConfig's
// settings in errors: "EnvironmentConfig(tenantkube).data".
func dataPath() *field.Path {
	return field.NewPath(Kind + "(" + Name + ")").Child("data")
}

// Keys returns the JSON names of the top-level fields of the input type
// in points to (inlined embedded structs included), without apiVersion,
// kind and metadata.
func Keys(in any) []string {
	keys := jsonKeys(reflect.TypeOf(in).Elem())
	sort.Strings(keys)
	return keys
}

func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			keys = append(keys, jsonKeys(f.Type)...)
		case name == "" || name == "-" || !f.IsExported():
		case name == "apiVersion" || name == "kind" || name == "metadata":
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// decodeError names the data field a JSON type error is about.
func decodeError(root *field.Path, patch map[string]any, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return field.Invalid(root.Child(te.Field), valueAt(patch, te.Field), fmt.Sprintf("a JSON %s cannot be a %s", te.Value, te.Type))
	}
	return field.Invalid(root, "<see message>", err.Error())
}

// strictError names the data field of a strict-decoding error of
// sigs.k8s.io/json (an unknown field, such as images.csiDrivr) with the
// nearest field of its object in t, the input's type.
func strictError(root *field.Path, err error, unknown string, t reflect.Type) error {
	var fe interface{ FieldPath() string }
	if errors.As(err, &fe) && fe.FieldPath() != "" {
		path := strings.Split(fe.FieldPath(), ".")
		return field.Forbidden(root.Child(fe.FieldPath()), unknown+suggest.DidYouMean(path[len(path)-1], keysAt(t, path[:len(path)-1])))
	}
	return field.Invalid(root, "<see message>", err.Error())
}

// keysAt is jsonKeys of the struct at the JSON path in t (nil when the
// path leads to no struct).
func keysAt(t reflect.Type, path []string) []string {
	for _, name := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByJSON(t, name)
		if !ok {
			return nil
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return jsonKeys(t)
}

// fieldByJSON is the field of struct t (or of a struct it embeds) whose
// JSON name is name.
func fieldByJSON(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			if g, ok := fieldByJSON(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// valueAt returns the value at a dotted JSON path in m, or nil.
func valueAt(m map[string]any, path string) any {
	var at any = m
	for _, p := range strings.Split(path, ".") {
		obj, ok := at.(map[string]any)
		if !ok {
			return nil
		}
		at = obj[p]
	}
	return at
}

func knownKeys(known map[string]bool) []string {
	out := make([]string, 0, len(known))
	for k := range known {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

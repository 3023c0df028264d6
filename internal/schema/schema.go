// Package schema validates Kubernetes objects against the upstream
// CustomResourceDefinitions in ../shared/crds, the way a real API server
// would on create: unknown fields that the server would prune are reported,
// the object is defaulted, then checked against the served version's
// OpenAPI v3 schema, list-type invariants, embedded ObjectMeta and the CEL
// x-kubernetes-validations rules.
//
// It exists so that every object the composition functions emit can be
// proven against the CRD schemas without an API server.
package schema

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/suggest"
)

// CELCostBudget is the total CEL evaluation cost one Validate call may spend
// over all x-kubernetes-validations rules of an object; it is the API
// server's own per-object runtime budget (about one second of evaluation).
// When it runs out, the remaining rules are reported as not evaluated.
const CELCostBudget int64 = celconfig.RuntimeCELCostBudget

// CELPerCallLimit is the cost limit of a single CEL rule evaluation, the
// API server's own value; a rule whose estimated cost exceeds it is reported
// by CheckRules and, when its field is present, by Validate.
const CELPerCallLimit uint64 = celconfig.PerCallLimit

// PrunedFieldDetail is the Detail of every field.Error that reports a field
// the API server would drop (prune) because the CRD schema does not know it
// and does not preserve unknown fields there.
const PrunedFieldDetail = "unknown field, would be pruned by the API server"

// StreamSkippedAPIVersions lists the apiVersions that ValidateYAMLStream
// passes over without error, because no CRD describes them: Kubernetes
// built-in kinds (validated by their typed Go structs) and the tenantkube XR
// (validated against the XRD by the caller). An entry "group/*" matches
// every version of that API group; any other entry must equal the object's
// apiVersion exactly. Validate itself never skips: it reports these kinds as
// having no CRD.
var StreamSkippedAPIVersions = []string{
	"v1",
	"apps/v1",
	"batch/v1",
	"rbac.authorization.k8s.io/v1",
	"networking.k8s.io/v1",
	"tenantkube.io/*",
}

// Validator holds the parsed CustomResourceDefinitions of one directory,
// indexed by group and kind. It is safe for concurrent use; the expensive
// per-version parts (OpenAPI validator, compiled CEL programs) are built on
// first use of that version and then reused.
type Validator struct {
	dir   string
	kinds map[schema.GroupKind]*crdInfo
}

// crdInfo is one CRD: its scope and versions.
type crdInfo struct {
	name       string
	file       string
	namespaced bool
	versions   map[string]*versionInfo
}

// versionInfo is one version of one CRD.
type versionInfo struct {
	name       string
	served     bool
	structural *structuralschema.Structural
	internal   *apiextensions.JSONSchemaProps

	once            sync.Once
	schemaValidator apiservervalidation.SchemaValidator
	celValidator    *cel.Validator
	buildErr        error
}

// ValidationError is the error Validate returns for an object that fails
// validation: the object's identity and every problem found, each with its
// field path in field.Path's form (field.Error's Field, e.g.
// "spec.replicas", "spec.nodeGroups[md0].diskSize", "spec.list[0]"). Use
// errors.As to get at Errs.
type ValidationError struct {
	// GroupVersionKind of the object as it was given.
	GroupVersionKind schema.GroupVersionKind
	// Namespace and Name of the object, as given (may be empty).
	Namespace, Name string
	// Errs lists every problem, in the order found: type/metadata problems,
	// pruned fields, OpenAPI schema violations, list-type and embedded
	// metadata violations, then CEL rule failures.
	Errs field.ErrorList
}

// Error renders one line per problem, prefixed with the object's identity.
func (e *ValidationError) Error() string {
	var b strings.Builder
	id := e.Name
	if e.Namespace != "" {
		id = e.Namespace + "/" + e.Name
	}
	fmt.Fprintf(&b, "%s %s %q: %d problem(s)", e.GroupVersionKind.GroupVersion(), e.GroupVersionKind.Kind, id, len(e.Errs))
	for _, fe := range e.Errs {
		b.WriteString("\n  - ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

type cacheEntry struct {
	once sync.Once
	v    *Validator
	err  error
}

// cache memoises Load per absolute directory, so tests in one process parse
// the CRDs once.
var cache sync.Map // string -> *cacheEntry

// Load parses every CustomResourceDefinition (apiextensions.k8s.io/v1) in
// the *.yaml / *.yml files under dir, recursively (so the crossplane/
// subdirectory of ../shared/crds is included), and returns a Validator for
// them. YAML documents of other kinds are ignored. Results are cached per
// absolute directory: a second Load of the same directory returns the same
// *Validator (or the same error) without re-reading the files.
//
// Load fails if dir cannot be read, a file does not parse, two CRDs define
// the same group and kind, or a version's schema is missing or not
// structural (the API server would refuse such a CRD).
func Load(dir string) (*Validator, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve CRD directory %q: %w", dir, err)
	}
	e, _ := cache.LoadOrStore(abs, &cacheEntry{})
	entry := e.(*cacheEntry)
	entry.once.Do(func() { entry.v, entry.err = load(abs) })
	return entry.v, entry.err
}

// FromCRDs returns a Validator for the given CustomResourceDefinitions
// (for example the one Crossplane derives from an XRD), not cached.
func FromCRDs(name string, crds ...*apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	v := &Validator{dir: name, kinds: map[schema.GroupKind]*crdInfo{}}
	for _, crd := range crds {
		if err := v.addCRD(name, crd); err != nil {
			return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	return v, nil
}

// LoadShared returns the Validator for the project's shared CRDs: it walks
// up from the current working directory to the directory holding go.mod
// (the module root) and loads <root>/../shared/crds with Load. It fails if
// no go.mod is found above the working directory or Load fails.
func LoadShared() (*Validator, error) {
	dir, err := SharedCRDDir()
	if err != nil {
		return nil, err
	}
	return Load(dir)
}

// SharedCRDDir returns <module root>/../shared/crds, where the module root
// is the nearest directory at or above the working directory that contains
// go.mod. It fails if there is none or the CRD directory does not exist.
func SharedCRDDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			crds := filepath.Join(filepath.Dir(d), "shared", "crds")
			if st, err := os.Stat(crds); err != nil || !st.IsDir() {
				return "", fmt.Errorf("module root %s has no ../shared/crds directory", d)
			}
			return crds, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod at or above %s", wd)
		}
		d = parent
	}
}

func load(dir string) (*Validator, error) {
	v := &Validator{dir: dir, kinds: map[schema.GroupKind]*crdInfo{}}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read CRD directory: %w", err)
	}
	sort.Strings(files)
	for _, f := range files {
		if err := v.loadFile(f); err != nil {
			return nil, err
		}
	}
	if len(v.kinds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinitions found under %s", dir)
	}
	return v, nil
}

// splitYAML returns the non-empty documents of a multi-document YAML stream
// as JSON.
func splitYAML(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		docs = append(docs, j)
	}
}

func (v *Validator) loadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	docs, err := splitYAML(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, doc := range docs {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(doc, &tm); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if tm.Kind != "CustomResourceDefinition" {
			continue
		}
		if tm.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return fmt.Errorf("%s: CustomResourceDefinition has apiVersion %q, want %s", path, tm.APIVersion, apiextensionsv1.SchemeGroupVersion)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(doc, crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := v.addCRD(path, crd); err != nil {
			return fmt.Errorf("%s: CRD %s: %w", path, crd.Name, err)
		}
	}
	return nil
}

func (v *Validator) addCRD(path string, crd *apiextensionsv1.CustomResourceDefinition) error {
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	if prev, ok := v.kinds[gk]; ok {
		return fmt.Errorf("group/kind %s already defined by %s", gk, prev.file)
	}
	info := &crdInfo{
		name:       crd.Name,
		file:       path,
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		versions:   map[string]*versionInfo{},
	}
	for i := range crd.Spec.Versions {
		ver := &crd.Spec.Versions[i]
		if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
			return fmt.Errorf("version %s has no openAPIV3Schema", ver.Name)
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(ver.Schema, internal, nil); err != nil {
			return fmt.Errorf("version %s: convert schema: %w", ver.Name, err)
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("version %s: schema is not structural: %w", ver.Name, err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"), s); len(errs) > 0 {
			return fmt.Errorf("version %s: schema is not structural: %w", ver.Name, errs.ToAggregate())
		}
		// As the API server does: a private copy whose defaults are pruned.
		s = s.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(s); err != nil {
			return fmt.Errorf("version %s: prune defaults: %w", ver.Name, err)
		}
		info.versions[ver.Name] = &versionInfo{
			name:       ver.Name,
			served:     ver.Served,
			structural: s,
			internal:   internal.OpenAPIV3Schema,
		}
	}
	v.kinds[gk] = info
	return nil
}

// build creates the OpenAPI schema validator and compiles the CEL rules of
// this version, once.
func (vi *versionInfo) build() error {
	vi.once.Do(func() {
		sv, _, err := apiservervalidation.NewSchemaValidator(vi.internal)
		if err != nil {
			vi.buildErr = fmt.Errorf("build OpenAPI validator: %w", err)
			return
		}
		vi.schemaValidator = sv
		// Compilation errors are kept inside the cel.Validator and surface
		// as "rule compile error" field errors when the rule's node is
		// present in a validated object.
		vi.celValidator = cel.NewValidator(vi.structural, true, CELPerCallLimit)
	})
	return vi.buildErr
}

// Kinds returns the group/version/kind of every version (served or not)
// the Validator knows, sorted by string form; useful in diagnostics.
func (v *Validator) Kinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for gk, info := range v.kinds {
		for name := range info.versions {
			out = append(out, gk.WithVersion(name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Validate checks obj as the API server would on create and returns nil if
// it is accepted unchanged, or a *ValidationError listing every problem with
// its field path. obj itself is not modified (work is done on a JSON
// round-trip copy, so Go int, float and struct values in obj are fine).
//
// Checks, in order:
//   - apiVersion and kind are set, a CRD defines that group/kind, the CRD
//     has that version and serves it;
//   - metadata: well-typed; name set (generateName alone is not enough) and
//     a valid DNS subdomain; labels, annotations, finalizers and owner
//     references valid; a cluster-scoped kind must have no namespace (a
//     namespaced kind may omit it, as Crossplane fills it in);
//   - unknown fields the server would prune (outside
//     x-kubernetes-preserve-unknown-fields, including inside metadata and
//     embedded resources' metadata): one Forbidden error each, Detail
//     PrunedFieldDetail;
//   - after applying schema defaults: the OpenAPI v3 schema (types,
//     required, enums, patterns, formats, bounds, ...), the
//     x-kubernetes-list-type set/map invariants, and embedded resources'
//     metadata;
//   - the CEL x-kubernetes-validations rules, within CELCostBudget, unless
//     a schema error is of a kind that makes the API server skip them
//     (then one error at path "x-kubernetes-validations" says so). Rules
//     that use oldSelf (transition rules) are not evaluated, as on create.
//     A rule that fails to compile is reported as an error at its path.
//
// Deprecated versions are accepted, as the API server accepts them (with a
// warning). Validate does not run the upstream projects' admission
// webhooks or the scale subresource checks, and does not strip status: a
// status in obj is validated against the status schema like any other
// field.
func (v *Validator) Validate(obj *unstructured.Unstructured) error {
	if obj == nil {
		return errors.New("nil object")
	}
	gvk := obj.GroupVersionKind()
	verr := &ValidationError{GroupVersionKind: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	u, errs := v.decode(obj)
	if len(errs) > 0 {
		verr.Errs = errs
		return verr
	}
	info, vi, errs := v.version(u)
	if len(errs) > 0 {
		verr.Errs = errs
		return verr
	}
	errs, ok := pruneAndCheckMeta(u, info, vi.structural)
	if ok {
		errs = append(errs, vi.validateDefaulted(u)...)
	}
	if len(errs) == 0 {
		return nil
	}
	verr.Errs = errs
	return verr
}

// decode is a JSON round-trip copy of obj: what an API server receives,
// with Go values (int, structs, ...) normalised to JSON types; or the
// problems of its type meta.
func (v *Validator) decode(obj *unstructured.Unstructured) (*unstructured.Unstructured, field.ErrorList) {
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), nil, fmt.Sprintf("object does not encode as JSON: %v", err))}
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), nil, fmt.Sprintf("object does not decode from JSON: %v", err))}
	}
	var errs field.ErrorList
	if u.GetAPIVersion() == "" {
		errs = append(errs, field.Required(field.NewPath("apiVersion"), "must be set"))
	}
	if obj.GroupVersionKind().Kind == "" {
		errs = append(errs, field.Required(field.NewPath("kind"), "must be set"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if _, err := schema.ParseGroupVersion(u.GetAPIVersion()); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), err.Error())}
	}
	return u, nil
}

// version is the CRD and the served version that describe u, built.
func (v *Validator) version(u *unstructured.Unstructured) (*crdInfo, *versionInfo, field.ErrorList) {
	gvk := u.GroupVersionKind()
	info, ok := v.kinds[gvk.GroupKind()]
	if !ok {
		return nil, nil, field.ErrorList{field.NotFound(field.NewPath("kind"), fmt.Sprintf("no CustomResourceDefinition for %s under %s", gvk.GroupKind(), v.dir))}
	}
	vi, ok := info.versions[gvk.Version]
	if !ok {
		return nil, nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), u.GetAPIVersion(), info.versionNames(gvk.Group))}
	}
	if !vi.served {
		return nil, nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("version is not served by CRD %s", info.name))}
	}
	if err := vi.build(); err != nil {
		return nil, nil, field.ErrorList{field.InternalError(field.NewPath("apiVersion"), fmt.Errorf("CRD %s: %w", info.name, err))}
	}
	return info, vi, nil
}

// pruneAndCheckMeta checks u's metadata and reports every field the API
// server would prune, in place; ok is false when u cannot be validated
// further.
func pruneAndCheckMeta(u *unstructured.Unstructured, info *crdInfo, s *structuralschema.Structural) (errs field.ErrorList, ok bool) {
	// Object meta: as the API server's decoder does, take it out, check it,
	// and put the normalised copy back.
	metaPath := field.NewPath("metadata")
	objectMeta, foundMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(metaPath, nil, fmt.Sprintf("malformed: %v", err))}, false
	case !foundMeta:
		return field.ErrorList{field.Required(metaPath, "must be set")}, false
	}
	for _, p := range metaUnknown {
		errs = append(errs, pruned(p, s))
	}
	metaToCheck := objectMeta.DeepCopy()
	if info.namespaced && metaToCheck.Namespace == "" {
		// Namespace is supplied by the request (Crossplane sets it for
		// composed resources); check the rest as if it were given.
		metaToCheck.Namespace = "default"
	}
	errs = append(errs, apimachineryvalidation.ValidateObjectMetaAccessor(metaToCheck, info.namespaced, apimachineryvalidation.NameIsDNSSubdomain, metaPath)...)

	// Pruning of unknown fields (never silently: each one is an error).
	for _, p := range structuralpruning.PruneWithOptions(u.Object, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, pruned(p, s))
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
	coerceErr, embeddedUnknown := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	for _, p := range embeddedUnknown {
		errs = append(errs, pruned(p, s))
	}
	if coerceErr != nil {
		return append(errs, coerceErr), false
	}
	if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
		return append(errs, field.InternalError(metaPath, err)), false
	}
	return errs, true
}

// validateDefaulted defaults u, then checks it against the OpenAPI schema,
// the list types and embedded metadata, then the CEL rules.
func (vi *versionInfo) validateDefaulted(u *unstructured.Unstructured) field.ErrorList {
	s := vi.structural
	structuraldefaulting.Default(u.Object, s)
	schemaErrs := schemaErrors(apiservervalidation.ValidateCustomResource(nil, u.Object, vi.schemaValidator), s)
	// The OpenAPI validator's order is not stable; sort by path, then type.
	sort.SliceStable(schemaErrs, func(i, j int) bool {
		if schemaErrs[i].Field != schemaErrs[j].Field {
			return schemaErrs[i].Field < schemaErrs[j].Field
		}
		return schemaErrs[i].Type < schemaErrs[j].Type
	})
	schemaErrs = append(schemaErrs, schemaobjectmeta.Validate(nil, u.Object, s, false)...)
	schemaErrs = append(schemaErrs, structurallisttype.ValidateListSetsAndMaps(nil, s, u.Object)...)
	if vi.celValidator == nil {
		return schemaErrs
	}
	// Metadata problems do not stop CEL here (the API server would stop;
	// reporting the spec's rule failures too is more useful).
	if blocking(schemaErrs) {
		return append(schemaErrs, &field.Error{
			Type:     field.ErrorTypeInvalid,
			Field:    "x-kubernetes-validations",
			BadValue: field.OmitValueType{},
			Detail:   "CEL rules were not evaluated because of the errors above (as the API server does)",
		})
	}
	celErrs, _ := vi.celValidator.Validate(context.Background(), nil, s, u.Object, nil, CELCostBudget)
	return append(schemaErrs, celErrs...)
}

// blocking reports whether errs contain an error type after which the API
// server does not evaluate CEL rules.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// pruned is the error of a field the API server would prune, at path as
// the pruning writes it, in field.Path's form (fieldPath over s), with the
// nearest field its object has ("; did you mean maxReplicas?").
func pruned(path string, s *structuralschema.Structural) *field.Error {
	p, parent := fieldPathIn(path, s)
	detail := PrunedFieldDetail
	if parent != nil {
		_, last := cutLast(path)
		detail += suggest.DidYouMean(last, sortedKeys(parent.Properties))
	}
	return field.Forbidden(p, detail)
}

// cutLast splits a pruning path at its last ".".
func cutLast(path string) (string, string) {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i], path[i+1:]
	}
	return "", path
}

func (info *crdInfo) versionNames(group string) []string {
	var out []string
	for name, vi := range info.versions {
		if vi.served {
			out = append(out, schema.GroupVersion{Group: group, Version: name}.String())
		}
	}
	sort.Strings(out)
	return out
}

// ValidateYAMLStream validates every document of a multi-document YAML
// stream (such as `crossplane render` output) with Validate. Empty
// documents are skipped, and so are documents whose apiVersion matches
// StreamSkippedAPIVersions. It returns nil if every validated document
// passes, else an error joining (errors.Join) one error per failing
// document, each naming the document's index (0-based, counting non-empty
// documents) and wrapping the *ValidationError or the parse error.
func (v *Validator) ValidateYAMLStream(data []byte) error {
	docs, err := splitYAML(data)
	if err != nil {
		return err
	}
	var errs []error
	for i, doc := range docs {
		m := map[string]interface{}{}
		if err := json.Unmarshal(doc, &m); err != nil {
			errs = append(errs, fmt.Errorf("document %d: not an object: %w", i, err))
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if skippedInStream(u.GetAPIVersion()) {
			continue
		}
		if err := v.Validate(u); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// skippedInStream reports whether apiVersion matches StreamSkippedAPIVersions.
func skippedInStream(apiVersion string) bool {
	for _, s := range StreamSkippedAPIVersions {
		if group, ok := strings.CutSuffix(s, "/*"); ok {
			if g, _, found := strings.Cut(apiVersion, "/"); found && g == group {
				return true
			}
			continue
		}
		if s == apiVersion {
			return true
		}
	}
	return false
}

// CheckRules compiles every CEL x-kubernetes-validations rule (and
// messageExpression) of every served version of every loaded CRD, in the
// API server's stored-expression environment and with CELPerCallLimit, and
// returns nil if all compile, or an error joining one line per failing rule
// (CRD, version, schema path, rule text, compiler message). A rule whose
// estimated cost exceeds CELPerCallLimit counts as failing. Rules nested in
// allOf are not visited (none of the shared CRDs has any). Validate reports
// the same compile failures, but only for rules whose field is present.
func (v *Validator) CheckRules() error {
	var errs []error
	gks := make([]schema.GroupKind, 0, len(v.kinds))
	for gk := range v.kinds {
		gks = append(gks, gk)
	}
	sort.Slice(gks, func(i, j int) bool { return gks[i].String() < gks[j].String() })
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	for _, gk := range gks {
		info := v.kinds[gk]
		names := make([]string, 0, len(info.versions))
		for name := range info.versions {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			vi := info.versions[name]
			if !vi.served {
				continue
			}
			s := vi.structural
			r := ruleChecker{crd: info.name, version: name, envSet: envSet}
			r.check(field.NewPath("openAPIV3Schema"), s, model.SchemaDeclType(s, true))
			errs = append(errs, r.errs...)
		}
	}
	return errors.Join(errs...)
}

// ruleChecker walks a structural schema the way cel.NewValidator does and
// compiles the rules at each node.
type ruleChecker struct {
	crd, version string
	envSet       *environment.EnvSet
	errs         []error
}

func (r *ruleChecker) check(pth *field.Path, s *structuralschema.Structural, declType *apiservercel.DeclType) {
	if s == nil {
		return
	}
	if len(s.XValidations) > 0 {
		results, err := cel.Compile(s, declType, CELPerCallLimit, r.envSet, cel.StoredExpressionsEnvLoader())
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("CRD %s %s %s: rules cannot be compiled: %w", r.crd, r.version, pth, err))
		}
		for i, res := range results {
			rule := s.XValidations[i]
			if res.Error != nil {
				r.errs = append(r.errs, fmt.Errorf("CRD %s %s %s: rule %q: %v", r.crd, r.version, pth, rule.Rule, res.Error))
			}
			if res.MessageExpressionError != nil {
				r.errs = append(r.errs, fmt.Errorf("CRD %s %s %s: messageExpression %q: %v", r.crd, r.version, pth, rule.MessageExpression, res.MessageExpressionError))
			}
		}
	}
	var elem *apiservercel.DeclType
	if declType != nil {
		elem = declType.ElemType
	}
	if s.Items != nil {
		r.check(pth.Child("items"), s.Items, elem)
	}
	for _, k := range sortedKeys(s.Properties) {
		prop := s.Properties[k]
		var ft *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(k); ok {
			if declType == nil {
				continue
			}
			f, ok := declType.Fields[escaped]
			if !ok {
				continue
			}
			ft = f.Type
		} else {
			ft = model.SchemaDeclType(&prop, prop.XEmbeddedResource)
			if ft == nil {
				continue
			}
		}
		r.check(pth.Child("properties").Key(k), &prop, ft)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		r.check(pth.Child("additionalProperties"), s.AdditionalProperties.Structural, elem)
	}
}

func sortedKeys(m map[string]structuralschema.Structural) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

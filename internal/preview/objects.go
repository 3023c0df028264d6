// Package preview says what applying a changed XR does to a running
// cluster, from two renders of the real pipeline: which node groups
// replace their machines and the tenant fields that cause it, whether the
// control plane upgrades, which add-ons' values change, and which composed
// resources are created, updated or deleted (docs/tenant-guide.md,
// "Preview a change").
// It compares objects only; running the renders is internal/render's.
package preview

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// AnnotationResourceName is the annotation by which Crossplane matches an
// observed composed resource with a desired one.
const AnnotationResourceName = "crossplane.io/composition-resource-name"

// Key identifies a composed resource.
type Key struct {
	Group, Kind, Namespace, Name string
}

// String is "<Kind> <name>"; a tenant's composed resources share one
// namespace.
func (k Key) String() string { return k.Kind + " " + k.Name }

func (k Key) less(o Key) bool {
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Name != o.Name {
		return k.Name < o.Name
	}
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	return k.Group < o.Group
}

// KeyOf returns u's Key.
func KeyOf(u *unstructured.Unstructured) Key {
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	return Key{Group: gv.Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Objects are composed resources by Key.
type Objects map[Key]*unstructured.Unstructured

// Keys returns the keys of o sorted by kind, then name.
func (o Objects) Keys() []Key {
	keys := make([]Key, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}

// YAML returns o as a YAML stream in Keys order.
func (o Objects) YAML() ([]byte, error) {
	objs := make([]*unstructured.Unstructured, 0, len(o))
	for _, k := range o.Keys() {
		objs = append(objs, o[k])
	}
	return WriteYAML(objs)
}

// WriteYAML returns objs as a YAML stream, in order.
func WriteYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for _, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// ReadYAML decodes a YAML stream into objects. A `kind: List` (what
// `kubectl get -o yaml` prints) contributes its items; empty documents are
// skipped.
func ReadYAML(r io.Reader) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for {
		raw, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if !u.IsList() || !strings.HasSuffix(u.GetKind(), "List") {
			out = append(out, u)
			continue
		}
		l, err := u.ToList()
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
}

// ReadPath reads a YAML file, or every *.yaml and *.yml file of a
// directory in name order, with ReadYAML.
func ReadPath(path string) ([]*unstructured.Unstructured, error) {
	files := []string{path}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		files = nil
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the caller's files
		if err != nil {
			return nil, err
		}
		objs, err := ReadYAML(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Composed returns the composed resources among objs: those carrying
// AnnotationResourceName. Two objects of one Key are an error.
func Composed(objs []*unstructured.Unstructured) (Objects, error) {
	out := Objects{}
	for _, u := range objs {
		if _, ok := u.GetAnnotations()[AnnotationResourceName]; !ok {
			continue
		}
		k := KeyOf(u)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s in namespace %q appears twice", k, k.Namespace)
		}
		out[k] = u
	}
	return out, nil
}

// RenderOutput returns the composed resources of `crossplane composition
// render` output: every document after the first (the XR), except the
// render.crossplane.io results.
func RenderOutput(stream []byte) (Objects, error) {
	objs, err := ReadYAML(bytes.NewReader(stream))
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, errors.New("the render printed no XR")
	}
	var composed []*unstructured.Unstructured
	for _, u := range objs[1:] {
		if strings.HasPrefix(u.GetAPIVersion(), "render.crossplane.io/") {
			continue
		}
		composed = append(composed, u)
	}
	return Composed(composed)
}

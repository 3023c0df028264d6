package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/preview"
)

// annotationResourceName is the annotation by which Crossplane (and
// `crossplane composition render`) matches an observed composed resource
// to its name in the desired state.
const annotationResourceName = "crossplane.io/composition-resource-name"

// managementNamespace is the observed management namespace of the
// cluster-scoped XKubernetesCluster in the file xr, as the control-plane
// step composes it, or nil when xr is of another kind or names no valid
// cluster (the functions report that themselves).
func managementNamespace(xr string) ([]byte, error) {
	raw, err := os.ReadFile(xr) //nolint:gosec // the caller's file
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj["kind"] != v1alpha1.CompositeKind {
		return nil, nil
	}
	s, err := structpb.NewStruct(obj)
	if err != nil {
		return nil, nil //nolint:nilerr // not an object the functions can read either
	}
	c, err := function.NewRequest(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}}).Cluster()
	if err != nil || c.Namespaced {
		return nil, nil //nolint:nilerr // the functions return the Fatal result
	}
	return yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        c.ID.ManagementNamespace(),
			"labels":      c.ID.ManagementNamespaceLabels(),
			"annotations": map[string]any{annotationResourceName: function.ManagementNamespaceResourceName},
		},
	})
}

// observesManagementNamespace reports whether a YAML file, or one of the
// YAML files of a directory, at path holds the composed resource named
// function.ManagementNamespaceResourceName.
func observesManagementNamespace(path string) (bool, error) {
	return holdsObject([]string{path}, func(o *unstructured.Unstructured) bool {
		return o.GetAnnotations()[annotationResourceName] == function.ManagementNamespaceResourceName
	})
}

// holdsObject reports whether a YAML file, or one of the YAML files of a
// directory, of paths holds an object match accepts.
func holdsObject(paths []string, match func(*unstructured.Unstructured) bool) (bool, error) {
	for _, p := range paths {
		files, err := yamlFiles(p)
		if err != nil {
			return false, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f) //nolint:gosec // the caller's files
			if err != nil {
				return false, err
			}
			objs, err := preview.ReadYAML(bytes.NewReader(raw))
			if err != nil {
				return false, fmt.Errorf("%s: %w", f, err)
			}
			if slices.ContainsFunc(objs, match) {
				return true, nil
			}
		}
	}
	return false, nil
}

// yamlFiles is path when it is a file, else the .yaml and .yml files of
// the directory path, in name order.
func yamlFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	return files, nil
}

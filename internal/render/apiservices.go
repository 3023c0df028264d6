package render

import (
	"bytes"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/function"
)

// PlatformAPIServices is a YAML stream of the APIService of every API of
// function.PlatformAPIs, as kube-apiserver registers one for a served CRD
// version, and the CustomResourceDefinition (name only) of each kind the
// table checks by its CRD: a platform serving every API tenantkube
// composes.
func PlatformAPIServices() ([]byte, error) {
	var objs []map[string]any
	for _, a := range function.PlatformAPIs {
		objs = append(objs, map[string]any{
			"apiVersion": function.APIServiceVersion,
			"kind":       function.APIServiceKind,
			"metadata":   map[string]any{"name": a.APIServiceName()},
			"spec":       map[string]any{"group": a.Group, "version": a.Version, "groupPriorityMinimum": 1000, "versionPriority": 100},
		})
		for _, k := range a.Kinds {
			if k.CRD != "" {
				objs = append(objs, map[string]any{"apiVersion": function.CRDVersion, "kind": function.CRDKind, "metadata": map[string]any{"name": k.CRD}})
			}
		}
	}
	var out bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

// describesPlatform reports whether a YAML file, or one of the YAML files
// of a directory, of paths holds an APIService: the caller describes the
// platform's APIs itself.
func describesPlatform(paths []string) (bool, error) {
	return holdsObject(paths, func(o *unstructured.Unstructured) bool {
		return o.GetAPIVersion() == function.APIServiceVersion && o.GetKind() == function.APIServiceKind
	})
}

// required is what to pass as required resources: Required, plus
// PlatformAPIServices (written under tmp) unless Required describes the
// platform's APIs.
func (o Options) required(tmp string) ([]string, error) {
	if ok, err := describesPlatform(o.Required); err != nil || ok {
		return o.Required, err
	}
	b, err := PlatformAPIServices()
	if err != nil {
		return nil, err
	}
	f := filepath.Join(tmp, "platform-apiservices.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		return nil, err
	}
	return append(append([]string{}, o.Required...), f), nil
}

package schema

import (
	"fmt"
	"os"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// XRDRoot reads the CompositeResourceDefinition at path, which must serve
// exactly one version, and returns that version's openAPIV3Schema.
func XRDRoot(path string) (apiextensionsv1.JSONSchemaProps, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return apiextensionsv1.JSONSchemaProps{}, err
	}
	var xrd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &xrd); err != nil {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("%s: %w", path, err)
	}
	if n := len(xrd.Spec.Versions); n != 1 {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("%s: %d versions, want 1", path, n)
	}
	return xrd.Spec.Versions[0].Schema.OpenAPIV3Schema, nil
}

// XRDSpec returns the schema of the XR's spec in the XRD at path, both as
// the API server's internal type and as its structural schema with defaults
// pruned, as the API server holds it for admission.
func XRDSpec(path string) (*apiextensions.JSONSchemaProps, *structuralschema.Structural, error) {
	root, err := XRDRoot(path)
	if err != nil {
		return nil, nil, err
	}
	spec := root.Properties["spec"]
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&spec, internal, nil); err != nil {
		return nil, nil, err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: spec schema is not structural: %w", path, err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("spec"), s); len(errs) > 0 {
		return nil, nil, fmt.Errorf("%s: spec schema is not structural: %w", path, errs.ToAggregate())
	}
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, nil, err
	}
	return internal, s, nil
}

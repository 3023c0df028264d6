package test

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// specAdmission is an XRD's spec schema as the API server applies it on a
// create or an update: defaults, then the OpenAPI schema and the CEL rules.
type specAdmission struct {
	s       *structuralschema.Structural
	cel     *cel.Validator
	openAPI apiservervalidation.SchemaValidator
}

// clusterAdmission is package/xrd.yaml's spec (XKubernetesCluster).
func clusterAdmission(t *testing.T) *specAdmission {
	t.Helper()
	s := xrdSpecSchema(t)
	return &specAdmission{s: s, cel: cel.NewValidator(s, false, celconfig.PerCallLimit), openAPI: openAPIValidator(t)}
}

// tenantAdmission is package/xrd-tenant.yaml's spec (Tenant).
func tenantAdmission(t *testing.T) *specAdmission {
	t.Helper()
	internal, s := tenantSpecStructural(t)
	return &specAdmission{s: s, cel: cel.NewValidator(s, false, celconfig.PerCallLimit), openAPI: newSchemaValidator(t, internal)}
}

func newSchemaValidator(t *testing.T, internal *apiextensions.JSONSchemaProps) apiservervalidation.SchemaValidator {
	t.Helper()
	v, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// admit returns what admission refuses in spec (YAML), an update of old
// when old is not empty (the CEL transition rules see it defaulted).
func (a *specAdmission) admit(t *testing.T, spec, old string) field.ErrorList {
	t.Helper()
	obj := decodeSpec(t, spec)
	structuraldefaulting.Default(obj, a.s)
	var oldObj any
	if old != "" {
		o := decodeSpec(t, old)
		structuraldefaulting.Default(o, a.s)
		oldObj = o
	}
	errs := apiservervalidation.ValidateCustomResource(field.NewPath("spec"), obj, a.openAPI)
	celErrs, _ := a.cel.Validate(context.Background(), field.NewPath("spec"), a.s, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// clusterValidate returns what the functions refuse in spec (YAML): Go's
// defaults, then KubernetesClusterSpec.Validate, as for an XR that skipped
// admission.
func clusterValidate(t *testing.T, spec string) field.ErrorList {
	t.Helper()
	s := &v1alpha1.KubernetesClusterSpec{}
	if err := yaml.Unmarshal([]byte(spec), s); err != nil {
		t.Fatal(err)
	}
	s.Default()
	return s.Validate()
}

// tenantValidate is clusterValidate for a TenantSpec.
func tenantValidate(t *testing.T, spec string) field.ErrorList {
	t.Helper()
	s := &v1alpha1.TenantSpec{}
	if err := yaml.Unmarshal([]byte(spec), s); err != nil {
		t.Fatal(err)
	}
	s.Default()
	return s.Validate()
}

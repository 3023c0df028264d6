package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	tkschema "github.com/tenantkube/tenantkube/internal/schema"
)

// BenchmarkValidation is what checking the reference spec costs each way:
// op=validate is KubernetesClusterSpec.Validate, what every function runs
// per call; op=xrd-cel defaults the spec and runs the XRD's CEL rules
// with the API server's validator, as a function would to evaluate the
// XRD's own rules; op=xrd-openapi is the XRD's OpenAPI schema check;
// op=cel-build builds the CEL validator (once per process). Each reports
// cpu-ns/op, the process CPU time per call.
func BenchmarkValidation(b *testing.B) {
	s, openAPI := xrdSpec(b)
	raw, err := os.ReadFile(filepath.Join(TestdataDir(), Reference, "xr.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var xr struct {
		Spec map[string]any `json:"spec"`
	}
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		b.Fatal(err)
	}
	// As the API server decodes a body: whole numbers are int64.
	if err := utiljson.Unmarshal(j, &xr); err != nil {
		b.Fatal(err)
	}
	specJSON, err := utiljson.Marshal(xr.Spec)
	if err != nil {
		b.Fatal(err)
	}
	validator := cel.NewValidator(s, false, celconfig.PerCallLimit)
	loop := func(b *testing.B, op func()) {
		b.ReportAllocs()
		c0 := ProcessCPU()
		for b.Loop() {
			op()
		}
		b.ReportMetric(float64((ProcessCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.Run("op=validate", func(b *testing.B) {
		loop(b, func() {
			spec := &v1alpha1.KubernetesClusterSpec{}
			if err := utiljson.Unmarshal(specJSON, spec); err != nil {
				b.Fatal(err)
			}
			spec.Default()
			if errs := spec.Validate(); len(errs) > 0 {
				b.Fatal(errs.ToAggregate())
			}
		})
	})
	b.Run("op=xrd-cel", func(b *testing.B) {
		loop(b, func() {
			obj := runtime.DeepCopyJSON(xr.Spec)
			structuraldefaulting.Default(obj, s)
			if errs, _ := validator.Validate(context.Background(), field.NewPath("spec"), s, obj, nil, celconfig.RuntimeCELCostBudget); len(errs) > 0 {
				b.Fatal(errs.ToAggregate())
			}
		})
	})
	b.Run("op=xrd-openapi", func(b *testing.B) {
		obj := runtime.DeepCopyJSON(xr.Spec)
		structuraldefaulting.Default(obj, s)
		loop(b, func() {
			if errs := apiservervalidation.ValidateCustomResource(field.NewPath("spec"), obj, openAPI); len(errs) > 0 {
				b.Fatal(errs.ToAggregate())
			}
		})
	})
	b.Run("op=cel-build", func(b *testing.B) {
		loop(b, func() { cel.NewValidator(s, false, celconfig.PerCallLimit) })
	})
}

// xrdSpec is package/xrd.yaml's spec schema as the API server holds it,
// and its OpenAPI validator.
func xrdSpec(b *testing.B) (*structuralschema.Structural, apiservervalidation.SchemaValidator) {
	internal, s, err := tkschema.XRDSpec(filepath.Join(RepoRoot(), "package", "xrd.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	openAPI, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		b.Fatal(err)
	}
	return s, openAPI
}

package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// tenantXRDFile is the Tenant's XRD.
const tenantXRDFile = "xrd-tenant.yaml"

// tenantSpecSchema is the openAPIV3Schema of spec in package/xrd-tenant.yaml.
func tenantSpecSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "package", tenantXRDFile))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, xrd); err != nil {
		t.Fatal(err)
	}
	if len(xrd.Spec.Versions) != 1 {
		t.Fatalf("the Tenant XRD has %d versions", len(xrd.Spec.Versions))
	}
	root := apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal(xrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Raw, &root); err != nil {
		t.Fatal(err)
	}
	return root.Properties["spec"]
}

// tenantSpecStructural is the Tenant XRD's spec schema as the API server
// holds it: converted to the internal type, and structural with defaults
// pruned.
func tenantSpecStructural(t *testing.T) (*apiextensions.JSONSchemaProps, *structuralschema.Structural) {
	t.Helper()
	spec := tenantSpecSchema(t)
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&spec, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatalf("the Tenant spec schema is not structural: %v", err)
	}
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		t.Fatal(err)
	}
	return internal, s
}

// TestTenantValidationAgrees holds the Tenant XRD's admission (OpenAPI
// schema and CEL rules, as the API server runs them) and
// TenantSpec.Validate (after Go's defaults) to one table: both reject a
// case naming the same fields, or both accept it. Bounds are
// docs/validation.md's, written by hand: replicas 1..7 (the etcd FAQ's
// largest advised cluster), storageSize above zero and at most 8Gi (etcd's
// suggested maximum quota), storageClassName a DNS subdomain of at most
// 253 characters; each at its edge and one past.
func TestTenantValidationAgrees(t *testing.T) {
	xrd := tenantAdmission(t)

	type args struct{ spec string }
	type want struct {
		paths []string
		msg   string
	}
	const etcd = "spec.etcd"
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Empty":           {reason: "Every field has a default.", args: args{spec: `{}`}},
		"OneMember":       {reason: "1 member is the least.", args: args{spec: `{etcd: {replicas: 1}}`}},
		"NoMember":        {reason: "0 members is no etcd.", args: args{spec: `{etcd: {replicas: 0}}`}, want: want{paths: []string{etcd + ".replicas"}}},
		"SevenMembers":    {reason: "7 is the most.", args: args{spec: `{etcd: {replicas: 7}}`}},
		"EightMembers":    {reason: "One past 7.", args: args{spec: `{etcd: {replicas: 8}}`}, want: want{paths: []string{etcd + ".replicas"}}},
		"Size8Gi":         {reason: "8Gi is the largest volume.", args: args{spec: `{etcd: {storageSize: 8Gi}}`}},
		"SizePast8Gi":     {reason: "One byte past 8Gi (8589934592).", args: args{spec: `{etcd: {storageSize: "8589934593"}}`}, want: want{paths: []string{etcd + ".storageSize"}, msg: "at most 8Gi"}},
		"SizeZero":        {reason: "A member needs a volume.", args: args{spec: `{etcd: {storageSize: "0"}}`}, want: want{paths: []string{etcd + ".storageSize"}, msg: "greater than zero"}},
		"SizeSmall":       {reason: "1Mi is above zero.", args: args{spec: `{etcd: {storageSize: 1Mi}}`}},
		"SizeNoQuantity":  {reason: "Not a quantity.", args: args{spec: `{etcd: {storageSize: lots}}`}, want: want{paths: []string{etcd + ".storageSize"}}},
		"Class":           {reason: "A DNS subdomain.", args: args{spec: `{etcd: {storageClassName: fast.ssd}}`}},
		"ClassBad":        {reason: "Upper case and '_' are not.", args: args{spec: `{etcd: {storageClassName: Bad_Class}}`}, want: want{paths: []string{etcd + ".storageClassName"}}},
		"Class253":        {reason: "253 characters is the most.", args: args{spec: `{etcd: {storageClassName: ` + strings.Repeat("a", 253) + `}}`}},
		"Class254":        {reason: "One past 253.", args: args{spec: `{etcd: {storageClassName: ` + strings.Repeat("a", 254) + `}}`}, want: want{paths: []string{etcd + ".storageClassName"}}},
		"EveryProblem":    {reason: "All at once.", args: args{spec: `{etcd: {replicas: 9, storageSize: 9Gi, storageClassName: X}}`}, want: want{paths: []string{etcd + ".replicas", etcd + ".storageClassName", etcd + ".storageSize"}}},
		"NegativeMembers": {reason: "Below 1.", args: args{spec: `{etcd: {replicas: -1}}`}, want: want{paths: []string{etcd + ".replicas"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			admission, functions := xrd.admit(t, c.args.spec, ""), tenantValidate(t, c.args.spec)

			want := normalizedPaths(c.want.paths)
			if d := cmp.Diff(want, fieldPaths(admission)); d != "" {
				t.Errorf("%s\nXRD admission: fields (-want +got):\n%s\n%v", c.reason, d, admission.ToAggregate())
			}
			if d := cmp.Diff(want, fieldPaths(functions)); d != "" {
				t.Errorf("%s\nspec.Validate(): fields (-want +got):\n%s\n%v", c.reason, d, functions.ToAggregate())
			}
			if c.want.msg == "" {
				return
			}
			for who, errs := range map[string]field.ErrorList{"XRD admission": admission, "spec.Validate()": functions} {
				if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), c.want.msg) {
					t.Errorf("%s\n%s: message %v does not contain %q", c.reason, who, agg, c.want.msg)
				}
			}
		})
	}
}

// TestTenantEtcdMayNotDecrease runs the Tenant XRD's transition rules (CEL
// with oldSelf, as the API server runs them on an update, after defaults)
// on an old and a new spec: spec.etcd.replicas and storageSize may stay or
// grow, never shrink (the pinned etcd-operator removes no member on scale
// down; a bound volume cannot shrink). Quantities are compared as
// quantities: 4096Mi is 4Gi, 8000Mi is less than 8Gi (8192Mi).
func TestTenantEtcdMayNotDecrease(t *testing.T) {
	xrd := tenantAdmission(t)
	type args struct{ old, new string }
	const etcd = "spec.etcd"
	cases := map[string]struct {
		reason string
		args   args
		want   []string // the fields refused
		msgs   []string // each in the refusal: the old and the new value
	}{
		"Same":           {reason: "No change.", args: args{old: `{etcd: {replicas: 3, storageSize: 4Gi}}`, new: `{etcd: {replicas: 3, storageSize: 4Gi}}`}},
		"SameDefaulted":  {reason: "The defaults (3, 4Gi) written out are no change.", args: args{old: `{}`, new: `{etcd: {replicas: 3, storageSize: 4Gi}}`}},
		"SameOtherUnits": {reason: "4096Mi is 4Gi.", args: args{old: `{etcd: {storageSize: 4Gi}}`, new: `{etcd: {storageSize: 4096Mi}}`}},
		"Grow":           {reason: "More members and larger volumes are allowed.", args: args{old: `{etcd: {replicas: 3, storageSize: 4Gi}}`, new: `{etcd: {replicas: 5, storageSize: 8Gi}}`}},
		"FewerMembers":   {reason: "One member fewer.", args: args{old: `{etcd: {replicas: 3}}`, new: `{etcd: {replicas: 2}}`}, want: []string{etcd + ".replicas"}, msgs: []string{"replicas may not be lowered from 3 to 2"}},
		"BelowDefault":   {reason: "From the default 3 to 1.", args: args{old: `{}`, new: `{etcd: {replicas: 1}}`}, want: []string{etcd + ".replicas"}, msgs: []string{"from 3 to 1"}},
		"SmallerVolume":  {reason: "One byte less than 4Gi (4294967296).", args: args{old: `{etcd: {storageSize: 4Gi}}`, new: `{etcd: {storageSize: "4294967295"}}`}, want: []string{etcd + ".storageSize"}, msgs: []string{"storageSize may not be lowered from 4Gi to 4294967295"}},
		"SmallerInMi":    {reason: "8000Mi is less than 8Gi.", args: args{old: `{etcd: {storageSize: 8Gi}}`, new: `{etcd: {storageSize: 8000Mi}}`}, want: []string{etcd + ".storageSize"}, msgs: []string{"from 8Gi to 8000Mi"}},
		"BothDecrease":   {reason: "Both at once.", args: args{old: `{etcd: {replicas: 5, storageSize: 8Gi}}`, new: `{etcd: {replicas: 3, storageSize: 4Gi}}`}, want: []string{etcd + ".replicas", etcd + ".storageSize"}, msgs: []string{"from 5 to 3", "from 8Gi to 4Gi"}},
		"UnsetToDefault": {reason: "Unsetting a grown value defaults it lower: refused.", args: args{old: `{etcd: {replicas: 5}}`, new: `{}`}, want: []string{etcd + ".replicas"}, msgs: []string{"from 5 to 3"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			errs := xrd.admit(t, c.args.new, c.args.old)
			if d := cmp.Diff(normalizedPaths(c.want), fieldPaths(errs)); d != "" {
				t.Errorf("%s\nXRD transition rules: fields (-want +got):\n%s\n%v", c.reason, d, errs.ToAggregate())
			}
			for _, m := range c.msgs {
				if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), m) {
					t.Errorf("%s\nXRD transition rules: message %v does not contain %q", c.reason, agg, m)
				}
			}
		})
	}
}

// TestTenantXRD: package/xrd-tenant.yaml is a Crossplane v2 XRD
// of scope Cluster, kind Tenant, whose defaults are Go's, and the CRD
// Crossplane derives from it is accepted by the API server's CRD
// validation (CEL cost included).
func TestTenantXRD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "package", tenantXRDFile))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, xrd); err != nil {
		t.Fatal(err)
	}
	if xrd.APIVersion != "apiextensions.crossplane.io/v2" || xrd.Spec.Scope == nil || string(*xrd.Spec.Scope) != "Cluster" ||
		xrd.Spec.Names.Kind != "Tenant" || xrd.Spec.Names.Plural != "tenants" || xrd.Spec.Group != "tenantkube.io" || xrd.Name != "tenants.tenantkube.io" {
		t.Errorf("XRD %s %s scope %v kind %s plural %s group %s, want apiextensions.crossplane.io/v2 tenants.tenantkube.io scope Cluster kind Tenant plural tenants group tenantkube.io",
			xrd.APIVersion, xrd.Name, xrd.Spec.Scope, xrd.Spec.Names.Kind, xrd.Spec.Names.Plural, xrd.Spec.Group)
	}
	crd, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("derived CRD scope %s, want Cluster", crd.Spec.Scope)
	}
	crd.OwnerReferences = nil
	crd.Spec.Versions[0].Storage = true
	crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		t.Errorf("the CRD of the Tenant XRD is refused: %v", errs.ToAggregate())
	}

	// Defaults: the schema's on an empty spec are Go's.
	spec := tenantSpecSchema(t)
	in := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&spec, in, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(in)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	structuraldefaulting.Default(obj, s)
	goSpec := &v1alpha1.TenantSpec{}
	goSpec.Default()
	want, err := yaml.Marshal(goSpec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("XRD defaults differ from TenantSpec.Default (-Go +XRD):\n%s", d)
	}
}

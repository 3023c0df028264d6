package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	tkschema "github.com/tenantkube/tenantkube/internal/schema"
)

// TestGeneratedFilesAreCurrent regenerates the XRD and the function input
// CRDs into a temporary tree (make generate-crds GEN_OUT=...) and fails when
// a committed file differs: package/xrd.yaml is never edited by hand.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := repoRoot(t)
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "--no-print-directory", "generate-crds", "GEN_OUT="+out, "GEN_TMP="+t.TempDir())
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make generate-crds: %v\n%s", err, b)
	}
	files, err := filepath.Glob(filepath.Join(out, "package", "functions", "*", "input", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(out, "package", "settings", "settings.tenantkube.io_platformsettings.yaml"))
	files = append(files, filepath.Join(out, "package", "xrd.yaml"), filepath.Join(out, "package", "xrd-namespaced.yaml"), filepath.Join(out, "package", "xrd-tenant.yaml"))
	if len(files) < 2 {
		t.Fatalf("generated only %v", files)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(out, f)
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("%s is not committed: run make generate", rel)
			continue
		}
		if string(want) != string(got) {
			t.Errorf("%s is stale: run make generate and commit the result:\n%s", rel, lineDiff(string(want), string(got)))
		}
	}
}

// xrdRootSchema reads package/xrd.yaml and returns the openAPIV3Schema of
// its one version.
func xrdRootSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	root, err := tkschema.XRDRoot(filepath.Join(repoRoot(t), "package", "xrd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// xrdSpecSchema loads package/xrd.yaml and returns the structural schema of
// the XR's spec, with defaults pruned as the API server does.
func xrdSpecSchema(t *testing.T) *structuralschema.Structural {
	t.Helper()
	_, s, err := tkschema.XRDSpec(filepath.Join(repoRoot(t), "package", "xrd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestXRDDefaultsMatchGoDefaults applies the XRD's schema defaults to an
// empty spec, as the API server does at admission, and checks the result is
// exactly what the functions' Go Default() gives for an XR that skipped
// admission.
func TestXRDDefaultsMatchGoDefaults(t *testing.T) {
	s := xrdSpecSchema(t)
	for _, in := range []string{`{}`, `{nodeGroups: {gpu: {roles: [ingress-nginx]}}}`} {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(in), &obj); err != nil {
			t.Fatal(err)
		}
		structuraldefaulting.Default(obj, s)
		raw, _ := json.Marshal(obj)
		admitted := v1alpha1.KubernetesClusterSpec{}
		if err := json.Unmarshal(raw, &admitted); err != nil {
			t.Fatal(err)
		}
		goDefaulted := v1alpha1.KubernetesClusterSpec{}
		if err := yaml.Unmarshal([]byte(in), &goDefaulted); err != nil {
			t.Fatal(err)
		}
		goDefaulted.Default()
		if d := cmp.Diff(goDefaulted, admitted); d != "" {
			t.Errorf("spec %s: Go defaults (-) differ from XRD defaults (+):\n%s", in, d)
		}
	}
}

// TestXRDAdmission runs the XRD's OpenAPI and CEL validation (including the
// transition rules) as the API server would on create and update.
func TestXRDAdmission(t *testing.T) {
	xrd := clusterAdmission(t)

	cases := map[string]struct {
		old, new string
		want     string // a substring of the error; "" when admitted
	}{
		"defaults":                  {new: `{}`},
		"ephemeralStorage renamed":  {new: `{nodeGroups: {md0: {ephemeralStorage: 20Gi}}}`, want: "renamed to diskSize"},
		"cpu without memory":        {new: `{nodeGroups: {md0: {resources: {cpu: 2}}}}`, want: "resources.cpu and resources.memory must be set together"},
		"cpu and memory":            {new: `{nodeGroups: {md0: {resources: {cpu: 2, memory: 4Gi}}}}`},
		"min above max":             {new: `{nodeGroups: {md0: {minReplicas: 5, maxReplicas: 2}}}`, want: "minReplicas must be less than or equal to maxReplicas"},
		"bad node group name":       {new: `{nodeGroups: {MD_0: {}}}`, want: "node group names must be DNS labels"},
		"long node group name":      {new: `{nodeGroups: {abcdefghijklmnopq: {}}}`, want: "at most 16 characters"},
		"bad quantity":              {new: `{nodeGroups: {md0: {diskSize: lots}}}`, want: "diskSize"},
		"kubelet values as numbers": {new: `{nodeGroups: {md0: {kubelet: {systemReservedMemory: 500000000, kubeReservedCpu: 1, evictionHardMemory: 200000000, evictionSoftMemory: 1Gi}}}}`},
		"bad kubelet quantity":      {new: `{nodeGroups: {md0: {kubelet: {systemReservedCpu: abc}}}}`, want: "systemReservedCpu"},
		"bad eviction threshold":    {new: `{nodeGroups: {md0: {kubelet: {evictionHardMemory: "7 percent"}}}}`, want: "evictionHardMemory"},
		"bad expose method":         {new: `{addons: {ingressNginx: {exposeMethod: NodePort}}}`, want: "exposeMethod"},
		"unknown version":           {new: `{version: v1.29}`, want: "version"},
		"storageClass kept":         {old: `{storageClass: replicated}`, new: `{storageClass: replicated}`},
		"storageClass changed":      {old: `{storageClass: replicated}`, new: `{storageClass: local}`, want: "storageClass is immutable"},
		"upgrade one minor":         {old: `{version: v1.33}`, new: `{version: v1.34}`},
		"upgrade skips a minor":     {old: `{version: v1.33}`, new: `{version: v1.35}`, want: "allowed versions are v1.33 and v1.34, not v1.35"},
		"downgrade":                 {old: `{version: v1.34}`, new: `{version: v1.33}`, want: "allowed versions are v1.34 and v1.35"},
		"v1.30 moves to v1.31":      {old: `{version: v1.30}`, new: `{version: v1.31}`},
		"v1.30 stays":               {old: `{version: v1.30}`, new: `{version: v1.30}`, want: "v1.30"},
		"v1.30 skips a minor":       {old: `{version: v1.30}`, new: `{version: v1.32}`, want: "allowed versions are v1.31, not v1.32"},
		// spec.restore is a create-time field: a field-level transition
		// rule is not run when the field appears or goes, the spec's is.
		"restore kept":    {old: `{restore: {backup: demo-20261202183044-bd279f}}`, new: `{restore: {backup: demo-20261202183044-bd279f}}`},
		"restore changed": {old: `{restore: {backup: demo-20261202183044-bd279f}}`, new: `{restore: {backup: demo-20261201183044-bd279f}}`, want: "restore cannot change once the cluster exists"},
		"restore removed": {old: `{restore: {backup: demo-20261202183044-bd279f}}`, new: `{}`, want: "spec.restore: Invalid value: spec.restore cannot be removed: the cluster was restored from backup demo-20261202183044-bd279f"},
		"restore added":   {old: `{}`, new: `{restore: {backup: demo-20261202183044-bd279f}}`, want: "spec.restore: Invalid value: spec.restore cannot be added"},
	}
	// Every bound at its edge (admitted) and past it (refused).
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	list := func(item string, n int) string { return strings.TrimSuffix(rep(item+", ", n), ", ") }
	keys := func(n int) string {
		var kv []string
		for i := 0; i < n; i++ {
			kv = append(kv, fmt.Sprintf("k%d: 1", i))
		}
		return strings.Join(kv, ", ")
	}
	for name, c := range map[string]struct{ new, want string }{
		"maxReplicas 5000":               {new: `{nodeGroups: {md0: {maxReplicas: 5000}}}`},
		"maxReplicas 5001":               {new: `{nodeGroups: {md0: {maxReplicas: 5001}}}`, want: "spec.nodeGroups.md0.maxReplicas: Invalid value: 5001: nodeGroups.md0.maxReplicas in body should be less than or equal to 5000"},
		"maxReplicas int32 max":          {new: `{nodeGroups: {md0: {maxReplicas: 2147483647}}}`, want: "should be less than or equal to 5000"},
		"minReplicas 5001":               {new: `{nodeGroups: {md0: {minReplicas: 5001, maxReplicas: 5001}}}`, want: "minReplicas in body should be less than or equal to 5000"},
		"16 roles":                       {new: `{nodeGroups: {md0: {roles: [` + list("r", 16) + `]}}}`},
		"17 roles":                       {new: `{nodeGroups: {md0: {roles: [` + list("r", 17) + `]}}}`, want: "spec.nodeGroups.md0.roles: Too many: 17: must have at most 16 items"},
		"16 gpus":                        {new: `{nodeGroups: {md0: {gpus: [` + list("{name: g}", 16) + `]}}}`},
		"17 gpus":                        {new: `{nodeGroups: {md0: {gpus: [` + list("{name: g}", 17) + `]}}}`, want: "spec.nodeGroups.md0.gpus: Too many: 17: must have at most 16 items"},
		"gpu name 253":                   {new: `{nodeGroups: {md0: {gpus: [{name: ` + rep("g", 253) + `}]}}}`},
		"gpu name 254":                   {new: `{nodeGroups: {md0: {gpus: [{name: ` + rep("g", 254) + `}]}}}`, want: "name: Too long: may not be more than 253 bytes"},
		"node storageClass 253":          {new: `{nodeGroups: {md0: {storageClass: ` + rep("s", 253) + `}}}`},
		"node storageClass 254":          {new: `{nodeGroups: {md0: {storageClass: ` + rep("s", 254) + `}}}`, want: "storageClass: Too long"},
		"storageClass 254":               {new: `{storageClass: ` + rep("s", 254) + `}`, want: "spec.storageClass: Too long"},
		"node cpu 256 memory 4Ti":        {new: `{nodeGroups: {md0: {resources: {cpu: 256, memory: 4Ti}}}}`},
		"node cpu 256001m":               {new: `{nodeGroups: {md0: {resources: {cpu: 256001m, memory: 4Gi}}}}`, want: "resources.cpu must be at most 256 (cores)"},
		"node memory 4097Gi":             {new: `{nodeGroups: {md0: {resources: {cpu: 4, memory: 4097Gi}}}}`, want: "resources.memory must be at most 4Ti"},
		"diskSize 64Ti":                  {new: `{nodeGroups: {md0: {diskSize: 64Ti}}}`},
		"diskSize 65537Gi":               {new: `{nodeGroups: {md0: {diskSize: 65537Gi}}}`, want: "diskSize must be at most 64Ti"},
		"kubelet 256 cores, 4Ti":         {new: `{nodeGroups: {md0: {kubelet: {systemReservedCpu: 256, kubeReservedMemory: 4Ti}}}}`},
		"kubelet cpu 257":                {new: `{nodeGroups: {md0: {kubelet: {kubeReservedCpu: 257}}}}`, want: "kubeReservedCpu must be at most 256 (cores)"},
		"kubelet memory 4097Gi":          {new: `{nodeGroups: {md0: {kubelet: {systemReservedMemory: 4097Gi}}}}`, want: "systemReservedMemory must be at most 4Ti"},
		"quantity 64 characters":         {new: `{nodeGroups: {md0: {diskSize: "` + rep("0", 60) + `20Gi"}}}`},
		"quantity 65 characters":         {new: `{nodeGroups: {md0: {diskSize: "` + rep("0", 61) + `20Gi"}}}`, want: "diskSize: Too long: may not be more than 64 bytes"},
		"component cpu 32 memory 256Gi":  {new: `{controlPlane: {apiServer: {resources: {cpu: 32, memory: 256Gi}}}}`},
		"component cpu 33":               {new: `{controlPlane: {scheduler: {resources: {cpu: 33}}}}`, want: "resources.cpu must be at most 32 (cores)"},
		"component memory 257Gi":         {new: `{controlPlane: {konnectivity: {server: {resources: {memory: 257Gi}}}}}`, want: "resources.memory must be at most 256Gi"},
		"32 hosts":                       {new: `{addons: {ingressNginx: {hosts: [` + list("a.example.com", 32) + `]}}}`},
		"33 hosts":                       {new: `{addons: {ingressNginx: {hosts: [` + list("a.example.com", 33) + `]}}}`, want: "spec.addons.ingressNginx.hosts: Too many: 33: must have at most 32 items"},
		"valuesOverride 64 keys":         {new: `{addons: {cilium: {valuesOverride: {` + keys(64) + `}}}}`},
		"valuesOverride 65 keys":         {new: `{addons: {cilium: {valuesOverride: {` + keys(65) + `}}}}`, want: "spec.addons.cilium.valuesOverride: Too many: 65: must have at most 64 items"},
		"toggled valuesOverride 65 keys": {new: `{addons: {velero: {valuesOverride: {` + keys(65) + `}}}}`, want: "spec.addons.velero.valuesOverride: Too many: 65"},
		"ingress valuesOverride 65 keys": {new: `{addons: {ingressNginx: {valuesOverride: {` + keys(65) + `}}}}`, want: "spec.addons.ingressNginx.valuesOverride: Too many: 65"},
		"image 512":                      {new: `{images: {waitForKubeconfig: ` + rep("i", 512) + `}}`},
		"image 513":                      {new: `{images: {waitForKubeconfig: ` + rep("i", 513) + `}}`, want: "spec.images.waitForKubeconfig: Too long: may not be more than 512 bytes"},
	} {
		cases["bound: "+name] = struct {
			old, new string
			want     string
		}{new: c.new, want: c.want}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			msg := xrd.admit(t, c.new, c.old).ToAggregate()
			switch {
			case c.want == "" && msg != nil:
				t.Errorf("rejected: %v", msg)
			case c.want != "" && msg == nil:
				t.Errorf("admitted, want an error containing %q", c.want)
			case c.want != "" && !strings.Contains(msg.Error(), c.want):
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
		})
	}
}

// decodeSpec decodes a YAML spec as the API server decodes a request body:
// whole JSON numbers become int64.
func decodeSpec(t *testing.T, in string) map[string]any {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// openAPIValidator builds the OpenAPI (non-CEL) validator of the XR's spec.
func openAPIValidator(t *testing.T) apiservervalidation.SchemaValidator {
	t.Helper()
	spec := xrdRootSchema(t).Properties["spec"]
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&spec, internal, nil); err != nil {
		t.Fatal(err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestXRDIsAcceptedAsCRD builds, from package/xrd.yaml, the
// CustomResourceDefinitions Crossplane creates for the composite resource
// and the claim, and runs the API server's own CRD validation on them,
// including the CEL cost estimates: a rule or message over the budget is
// refused by a real API server, and the XRD would never become established.
func TestXRDIsAcceptedAsCRD(t *testing.T) {
	props := xrdRootSchema(t)
	for _, scope := range []apiextensionsv1.ResourceScope{apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped} {
		root := apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
				"spec": props.Properties["spec"], "status": props.Properties["status"],
			},
		}
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "xkubernetesclusters.tenantkube.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "tenantkube.io", Scope: scope,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "xkubernetesclusters", Singular: "xkubernetescluster", Kind: "XKubernetesCluster", ListKind: "XKubernetesClusterList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1alpha1", Served: true, Storage: true,
					Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &root},
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				}},
			},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1alpha1"}},
		}
		internal := &apiextensions.CustomResourceDefinition{}
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
			t.Errorf("%s CRD from the XRD is refused: %v", scope, errs.ToAggregate())
		}
	}
}

// TestXRDBoundsMatchGo: the bounds the XRD enforces at admission
// are the ones the functions re-check (apis/v1alpha1/bounds.go).
func TestXRDBoundsMatchGo(t *testing.T) {
	spec := xrdRootSchema(t).Properties["spec"]
	group := spec.Properties["nodeGroups"].AdditionalProperties.Schema
	ing := spec.Properties["addons"].Properties["ingressNginx"]
	num := func(f *float64) int64 {
		if f == nil {
			return -1
		}
		return int64(*f)
	}
	ptr := func(i *int64) int64 {
		if i == nil {
			return -1
		}
		return *i
	}
	got := map[string]int64{
		"nodeGroups.maxReplicas maximum":       num(group.Properties["maxReplicas"].Maximum),
		"nodeGroups.minReplicas maximum":       num(group.Properties["minReplicas"].Maximum),
		"nodeGroups.roles maxItems":            ptr(group.Properties["roles"].MaxItems),
		"nodeGroups.gpus maxItems":             ptr(group.Properties["gpus"].MaxItems),
		"nodeGroups.gpus.name maxLength":       ptr(group.Properties["gpus"].Items.Schema.Properties["name"].MaxLength),
		"nodeGroups.storageClass maxLength":    ptr(group.Properties["storageClass"].MaxLength),
		"nodeGroups.diskSize maxLength":        ptr(group.Properties["diskSize"].MaxLength),
		"storageClass maxLength":               ptr(spec.Properties["storageClass"].MaxLength),
		"images.waitForKubeconfig maxLength":   ptr(spec.Properties["images"].Properties["waitForKubeconfig"].MaxLength),
		"ingressNginx.hosts maxItems":          ptr(ing.Properties["hosts"].MaxItems),
		"ingressNginx.valuesOverride maxProps": ptr(ing.Properties["valuesOverride"].MaxProperties),
		"cilium.valuesOverride maxProps":       ptr(spec.Properties["addons"].Properties["cilium"].Properties["valuesOverride"].MaxProperties),
		"velero.valuesOverride maxProps":       ptr(spec.Properties["addons"].Properties["velero"].Properties["valuesOverride"].MaxProperties),
	}
	want := map[string]int64{
		"nodeGroups.maxReplicas maximum":       v1alpha1.MaxReplicasLimit,
		"nodeGroups.minReplicas maximum":       v1alpha1.MaxReplicasLimit,
		"nodeGroups.roles maxItems":            v1alpha1.MaxRoles,
		"nodeGroups.gpus maxItems":             v1alpha1.MaxGPUs,
		"nodeGroups.gpus.name maxLength":       v1alpha1.MaxNameLength,
		"nodeGroups.storageClass maxLength":    v1alpha1.MaxNameLength,
		"nodeGroups.diskSize maxLength":        v1alpha1.MaxQuantityLength,
		"storageClass maxLength":               v1alpha1.MaxNameLength,
		"images.waitForKubeconfig maxLength":   v1alpha1.MaxImageLength,
		"ingressNginx.hosts maxItems":          v1alpha1.MaxIngressHosts,
		"ingressNginx.valuesOverride maxProps": v1alpha1.MaxValuesOverrideKeys,
		"cilium.valuesOverride maxProps":       v1alpha1.MaxValuesOverrideKeys,
		"velero.valuesOverride maxProps":       v1alpha1.MaxValuesOverrideKeys,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("XRD bounds vs apis/v1alpha1/bounds.go (-go +xrd):\n%s", d)
	}
	rules := ""
	for _, r := range group.XValidations {
		rules += r.Rule + "\n"
	}
	for _, r := range spec.Properties["controlPlane"].Properties["apiServer"].XValidations {
		rules += r.Rule + "\n"
	}
	for _, q := range []string{v1alpha1.MaxNodeCPU, v1alpha1.MaxNodeMemory, v1alpha1.MaxDiskSize, v1alpha1.MaxComponentCPU, v1alpha1.MaxComponentMemory} {
		if !strings.Contains(rules, "quantity('"+q+"')") {
			t.Errorf("no XRD rule compares with quantity('%s') (apis/v1alpha1/bounds.go)", q)
		}
	}
}

// TestNamespacedXRD: package/xrd-namespaced.yaml is a Crossplane
// v2 XRD of scope Namespaced with exactly the version (spec and status
// schema, printer columns) of package/xrd.yaml: one Go type, two XRDs. It
// offers no claim and no connection secret (Crossplane's XRD CRD rejects
// both outside LegacyCluster), leaves spec.crossplane to Crossplane, and
// the CRD Crossplane derives from it (crossplane-runtime's xcrd, as
// Crossplane core does) is accepted by the API server's CRD validation
// and does not share a name, kind or short name with the claim's CRDs, so
// both install together.
func TestNamespacedXRD(t *testing.T) {
	root := repoRoot(t)
	read := func(name string) map[string]any {
		raw, err := os.ReadFile(filepath.Join(root, "package", name))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	legacy, ns := read("xrd.yaml"), read("xrd-namespaced.yaml")
	lspec, nspec := legacy["spec"].(map[string]any), ns["spec"].(map[string]any)
	if got := ns["apiVersion"]; got != "apiextensions.crossplane.io/v2" {
		t.Errorf("apiVersion %v, want apiextensions.crossplane.io/v2", got)
	}
	if got := nspec["scope"]; got != "Namespaced" {
		t.Errorf("scope %v, want Namespaced", got)
	}
	for _, k := range []string{"claimNames", "connectionSecretKeys"} {
		if _, ok := nspec[k]; ok {
			t.Errorf("the namespaced XRD sets %s", k)
		}
	}
	if diff := cmp.Diff(lspec["versions"], nspec["versions"]); diff != "" {
		t.Errorf("the two XRDs' versions differ (the spec must never fork): -xrd.yaml, +xrd-namespaced.yaml:\n%s", diff)
	}
	if _, ok := xrdRootSchema(t).Properties["spec"].Properties["crossplane"]; ok {
		t.Error("the XRD schema defines spec.crossplane, which is Crossplane's")
	}

	raw, err := os.ReadFile(filepath.Join(root, "package", "xrd-namespaced.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, xrd); err != nil {
		t.Fatal(err)
	}
	crd, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("derived CRD scope %s, want Namespaced", crd.Spec.Scope)
	}
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["crossplane"]; !ok {
		t.Error("the derived CRD has no spec.crossplane: Crossplane's machinery would have nowhere to go")
	}
	crd.OwnerReferences = nil // Crossplane sets the XRD's uid
	crd.Spec.Versions[0].Storage = true
	crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		t.Errorf("the CRD of the namespaced XRD is refused: %v", errs.ToAggregate())
	}
	// Names the claim's XRD takes (composite and claim): none may be the
	// TenantCluster's.
	taken := map[string]bool{}
	for _, n := range []map[string]any{lspec["names"].(map[string]any), lspec["claimNames"].(map[string]any)} {
		taken[n["kind"].(string)], taken[n["plural"].(string)], taken[n["singular"].(string)] = true, true, true
		for _, s := range n["shortNames"].([]any) {
			taken[s.(string)] = true
		}
	}
	names := nspec["names"].(map[string]any)
	for _, v := range []any{names["kind"], names["plural"], names["singular"], names["shortNames"].([]any)[0]} {
		if taken[v.(string)] {
			t.Errorf("the namespaced XRD's name %q is taken by the claim's XRD", v)
		}
	}
}

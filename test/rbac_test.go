package test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	workersinput "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
)

// rbacFile is the ClusterRole the platform team applies so that Crossplane
// may compose what the functions compose (README, Install).
const rbacFile = "deploy/crossplane-rbac.yaml"

// manageVerbs are the verbs Crossplane needs on a kind it composes: it
// reads, watches, creates, applies (patch), updates and deletes it.
var manageVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// readVerbs are the verbs Crossplane needs on a kind it only fetches as a
// required resource.
var readVerbs = []string{"get", "list", "watch"}

// builtinPlurals are the resource plurals of the kinds that have no CRD in
// ../shared/crds: the built-in kinds the functions compose, and the
// KubeVirt, CDI and CSI-snapshot kinds they compose for cleanup or read.
var builtinPlurals = map[schema.GroupKind]string{
	{Group: "", Kind: "ConfigMap"}:                                                 "configmaps",
	{Group: "", Kind: "Secret"}:                                                    "secrets",
	{Group: "", Kind: "PersistentVolumeClaim"}:                                     "persistentvolumeclaims",
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmChart"}:                         "helmcharts",
	{Group: "", Kind: "Service"}:                                                   "services",
	{Group: "", Kind: "ServiceAccount"}:                                            "serviceaccounts",
	{Group: "apps", Kind: "Deployment"}:                                            "deployments",
	{Group: "networking.k8s.io", Kind: "Ingress"}:                                  "ingresses",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                             "roles",
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                      "rolebindings",
	{Group: "cdi.kubevirt.io", Kind: "DataVolume"}:                                 "datavolumes",
	{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}:                     "volumesnapshots",
	{Group: "instancetype.kubevirt.io", Kind: "VirtualMachineClusterInstancetype"}: "virtualmachineclusterinstancetypes",
}

// grant is one permission: a verb on a resource (plural, or
// plural/subresource) of an API group ("" for the core group).
type grant struct {
	Group, Resource, Verb string
}

// String renders g as "<group> <resource> <verb>", the core group as
// "core".
func (g grant) String() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	return group + " " + g.Resource + " " + g.Verb
}

// needs maps each permission Crossplane needs to where the need comes from
// (the first few sources, for the failure message).
type needs map[grant][]string

// add records that source needs verbs on resource of group.
func (n needs) add(group, resource, source string, verbs ...string) {
	for _, v := range verbs {
		g := grant{Group: group, Resource: resource, Verb: v}
		if len(n[g]) < 3 {
			n[g] = append(n[g], source)
		}
	}
}

// missing lists, sorted, each permission of n that granted lacks, with its
// sources.
func (n needs) missing(granted map[grant]bool) []string {
	var out []string
	for g, src := range n {
		if !granted[g] {
			out = append(out, g.String()+"  (needed by "+strings.Join(src, "; ")+")")
		}
	}
	sort.Strings(out)
	return out
}

// TestRBACClusterRole checks deploy/crossplane-rbac.yaml, the ClusterRole
// aggregated into Crossplane's, against what the functions compose and
// read, so that it cannot fall behind them:
//
//   - it is one ClusterRole carrying the aggregation label, with no
//     wildcard, resourceNames, non-resource URL, or escalate, bind or
//     impersonate verb;
//   - every object of every golden render (test/testdata/**/*.golden.yaml,
//     the XR itself excepted) is covered with the management verbs by a
//     rule naming its API group and resource plural (plurals from the CRDs
//     in ../shared/crds, or builtinPlurals);
//   - every rule of every Role in those renders is held (group × resource
//     × verb), so Kubernetes lets Crossplane create the Role and bind it
//     without escalate or bind;
//   - the kinds composed for cleanup (the workers input's default
//     cleanupKinds, the control plane's PKI Secrets, the optional
//     VolumeSnapshots) have the management verbs, and the kinds fetched as
//     required resources the read verbs;
//   - it grants nothing beyond all of the above.
func TestRBACClusterRole(t *testing.T) {
	root := repoRoot(t)
	cr := loadClusterRole(t, filepath.Join(root, rbacFile))
	granted := grantsOf(t, cr)

	plurals := crdPlurals(t, filepath.Join(root, "..", "shared", "crds"))
	for gk, p := range builtinPlurals {
		if crd, ok := plurals[gk]; ok && crd != p {
			t.Fatalf("%s: builtinPlurals says %q, its CRD %q", gk, p, crd)
		}
		plurals[gk] = p
	}
	composite := compositeKinds(t, filepath.Join(root, "package", "xrd.yaml"))
	objects := goldenObjects(t, filepath.Join(root, "test", "testdata"), composite)

	fromObjects, fromRoles := needs{}, needs{}
	roles := 0
	for _, o := range objects {
		gvk := o.obj.GroupVersionKind()
		src := o.file + ": " + gvk.Kind + " " + o.obj.GetName()
		plural, ok := plurals[gvk.GroupKind()]
		if !ok {
			t.Errorf("%s: no resource plural known for %s (add its CRD to ../shared/crds or the kind to builtinPlurals)", src, gvk.GroupKind())
			continue
		}
		fromObjects.add(gvk.Group, plural, src, manageVerbs...)
		if gvk.GroupKind() != (schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}) {
			continue
		}
		var role rbacv1.Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &role); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		roles++
		for _, r := range role.Rules { // resourceNames only narrow a rule: ignored
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					fromRoles.add(g, res, src, r.Verbs...)
				}
			}
		}
	}
	if len(objects) == 0 || roles == 0 {
		t.Fatalf("the golden renders hold %d composed objects and %d Roles: nothing to check", len(objects), roles)
	}

	// Kinds the functions compose, name and namespace only, so that what
	// the tenant's controllers created in NS is deleted with the cluster
	// (internal/function/cleanup.go). They are listed as required
	// resources first, so list and watch are needed too.
	cleanup := []struct{ apiVersion, kind, source string }{
		{"v1", "Secret", "control-plane: etcd PKI Secrets (composeEtcdLeftovers)"},
		{"v1", "PersistentVolumeClaim", "control-plane: etcd members' claims (composeEtcdLeftovers)"},
		{"source.toolkit.fluxcd.io/v1", "HelmChart", "addons: HelmCharts of the releases (HelmChartKind)"},
		{"snapshot.storage.k8s.io/v1", "VolumeSnapshot", "workers input cleanupKinds where CSI snapshots are enabled (README, Deletion)"},
	}
	for _, k := range workersinput.DefaultCleanupKinds() {
		cleanup = append(cleanup, struct{ apiVersion, kind, source string }{k.APIVersion, k.Kind, "workers: DefaultCleanupKinds"})
	}
	// Kinds the functions read as required resources.
	required := []struct{ apiVersion, kind, source string }{
		{"instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype", "workers: instance types of node groups"},
		{"cluster.x-k8s.io/v1beta2", "MachineSet", "workers: MachineSets still using a machine template"},
		{"v1", "Secret", "control-plane: the admin kubeconfig Secret"},
	}
	fromCleanup, fromRequired := needs{}, needs{}
	for _, c := range []struct {
		kinds []struct{ apiVersion, kind, source string }
		verbs []string
		into  needs
	}{
		{cleanup, manageVerbs, fromCleanup},
		{required, readVerbs, fromRequired},
	} {
		for _, k := range c.kinds {
			gv, err := schema.ParseGroupVersion(k.apiVersion)
			if err != nil {
				t.Fatalf("%s %s: %v", k.apiVersion, k.kind, err)
			}
			plural, ok := plurals[gv.WithKind(k.kind).GroupKind()]
			if !ok {
				t.Fatalf("no resource plural known for %s %s (add it to builtinPlurals)", k.apiVersion, k.kind)
			}
			c.into.add(gv.Group, plural, k.source, c.verbs...)
		}
	}

	for _, c := range []struct {
		name  string
		needs needs
	}{
		{"composed objects in the golden renders", fromObjects},
		{"rules of the composed Roles", fromRoles},
		{"kinds composed for cleanup", fromCleanup},
		{"kinds read as required resources", fromRequired},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.needs) == 0 {
				t.Fatal("nothing needed: the source of this check is empty")
			}
			if m := c.needs.missing(granted); len(m) > 0 {
				t.Errorf("%s does not grant (group resource verb):\n  %s", rbacFile, strings.Join(m, "\n  "))
			}
		})
	}

	t.Run("nothing beyond what is needed", func(t *testing.T) {
		all := map[grant]bool{}
		for _, n := range []needs{fromObjects, fromRoles, fromCleanup, fromRequired} {
			for g := range n {
				all[g] = true
			}
		}
		if diff := cmp.Diff(sortedGrants(all), sortedGrants(granted)); diff != "" {
			t.Errorf("%s grants differ from what the functions need (-needed +granted):\n%s", rbacFile, diff)
		}
	})
}

// sortedGrants returns the grants of set as sorted strings.
func sortedGrants(set map[grant]bool) []string {
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g.String())
	}
	sort.Strings(out)
	return out
}

// loadClusterRole reads path, which must hold exactly one ClusterRole
// (unknown fields rejected), and checks its identity and aggregation label.
func loadClusterRole(t *testing.T, path string) *rbacv1.ClusterRole {
	t.Helper()
	docs := yamlDocs(t, path)
	if len(docs) != 1 {
		t.Fatalf("%s: want exactly one YAML document, got %d", path, len(docs))
	}
	var cr rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(docs[0], &cr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	type identity struct {
		APIVersion, Kind, Name string
		Labels                 map[string]string
	}
	want := identity{
		APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "tenantkube:aggregate-to-crossplane",
		Labels: map[string]string{"rbac.crossplane.io/aggregate-to-crossplane": "true", "app.kubernetes.io/managed-by": "tenantkube"},
	}
	got := identity{APIVersion: cr.APIVersion, Kind: cr.Kind, Name: cr.Name, Labels: cr.Labels}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
	if cr.AggregationRule != nil {
		t.Errorf("%s: has an aggregationRule; it must list its rules", path)
	}
	return &cr
}

// grantsOf returns every permission cr's rules grant. It fails the test on
// a rule that grants more than it names: wildcards, resourceNames (a
// narrowed rule cannot create or list), non-resource URLs, or the escalate,
// bind and impersonate verbs.
func grantsOf(t *testing.T, cr *rbacv1.ClusterRole) map[grant]bool {
	t.Helper()
	if len(cr.Rules) == 0 {
		t.Fatalf("%s has no rules", rbacFile)
	}
	out := map[grant]bool{}
	for i, r := range cr.Rules {
		where := fmt.Sprintf("%s rules[%d]", rbacFile, i)
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("%s: resourceNames and nonResourceURLs are not used", where)
		}
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 {
			t.Errorf("%s: needs apiGroups, resources and verbs", where)
		}
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			for _, s := range list {
				if strings.Contains(s, "*") {
					t.Errorf("%s: wildcard %q", where, s)
				}
			}
		}
		for _, v := range r.Verbs {
			switch v {
			case "escalate", "bind", "impersonate":
				t.Errorf("%s: verb %q is not needed: Crossplane holds every permission of the Roles it composes", where, v)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[grant{Group: g, Resource: res, Verb: v}] = true
				}
			}
		}
	}
	return out
}

// crdPlurals returns spec.names.plural of every CustomResourceDefinition in
// the YAML files under dir, recursively, by group and kind.
func crdPlurals(t *testing.T, dir string) map[schema.GroupKind]string {
	t.Helper()
	out := map[schema.GroupKind]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		for _, doc := range yamlDocs(t, path) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(doc, &crd); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			out[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd.Spec.Names.Plural
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no CustomResourceDefinition under %s", dir)
	}
	return out
}

// compositeKinds returns the group and kinds of the composite resource and
// its claim, from the XRD at path.
func compositeKinds(t *testing.T, path string) map[schema.GroupKind]bool {
	t.Helper()
	docs := yamlDocs(t, path)
	if len(docs) != 1 {
		t.Fatalf("%s: want one YAML document, got %d", path, len(docs))
	}
	var xrd struct {
		Spec struct {
			Group      string                 `json:"group"`
			Names      struct{ Kind string }  `json:"names"`
			ClaimNames *struct{ Kind string } `json:"claimNames"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(docs[0], &xrd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if xrd.Spec.Group == "" || xrd.Spec.Names.Kind == "" {
		t.Fatalf("%s: no spec.group or spec.names.kind", path)
	}
	out := map[schema.GroupKind]bool{{Group: xrd.Spec.Group, Kind: xrd.Spec.Names.Kind}: true}
	if xrd.Spec.ClaimNames != nil {
		out[schema.GroupKind{Group: xrd.Spec.Group, Kind: xrd.Spec.ClaimNames.Kind}] = true
	}
	return out
}

// goldenObject is one composed object of a golden render.
type goldenObject struct {
	file string // relative to the testdata directory
	obj  *unstructured.Unstructured
}

// goldenObjects returns the composed objects of every *.golden.yaml under
// dir: each render's documents but the XR, which comes first and must be
// of a composite kind, and any other object of a composite kind. A golden
// holding the engine's error message (a Fatal result) has no objects.
func goldenObjects(t *testing.T, dir string, composite map[schema.GroupKind]bool) []goldenObject {
	t.Helper()
	var out []goldenObject
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".golden.yaml") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(data, []byte("---")) {
			return nil // the message of a Fatal result, not a YAML stream
		}
		files++
		for i, doc := range yamlDocs(t, path) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				return fmt.Errorf("%s document %d: %w", rel, i, err)
			}
			gk := u.GroupVersionKind().GroupKind()
			if gk.Kind == "" {
				return fmt.Errorf("%s document %d has no kind", rel, i)
			}
			if i == 0 && !composite[gk] {
				return fmt.Errorf("%s: the first document is a %s, not the composite resource", rel, gk)
			}
			if !composite[gk] {
				out = append(out, goldenObject{file: rel, obj: u})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no golden render under %s", dir)
	}
	return out
}

// yamlDocs returns the non-empty YAML documents of the file at path.
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v != nil {
			out = append(out, doc)
		}
	}
}

package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/apigen"
)

// TestAPIGenIsCurrent: the lines of apis/v1alpha1 and the section of
// docs/validation.md that cmd/api-gen writes from the API's tables are
// what it writes now (make generate-api), so no derived place disagrees
// with the version table, the Talos matrix or the rule tables.
func TestAPIGenIsCurrent(t *testing.T) {
	root := repoRoot(t)
	lines := v1alpha1.VersionSourceLines(v1alpha1.KubernetesVersions, v1alpha1.TalosSupport)
	for _, file := range []string{"types.go", "talos.go"} {
		src, err := os.ReadFile(filepath.Join(root, "apis", "v1alpha1", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := apigen.RewriteSource(file, src, lines)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(src) {
			t.Errorf("apis/v1alpha1/%s is stale: run make generate and commit the result:\n%s", file, lineDiff(string(got), string(src)))
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "validation.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := apigen.ValidationDoc(doc, v1alpha1.KubernetesVersions, v1alpha1.TalosSupport, v1alpha1.RuleDocs())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(doc) {
		t.Errorf("docs/validation.md is stale: run make generate and commit the result:\n%s", lineDiff(string(got), string(doc)))
	}
}

// TestAPIGenFollowsANewMinor: with v1.36 added to a copy of the version
// table, the rewritten types.go carries it in spec.version's enum and
// default, and docs/validation.md in its version table.
func TestAPIGenFollowsANewMinor(t *testing.T) {
	root := repoRoot(t)
	table := []v1alpha1.KubernetesVersion{{Minor: "v1.36", Patch: "v1.36.1", Default: true}}
	for _, v := range v1alpha1.KubernetesVersions {
		v.Default = false
		table = append(table, v)
	}
	src, err := os.ReadFile(filepath.Join(root, "apis", "v1alpha1", "types.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := apigen.RewriteSource("types.go", src, v1alpha1.VersionSourceLines(table, v1alpha1.TalosSupport))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\t// +kubebuilder:default=v1.36\n",
		"\t// +kubebuilder:validation:Enum=v1.36;v1.35;v1.34;v1.33;v1.32;v1.31\n\t// +optional\n\tVersion string `json:\"version,omitempty\"`",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("types.go with v1.36 has no %q", want)
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "validation.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := apigen.ValidationDoc(doc, table, v1alpha1.TalosSupport, v1alpha1.RuleDocs())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "| v1.36 | v1.36.1 |  | yes |\n| v1.35 | v1.35.6 | v0.34.0 |  |\n") {
		t.Error("docs/validation.md with v1.36 has no row v1.36 as the default above v1.35")
	}
}

// TestTenantGuideFollowsVersionTable: the tenant guide's prose is written
// by hand; it must name every minor of the version table with its patch,
// the range of minors, and the Talos matrix as the table says.
func TestTenantGuideFollowsVersionTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "tenant-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	flat := strings.Join(strings.Fields(doc), " ")
	rows := regexp.MustCompile(`(?m)^\| (v1\.[0-9]+) \| (v1\.[0-9]+\.[0-9]+) \|`).FindAllStringSubmatch(doc, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2])
	}
	var want []string
	for _, v := range v1alpha1.KubernetesVersions {
		want = append(want, v.Minor+" "+v.Patch)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("docs/tenant-guide.md, Versions: rows %v, the version table %v", got, want)
	}
	newest, oldest := v1alpha1.Versions[0], v1alpha1.Versions[len(v1alpha1.Versions)-1]
	if !strings.Contains(doc, "version: "+v1alpha1.DefaultVersion+" ") || !strings.Contains(doc, "# "+oldest+" … "+newest+";") {
		t.Errorf("docs/tenant-guide.md's example names no version: %s # %s … %s", v1alpha1.DefaultVersion, oldest, newest)
	}
	for k, r := range v1alpha1.TalosSupport {
		matrix := "Talos " + k + " runs Kubernetes v1." + strconv.Itoa(r[0]) + " to v1." + strconv.Itoa(r[1])
		if !strings.Contains(flat, matrix) {
			t.Errorf("docs/tenant-guide.md does not say %q", matrix)
		}
	}
}

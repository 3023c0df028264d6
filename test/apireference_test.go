package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAPIReferenceIsCurrent regenerates docs/api-reference.md from the Go
// types in apis/v1alpha1 into a temporary tree (make generate-docs
// GEN_OUT=...) and fails when the committed file differs: the reference is
// never edited by hand. It runs the pinned bin/crd-ref-docs (make test
// builds it) and needs no network.
func TestAPIReferenceIsCurrent(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "bin", "crd-ref-docs")); err != nil {
		if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
			t.Fatal("bin/crd-ref-docs is missing: run `make bin/crd-ref-docs`")
		}
		t.Skip("bin/crd-ref-docs is missing: run `make bin/crd-ref-docs` to check docs/api-reference.md")
	}
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "--no-print-directory", "generate-docs", "GEN_OUT="+out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make generate-docs: %v\n%s", err, b)
	}
	const rel = "docs/api-reference.md"
	want, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatalf("%s is not committed: run make docs", rel)
	}
	if string(want) != string(got) {
		t.Errorf("%s is stale: run make docs and commit the result:\n%s", rel, lineDiff(string(want), string(got)))
	}
}

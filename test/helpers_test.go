package test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/render"
	"github.com/tenantkube/tenantkube/internal/schema"
)

// update rewrites the golden files of the render tests instead of comparing
// with them: go test ./test/ -update (then review the diff).
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// compareGolden compares got with the golden file at path, or rewrites the
// file when the test runs with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it, then review it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run with -update after reviewing the change):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff lists the first 20 lines that differ between want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  - " + wl + "\n  + " + gl + "\n")
			if shown++; shown == 20 {
				break
			}
		}
	}
	return b.String()
}

// repoRoot is the repository root: the parent of test/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// requireTools fails (under make test, which sets TENANTKUBE_REQUIRE_TOOLS)
// or skips the test when the pinned crossplane binaries are not built.
func requireTools(t *testing.T, root string) {
	t.Helper()
	for _, tool := range []string{"crossplane", "crossplane-core"} {
		if _, err := os.Stat(filepath.Join(root, "bin", tool)); err != nil {
			if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
				t.Fatalf("bin/%s is missing: run `make tools`", tool)
			}
			t.Skipf("bin/%s is missing: run `make tools` to run the render tests", tool)
		}
	}
}

// paths lists the non-empty paths given.
func paths(p ...string) []string {
	var out []string
	for _, s := range p {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// buildFunctions builds the named function binaries into a temporary
// directory for a render test and returns it.
func buildFunctions(t *testing.T, root string, fns ...string) string {
	t.Helper()
	binDir := t.TempDir()
	if err := render.BuildFunctions(context.Background(), root, binDir, fns, os.Stderr); err != nil {
		t.Fatal(err)
	}
	return binDir
}

// sharedValidator loads the upstream CRD schemas rendered objects are
// validated against.
func sharedValidator(t *testing.T) *schema.Validator {
	t.Helper()
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

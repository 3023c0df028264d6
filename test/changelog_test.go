package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestChangelogNamesPackageVersion checks that CHANGELOG.md's first
// version section is the version the packages are built with (XPKG_TAG
// in the Makefile; package/crossplane.yaml declares none), and that the
// README points at the changelog.
func TestChangelogNamesPackageVersion(t *testing.T) {
	root := repoRoot(t)
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	m := regexp.MustCompile(`(?m)^XPKG_TAG\s*\?=\s*(v\d+\.\d+\.\d+\S*)\s*$`).FindStringSubmatch(read("Makefile"))
	if m == nil {
		t.Fatal("the Makefile declares no XPKG_TAG ?= vX.Y.Z")
	}
	version := m[1]
	if strings.Contains(read("package/crossplane.yaml"), "\n  version:") {
		t.Error("package/crossplane.yaml declares a version of its own: check it against CHANGELOG.md too")
	}
	top := regexp.MustCompile(`(?m)^## (.+)$`).FindStringSubmatch(read("CHANGELOG.md"))
	if top == nil {
		t.Fatal("CHANGELOG.md has no version section (## heading)")
	}
	if f := strings.Fields(top[1]); len(f) == 0 || f[0] != version {
		t.Errorf("CHANGELOG.md's top section is %q, want the packages' version %s", top[1], version)
	}
	if !strings.Contains(read("README.md"), "(CHANGELOG.md)") {
		t.Error("README.md does not link CHANGELOG.md")
	}
}

package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
)

// KubernetesVersion is one row of the version table: a Kubernetes minor a
// tenant may ask for and what is deployed for it.
// +kubebuilder:object:generate=false
type KubernetesVersion struct {
	// Minor is the version a user asks for, e.g. v1.35.
	Minor string
	// Patch is the patch version deployed, e.g. v1.35.6.
	Patch string
	// Konnectivity is the konnectivity server/agent version to pin, or ""
	// when Kamaji derives it.
	Konnectivity string
	// Default marks the minor of an unset spec.version (exactly one row).
	Default bool
	// Earlier are patches of Minor that an earlier table deployed: a
	// control plane or node group running one keeps it until its
	// maintenance window (docs/platform-guide.md, Maintenance). When Patch
	// moves on, the patch it replaces goes here.
	Earlier []string
}

// KubernetesVersions is the version table, newest first: the Cozystack
// chart's supported minors, the patch it deploys for each (its
// files/versions.yaml), the konnectivity override (its
// files/konnectivity-versions.yaml) and its default (values.yaml), with
// Earlier the patch its files/versions.yaml deployed before (its parent of
// commit 1df8c7c55). It is
// the one place a minor is added or dropped: Versions, DefaultVersion,
// the functions' table (internal/versions), the workers' container disks,
// and, through `make generate`, spec.version's enum and default, its
// upgrade rule and the Talos rule of the XRDs, derive from it
// (TestVersionTableDerivations).
var KubernetesVersions = []KubernetesVersion{
	{Minor: "v1.35", Patch: "v1.35.6", Konnectivity: "v0.34.0", Default: true, Earlier: []string{"v1.35.1"}},
	{Minor: "v1.34", Patch: "v1.34.9", Earlier: []string{"v1.34.4"}},
	{Minor: "v1.33", Patch: "v1.33.13", Earlier: []string{"v1.33.8"}},
	{Minor: "v1.32", Patch: "v1.32.13", Earlier: []string{"v1.32.12"}},
	{Minor: "v1.31", Patch: "v1.31.14"},
}

// TalosSupport is the Talos-Kubernetes support matrix: Talos minor
// ("v1.13") to the lowest and highest Kubernetes minor number it runs
// (Cozystack chart's _versions.tpl; Talos v1.13 support matrix: Kubernetes
// v1.31 to v1.36). The XRD's Talos rule and Talos.Validate derive from it.
var TalosSupport = map[string][2]int{"v1.13": {31, 36}}

// Versions are the Kubernetes minor versions a tenant may ask for, newest
// first: the XRD's enum of spec.version.
var Versions = minors(KubernetesVersions)

// DefaultVersion is the minor of an unset spec.version.
var DefaultVersion = defaultMinor(KubernetesVersions)

// minors returns the table's minors in its order.
func minors(table []KubernetesVersion) []string {
	out := make([]string, len(table))
	for i, v := range table {
		out[i] = v.Minor
	}
	return out
}

// defaultMinor returns the minor of the table's Default row ("" if none).
func defaultMinor(table []KubernetesVersion) string {
	for _, v := range table {
		if v.Default {
			return v.Minor
		}
	}
	return ""
}

// minorNumber is N of "v1.N" (-1 for any other text).
func minorNumber(minor string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(minor, "v1."))
	if err != nil || !strings.HasPrefix(minor, "v1.") {
		return -1
	}
	return n
}

// upgradeTargets returns, for each old minor from one below the oldest of
// the table to one below the newest, the minors of the table a spec at
// old may move to: old itself and the next one. The newest minor may only
// stay.
func upgradeTargets(table []KubernetesVersion) (olds []string, allowed map[string][]string) {
	supported := map[int]bool{}
	lo, hi := -1, -1
	for _, v := range table {
		n := minorNumber(v.Minor)
		supported[n] = true
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	allowed = map[string][]string{}
	for n := lo - 1; n < hi; n++ {
		old := fmt.Sprintf("v1.%d", n)
		olds = append(olds, old)
		for _, m := range []int{n, n + 1} {
			if supported[m] {
				allowed[old] = append(allowed[old], fmt.Sprintf("v1.%d", m))
			}
		}
	}
	return olds, allowed
}

// talosMatrixText is a support matrix as text, sorted by Talos minor:
// "Talos v1.13 runs Kubernetes v1.31 to v1.36".
func talosMatrixText(matrix map[string][2]int) string {
	var parts []string
	for _, k := range sortedKeys(matrix) {
		parts = append(parts, fmt.Sprintf("Talos %s runs Kubernetes v1.%d to v1.%d", k, matrix[k][0], matrix[k][1]))
	}
	return strings.Join(parts, "; ")
}

// SourceLine is a doc-comment line of a field of this package that `make
// generate` writes from the version table: in file, the line of
// Type.Field's doc comment starting with Prefix reads Prefix+Text.
// +kubebuilder:object:generate=false
type SourceLine struct {
	File, Type, Field, Prefix, Text string
}

// VersionSourceLines are the marker and comment lines derived from a
// version table and a Talos support matrix: spec.version's default and
// enum (controller-gen writes them into the XRDs, crd-ref-docs into
// docs/api-reference.md) and talos.version's description of the matrix.
func VersionSourceLines(table []KubernetesVersion, matrix map[string][2]int) []SourceLine {
	return []SourceLine{
		{File: "types.go", Type: "KubernetesClusterSpec", Field: "Version", Prefix: "// +kubebuilder:default=", Text: defaultMinor(table)},
		{File: "types.go", Type: "KubernetesClusterSpec", Field: "Version", Prefix: "// +kubebuilder:validation:Enum=", Text: strings.Join(minors(table), ";")},
		{File: "talos.go", Type: "Talos", Field: "Version", Prefix: "// (Talos ", Text: strings.TrimPrefix(talosMatrixText(matrix), "Talos ") + ")."},
	}
}

// OldestMinor is N of the oldest minor v1.N of the version table.
var OldestMinor = oldestMinor(KubernetesVersions)

// oldestMinor is the least minor number of the table's rows.
func oldestMinor(table []KubernetesVersion) int {
	out := -1
	for _, v := range table {
		if n := minorNumber(v.Minor); out < 0 || n < out {
			out = n
		}
	}
	return out
}

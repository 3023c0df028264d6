// Package versions is the table of Kubernetes versions a tenant cluster may
// run: per supported minor, the patch deployed and the konnectivity version.
package versions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// KubernetesVersion is one row of the version table.
type KubernetesVersion = v1alpha1.KubernetesVersion

// versionTable is the API's version table (apis/v1alpha1), newest first.
var versionTable = v1alpha1.KubernetesVersions

// Supported returns the minor versions of the table, newest first.
func Supported() []string {
	out := make([]string, len(versionTable))
	for i, v := range versionTable {
		out[i] = v.Minor
	}
	return out
}

// Lookup returns the table row of a minor version ("v1.33"). It
// returns an error listing the supported versions when there is none.
func Lookup(minor string) (KubernetesVersion, error) {
	for _, v := range versionTable {
		if v.Minor == minor {
			return v, nil
		}
	}
	return KubernetesVersion{}, fmt.Errorf("unsupported version %q; supported: %s", minor, strings.Join(Supported(), ", "))
}

// MinorOf returns the minor number of "v1.N" or "v1.N.P" (v1.34.4 → 34). It
// returns an error for any other shape.
func MinorOf(version string) (int, error) {
	rest, ok := strings.CutPrefix(version, "v1.")
	if !ok {
		return 0, fmt.Errorf("version %q is not of the form v1.N", version)
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("version %q is not of the form v1.N", version)
	}
	return n, nil
}

// MaxVersionNumber is the largest MAJOR, MINOR or PATCH ParsePatchVersion
// accepts.
const MaxVersionNumber = 9999

// ParsePatchVersion parses v as vMAJOR.MINOR.PATCH: decimal numbers of at
// most MaxVersionNumber without leading zeros, nothing before or after (no
// pre-release, no build metadata). It returns the version printed from the
// numbers and true, or "" and false. A version read from an object others
// write (a Node's kubeletVersion) reaches a status only through it.
func ParsePatchVersion(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", false
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 4 || (len(p) > 1 && p[0] == '0') {
			return "", false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return "", false
			}
		}
		n[i], _ = strconv.Atoi(p)
	}
	return fmt.Sprintf("v%d.%d.%d", n[0], n[1], n[2]), true
}

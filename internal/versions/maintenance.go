package versions

import "slices"

// Produced returns the table row whose Patch or Earlier patches hold v
// (vMAJOR.MINOR.PATCH): a version the platform deploys or deployed, which
// a running object may keep until its maintenance window. It reports
// false for any other text.
func Produced(v string) (KubernetesVersion, bool) {
	for _, row := range versionTable {
		if row.Patch == v || slices.Contains(row.Earlier, v) {
			return row, true
		}
	}
	return KubernetesVersion{}, false
}

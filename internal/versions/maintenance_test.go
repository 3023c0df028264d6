package versions

import "testing"

// TestProduced: the table's patches and earlier patches, and nothing
// else (apis/v1alpha1.KubernetesVersions: v1.35.6, earlier v1.35.1).
func TestProduced(t *testing.T) {
	for v, minor := range map[string]string{"v1.35.6": "v1.35", "v1.35.1": "v1.35", "v1.32.12": "v1.32", "v1.31.13": "", "v1.35.4": "", "v1.35": "", "1.35.6": "", "v1.36.0": ""} {
		row, ok := Produced(v)
		if ok != (minor != "") || row.Minor != minor {
			t.Errorf("Produced(%q) = %q %v, want %q", v, row.Minor, ok, minor)
		}
	}
}

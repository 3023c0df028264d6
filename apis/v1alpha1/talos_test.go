package v1alpha1

import (
	"strings"
	"testing"
)

// TestTalosSupportMatrix holds talosSupports to the Cozystack chart's
// matrix, written here by hand: Talos v1.13 runs Kubernetes v1.31 to
// v1.36, each edge and one past it; other Talos minors run none.
func TestTalosSupportMatrix(t *testing.T) {
	for _, c := range []struct {
		release, kube string
		ok            bool
	}{
		{"v1.13.6", "v1.30", false},
		{"v1.13.6", "v1.31", true},
		{"v1.13.0", "v1.35", true},
		{"v1.13.6", "v1.36", true},
		{"v1.13.6", "v1.37", false},
		{"v1.12.4", "v1.31", false},
		{"v1.14.0", "v1.35", false},
	} {
		tal := Talos{Version: c.release}
		msg := talosSupports(TalosSupport, c.release, tal.Minor(), c.kube)
		if (msg == "") != c.ok {
			t.Errorf("Talos %s, Kubernetes %s: supported = %v, want %v (%s)", c.release, c.kube, msg == "", c.ok, msg)
		}
		if !c.ok && (!strings.Contains(msg, c.release) || !strings.Contains(msg, c.kube)) {
			t.Errorf("message %q does not name both %s and %s", msg, c.release, c.kube)
		}
	}
}

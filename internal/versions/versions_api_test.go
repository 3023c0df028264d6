package versions

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestVersionTableCoversTheAPI: every minor the API accepts
// (v1alpha1.Versions, spec.Validate and the XRD's enum) has a row of the
// version table, and no row is unreachable.
func TestVersionTableCoversTheAPI(t *testing.T) {
	if d := cmp.Diff(v1alpha1.Versions, Supported()); d != "" {
		t.Errorf("v1alpha1.Versions (-) vs the version table (+):\n%s", d)
	}
}

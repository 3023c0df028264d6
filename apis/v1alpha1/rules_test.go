package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestNodeGroupNameRule holds the node-group name rule's Go check to
// k8s.io/apimachinery's DNS label check and the 16 characters of
// MaxNodeGroupNameLength.
func TestNodeGroupNameRule(t *testing.T) {
	names := []string{"md0", "a", "0", "md-0", "-md0", "md0-", "MD0", "md_0", "_md0", "md0_", "md.0", "m\u00e9", "",
		strings.Repeat("a", 16), strings.Repeat("a", 17), strings.Repeat("a", 63), strings.Repeat("a", 64)}
	for _, name := range names {
		want := len(name) <= 16 && len(validation.IsDNS1123Label(name)) == 0
		if got := len(nodeGroupNameRules.check(name, field.NewPath("spec", "nodeGroups"))) == 0; got != want {
			t.Errorf("name %q: accepted %t, want %t", name, got, want)
		}
	}
}

package fntest

import (
	"testing"

	"sigs.k8s.io/yaml"

	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
)

// AddonsInput is the addons step's input given as YAML ("" for none),
// defaulted and validated as the function reads it without platform
// settings; it fails t when the input is bad.
func AddonsInput(t testing.TB, y string) *input.AddonsInput {
	t.Helper()
	in := &input.AddonsInput{}
	if y != "" {
		if err := yaml.Unmarshal([]byte(y), in); err != nil {
			t.Fatalf("decoding the addons input: %v", err)
		}
	}
	in.Default()
	if err := in.Validate(); err != nil {
		t.Fatalf("addons input: %v", err)
	}
	return in
}

package render

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

var xrdFile = filepath.Join("..", "..", "package", "xrd.yaml")

// The XR is checked as the API server checks it: fields it does not know
// are rejected (strict field validation; a plain render would drop them
// and render as if they were not there), and so are schema and CEL
// violations.
func TestValidateXR(t *testing.T) {
	for _, c := range []struct {
		xr   string
		want []string // field paths the error names; nil: valid
	}{
		{xr: filepath.Join("..", "..", "examples", "xr.yaml")},
		{xr: "testdata/xr.yaml"},
		{xr: "testdata/xr-unknown-fields.yaml", want: []string{"spec.foo", "spec.addons.certManager.enbaled"}},
		{xr: "testdata/xr-schema.yaml", want: []string{`spec.version: Unsupported value: "v1.29"`}},
		{xr: "testdata/xr-cel.yaml", want: []string{"spec.nodeGroups[md0]", "minReplicas"}},
	} {
		err := ValidateXR(xrdFile, c.xr)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.xr, err)
			}
			continue
		}
		var xe *XRError
		if !errors.As(err, &xe) {
			t.Errorf("%s: error %v, want an *XRError", c.xr, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(xe.Error(), w) {
				t.Errorf("%s: the error does not name %s:\n%s", c.xr, w, xe)
			}
		}
	}
}

// What crossplane prints for a Fatal result (test/testdata/control-plane
// before the message was shortened) becomes the step and the function's
// message.
func TestMessage(t *testing.T) {
	for in, want := range map[string]string{
		`crossplane: error: cannot render composite resource: crossplane internal render: pipeline returned fatal: crossplane: error: cannot render composite resource: cannot compose resources: pipeline step "control-plane" returned a fatal result: spec.version: Unsupported value: "v1.29": supported values: "v1.35", "v1.34"` + "\n": `step control-plane: spec.version: Unsupported value: "v1.29": supported values: "v1.35", "v1.34"`,
		"some log line\ncrossplane: error: cannot render composite resource: crossplane: error: cannot load XR": "cannot load XR",
	} {
		if got := Message(in); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
}

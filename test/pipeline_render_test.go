package test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/test/render"
	"github.com/tenantkube/tenantkube/test/schema"
)

const pipelineTestdata = "testdata/control-plane"

// TestPipelineRender renders XRs through the real Crossplane engine and the
// whole Composition (control-plane → workers → addons), as `make render`
// does, and compares the output with golden files (issue 2 §7): the example
// XR, the example XR with the observed state of examples/observed (status
// and conditions of a ready control plane, a half-ready node group and a
// failed HelmRelease), every control-plane field set, a shared DataStore, and each bad input
// whose Fatal result must name the field. Every rendered object is validated
// against the upstream CRDs, and the example renders byte-identically twice.
func TestPipelineRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := t.TempDir()
	if err := render.BuildFunctions(context.Background(), root, binDir, []string{"control-plane", "workers", "addons"}, os.Stderr); err != nil {
		t.Fatal(err)
	}
	validator, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	example := func(p string) string { return filepath.Join(root, "examples", p) }
	data := func(p string) string { return filepath.Join(root, "test", pipelineTestdata, p) }

	cases := []struct {
		name, xr, required, observed, composition string
		fatal                                     []string // substrings of the Fatal message; nil when the render succeeds
	}{
		{name: "example", xr: example("xr.yaml"), required: example("instancetypes.yaml")},
		{name: "example-observed", xr: example("xr.yaml"), required: example("instancetypes.yaml"), observed: example("observed")},
		{name: "all-fields", xr: data("xr-all-fields.yaml"), required: example("instancetypes.yaml")},
		{name: "name-clash", xr: data("xr-name-clash.yaml"), required: example("instancetypes.yaml")},
		{name: "seed-parity", xr: data("xr-seed-parity.yaml"), required: example("instancetypes.yaml")},
		{name: "shared-datastore", xr: data("xr-shared-datastore.yaml"), required: example("instancetypes.yaml"), composition: data("composition-shared-datastore.yaml")},
		{name: "fatal-version", xr: data("xr-fatal-version.yaml"), fatal: []string{"spec.version", `"v1.29"`}},
		{name: "fatal-preset", xr: data("xr-fatal-preset.yaml"), fatal: []string{"spec.controlPlane.apiServer.resourcesPreset", `"x9.huge"`}},
		{name: "fatal-namespace", xr: data("xr-fatal-namespace.yaml"), fatal: []string{"spec.namespace", `"tenant-other"`}},
		{name: "fatal-quantity", xr: data("xr-fatal-quantity.yaml"), fatal: []string{"spec.controlPlane.scheduler.resources.cpu", `"abc"`}},
		{name: "fatal-host", xr: data("xr-fatal-host.yaml"), fatal: []string{"spec.host", `"demo.tenant-other.tenants.example.com"`}},
		{name: "fatal-image", xr: data("xr-fatal-image.yaml"), required: example("instancetypes.yaml"), fatal: []string{"spec.images.waitForKubeconfig", `"attacker.example/evil:latest"`}},
		{name: "fatal-replicas", xr: data("xr-fatal-replicas.yaml"), required: example("instancetypes.yaml"), fatal: []string{"spec.nodeGroups[md0].maxReplicas", "2147483647"}},
	}
	renderOnce := func(t *testing.T, xr, required, observed, composition string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{
			Root: root, XR: xr, Required: required, Observed: observed, Composition: composition, BinDir: binDir, Stderr: &bytes.Buffer{},
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderOnce(t, c.xr, c.required, c.observed, c.composition)
			var got []byte
			if c.fatal != nil {
				var ce *render.CrossplaneError
				if !errors.As(err, &ce) {
					t.Fatalf("want a Fatal render error, got err=%v", err)
				}
				for _, w := range c.fatal {
					if !strings.Contains(ce.Stderr, w) {
						t.Errorf("Fatal message does not name %s:\n%s", w, ce.Stderr)
					}
				}
				if strings.Contains(ce.Stderr, "panic") {
					t.Errorf("a function panicked:\n%s", ce.Stderr)
				}
				got = []byte(strings.TrimSpace(ce.Stderr) + "\n")
			} else {
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if err := validator.ValidateYAMLStream(out); err != nil {
					t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
				}
				got = out
			}
			compareGolden(t, filepath.Join(pipelineTestdata, c.name+".golden.yaml"), got)
		})
	}
	t.Run("deterministic", func(t *testing.T) {
		a, errA := renderOnce(t, example("xr.yaml"), example("instancetypes.yaml"), "", "")
		b, errB := renderOnce(t, example("xr.yaml"), example("instancetypes.yaml"), "", "")
		if errA != nil || errB != nil {
			t.Fatalf("render: %v / %v", errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("the same input rendered differently:\n%s", lineDiff(string(a), string(b)))
		}
	})
}

package test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/internal/render"
)

// TestTalosRender renders clusters with Talos node groups through the real
// Crossplane engine (the workers step alone) and compares them with golden
// files; every rendered custom resource, the TalosConfigTemplate included
// (../shared/crds/later), is validated against the upstream CRDs:
//   - talos: two Talos groups (one with GPUs) and an Ubuntu group, the
//     Talos and Kubernetes CAs observed;
//   - talos-waiting: the same before the CAs are observed: only the
//     Ubuntu group is composed, WorkersReady says why;
//   - talos-platform-default: a cluster that names no OS on a platform
//     whose defaultWorkerOS is Talos, with a mirrored Image Factory
//     (trailing slash) and installer.
func TestTalosRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "workers")
	validator := sharedValidator(t)
	data := func(p string) string { return filepath.Join(root, "test", workersTestdata, p) }
	instancetypes := filepath.Join(root, "examples", "instancetypes.yaml")
	for _, c := range []struct {
		name, xr string
		required []string
		want     []string // substrings of the output
	}{
		// The gpu group's disks are on fast-ssd, a remote class of the
		// platform (platform-fast-ssd.yaml).
		{"talos", "xr-talos.yaml", []string{instancetypes, data("talos-pki.yaml"), data("platform-fast-ssd.yaml")}, []string{
			"kind: TalosConfigTemplate",
			"url: https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz",
			"image: factory.talos.dev/installer/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6",
			"kind: KubeadmConfigTemplate\n    name: demo-legacy",
		}},
		{"talos-waiting", "xr-talos.yaml", []string{instancetypes, data("platform-fast-ssd.yaml")}, []string{"reason: WaitingForTalosPKI", "name: demo-legacy"}},
		{"talos-platform-default", "xr-default.yaml", []string{instancetypes, data("talos-pki.yaml"), data("platform-talos.yaml")}, []string{
			"url: https://images.example.com/talos/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz",
			"image: registry.example.com/siderolabs/installer/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := render.Render(ctx, render.Options{
				Root: root, XR: data(c.xr), Required: paths(c.required...), BinDir: binDir,
				Composition: data("composition.yaml"), Functions: data("functions.yaml"),
				Stderr: &bytes.Buffer{},
			})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if err := validator.ValidateYAMLStream(out); err != nil {
				t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output does not contain %q", w)
				}
			}
			compareGolden(t, data(c.name+".golden.yaml"), out)
		})
	}
}

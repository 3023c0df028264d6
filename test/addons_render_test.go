package test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/test/render"
	"github.com/tenantkube/tenantkube/test/schema"
)

// update rewrites the golden files of the render tests instead of comparing
// with them: go test ./test/ -run TestAddonsRender -update
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const addonsTestdata = "testdata/addons"

// TestAddonsRender renders XRs through the real Crossplane engine with the
// addons step alone (testdata/addons/composition.yaml) and compares the
// output with golden files (issue 4 §8): defaults, everything enabled,
// LoadBalancer, overrides, observed readiness and each Fatal rule. Every
// Flux object rendered is validated against the upstream CRDs.
func TestAddonsRender(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"crossplane", "crossplane-core"} {
		if _, err := os.Stat(filepath.Join(root, "bin", tool)); err != nil {
			if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
				t.Fatalf("bin/%s is missing: run `make tools`", tool)
			}
			t.Skipf("bin/%s is missing: run `make tools` to run the render tests", tool)
		}
	}
	bin := filepath.Join(t.TempDir(), "function-addons")
	build := exec.Command("go", "build", "-o", bin, "./functions/addons")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./functions/addons: %v\n%s", err, out)
	}
	validator, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, xr, observed string
		fatal              string // a substring of the Fatal message; "" when the render succeeds
	}{
		{name: "defaults", xr: "xr-defaults.yaml"},
		{name: "everything", xr: "xr-everything.yaml"},
		{name: "loadbalancer", xr: "xr-loadbalancer.yaml"},
		{name: "overrides", xr: "xr-overrides.yaml"},
		{name: "observed-failed", xr: "xr-defaults.yaml", observed: "observed-failed.yaml"},
		{name: "fatal-hami", xr: "xr-fatal-hami.yaml", fatal: "spec.addons.hami.enabled"},
		{name: "fatal-ouroboros-ingress", xr: "xr-fatal-ouroboros-ingress.yaml", fatal: "spec.addons.ouroboros.enabled"},
		{name: "fatal-ouroboros-gateway", xr: "xr-fatal-ouroboros-gateway.yaml", fatal: "spec.addons.ouroboros.valuesOverride.controller.gatewayApi.enabled"},
		{name: "fatal-expose-method", xr: "xr-fatal-expose-method.yaml", fatal: "spec.addons.ingressNginx.exposeMethod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			opts := render.Options{
				Root:        root,
				XR:          filepath.Join(root, "test", addonsTestdata, c.xr),
				Composition: filepath.Join(root, "test", addonsTestdata, "composition.yaml"),
				Functions:   filepath.Join(root, "test", addonsTestdata, "functions.yaml"),
				Binaries:    map[string]string{"tenantkube-addons": bin},
				Stderr:      &bytes.Buffer{},
			}
			if c.observed != "" {
				opts.Observed = filepath.Join(root, "test", addonsTestdata, c.observed)
			}
			out, err := render.Render(ctx, opts)
			var got []byte
			if c.fatal != "" {
				var ce *render.CrossplaneError
				if !errors.As(err, &ce) {
					t.Fatalf("want a Fatal render error naming %s, got err=%v", c.fatal, err)
				}
				if !strings.Contains(ce.Stderr, c.fatal) {
					t.Fatalf("Fatal message does not name %s:\n%s", c.fatal, ce.Stderr)
				}
				got = []byte(strings.TrimSpace(ce.Stderr) + "\n")
			} else {
				if err != nil {
					t.Fatalf("render: %v\n%s", err, opts.Stderr)
				}
				got = out
				validateFlux(t, validator, out)
			}
			golden := filepath.Join(addonsTestdata, c.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("render output differs from %s (run with -update after checking the change):\n%s", golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// validateFlux validates every Flux object of a rendered YAML stream against
// the upstream CRDs.
func validateFlux(t *testing.T, v *schema.Validator, stream []byte) {
	t.Helper()
	n := 0
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if !strings.HasSuffix(u.GroupVersionKind().Group, "toolkit.fluxcd.io") {
			continue
		}
		n++
		// Crossplane's render annotations are not part of the object's schema
		// concerns; metadata is validated as ObjectMeta anyway.
		if err := v.Validate(u); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	if n == 0 {
		t.Error("no Flux object rendered")
	}
}

// lineDiff lists the first lines that differ between want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(i+1) + ":\n  - " + wl + "\n  + " + gl + "\n")
			if shown++; shown == 20 {
				break
			}
		}
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

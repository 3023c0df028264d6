package test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/render"
	"github.com/tenantkube/tenantkube/internal/schema"
)

const addonsTestdata = "testdata/addons"

// TestAddonsRender renders XRs through the real Crossplane engine with the
// addons step alone (testdata/addons/composition.yaml) and compares the
// output with golden files: defaults, everything enabled,
// LoadBalancer, overrides, observed readiness and each Fatal rule. Every
// Flux object rendered is validated against the upstream CRDs.
func TestAddonsRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	bin := filepath.Join(t.TempDir(), "function-addons")
	build := exec.Command("go", "build", "-o", bin, "./functions/addons")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./functions/addons: %v\n%s", err, out)
	}
	validator := sharedValidator(t)

	cases := []struct {
		name, xr, observed string
		// composition: the Composition file ("" for composition.yaml).
		composition string
		fatal       string // a substring of the Fatal message; "" when the render succeeds
		// contains: lines the output must hold, worked out by hand.
		contains []string
		// admitted: the XR skips the XRD's schema check, as an object
		// admitted before a rule existed reaches the function.
		admitted bool
		// required: a file of required resources ("" for none).
		required string
		// clock: the functions' clock (zero: the time).
		clock time.Time
	}{
		{name: "defaults", xr: "xr-defaults.yaml"},
		{name: "everything", xr: "xr-everything.yaml"},
		{name: "loadbalancer", xr: "xr-loadbalancer.yaml"},
		{name: "overrides", xr: "xr-overrides.yaml"},
		// NVLink disabled as today's chart's gpu-operator release does,
		// with a wrapper chart that renders the module-parameter ConfigMap.
		{name: "gpu-wrapped", xr: "xr-gpu.yaml", composition: "composition-wrapped-gpu.yaml", contains: []string{
			"    kernelModuleConfig:\n      content: |\n        NVreg_NvLinkDisable=1\n      create: true\n",
			"      driver:\n        kernelModuleConfig:\n          name: nvidia-kernel-module-params\n",
		}},
		{name: "observed-failed", xr: "xr-defaults.yaml", observed: "observed-failed.yaml"},
		// Talos groups (the workers' XR) with the Talos CA observed: the
		// talos-bootstrap-token release reads its values from the Secret
		// demo-talos-bootstrap-token-values, which holds the workers'
		// cluster.token e5amdg.pd63yt2fvbek7dsx
		// (printf '{"tokenID":"e5amdg","tokenSecret":"pd63yt2fvbek7dsx"}' | base64).
		{name: "talos", xr: "../workers/xr-talos.yaml", required: "../workers/talos-pki.yaml", contains: []string{
			"  targetNamespace: kube-system\n  timeout: 10m0s\n",
			"  valuesFrom:\n  - kind: Secret\n    name: demo-talos-bootstrap-token-values\n    valuesKey: values.yaml\n",
			"  values.yaml: eyJ0b2tlbklEIjoiZTVhbWRnIiwidG9rZW5TZWNyZXQiOiJwZDYzeXQyZnZiZWs3ZHN4In0=\n",
			"    name: tenantkube-addon-talos-bootstrap-token\n",
		}},
		// The same before the CA is observed: no release, the status says
		// what it waits for.
		{name: "talos-waiting", xr: "../workers/xr-talos.yaml", contains: []string{
			"    talos-bootstrap-token:\n      message: waiting for the Talos CA Secret demo-talos-ca, from which the bootstrap\n",
		}},
		// At 12:00 UTC, outside the default window (every day 01:00 UTC
		// for 4h): cilium keeps its listed earlier chart 1.18.2 and says
		// so, the next window opening 2026-12-08T01:00:00Z; coredns's
		// unlisted 1.40.0 moves to the settings' 1.43.3.
		{name: "maintenance-held", xr: "xr-defaults.yaml", composition: "composition-maintenance.yaml", observed: "observed-held.yaml",
			clock: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), contains: []string{
				"      chart: cilium\n",
				"      version: 1.18.2\n",
				"      version: 1.43.3\n",
				"    - from: 1.18.2\n      reason: the platform changed the add-on's chart version\n      to: 1.18.4\n      what: addon/cilium\n",
				"    nextWindowStart: \"2026-12-08T01:00:00Z\"\n",
			}},
		{name: "fatal-hami", xr: "xr-fatal-hami.yaml", fatal: "spec.addons.hami.enabled", admitted: true},
		{name: "fatal-ouroboros-ingress", xr: "xr-fatal-ouroboros-ingress.yaml", fatal: "spec.addons.ouroboros.enabled", admitted: true},
		{name: "fatal-ouroboros-gateway", xr: "xr-fatal-ouroboros-gateway.yaml", fatal: "spec.addons.ouroboros.valuesOverride.controller.gatewayApi.enabled"},
		{name: "fatal-expose-method", xr: "xr-fatal-expose-method.yaml", fatal: "spec.addons.ingressNginx.exposeMethod", admitted: true},
		{name: "fatal-host", xr: "xr-fatal-host.yaml", fatal: `spec.addons.ingressNginx.hosts[1]: Forbidden: "demo.tenant-other.tenants.example.com"`},
		{name: "fatal-wildcard", xr: "xr-fatal-wildcard.yaml", fatal: `spec.addons.ingressNginx.hosts[1]: Forbidden: "*.apps.tenant-demo.tenants.example.com": wildcard hosts are not allowed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			opts := render.Options{
				Root:        root,
				XR:          filepath.Join(root, "test", addonsTestdata, c.xr),
				Composition: filepath.Join(root, "test", addonsTestdata, cmp.Or(c.composition, "composition.yaml")),
				Functions:   filepath.Join(root, "test", addonsTestdata, "functions.yaml"),
				Binaries:    map[string]string{"tenantkube-function-addons": bin},
				Stderr:      &bytes.Buffer{},

				SkipXRValidation: c.admitted,
				Clock:            c.clock,
			}
			if c.observed != "" {
				opts.Observed = filepath.Join(root, "test", addonsTestdata, c.observed)
			}
			if c.required != "" {
				opts.Required = []string{filepath.Join(root, "test", addonsTestdata, c.required)}
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
				got = []byte(render.Message(ce.Stderr) + "\n")
			} else {
				if err != nil {
					t.Fatalf("render: %v\n%s", err, opts.Stderr)
				}
				got = out
				validateFlux(t, validator, out)
				for _, w := range c.contains {
					if !bytes.Contains(out, []byte(w)) {
						t.Errorf("output does not hold %q", w)
					}
				}
			}
			compareGolden(t, filepath.Join(addonsTestdata, c.name+".golden.yaml"), got)
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

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

	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/render"
)

// TestWorkersQuotaRender renders the capacity pre-flight
// (docs/tenant-guide.md, Capacity) through the real Crossplane engine with the
// workers step alone, the ResourceQuotas passed as required resources
// beside the instance types: the quota fits (CapacityFits True); the
// maximum exceeds (CapacityFits False, MaximumExceedsQuota); the minimum
// exceeds on creation (Fatal naming md0 and the quota); the minimum
// exceeds on an existing cluster (CapacityFits False, every composed
// object byte-identical to the render without the quota); a quota on
// limits.cpu, which counts KubeVirt's automatic CPU limit and the support
// containers; a virt-launcher CPU request below the platform's floor
// (Fatal naming the field, its value and the floor). Rendered objects are
// validated against the upstream CRDs.
//
// Run with -update to rewrite the golden files, then review them.
func TestWorkersQuotaRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "workers")
	validator := sharedValidator(t)
	data := func(p string) string { return filepath.Join(root, "test", workersTestdata, p) }
	instancetypes := filepath.Join(root, "examples", "instancetypes.yaml")
	// renderXR renders the quota XR with the ResourceQuota quota and the
	// observed composed resources observed; first renders the cluster's
	// creation, its first reconcile (render.Options.FirstReconcile).
	renderXR := func(t *testing.T, quota, observed string, first bool) ([]byte, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{
			Root: root, XR: data("xr-quota.yaml"), Required: paths(instancetypes, quota), Observed: observed, FirstReconcile: first, BinDir: binDir,
			Composition: data("composition.yaml"), Functions: data("functions.yaml"),
			Stderr: &bytes.Buffer{},
		})
	}
	ok := func(t *testing.T, golden string, out []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if err := validator.ValidateYAMLStream(out); err != nil {
			t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
		}
		compareGolden(t, data(golden), out)
	}

	for _, c := range []struct{ name, quota, condition string }{
		{"fits", "quota-fits.yaml", "reason: QuotaFits"},
		{"max-exceeds", "quota-max.yaml", "reason: MaximumExceedsQuota"},
		{"limits-cpu-exceeds", "quota-limits-cpu.yaml", "reason: MaximumExceedsQuota"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderXR(t, data(c.quota), "", false)
			ok(t, "quota-"+c.name+".golden.yaml", out, err)
			if !strings.Contains(string(out), c.condition) {
				t.Errorf("the XR has no CapacityFits condition with %s", c.condition)
			}
		})
	}

	// A new claim is refused on its first reconcile and on the next ones,
	// once its management namespace exists (make render's default): md0
	// has no MachineDeployment either way.
	for name, first := range map[string]bool{"creation": true, "creation-namespace-observed": false} {
		t.Run("min-exceeds-"+name, func(t *testing.T) {
			_, err := renderXR(t, data("quota-min.yaml"), "", first)
			var ce *render.CrossplaneError
			if !errors.As(err, &ce) {
				t.Fatalf("want a Fatal render error, got %v", err)
			}
			for _, w := range []string{"spec.nodeGroups", "md0 (2 × 8953090304)", "tenant-demo/compute", "requests.memory", "hard 12Gi", "MinimumExceedsQuota"} {
				if !strings.Contains(ce.Stderr, w) {
					t.Errorf("Fatal message does not name %s:\n%s", w, ce.Stderr)
				}
			}
			compareGolden(t, data("quota-min-"+name+".golden.yaml"), []byte(render.Message(ce.Stderr)+"\n"))
		})
	}

	t.Run("pod-cpu-below-ratio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, err := render.Render(ctx, render.Options{
			Root: root, XR: data("xr-pod-cpu.yaml"), Required: paths(instancetypes), BinDir: binDir,
			Composition: data("composition.yaml"), Functions: data("functions.yaml"), Stderr: &bytes.Buffer{},
		})
		var ce *render.CrossplaneError
		if !errors.As(err, &ce) {
			t.Fatalf("want a Fatal render error, got %v", err)
		}
		for _, w := range []string{"spec.nodeGroups[md0].podCpuLimit", `"1m"`, "25600m", "cpuAllocationRatio 10"} {
			if !strings.Contains(ce.Stderr, w) {
				t.Errorf("Fatal message does not name %s:\n%s", w, ce.Stderr)
			}
		}
		compareGolden(t, data("pod-cpu-below-ratio.golden.yaml"), []byte(render.Message(ce.Stderr)+"\n"))
	})

	t.Run("min-exceeds-existing", func(t *testing.T) {
		// The cluster exists: its objects are observed, md0's
		// MachineDeployment with 2 machines.
		first, err := renderXR(t, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		observed := filepath.Join(t.TempDir(), "observed.yaml")
		writeObservedWithMachines(t, observed, first, 2)
		without, err := renderXR(t, "", observed, false)
		if err != nil {
			t.Fatal(err)
		}
		with, err := renderXR(t, data("quota-min-existing.yaml"), observed, false)
		ok(t, "quota-min-existing.golden.yaml", with, err)
		if !strings.Contains(string(with), "reason: MinimumExceedsQuota") {
			t.Error("the XR has no CapacityFits condition with reason MinimumExceedsQuota")
		}
		// Everything but the XR (its status conditions) is byte-identical.
		a, b := composedDocs(without), composedDocs(with)
		if len(a) == 0 || strings.Join(a, "\n---\n") != strings.Join(b, "\n---\n") {
			t.Errorf("the quota changed the composed objects: %d documents without it, %d with it", len(a), len(b))
		}
	})
}

// composedDocs are the documents of a rendered stream after the first (the
// XR).
func composedDocs(stream []byte) []string {
	docs := strings.Split(string(stream), "\n---\n")
	if len(docs) < 2 {
		return nil
	}
	return docs[1:]
}

// writeObservedWithMachines writes the composed resources of stream as
// observed (writeComposed), the MachineDeployment with status.replicas and
// readyReplicas machines.
func writeObservedWithMachines(t *testing.T, path string, stream []byte, machines int) {
	t.Helper()
	writeComposed(t, path, stream)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(raw), "\n---\n")
	for i, doc := range docs {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj["kind"] != "MachineDeployment" {
			continue
		}
		obj["status"] = map[string]any{"observedGeneration": 1, "replicas": machines, "readyReplicas": machines, "upToDateReplicas": machines}
		out, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = strings.TrimSpace(string(out))
	}
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

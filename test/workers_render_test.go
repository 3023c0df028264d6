package test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/render"
)

const workersTestdata = "testdata/workers"

// workersTemplateName matches the KubevirtMachineTemplate names of node
// group md0 of cluster demo in a rendered stream.
var workersTemplateName = regexp.MustCompile(`(?m)^  name: (demo-md0-[0-9a-f]{6})$`)

// TestWorkersRender renders XRs through the real Crossplane engine with the
// workers step alone (testdata/workers/composition.yaml) and compares the
// output with golden files: the default node group; three
// groups (explicit resources, an instance type, GPUs with a storage class);
// every kubelet override; the instance-type path; health-check and
// provisioning-time settings cluster-wide and per group; a template
// change while a MachineSet still uses the old template (both kept) and
// after (old gone);
// an instance type that does not exist (Fatal, nothing applied). Every
// rendered custom resource is validated against the upstream CRDs, and the
// same input renders byte-identically twice.
//
// Run with -update to rewrite the golden files, then review them.
func TestWorkersRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "workers")
	validator := sharedValidator(t)
	data := func(p string) string { return filepath.Join(root, "test", workersTestdata, p) }
	instancetypes := filepath.Join(root, "examples", "instancetypes.yaml")
	renderWorkers := func(t *testing.T, xr, required, observed string) ([]byte, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{
			Root: root, XR: xr, Required: paths(strings.Fields(required)...), Observed: observed, BinDir: binDir,
			Composition: data("composition.yaml"), Functions: data("functions.yaml"),
			Stderr: &bytes.Buffer{},
		})
	}
	ok := func(t *testing.T, name string, out []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if err := validator.ValidateYAMLStream(out); err != nil {
			t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
		}
		if bytes.Contains(out, []byte("\n    replicas:")) && bytes.Contains(out, []byte("kind: MachineDeployment")) {
			for _, doc := range strings.Split(string(out), "\n---\n") {
				if strings.Contains(doc, "kind: MachineDeployment") && strings.Contains(doc, "\n  replicas:") {
					t.Error("a MachineDeployment has spec.replicas")
				}
			}
		}
		compareGolden(t, data(name+".golden.yaml"), out)
	}

	// fastSSD lists fast-ssd, the class of the gpu group's disks, among
	// the platform's remote classes.
	fastSSD := instancetypes + " " + data("platform-fast-ssd.yaml")
	for _, c := range []struct{ name, xr, required string }{
		{"default", "xr-default.yaml", instancetypes},
		{"instancetype", "xr-instancetype.yaml", instancetypes},
		{"three-groups", "xr-three-groups.yaml", fastSSD},
		{"kubelet-overrides", "xr-kubelet-overrides.yaml", instancetypes},
		{"health", "xr-health.yaml", instancetypes},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderWorkers(t, data(c.xr), c.required, "")
			ok(t, c.name, out, err)
		})
	}

	// The health case's Warnings, as `make render` prints them: 40% of
	// md0's minReplicas 2 and of pair's maxReplicas 2 is 0.8 machines,
	// which rounds down to 0.
	t.Run("health-warnings", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var stderr bytes.Buffer
		_, err := render.Render(ctx, render.Options{
			Root: root, XR: data("xr-health.yaml"), Required: paths(instancetypes), BinDir: binDir,
			Composition: data("composition.yaml"), Functions: data("functions.yaml"),
			Stderr: &stderr,
		})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		for _, w := range []string{
			"Warning RemediationNeverAllowed: step workers: node group md0: maxUnhealthy 40% rounds down to 0 machines at its minReplicas 2,",
			"Warning RemediationNeverAllowed: step workers: node group pair: maxUnhealthy 40% rounds down to 0 machines at its maxReplicas 2,",
		} {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
			}
		}
	})

	// Node-group VM settings and the platform's CSI rate limits,
	// each away from its default.
	t.Run("vm-settings", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := render.Render(ctx, render.Options{
			Root: root, XR: data("xr-vm-settings.yaml"), Required: paths(instancetypes, data("platform-vm-settings.yaml")), BinDir: binDir,
			Composition: data("composition.yaml"), Functions: data("functions.yaml"),
			Stderr: &bytes.Buffer{},
		})
		ok(t, "vm-settings", out, err)
	})

	// A node group's storageClass is the class of its VMs' disks on the
	// management cluster: one the platform does not list is refused like
	// spec.storageClass, naming the group, the value and the list.
	t.Run("fatal-group-storage-class", func(t *testing.T) {
		_, err := renderWorkers(t, data("xr-three-groups.yaml"), instancetypes, "")
		var ce *render.CrossplaneError
		if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, `spec.nodeGroups[gpu].storageClass: Unsupported value: "fast-ssd": supported values: "replicated"`) {
			t.Errorf("want a Fatal naming spec.nodeGroups[gpu].storageClass and fast-ssd, got %v", err)
		}
	})

	t.Run("fatal-instancetype", func(t *testing.T) {
		_, err := renderWorkers(t, data("xr-fatal-instancetype.yaml"), instancetypes, "")
		var ce *render.CrossplaneError
		if !errors.As(err, &ce) {
			t.Fatalf("want a Fatal render error, got %v", err)
		}
		for _, w := range []string{"spec.nodeGroups[md0].instanceType", `"no.such"`} {
			if !strings.Contains(ce.Stderr, w) {
				t.Errorf("Fatal message does not name %s:\n%s", w, ce.Stderr)
			}
		}
		compareGolden(t, data("fatal-instancetype.golden.yaml"), []byte(render.Message(ce.Stderr)+"\n"))
	})

	// Template change: render the old spec, feed its objects back as
	// observed, with a MachineSet that still uses the old template.
	t.Run("template-change", func(t *testing.T) {
		tmp := t.TempDir()
		before, err := renderWorkers(t, data("xr-instancetype.yaml"), instancetypes, "")
		if err != nil {
			t.Fatal(err)
		}
		oldName := workersTemplateNames(before)
		if len(oldName) != 1 {
			t.Fatalf("want one template before the change, got %v", oldName)
		}
		observed := filepath.Join(tmp, "observed.yaml")
		writeComposed(t, observed, before)

		inUse := filepath.Join(tmp, "required-in-use.yaml")
		writeRequired(t, inUse, instancetypes, oldName[0])
		during, err := renderWorkers(t, data("xr-template-change.yaml"), inUse, observed)
		ok(t, "template-change-in-use", during, err)
		names := workersTemplateNames(during)
		if len(names) != 2 || !contains(names, oldName[0]) {
			t.Fatalf("templates while the old one is in use: %v, want %s and a new one", names, oldName[0])
		}
		newName := names[0]
		if newName == oldName[0] {
			newName = names[1]
		}

		// The instance type is gone from the management cluster: Crossplane
		// answers the requirement with no object, the step is Fatal and
		// Crossplane applies nothing, so every observed object stays.
		onlyMS := filepath.Join(tmp, "required-no-instancetypes.yaml")
		writeRequired(t, onlyMS, data("empty.yaml"), oldName[0])
		_, err = renderWorkers(t, data("xr-template-change.yaml"), onlyMS, observed)
		var ce *render.CrossplaneError
		if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, `spec.nodeGroups[md0].instanceType: Invalid value: "u1.large"`) {
			t.Errorf("missing instance type: want a Fatal naming md0 and u1.large, got %v", err)
		}

		// Rolled: the observed MachineDeployment and every MachineSet use
		// the new template.
		observedAfter := filepath.Join(tmp, "observed-after.yaml")
		writeComposed(t, observedAfter, during)
		rolled := filepath.Join(tmp, "required-rolled.yaml")
		writeRequired(t, rolled, instancetypes, newName)
		after, err := renderWorkers(t, data("xr-template-change.yaml"), rolled, observedAfter)
		ok(t, "template-change-rolled", after, err)
		if got := workersTemplateNames(after); len(got) != 1 || got[0] != newName {
			t.Errorf("templates after the roll: %v, want only %s", got, newName)
		}
	})

	// Upgrading tenantkube rolls no running node group. md0 of
	// xr-instancetype.yaml runs on demo-md0-5f7fdc, the template without
	// placement, its worker disks on spec.storageClass (replicated);
	// antiAffinity None renders that template, and with it observed, the
	// same XR without antiAffinity keeps it.
	t.Run("upgrade-keeps-template", func(t *testing.T) {
		tmp := t.TempDir()
		raw, err := os.ReadFile(data("xr-instancetype.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		unplacedXR := filepath.Join(tmp, "xr-none.yaml")
		if err := os.WriteFile(unplacedXR, append(raw, []byte("      antiAffinity: None\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		before, err := renderWorkers(t, unplacedXR, instancetypes, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := workersTemplateNames(before); len(got) != 1 || got[0] != "demo-md0-5f7fdc" {
			t.Fatalf("antiAffinity None: templates %v, want demo-md0-5f7fdc", got)
		}
		observed := filepath.Join(tmp, "observed.yaml")
		writeComposed(t, observed, before)
		after, err := renderWorkers(t, data("xr-instancetype.yaml"), instancetypes, observed)
		if err != nil {
			t.Fatal(err)
		}
		if got := workersTemplateNames(after); len(got) != 1 || got[0] != "demo-md0-5f7fdc" || bytes.Contains(after, []byte("podAntiAffinity")) {
			t.Errorf("running group after the upgrade: templates %v (anti-affinity %t), want only demo-md0-5f7fdc without placement",
				got, bytes.Contains(after, []byte("podAntiAffinity")))
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		a, errA := renderWorkers(t, data("xr-three-groups.yaml"), fastSSD, "")
		b, errB := renderWorkers(t, data("xr-three-groups.yaml"), fastSSD, "")
		if errA != nil || errB != nil {
			t.Fatalf("render: %v / %v", errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Error("the same input rendered differently")
		}
	})
}

// workersTemplateNames lists the md0 machine template names in a stream.
func workersTemplateNames(stream []byte) []string {
	var out []string
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		if !strings.Contains(doc, "kind: KubevirtMachineTemplate") {
			continue
		}
		if m := workersTemplateName.FindStringSubmatch(doc); m != nil {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// writeComposed writes the composed resources of a rendered stream (every
// document but the XR and render results) as observed resources.
func writeComposed(t *testing.T, path string, stream []byte) {
	t.Helper()
	var docs []string
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || len(obj) == 0 {
			continue
		}
		if k, _ := obj["kind"].(string); k == "XKubernetesCluster" || k == "Result" {
			continue
		}
		docs = append(docs, strings.TrimPrefix(strings.TrimSpace(doc), "---\n"))
	}
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRequired writes the instance types plus one MachineSet of cluster
// demo in tenant-demo that uses the machine template tmpl.
func writeRequired(t *testing.T, path, instancetypes, tmpl string) {
	t.Helper()
	its, err := os.ReadFile(instancetypes)
	if err != nil {
		t.Fatal(err)
	}
	ms := `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: demo-md0-x9z8q
  namespace: tenant-demo
  labels:
    cluster.x-k8s.io/cluster-name: demo
    cluster.x-k8s.io/deployment-name: demo-md0
spec:
  clusterName: demo
  selector:
    matchLabels:
      cluster.x-k8s.io/deployment-name: demo-md0
  template:
    spec:
      clusterName: demo
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfigTemplate
          name: demo-md0
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: KubevirtMachineTemplate
        name: ` + tmpl + "\n"
	if err := os.WriteFile(path, append(append(its, []byte("\n---\n")...), ms...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

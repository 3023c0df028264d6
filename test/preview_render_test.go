package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/preview"
	"github.com/tenantkube/tenantkube/internal/render"
)

const previewTestdata = "testdata/preview"

// TestPreview previews changes of the example XR through the real
// Crossplane engine and the whole Composition: the observed
// composed resources are the first render of the XR before the change
// (writeComposed, as Crossplane would name them), and the report is
// compared with golden files. A diskSize change rolls md0 for diskSize; a
// minReplicas change rolls nothing; a version bump upgrades the control
// plane first and rolls md0 for the version only after it (the workers
// function holds the group's version until the control plane reports the
// new one). The same diskSize change read from `kubectl get -o yaml`
// output (one List, with the API server's metadata and status) previews
// the same. A cluster running an earlier cilium chart the platform still
// lists keeps it outside its window, and the preview says what waits.
// docs/tenant-guide.md shows the diskSize, version, hibernation and
// held add-on previews as they are.
func TestPreview(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	example := func(p string) string { return filepath.Join(root, "examples", p) }
	data := func(p string) string { return filepath.Join(root, "test", previewTestdata, p) }
	required := []string{example("instancetypes.yaml")}
	opts := func(xr, observed string) render.Options {
		return render.Options{Root: root, XR: xr, Observed: observed, Required: required, BinDir: binDir, Stderr: &bytes.Buffer{}}
	}
	// observedFrom renders xr and writes its composed resources as the
	// observed state.
	observedFrom := func(t *testing.T, xr string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := render.Render(ctx, opts(xr, ""))
		if err != nil {
			t.Fatalf("render %s: %v", xr, err)
		}
		path := filepath.Join(t.TempDir(), "observed.yaml")
		writeComposed(t, path, out)
		return path
	}
	previewWith := func(t *testing.T, o render.Options) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		rep, err := render.Preview(ctx, o)
		if err != nil {
			t.Fatalf("preview: %v", err)
		}
		return rep.String()
	}
	preview := func(t *testing.T, xr, observed string) string {
		t.Helper()
		return previewWith(t, opts(xr, observed))
	}
	lines := func(out string) []string { return strings.Split(strings.TrimSuffix(out, "\n"), "\n") }
	// index is the line number of want in out, failing when absent.
	index := func(t *testing.T, out, want string) int {
		t.Helper()
		for i, l := range lines(out) {
			if l == want {
				return i
			}
		}
		t.Errorf("the preview has no line %q:\n%s", want, out)
		return -1
	}

	// inGuide fails when the tenant guide's "Preview a change" does not
	// show out as it is.
	guide, err := os.ReadFile(filepath.Join(root, "docs", "tenant-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	inGuide := func(t *testing.T, out string) {
		t.Helper()
		if !bytes.Contains(guide, []byte("```\n"+out+"```\n")) {
			t.Errorf("docs/tenant-guide.md does not show this preview as it is:\n%s", out)
		}
	}

	current := observedFrom(t, example("xr.yaml"))

	t.Run("disksize", func(t *testing.T) {
		out := preview(t, data("xr-disksize.yaml"), current)
		index(t, out, "control plane: no upgrade")
		index(t, out, "md0: rolls (diskSize)")
		compareGolden(t, data("disksize.golden.txt"), []byte(out))
		inGuide(t, out)
	})

	t.Run("minreplicas", func(t *testing.T) {
		out := preview(t, data("xr-minreplicas.yaml"), current)
		index(t, out, "control plane: no upgrade")
		index(t, out, "md0: no roll")
		// The autoscaler's bounds are annotations of the MachineDeployment.
		index(t, out, "updated: MachineDeployment demo-md0")
		compareGolden(t, data("minreplicas.golden.txt"), []byte(out))
	})

	t.Run("version", func(t *testing.T) {
		out := preview(t, example("xr.yaml"), observedFrom(t, data("xr-v1.34.yaml")))
		// v1.34 and v1.35 are v1.34.9 and v1.35.6 in the version table
		// (the Cozystack chart's files/versions.yaml).
		cp := index(t, out, "control plane: upgrades v1.34.9 -> v1.35.6")
		md0 := index(t, out, "md0: rolls (version) after the control plane upgrade")
		if cp != 0 || md0 <= cp {
			t.Errorf("the control plane upgrade is not first, before md0 (lines %d, %d):\n%s", cp, md0, out)
		}
		compareGolden(t, data("version.golden.txt"), []byte(out))
		inGuide(t, out)
	})

	t.Run("hibernation", func(t *testing.T) {
		// Tuesday 10 March 2026, 13:00 in Berlin (CET, +1): awake; the
		// schedule's next start is 20:00 CET, 19:00Z.
		o := opts(data("xr-hibernation.yaml"), current)
		o.Clock = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		out := previewWith(t, o)
		index(t, out, "hibernation: Awake")
		index(t, out, "hibernation: at 2026-03-10T19:00:00Z: MachineDeployment demo-md0 replicas unset -> 0")
		compareGolden(t, data("hibernation.golden.txt"), []byte(out))
		inGuide(t, out)
	})

	t.Run("addon-held", func(t *testing.T) {
		// The cluster runs cilium's chart 1.18.2, which the platform still
		// lists beside its version 1.18.4; at 12:00 UTC the default window
		// (every day 01:00 UTC for 4h) is closed: the release keeps 1.18.2
		// and the preview says it waits for 2026-12-08T01:00:00Z.
		running := filepath.Join(t.TempDir(), "observed.yaml")
		writeWithCiliumChart(t, running, current, "1.18.4", "1.18.2")
		o := opts(example("xr.yaml"), running)
		o.Required = append(o.Required, data("platform-cilium-earlier.yaml"))
		o.Clock = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
		out := previewWith(t, o)
		index(t, out, "maintenance: 1 change(s) wait for the window opening at 2026-12-08T01:00:00Z")
		index(t, out, "maintenance: addon/cilium 1.18.2 -> 1.18.4 (the platform changed the add-on's chart version)")
		if strings.Contains(out, "HelmRelease demo-cilium") {
			t.Errorf("the preview changes cilium's release while its chart waits:\n%s", out)
		}
		compareGolden(t, data("addon-held.golden.txt"), []byte(out))
		inGuide(t, out)
	})

	t.Run("kubectl-list", func(t *testing.T) {
		live := filepath.Join(t.TempDir(), "live.yaml")
		writeKubectlList(t, live, current)
		out := preview(t, data("xr-disksize.yaml"), live)
		compareGolden(t, data("disksize.golden.txt"), []byte(out))
	})
}

// writeWithCiliumChart writes the observed objects of file with cilium's
// HelmRelease at chart version to instead of from.
func writeWithCiliumChart(t *testing.T, path, file, from, to string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	n := 0
	for i, doc := range docs {
		if strings.HasPrefix(doc, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n") && strings.Contains(doc, "\n  name: demo-cilium\n") {
			docs[i] = strings.Replace(doc, "      version: "+from+"\n", "      version: "+to+"\n", 1)
			n++
		}
	}
	if n != 1 || !strings.Contains(strings.Join(docs, ""), "      version: "+to+"\n") {
		t.Fatalf("%s: no cilium HelmRelease at chart %s", file, from)
	}
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeKubectlList writes the observed objects of file as `kubectl get -o
// yaml` prints them: one List, each item with the metadata and status the
// API server adds.
func writeKubectlList(t *testing.T, path, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	for i, doc := range strings.Split(string(b), "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		meta["resourceVersion"] = strconv.Itoa(1000 + i)
		meta["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		meta["generation"] = 1
		meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
		ann, _ := meta["annotations"].(map[string]any)
		ann["crossplane.io/external-name"] = meta["name"]
		obj["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		items = append(items, obj)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPreviewComposedResources holds preview.ComposedResources, what the
// tenant guide's `kubectl get` reads, to the kinds of every golden render: each
// composed kind is listed (its plural from its CRD in ../shared/crds or
// builtinPlurals), and nothing else is.
func TestPreviewComposedResources(t *testing.T) {
	root := repoRoot(t)
	plurals := crdPlurals(t, filepath.Join(root, "..", "shared", "crds"))
	for gk, p := range builtinPlurals {
		plurals[gk] = p
	}
	composite := packageCompositeKinds(t, root)
	want := map[string]bool{}
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), composite) {
		gk := o.obj.GroupVersionKind().GroupKind()
		p, ok := plurals[gk]
		if !ok {
			t.Fatalf("%s: no resource plural known for %s", o.file, gk)
		}
		if gk.Group != "" {
			p += "." + gk.Group
		}
		want[p] = true
	}
	if diff := cmp.Diff(sortedKeys(want), preview.ComposedResources); diff != "" {
		t.Errorf("preview.ComposedResources: -want (kinds of the golden renders), +got:\n%s", diff)
	}
}

package render_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/render"
)

// The repository root, seen from this package's directory.
const root = "../.."

var (
	buildOnce sync.Once
	binDir    string // the three functions and testfn, built from this tree
	renderCLI string // the driver's command, built from this tree
	buildErr  error
)

// TestMain removes the binaries the tests build.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// setup skips (or, under `make test`, fails) when the pinned crossplane tools
// are missing, and builds the function binaries from the current source once,
// so a stale bin/ never decides a test.
func setup(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bin/crossplane", "bin/crossplane-core"} {
		if _, err := os.Stat(filepath.Join(root, tool)); err != nil {
			if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
				t.Fatalf("%s is missing: run `make tools`", tool)
			}
			t.Skipf("%s is missing: run `make tools` to run the render tests", tool)
		}
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "tenantkube-render-test-")
		if buildErr != nil {
			return
		}
		var out bytes.Buffer
		buildErr = render.BuildFunctions(context.Background(), root, binDir, []string{"control-plane", "workers", "addons"}, &out)
		for _, b := range []struct{ out, pkg string }{
			{"testfn", "./internal/render/testdata/testfn"},
			{"render", "./cmd/render"},
		} {
			if buildErr != nil {
				break
			}
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
			cmd.Dir = root
			cmd.Stdout, cmd.Stderr = &out, &out
			buildErr = cmd.Run()
		}
		if buildErr != nil {
			buildErr = errors.Join(buildErr, errors.New(out.String()))
		}
		renderCLI = filepath.Join(binDir, "render")
	})
	if buildErr != nil {
		t.Fatalf("cannot build the binaries under test: %v", buildErr)
	}
}

// pids records the function processes a render starts.
type pids struct {
	mu sync.Mutex
	m  map[string]int
}

func (p *pids) started(fn string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]int{}
	}
	p.m[fn] = pid
}

// assertGone fails unless every one of the three functions was started and
// none of their processes exists any more.
func (p *pids) assertGone(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) != 3 {
		t.Errorf("started %d function processes %v, want 3", len(p.m), p.m)
	}
	for fn, pid := range p.m {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("Function %s (pid %d) is still running after Render returned (kill -0: %v)", fn, pid, err)
		}
	}
}

func options(t *testing.T, xr string, p *pids, stderr io.Writer) render.Options {
	t.Helper()
	return render.Options{
		Root:     root,
		XR:       xr,
		Required: []string{"testdata/instancetypes.yaml"},
		BinDir:   binDir,
		Stderr:   stderr,
		Started:  p.started,
	}
}

// testfnFor serves the named Functions with the test-only function and the
// others with the real ones.
func testfnFor(fns ...string) map[string]string {
	m := map[string]string{}
	for _, fn := range fns {
		m[fn] = filepath.Join(binDir, "testfn")
	}
	return m
}

// parse splits a YAML stream and decodes every document.
func parse(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var docs []map[string]any
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("render output is not a YAML stream: %v\n%s", err, out)
		}
		doc := map[string]any{}
		if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
			t.Fatalf("render output has a document that is not YAML: %v\n%s", err, raw)
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

func assertXR(t *testing.T, docs []map[string]any, name string) {
	t.Helper()
	if len(docs) == 0 {
		t.Fatal("render printed no document")
	}
	xr := docs[0]
	meta, _ := xr["metadata"].(map[string]any)
	if xr["apiVersion"] != "tenantkube.io/v1alpha1" || xr["kind"] != "XKubernetesCluster" || meta["name"] != name {
		t.Fatalf("first document is %v %v %v, want the XR tenantkube.io/v1alpha1 XKubernetesCluster %s", xr["apiVersion"], xr["kind"], meta["name"], name)
	}
}

// TestRender renders the testdata XR with the three real functions, as
// `make render` does.
func TestRender(t *testing.T) {
	setup(t)
	var p pids
	var stderr bytes.Buffer
	out, err := render.Render(t.Context(), options(t, "testdata/xr.yaml", &p, &stderr))
	p.assertGone(t)
	if err != nil {
		t.Fatalf("Render: %v\nstderr:\n%s", err, stderr.String())
	}
	assertXR(t, parse(t, out), "demo-x7k2p")
}

// TestRenderPassThrough serves all three Functions with the test function,
// which passes the desired state through: the XR comes back and nothing else.
func TestRenderPassThrough(t *testing.T) {
	setup(t)
	var p pids
	var stderr bytes.Buffer
	o := options(t, "testdata/xr.yaml", &p, &stderr)
	o.Binaries = testfnFor("tenantkube-function-control-plane", "tenantkube-function-workers", "tenantkube-function-addons")
	out, err := render.Render(t.Context(), o)
	p.assertGone(t)
	if err != nil {
		t.Fatalf("Render: %v\nstderr:\n%s", err, stderr.String())
	}
	docs := parse(t, out)
	assertXR(t, docs, "demo-x7k2p")
	if len(docs) != 1 {
		t.Errorf("render printed %d documents, want only the XR:\n%s", len(docs), out)
	}
}

// TestRenderResults: the Warning and Normal results every step returns are
// printed on stderr, one a line, with the step's name, in pipeline order
// (package/composition.yaml), and the output holds no Result document; the
// engine's own Normal events are not printed. With ResultsFlag asked for,
// the Result documents stay in the output.
func TestRenderResults(t *testing.T) {
	setup(t)
	var p pids
	var stderr bytes.Buffer
	o := options(t, "testdata/xr-results.yaml", &p, &stderr)
	o.Binaries = testfnFor("tenantkube-function-control-plane", "tenantkube-function-workers", "tenantkube-function-addons")
	out, err := render.Render(t.Context(), o)
	p.assertGone(t)
	if err != nil {
		t.Fatalf("Render: %v\nstderr:\n%s", err, stderr.String())
	}
	if docs := parse(t, out); len(docs) != 1 {
		t.Errorf("render printed %d documents, want only the XR:\n%s", len(docs), out)
	}
	const warning = "node group md0: maxUnhealthy 40% rounds down to 0 machines at its maxReplicas 2, so no unhealthy machine of it is replaced"
	var want strings.Builder
	for _, step := range []string{"control-plane", "workers", "addons"} {
		want.WriteString("Warning Tested: step " + step + ": " + warning + "\n")
		want.WriteString("Normal Tested: step " + step + ": a normal result\n")
	}
	if !strings.Contains(stderr.String(), want.String()) {
		t.Errorf("stderr does not hold the results\n%s\ngot:\n%s", want.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "SelectComposition") {
		t.Errorf("stderr holds the engine's Normal events:\n%s", stderr.String())
	}

	stderr.Reset()
	o.ExtraArgs = []string{render.ResultsFlag}
	out, err = render.Render(t.Context(), o)
	if err != nil {
		t.Fatalf("Render %s: %v", render.ResultsFlag, err)
	}
	n := 0
	for _, d := range parse(t, out) {
		if d["kind"] == "Result" && d["severity"] == "Warning" {
			n++
		}
	}
	if n != 3 || strings.Contains(stderr.String(), "Warning Tested") {
		t.Errorf("with %s: %d Warning Result documents in the output (want 3), stderr:\n%s", render.ResultsFlag, n, stderr.String())
	}
}

// TestRenderFatal: a Fatal result of one step fails the render with its
// message on stderr and in the error.
func TestRenderFatal(t *testing.T) {
	setup(t)
	var p pids
	var stderr bytes.Buffer
	o := options(t, "testdata/xr-fatal.yaml", &p, &stderr)
	o.Binaries = testfnFor("tenantkube-function-workers")
	out, err := render.Render(t.Context(), o)
	p.assertGone(t)
	const msg = "node group md0: instanceType u1.missing does not exist"
	var ce *render.CrossplaneError
	if !errors.As(err, &ce) || ce.ExitCode == 0 {
		t.Fatalf("Render error = %v (output %q), want a CrossplaneError with a non-zero exit code", err, out)
	}
	if !strings.Contains(ce.Stderr, msg) || !strings.Contains(stderr.String(), msg) {
		t.Errorf("the Fatal message %q is missing from crossplane's stderr:\n%s", msg, ce.Stderr)
	}
	if !strings.Contains(ce.Stderr, `"workers"`) {
		t.Errorf("crossplane's stderr does not name the failing step workers:\n%s", ce.Stderr)
	}
}

// TestRenderFunctionError: a function that answers with a gRPC error fails
// the render.
func TestRenderFunctionError(t *testing.T) {
	setup(t)
	var p pids
	var stderr bytes.Buffer
	o := options(t, "testdata/xr-error.yaml", &p, &stderr)
	o.Binaries = testfnFor("tenantkube-function-addons")
	_, err := render.Render(t.Context(), o)
	p.assertGone(t)
	var ce *render.CrossplaneError
	if !errors.As(err, &ce) || ce.ExitCode == 0 {
		t.Fatalf("Render error = %v, want a CrossplaneError with a non-zero exit code", err)
	}
	if !strings.Contains(ce.Stderr, "testfn failed on purpose") {
		t.Errorf("the function's error is missing from crossplane's stderr:\n%s", ce.Stderr)
	}
}

// TestRenderCancel: cancelling the context while a function hangs stops
// crossplane and every function.
func TestRenderCancel(t *testing.T) {
	setup(t)
	var p pids
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := options(t, "testdata/xr-hang.yaml", &p, io.Discard)
	o.Binaries = testfnFor("tenantkube-function-control-plane")
	// Cancel two seconds after the third function process started (on a
	// loaded machine starting them takes longer than any fixed deadline).
	cancelled := make(chan time.Time, 1)
	var n int
	o.Started = func(fn string, pid int) {
		p.started(fn, pid)
		if n++; n == 3 {
			time.AfterFunc(2*time.Second, func() { cancelled <- time.Now(); cancel() })
		}
	}
	_, err := render.Render(ctx, o)
	p.assertGone(t)
	var at time.Time
	select {
	case at = <-cancelled:
	default:
		t.Fatalf("Render returned %v before it was cancelled", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Render error = %v, want context.Canceled", err)
	}
	if d := time.Since(at); d > 20*time.Second {
		t.Errorf("Render took %s to return after cancellation", d)
	}
}

// TestCLI runs the driver's command as `make render` does: stdout carries
// only the YAML stream; a Fatal result gives a non-zero exit with the
// message on stderr and nothing on stdout.
func TestCLI(t *testing.T) {
	setup(t)
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		var o, e bytes.Buffer
		cmd := exec.CommandContext(t.Context(), renderCLI, append([]string{"--root=" + root,
			"--function-binary=tenantkube-function-control-plane=" + filepath.Join(binDir, "function-control-plane"),
			"--function-binary=tenantkube-function-workers=" + filepath.Join(binDir, "function-workers"),
			"--function-binary=tenantkube-function-addons=" + filepath.Join(binDir, "function-addons"),
		}, args...)...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("cannot run %s: %v", renderCLI, err)
		}
		return o.String(), e.String(), cmd.ProcessState.ExitCode()
	}

	stdout, stderr, code := run("--xr=testdata/xr.yaml", "--required=testdata/instancetypes.yaml")
	if code != 0 {
		t.Fatalf("render exited %d\nstderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "---\n") {
		t.Errorf("stdout does not start with a YAML document separator:\n%s", stdout)
	}
	assertXR(t, parse(t, []byte(stdout)), "demo-x7k2p")

	stdout, stderr, code = run("--xr=testdata/xr-fatal.yaml",
		"--function-binary=tenantkube-function-workers="+filepath.Join(binDir, "testfn"))
	if code == 0 {
		t.Fatalf("render of a Fatal result exited 0\nstdout:\n%s", stdout)
	}
	if stdout != "" {
		t.Errorf("render of a Fatal result printed on stdout:\n%s", stdout)
	}
	// The function's message alone, not crossplane's prefixes.
	if want := "render: step workers: node group md0: instanceType u1.missing does not exist\n"; stderr != want {
		t.Errorf("stderr of a Fatal result = %q, want %q", stderr, want)
	}

	// Results: on stderr, not in the stream.
	stdout, stderr, code = run("--xr=testdata/xr-results.yaml",
		"--function-binary=tenantkube-function-workers="+filepath.Join(binDir, "testfn"))
	if code != 0 {
		t.Fatalf("render exited %d\nstderr:\n%s", code, stderr)
	}
	if want := "Normal Tested: step workers: a normal result\n"; !strings.Contains(stderr, want) || strings.Contains(stdout, "kind: Result") {
		t.Errorf("want %q on stderr and no Result on stdout; stderr:\n%s", want, stderr)
	}

	// Fields the API server rejects: nothing is rendered.
	stdout, stderr, code = run("--xr=testdata/xr-unknown-fields.yaml")
	if code == 0 || stdout != "" {
		t.Fatalf("render of an XR with unknown fields exited %d, stdout:\n%s", code, stdout)
	}
	for _, w := range []string{"spec.foo: Forbidden", "spec.addons.certManager.enbaled: Forbidden: unknown field, would be pruned by the API server; did you mean enabled?"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not name %s:\n%s", w, stderr)
		}
	}
}

// TestRenderManagementNamespace: an XKubernetesCluster's controllers live
// in its management namespace, which the functions compose into only once
// it is observed. By default the render observes it, so the controllers'
// Deployments appear in the Namespace the control-plane step composes;
// FirstReconcile leaves them out; an observed state that holds the
// Namespace already is passed as it is.
func TestRenderManagementNamespace(t *testing.T) {
	setup(t)
	// deployments maps each rendered Deployment to its namespace, and ns is
	// the name of the rendered Namespace.
	rendered := func(t *testing.T, o render.Options) (ns string, deployments map[string]string) {
		t.Helper()
		out, err := render.Render(t.Context(), o)
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		deployments = map[string]string{}
		for _, d := range parse(t, out)[1:] {
			meta, _ := d["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			switch d["kind"] {
			case "Namespace":
				ns = name
			case "Deployment":
				deployments[name], _ = meta["namespace"].(string)
			}
		}
		if !strings.HasPrefix(ns, "tenantkube-") {
			t.Fatalf("the render composed Namespace %q, want the management namespace tenantkube-<digest>", ns)
		}
		return ns, deployments
	}
	controllers := []string{"demo-cluster-autoscaler", "demo-kccm", "demo-kcsi-controller"}

	ns, got := rendered(t, options(t, "testdata/xr.yaml", &pids{}, io.Discard))
	for _, d := range controllers {
		if got[d] != ns {
			t.Errorf("Deployment %s in namespace %q, want the management namespace %s", d, got[d], ns)
		}
	}

	o := options(t, "testdata/xr.yaml", &pids{}, io.Discard)
	o.FirstReconcile = true
	if _, got := rendered(t, o); len(got) != 0 {
		t.Errorf("first reconcile: Deployments %v composed before their Namespace exists, want none", got)
	}

	observed := filepath.Join(t.TempDir(), "observed.yaml")
	if err := os.WriteFile(observed, []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: `+ns+`
  annotations:
    crossplane.io/composition-resource-name: management-namespace
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o = options(t, "testdata/xr.yaml", &pids{}, io.Discard)
	o.Observed = observed
	if _, got := rendered(t, o); len(got) != len(controllers) {
		t.Errorf("observed Namespace given: Deployments %v, want %v", got, controllers)
	}
}

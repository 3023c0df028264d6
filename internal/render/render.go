// Package render drives `crossplane composition render` over the tenantkube
// Composition with the real Crossplane engine (the core binary's `internal
// render`) and the three composition functions running as local processes.
//
// It is the implementation behind `make render`: each function
// binary is started on its own free loopback port with --insecure, a
// temporary copy of examples/functions.yaml points every Function's
// development-runtime target at its port, the CLI renders, and every process
// the driver started is stopped again, whatever happened.
package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Annotations of a Function read by `crossplane composition render`.
const (
	AnnotationRuntime           = "render.crossplane.io/runtime"
	AnnotationDevelopmentTarget = "render.crossplane.io/runtime-development-target"
	RuntimeDevelopment          = "Development"
)

// FunctionNamePrefix is the prefix of every tenantkube Function's name, as
// Crossplane names the Functions it installs for the Configuration's
// dependencies (xpkg.tenantkube.io/tenantkube/function-<name>); the rest of
// the name is the directory under functions/, and function-<name> the
// binary under bin/.
const FunctionNamePrefix = "tenantkube-function-"

// ClockEnv is the environment variable that fixes a function's clock
// (functions/control-plane).
const ClockEnv = "TENANTKUBE_CLOCK"

// Options configure one render. Relative paths are resolved against the
// current working directory; unset optional paths default to the repository
// layout under Root.
type Options struct {
	// Root is the repository root. Defaults to ".".
	Root string
	// XR is the composite resource to render. Required.
	XR string
	// Required are files or directories of required (extra) resources,
	// passed as --required-resources (several are copied into one
	// directory first). Unless they hold an APIService, the APIServices of
	// a platform serving every API the functions need are added
	// (PlatformAPIServices).
	Required []string
	// Observed is a file or directory of observed composed resources, passed
	// as --observed-resources when set.
	Observed string
	// FirstReconcile renders an XKubernetesCluster as on its first
	// reconcile. By default its management namespace is observed (unless
	// Observed holds it already), as on every reconcile after the first:
	// the functions compose what lives in that namespace only once it
	// exists.
	FirstReconcile bool
	// ExtraArgs are appended to the `crossplane composition render` command
	// line. With ResultsFlag among them, the results stay in the output.
	ExtraArgs []string

	// Composition defaults to <Root>/package/composition.yaml, or
	// <Root>/package/composition-namespaced.yaml for a namespaced
	// TenantCluster XR and <Root>/package/composition-tenant.yaml for a
	// Tenant.
	Composition string
	// Functions defaults to <Root>/examples/functions.yaml.
	Functions string
	// XRD defaults to <Root>/package/xrd.yaml (package/xrd-namespaced.yaml
	// for a TenantCluster XR, package/xrd-tenant.yaml for a Tenant); it is
	// passed as --xrd only if the file exists.
	XRD string
	// Crossplane is the CLI binary; defaults to <Root>/bin/crossplane.
	Crossplane string
	// CrossplaneCore is the core binary passed as --crossplane-binary;
	// defaults to <Root>/bin/crossplane-core.
	CrossplaneCore string
	// BinDir holds the function binaries, function-<name> for the Function
	// tenantkube-<name>. Defaults to <Root>/bin.
	BinDir string
	// Binaries maps a Function's metadata.name to the binary that serves it,
	// overriding the BinDir convention.
	Binaries map[string]string
	// SkipXRValidation renders an XR the XRD's schema rejects, as an object
	// admitted before a rule existed would reach the functions (tests of
	// the functions' own checks). By default an XR the API server would
	// reject is an *XRError before any function runs.
	SkipXRValidation bool

	// Clock, when set, fixes the functions' clock (the environment
	// variable TENANTKUBE_CLOCK, RFC 3339), so that what depends on the
	// time (the backup schedule) renders the same whenever it runs.
	Clock time.Time

	// Build runs `go build -o <BinDir>/function-<name> ./functions/<name>`
	// for every Function served from BinDir before starting them.
	Build bool

	// Stderr receives crossplane's stderr as it is written, the
	// functions' results once the render succeeds (Result.String, one a
	// line), and the functions' logs when it fails. Defaults to os.Stderr.
	Stderr io.Writer
	// Started, when set, is called with each function process the driver
	// starts (tests use it to check nothing is left running).
	Started func(function string, pid int)
	// StartTimeout bounds how long a function may take to accept TCP
	// connections. Defaults to 30s.
	StartTimeout time.Duration
}

// CrossplaneError is returned when `crossplane composition render` exits
// non-zero, for example because a function returned a Fatal result. Its
// stderr has already been copied to Options.Stderr.
type CrossplaneError struct {
	ExitCode int
	Stderr   string
}

func (e *CrossplaneError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("crossplane composition render exited with status %d", e.ExitCode)
	}
	return fmt.Sprintf("crossplane composition render exited with status %d: %s", e.ExitCode, msg)
}

// Render renders opts.XR and returns crossplane's stdout: the YAML stream of
// the XR followed by the composed resources. The results the functions
// return (the events on the XR) are printed on Stderr, one a line, unless
// ExtraArgs ask for them in the stream (ResultsFlag).
func Render(ctx context.Context, opts Options) (out []byte, err error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	done, err := o.claimAsXR(opts.Composition == "" && opts.XRD == "")
	defer done()
	if err != nil {
		return nil, err
	}
	if o.XRD != "" && !o.SkipXRValidation {
		if err := ValidateXR(o.XRD, o.XR); err != nil {
			return nil, err
		}
	}

	fns, docs, err := loadFunctions(o.Functions)
	if err != nil {
		return nil, err
	}
	bins, err := o.binaries(ctx, fns)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "tenantkube-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // best effort

	procs, targets, err := o.startFunctions(ctx, fns, bins, tmp)
	defer func() {
		stopAll(procs)
		if err != nil {
			dumpLogs(o.Stderr, procs)
		}
	}()
	if err != nil {
		return nil, err
	}
	fnFile := filepath.Join(tmp, "functions.yaml")
	if err := writeFunctions(fnFile, docs, targets); err != nil {
		return nil, err
	}
	args, err := o.args(tmp, fnFile)
	if err != nil {
		return nil, err
	}
	out, err = runCrossplane(ctx, o.Root, o.Crossplane, args, o.Stderr)
	if err != nil || includesResults(o.ExtraArgs) {
		return out, err
	}
	out, results, err := splitResults(out)
	printResults(o.Stderr, results)
	return out, err
}

// binaries maps each Function to the binary that serves it (Binaries, or
// function-<name> under BinDir, built first when Build is set).
func (o Options) binaries(ctx context.Context, fns []string) (map[string]string, error) {
	bins := make(map[string]string, len(fns))
	var toBuild []string
	for _, fn := range fns {
		if b, ok := o.Binaries[fn]; ok {
			bins[fn] = b
			continue
		}
		name, ok := strings.CutPrefix(fn, FunctionNamePrefix)
		if !ok || name == "" {
			return nil, fmt.Errorf("no binary for Function %q in %s: its name does not start with %q and Options.Binaries does not name one", fn, o.Functions, FunctionNamePrefix)
		}
		bins[fn] = filepath.Join(o.BinDir, "function-"+name)
		toBuild = append(toBuild, name)
	}
	if o.Build {
		if err := BuildFunctions(ctx, o.Root, o.BinDir, toBuild, o.Stderr); err != nil {
			return nil, err
		}
	}
	for _, fn := range fns {
		if _, err := os.Stat(bins[fn]); err != nil {
			return nil, fmt.Errorf("binary for Function %q: %w (run `make functions`)", fn, err)
		}
	}
	return bins, nil
}

// startFunctions starts each Function's binary, its log under tmp, and
// returns the processes started (to stop, even on error) and each
// Function's address.
func (o Options) startFunctions(ctx context.Context, fns []string, bins map[string]string, tmp string) ([]*process, map[string]string, error) {
	procs := make([]*process, 0, len(fns))
	targets := make(map[string]string, len(fns))
	for _, fn := range fns {
		p, err := startFunction(ctx, fn, bins[fn], filepath.Join(tmp, fn+".log"), o.StartTimeout, o.Clock)
		if p != nil {
			procs = append(procs, p)
			if o.Started != nil {
				o.Started(fn, p.cmd.Process.Pid)
			}
		}
		if err != nil {
			return procs, nil, err
		}
		targets[fn] = p.addr
	}
	return procs, targets, nil
}

// args is the `crossplane composition render` command line for the
// Functions file fnFile, required and observed resources gathered under
// tmp. Unless ExtraArgs hold it, it asks for the results (ResultsFlag),
// which Render takes out of the output and prints.
func (o Options) args(tmp, fnFile string) ([]string, error) {
	args := []string{
		"composition", "render", o.XR, o.Composition, fnFile,
		"--crossplane-binary=" + o.CrossplaneCore,
	}
	if o.XRD != "" {
		args = append(args, "--xrd="+o.XRD)
	}
	required, err := o.required(tmp)
	if err != nil {
		return nil, err
	}
	switch len(required) {
	case 0:
	case 1:
		args = append(args, "--required-resources="+required[0])
	default:
		dir := filepath.Join(tmp, "required")
		if err := gatherYAML(dir, required); err != nil {
			return nil, err
		}
		args = append(args, "--required-resources="+dir)
	}
	observed, err := o.observed(tmp)
	if err != nil {
		return nil, err
	}
	if observed != "" {
		args = append(args, "--observed-resources="+observed)
	}
	if !includesResults(o.ExtraArgs) {
		args = append(args, ResultsFlag)
	}
	return append(args, o.ExtraArgs...), nil
}

// observed is what to pass as --observed-resources: Observed, plus the
// XR's management namespace (managementNamespace) unless FirstReconcile or
// Observed holds one, gathered under tmp.
func (o Options) observed(tmp string) (string, error) {
	if o.FirstReconcile {
		return o.Observed, nil
	}
	if o.Observed != "" {
		if ok, err := observesManagementNamespace(o.Observed); err != nil || ok {
			return o.Observed, err
		}
	}
	ns, err := managementNamespace(o.XR)
	if err != nil || ns == nil {
		return o.Observed, err
	}
	f := filepath.Join(tmp, "management-namespace.yaml")
	if err := os.WriteFile(f, ns, 0o600); err != nil {
		return "", err
	}
	if o.Observed == "" {
		return f, nil
	}
	dir := filepath.Join(tmp, "observed")
	return dir, gatherYAML(dir, []string{o.Observed, f})
}

// kindOf is the kind of the object in the YAML file path.
func kindOf(path string) (string, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // the caller's file
	if err != nil {
		return "", err
	}
	var obj struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return obj.Kind, nil
}

// BuildFunctions builds ./functions/<name> into <binDir>/function-<name>
// for each name, with the go command found on PATH.
func BuildFunctions(ctx context.Context, root, binDir string, names []string, stderr io.Writer) error {
	if len(names) == 0 {
		return nil
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("cannot build functions: %w", err)
	}
	for _, n := range names {
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", filepath.Join(binDir, "function-"+n), "./functions/"+n) //nolint:gosec // names come from the Functions file
		cmd.Dir = root
		cmd.Stdout = stderr
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./functions/%s: %w", n, err)
		}
	}
	return nil
}

func (opts Options) resolve() (Options, error) {
	o := opts
	if o.Root == "" {
		o.Root = "."
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return o, err
	}
	o.Root = root
	under := func(p *string, def string) error {
		if *p == "" {
			*p = filepath.Join(root, def)
			return nil
		}
		a, err := filepath.Abs(*p)
		*p = a
		return err
	}
	xrdDefault := opts.XRD == ""
	composition, xrd := "package/composition.yaml", "package/xrd.yaml"
	if o.XR != "" && (o.Composition == "" || o.XRD == "") {
		kind, err := kindOf(o.XR)
		if err != nil {
			return o, err
		}
		switch kind {
		case v1alpha1.NamespacedKind:
			composition, xrd = "package/composition-namespaced.yaml", "package/xrd-namespaced.yaml"
		case v1alpha1.TenantKind:
			composition, xrd = "package/composition-tenant.yaml", "package/xrd-tenant.yaml"
		}
	}
	for _, d := range []struct {
		p   *string
		def string
	}{
		{&o.Composition, composition},
		{&o.Functions, "examples/functions.yaml"},
		{&o.XRD, xrd},
		{&o.Crossplane, "bin/crossplane"},
		{&o.CrossplaneCore, "bin/crossplane-core"},
		{&o.BinDir, "bin"},
	} {
		if err := under(d.p, d.def); err != nil {
			return o, err
		}
	}
	if xrdDefault {
		if _, err := os.Stat(o.XRD); err != nil {
			o.XRD = "" // no XRD generated yet: render without one
		}
	}
	if o.XR == "" {
		return o, errors.New("no XR to render")
	}
	req := make([]string, len(o.Required))
	copy(req, o.Required)
	o.Required = req
	ps := []*string{&o.XR, &o.Observed}
	for i := range o.Required {
		ps = append(ps, &o.Required[i])
	}
	for _, p := range ps {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return o, err
		}
		if _, err := os.Stat(a); err != nil {
			return o, err
		}
		*p = a
	}
	for _, p := range []string{o.Crossplane, o.CrossplaneCore} {
		if _, err := os.Stat(p); err != nil {
			return o, fmt.Errorf("%w (run `make tools`)", err)
		}
	}
	bins := make(map[string]string, len(o.Binaries))
	for k, v := range o.Binaries {
		a, err := filepath.Abs(v)
		if err != nil {
			return o, err
		}
		bins[k] = a
	}
	o.Binaries = bins
	return o, nil
}

// loadFunctions reads a multi-document YAML file and returns the names of its
// Functions in file order, and every document decoded.
func loadFunctions(path string) ([]string, []map[string]any, error) {
	f, err := os.Open(path) //nolint:gosec // path is the caller's
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() //nolint:errcheck // read only

	var names []string
	var docs []map[string]any
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(doc) == 0 {
			continue
		}
		docs = append(docs, doc)
		if doc["kind"] != "Function" {
			continue
		}
		meta, _ := doc["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if name == "" {
			return nil, nil, fmt.Errorf("%s: a Function without metadata.name", path)
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s: no Function", path)
	}
	return names, docs, nil
}

// writeFunctions writes docs to path with every Function set to the
// Development runtime at its target.
func writeFunctions(path string, docs []map[string]any, targets map[string]string) error {
	var buf bytes.Buffer
	for _, doc := range docs {
		if doc["kind"] == "Function" {
			meta, _ := doc["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			ann, _ := meta["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			ann[AnnotationRuntime] = RuntimeDevelopment
			ann[AnnotationDevelopmentTarget] = targets[name]
			meta["annotations"] = ann
		}
		b, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// process is one function binary the driver started.
type process struct {
	name string
	addr string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait has returned
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startFunction starts bin serving fn on a free loopback port and waits
// until it accepts TCP connections. A process that exits during start-up
// (for example because another process took the port first) is retried on
// another port. The returned process, when non-nil, must be stopped even if
// err is non-nil.
func startFunction(ctx context.Context, fn, bin, logPath string, timeout time.Duration, clock time.Time) (*process, error) {
	logf, err := os.Create(logPath) //nolint:gosec // a file in the driver's own temp dir
	if err != nil {
		return nil, err
	}
	defer logf.Close() //nolint:errcheck // the child holds its own descriptor

	const attempts = 3
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin, "--insecure", "--address="+addr, "--metrics-address=", "--debug") //nolint:gosec // the binary is the caller's
		cmd.Stdout = logf
		cmd.Stderr = logf
		if !clock.IsZero() {
			cmd.Env = append(os.Environ(), ClockEnv+"="+clock.UTC().Format(time.RFC3339))
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Setpgid:   true,            // a terminal's ^C reaches the driver, which stops the function itself
			Pdeathsig: syscall.SIGKILL, // and if the driver is killed outright, so is the function
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("cannot start Function %q (%s): %w", fn, bin, err)
		}
		p := &process{name: fn, addr: addr, log: logPath, cmd: cmd, done: make(chan struct{})}
		go func() {
			_ = cmd.Wait()
			close(p.done)
		}()

		err = waitReady(ctx, p, timeout)
		if err == nil {
			return p, nil
		}
		if !p.exited() || attempt == attempts {
			return p, err
		}
		// It exited during start-up; try again on another port.
	}
}

func waitReady(ctx context.Context, p *process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", p.addr, 250*time.Millisecond)
		if err == nil {
			_ = c.Close()
			if !p.exited() {
				return nil
			}
		}
		if p.exited() {
			return fmt.Errorf("function %q exited during start-up (%s); see its log above", p.name, p.cmd.ProcessState)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("function %q did not listen on %s within %s", p.name, p.addr, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close() //nolint:errcheck // only probing
	return l.Addr().(*net.TCPAddr).Port, nil
}

// stopAll stops every process: SIGTERM by PID, then SIGKILL after a grace
// period, and waits until each has been reaped.
func stopAll(procs []*process) {
	for _, p := range procs {
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	grace := time.After(5 * time.Second)
	for _, p := range procs {
		select {
		case <-p.done:
		case <-grace:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

func dumpLogs(w io.Writer, procs []*process) {
	ps := append([]*process(nil), procs...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	for _, p := range ps {
		b, err := os.ReadFile(p.log)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		fmt.Fprintf(w, "----- log of Function %s (%s) -----\n%s", p.name, strings.Join(p.cmd.Args, " "), b) //nolint:errcheck // diagnostics only
		if !bytes.HasSuffix(b, []byte("\n")) {
			fmt.Fprintln(w) //nolint:errcheck // diagnostics only
		}
	}
}

// runCrossplane runs the CLI in dir and returns its stdout. Its stderr is
// copied to stderr as it is written and kept for the error.
func runCrossplane(ctx context.Context, dir, bin string, args []string, stderr io.Writer) ([]byte, error) {
	var out, errBuf bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the binary is the caller's
	cmd.Dir = dir
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(&errBuf, stderr)
	// Its own process group, so that on cancellation the core binary it runs
	// (`crossplane internal render`) is stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("crossplane composition render: %w", ctx.Err())
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil, &CrossplaneError{ExitCode: exitErr.ExitCode(), Stderr: errBuf.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("crossplane composition render: %w", err)
	}
	return out.Bytes(), nil
}

// gatherYAML copies the YAML files of each path (a file, or a directory's
// *.yaml and *.yml files) into dir, numbered so none overwrites another.
func gatherYAML(dir string, paths []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	n := 0
	for _, p := range paths {
		files, err := yamlFiles(p)
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f) //nolint:gosec // the caller's files
			if err != nil {
				return err
			}
			n++
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-%s", n, filepath.Base(f))), b, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

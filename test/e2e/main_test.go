//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// result is one scenario's outcome, for the summary `make e2e` prints.
type result struct {
	name   string
	passed bool
	took   time.Duration
}

var (
	resultsMu sync.Mutex
	results   []result
	failures  []string
	versions  []string
	workDir   string
)

// fatalf and errorf are t.Fatalf and t.Errorf that also keep the message
// for the summary, which is the tail CI shows of a failed run.
func fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	keepFailure(t, fmt.Sprintf(format, args...))
	t.Fatalf(format, args...)
}

func errorf(t *testing.T, format string, args ...any) {
	t.Helper()
	keepFailure(t, fmt.Sprintf(format, args...))
	t.Errorf(format, args...)
}

// maxFailureLen bounds one kept message (bytes), so the summary stays short.
const maxFailureLen = 1500

func keepFailure(t *testing.T, msg string) {
	if len(msg) > maxFailureLen {
		msg = msg[:maxFailureLen] + " …"
	}
	resultsMu.Lock()
	failures = append(failures, t.Name()+": "+msg)
	resultsMu.Unlock()
}

// scenario runs f as subtest name and records its outcome and duration.
func scenario(t *testing.T, name string, f func(t *testing.T)) bool {
	start := time.Now()
	ran := false
	ok := t.Run(name, func(t *testing.T) { ran = true; f(t) })
	if !ran { // left out by -run (E2E_RUN)
		return ok
	}
	resultsMu.Lock()
	results = append(results, result{name: name, passed: ok, took: time.Since(start)})
	resultsMu.Unlock()
	return ok
}

func TestMain(m *testing.M) {
	// Re-executed as a resolver inside a network namespace (nodedns_test.go).
	if names, ok := os.LookupEnv(nodeResolveEnv); ok {
		os.Exit(nodeResolveMain(names))
	}
	// Ctrl-C or a kill of `go test` stops every process the test started
	// (by process group); the kernel's parent-death signal covers the rest.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping %s\n", s, strings.Join(stopAll(), ", "))
		os.Exit(2)
	}()
	// API warnings (the deprecated v1 XRD) are noise here.
	ctrllog.SetLogger(logr.Discard())
	start := time.Now()
	code := m.Run()
	if stopped := stopAll(); len(stopped) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: stopped %s\n", strings.Join(stopped, ", "))
	}
	if workDir != "" && code == 0 {
		_ = os.RemoveAll(workDir)
	}
	summary := summarize(time.Since(start))
	if p := os.Getenv("E2E_SUMMARY"); p != "" {
		// make e2e prints it after go test's own verdict.
		_ = os.WriteFile(p, []byte(summary), 0o644)
	} else {
		fmt.Print(summary)
	}
	os.Exit(code)
}

func summarize(total time.Duration) string {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	var b strings.Builder
	b.WriteString("==> tenantkube e2e summary\n")
	b.WriteString("components:\n")
	for _, v := range versions {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	passed := 0
	b.WriteString("scenarios:\n")
	for _, r := range results {
		st := "FAIL"
		if r.passed {
			st = "ok  "
			passed++
		}
		fmt.Fprintf(&b, "  %s %-40s %7.1fs\n", st, r.name, r.took.Seconds())
	}
	fmt.Fprintf(&b, "passed %d/%d scenarios in %.0fs\n", passed, len(results), total.Seconds())
	if len(failures) > 0 {
		b.WriteString("failures:\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	procsMu.Lock()
	for _, p := range procs {
		if n := p.restarted(); n > 0 {
			fmt.Fprintf(&b, "restarted: %s %d times after exiting unasked (log %s)\n", p.name, n, p.log)
		}
	}
	procsMu.Unlock()
	measurementsMu.Lock()
	defer measurementsMu.Unlock()
	if len(measurements) > 0 {
		b.WriteString("measured:\n")
		for _, m := range measurements {
			fmt.Fprintf(&b, "  %s\n", m)
		}
	}
	return b.String()
}

// fatal is t.Fatal that also keeps the message for the summary.
func fatal(t *testing.T, args ...any) {
	t.Helper()
	keepFailure(t, fmt.Sprint(args...))
	t.Fatal(args...)
}

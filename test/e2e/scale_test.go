//go:build e2e && scale

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// scaleSettings are TestScale's knobs (environment, set by `make scale`).
type scaleSettings struct {
	n       int           // SCALE_N: tenant clusters, and HelmReleases
	window  time.Duration // SCALE_WINDOW: each steady window
	settle  time.Duration // SCALE_SETTLE: wait before each window
	changes int           // SCALE_CHANGES: claim changes timed one by one
	out     string        // SCALE_OUT: result line, profile, audit summary
	// grow (SCALE_GROW, 0 for none): after the comparison, tenant clusters
	// are added up to this many, timed, and memory and change latency
	// measured again at that size.
	grow int
}

func scaleFromEnv(root string) (scaleSettings, error) {
	s := scaleSettings{window: 10 * time.Minute, settle: 2 * time.Minute, changes: 50, out: filepath.Join(root, "_output", "scale")}
	var err error
	if s.n, err = strconv.Atoi(os.Getenv("SCALE_N")); err != nil || s.n < 1 {
		return s, fmt.Errorf("SCALE_N=%q: want a positive number", os.Getenv("SCALE_N"))
	}
	for k, d := range map[string]*time.Duration{"SCALE_WINDOW": &s.window, "SCALE_SETTLE": &s.settle} {
		if v := os.Getenv(k); v != "" {
			if *d, err = time.ParseDuration(v); err != nil {
				return s, fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	if v := os.Getenv("SCALE_CHANGES"); v != "" {
		if s.changes, err = strconv.Atoi(v); err != nil {
			return s, fmt.Errorf("SCALE_CHANGES: %w", err)
		}
	}
	if v := os.Getenv("SCALE_GROW"); v != "" && v != "0" {
		if s.grow, err = strconv.Atoi(v); err != nil || s.grow <= s.n {
			return s, fmt.Errorf("SCALE_GROW=%q: want 0 or more than SCALE_N (%d)", v, s.n)
		}
	}
	if v := os.Getenv("SCALE_OUT"); v != "" {
		s.out = v
	}
	return s, os.MkdirAll(s.out, 0o755)
}

// scaleAuditPolicy records every request's metadata once, when its
// response is complete.
const scaleAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// TestScale is `make scale`: the management plane's cost per tenant cluster
// at SCALE_N clusters against helm-controller reconciling as many
// HelmReleases of a chart equivalent to one cluster (equivalentChart), on
// the same stack: TestE2E's bring-up plus Flux's source-controller and
// helm-controller under their upstream roles, kube-apiserver writing an
// audit log (who makes which request), and Crossplane core and
// kube-apiserver serving pprof.
//
//  1. Window A (tenantkube): N claims composed and settled; CPU of core,
//     the functions, kube-apiserver and etcd; requests by user; core's CPU
//     profile; resident memory.
//  2. SCALE_CHANGES claim changes, one at a time: claim patched → the
//     MachineDeployment's max-size annotation changed.
//  3. Crossplane core stopped (its objects stay in etcd); N HelmReleases
//     installed into the management cluster at a 5m interval.
//  4. Window B (Helm): CPU of helm-controller, source-controller,
//     kube-apiserver and etcd; requests by user.
//  5. With SCALE_GROW: Flux stopped, core started again, claims added up
//     to SCALE_GROW; the time to compose them, resident memory per added
//     cluster and SCALE_CHANGES claim changes at that size.
//
// No Kamaji, Cluster API or KubeVirt controller runs: no composed object
// changes status, so the XRs reconcile only on their own schedule, and
// every add-on release stays suspended (the control plane never becomes
// ready). Built only with the tag scale, which `make scale` sets.
func TestScale(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		fatal(t, err)
	}
	s, err := scaleFromEnv(e.root)
	if err != nil {
		fatal(t, err)
	}
	e.logs = filepath.Join(e.root, "_output", "e2e", "logs-scale")
	_ = os.RemoveAll(e.logs)
	e.must(t, os.MkdirAll(e.logs, 0o755), "log directory")
	t.Cleanup(func() {
		stopAll()
		if !t.Failed() {
			_ = os.RemoveAll(e.work)
		}
	})
	audit := filepath.Join(e.work, "audit.log")
	policy := filepath.Join(e.work, "audit-policy.yaml")
	e.must(t, os.WriteFile(policy, []byte(scaleAuditPolicy), 0o644), "audit policy")
	e.apiserverExtra = []string{"--audit-policy-file=" + policy, "--audit-log-path=" + audit,
		"--audit-log-format=json", "--audit-log-mode=batch", "--audit-log-batch-max-size=100",
		"--audit-log-batch-max-wait=1s", "--audit-log-maxsize=0", "--profiling=true"}
	pprofPort, err := freePort()
	e.must(t, err, "port")
	e.coreExtra = []string{fmt.Sprintf("--profile=127.0.0.1:%d", pprofPort)}

	var fc *fluxControllers
	var repo *helmRepo
	t.Cleanup(func() {
		if repo != nil {
			_ = repo.srv.Close()
		}
	})
	if !scenario(t, "scale: bring-up", func(t *testing.T) {
		e.up(t)
		var kubeconfigs map[string]string
		step(t, "Flux ServiceAccounts under their upstream ClusterRoles", func() error {
			flux, err := e.fluxIdentities()
			if err != nil {
				return err
			}
			kubeconfigs, err = e.setupIdentities(flux)
			return err
		})
		e.bringUpFlux(t, kubeconfigs, &fc, &repo)
	}) {
		t.FailNow()
	}
	sc := &scaleRun{e: e, s: s, fc: fc, audit: audit, pprofPort: pprofPort}
	sc.idle = sc.sample(t)
	for _, f := range []struct {
		name string
		f    func(t *testing.T)
	}{
		{"scale: create N tenant clusters", sc.create},
		{"scale: steady window, tenantkube", sc.windowTenantkube},
		{"scale: every cluster reconciled, round after round", sc.reconcileRounds},
		{"scale: claim change to composed object", sc.changeLatency},
		{"scale: N HelmReleases, core stopped", sc.createReleases},
		{"scale: steady window, helm-controller", sc.windowHelm},
	} {
		if !scenario(t, f.name, f.f) {
			t.FailNow()
		}
	}
	sc.result(t)
	if s.grow > 0 {
		if !scenario(t, "scale: grow to SCALE_GROW tenant clusters", sc.growTo) {
			t.FailNow()
		}
		sc.growResult(t)
	}
}

// scaleRun is one TestScale run's state and figures.
type scaleRun struct {
	e         *env
	s         scaleSettings
	fc        *fluxControllers
	audit     string
	pprofPort int

	claims         [][2]string
	idle           sample
	createS, helmS float64
	a, b           windowFigures
	// rounds is reconcileRounds' span; roundReconciles and aReconciles
	// the pipelines run in it and in window A.
	rounds                       windowFigures
	roundReconciles, aReconciles int
	changes                      []time.Duration
	chartObjects                 int
	chartValueBytes              int
	// growFrom and grown are the samples before and after growing to
	// SCALE_GROW; growS the time to compose the added clusters.
	growFrom, grown sample
	growS           float64
	growChanges     []time.Duration
}

// sample is the CPU seconds and resident memory of each process at one
// moment.
type sample struct {
	at   time.Time
	cpu  map[string]float64
	rss  map[string]float64 // MiB
	load string
}

// windowFigures are one steady window's measurements.
type windowFigures struct {
	from, to sample
	requests []requestCount
	// reconciles is the pipelines run in the window (workers' calls).
	reconciles int
}

func (w windowFigures) hours() float64 { return w.to.at.Sub(w.from.at).Hours() }

func (w windowFigures) cpu(p string) float64 { return w.to.cpu[p] - w.from.cpu[p] }

func (sc *scaleRun) procs() map[string]*proc {
	e := sc.e
	ps := map[string]*proc{
		"crossplane-core": e.core, "kube-apiserver": e.apiserver, "etcd": e.etcd,
		"kube-controller-manager": e.kcm, "helm-controller": sc.fc.helm, "source-controller": sc.fc.source,
	}
	for _, f := range functions {
		ps["function-"+f] = e.fns[f]
	}
	return ps
}

func (sc *scaleRun) sample(t *testing.T) sample {
	t.Helper()
	out := sample{at: time.Now(), cpu: map[string]float64{}, rss: map[string]float64{}}
	for n, p := range sc.procs() {
		if !p.running() {
			continue
		}
		c, err := cpuSeconds(p)
		sc.e.must(t, err, "CPU time of "+n)
		out.cpu[n] = c
		r, err := rssMiB(p)
		sc.e.must(t, err, "resident memory of "+n)
		out.rss[n] = r
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		out.load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return out
}

// rssMiB is a running process's resident set (VmRSS of /proc/<pid>/status).
func rssMiB(p *proc) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", p.pid())
}

func scaleClaimName(i int) (ns, name string) {
	return fmt.Sprintf("scale-%04d", i), fmt.Sprintf("c%04d", i)
}

// create applies SCALE_N claims and waits until every one has its
// composed objects.
func (sc *scaleRun) create(t *testing.T) { sc.createS = sc.createClaims(t, 0, sc.s.n) }

// createClaims applies claims from to to-1 (scaleClaimName), waits until
// every one has its composed objects and returns the seconds it took.
func (sc *scaleRun) createClaims(t *testing.T, from, to int) float64 {
	e := sc.e
	n := to - from
	// Up to 6 s per claim: 3.5 s each was measured at 100 clusters.
	timeout := 10*time.Minute + time.Duration(n)*6*time.Second
	start := time.Now()
	ctx, cancel := ctxT(timeout)
	defer cancel()
	pending := map[[2]string]bool{}
	for i := from; i < to; i++ {
		ns, name := scaleClaimName(i)
		e.must(t, e.ensureNamespace(ctx, ns), "namespace "+ns)
		e.must(t, apply(ctx, e.c, loopbackClaim(ns, name)), "claim "+ns+"/"+name)
		sc.claims = append(sc.claims, [2]string{ns, name})
		pending[[2]string{ns, name}] = true
	}
	waitFor(t, timeout, fmt.Sprintf("%d claims composed", n), func(context.Context) (bool, string, error) {
		// Each cluster's check is some 16 reads: at N in the hundreds
		// one round outlasts poll's 20s, so each check has its own
		// deadline and a round stops after 15s (the rest wait for the
		// next round).
		var why string
		round := time.Now()
		for c := range pending {
			if time.Since(round) > 15*time.Second {
				break
			}
			ctx, cancel := ctxT(20 * time.Second)
			w, err := e.expectedObjects(ctx, c[0], c[1], baseReleases)
			cancel()
			if err != nil {
				return false, "", err
			}
			if w == "" {
				delete(pending, c)
			} else {
				why = c[0] + ": " + w
			}
		}
		return len(pending) == 0, fmt.Sprintf("%d not composed yet (%s)", len(pending), why), nil
	})
	took := time.Since(start).Seconds()
	t.Logf("%d tenant clusters composed in %.1fs", n, took)
	return took
}

// steady settles, then measures one window, fetching core's CPU profile
// over it when profile is set.
func (sc *scaleRun) steady(t *testing.T, profile string) windowFigures {
	t.Logf("settling %s, then measuring %s", sc.s.settle, sc.s.window)
	time.Sleep(sc.s.settle)
	var w windowFigures
	done := make(chan error, 1)
	startCalls, _ := sc.e.runFunctionCalls("workers")
	w.from = sc.sample(t)
	if profile != "" {
		go func() { done <- sc.profile(profile, sc.s.window) }()
	} else {
		done <- nil
	}
	time.Sleep(sc.s.window)
	w.to = sc.sample(t)
	// Core is stopped in window B: no function is called there.
	if endCalls, err := sc.e.runFunctionCalls("workers"); err == nil {
		w.reconciles = endCalls - startCalls
	}
	if err := <-done; err != nil {
		errorf(t, "CPU profile of crossplane core: %v", err)
	}
	// The audit log is written in batches of at most a second.
	time.Sleep(3 * time.Second)
	var err error
	w.requests, err = countRequests(sc.audit, w.from.at, w.to.at)
	sc.e.must(t, err, "audit log")
	return w
}

// profile writes Crossplane core's CPU profile over d to path.
func (sc *scaleRun) profile(path string, d time.Duration) error {
	return fetchProfile(&http.Client{}, fmt.Sprintf("http://127.0.0.1:%d", sc.pprofPort), path, d)
}

// apiserverProfile writes kube-apiserver's CPU profile over d to path.
func (sc *scaleRun) apiserverProfile(path string, d time.Duration) error {
	hc, err := rest.HTTPClientFor(sc.e.cfg)
	if err != nil {
		return err
	}
	return fetchProfile(hc, strings.TrimSuffix(sc.e.cfg.Host, "/"), path, d)
}

// fetchProfile writes the CPU profile over d that the server at base
// serves at /debug/pprof/profile to path.
func fetchProfile(hc *http.Client, base, path string, d time.Duration) error {
	hc.Timeout = d + time.Minute
	resp, err := hc.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (sc *scaleRun) windowTenantkube(t *testing.T) {
	sc.a = sc.steady(t, filepath.Join(sc.s.out, "crossplane-core-steady.pprof"))
	sc.aReconciles = sc.a.reconciles
}

// reconcileRounds nudges every XR, round after round for a minute, with
// core's and kube-apiserver's CPU profiles over the same time, and keeps
// each process's CPU seconds per reconcile of one cluster.
func (sc *scaleRun) reconcileRounds(t *testing.T) {
	e := sc.e
	const d = time.Minute
	base, err := e.runFunctionCalls("workers")
	e.must(t, err, "function metrics")
	from := sc.sample(t)
	done, apiDone := make(chan error, 1), make(chan error, 1)
	go func() { done <- sc.profile(filepath.Join(sc.s.out, "crossplane-core-reconciles.pprof"), d) }()
	go func() { apiDone <- sc.apiserverProfile(filepath.Join(sc.s.out, "kube-apiserver-reconciles.pprof"), d) }()
	for time.Since(from.at) < d {
		start, err := e.runFunctionCalls("workers")
		e.must(t, err, "function metrics")
		ctx, cancel := ctxT(2 * time.Minute)
		e.must(t, e.nudgeAll(ctx, sc.claims), "nudge")
		cancel()
		waitFor(t, 5*time.Minute, fmt.Sprintf("%d reconciles", len(sc.claims)), func(ctx context.Context) (bool, string, error) {
			cur, err := e.runFunctionCalls("workers")
			return cur >= start+len(sc.claims), fmt.Sprintf("%d of %d", cur-start, len(sc.claims)), err
		})
	}
	// Let the last round's pipelines finish in core.
	time.Sleep(2 * time.Second)
	to := sc.sample(t)
	end, err := e.runFunctionCalls("workers")
	e.must(t, err, "function metrics")
	if err := <-done; err != nil {
		errorf(t, "CPU profile of crossplane core: %v", err)
	}
	if err := <-apiDone; err != nil {
		errorf(t, "CPU profile of kube-apiserver: %v", err)
	}
	sc.rounds = windowFigures{from: from, to: to}
	sc.roundReconciles = end - base
}

// changeLatency times SCALE_CHANGES claim changes (timeChanges).
func (sc *scaleRun) changeLatency(t *testing.T) { sc.changes = sc.timeChanges(t) }

// timeChanges changes SCALE_CHANGES claims' maxReplicas one at a time,
// spread evenly over the claims, and times each from the claim's patch to
// the MachineDeployment's max-size annotation showing it (polled every
// 20ms).
func (sc *scaleRun) timeChanges(t *testing.T) []time.Duration {
	e := sc.e
	var out []time.Duration
	for i := 0; i < sc.s.changes; i++ {
		c := sc.claims[i*len(sc.claims)/sc.s.changes%len(sc.claims)]
		ctx, cancel := ctxT(time.Minute)
		md, err := get(ctx, e.c, gvkMD, c[0], c[1]+"-md0")
		cancel()
		e.must(t, err, "MachineDeployment of "+c[0])
		want := "4"
		if md.GetAnnotations()[mdMaxKey] == "4" {
			want = "3"
		}
		start := time.Now()
		e.patchClaim(t, c[0], c[1], `{"spec":{"nodeGroups":{"md0":{"maxReplicas":`+want+`}}}}`)
		for {
			ctx, cancel := ctxT(10 * time.Second)
			md, err := get(ctx, e.c, gvkMD, c[0], c[1]+"-md0")
			cancel()
			if err == nil && md.GetAnnotations()[mdMaxKey] == want {
				break
			}
			if time.Since(start) > 3*time.Minute {
				fatalf(t, "%s/%s: max-size not %s 3 minutes after the claim changed: %s", c[0], c[1], want, e.xrSynced(context.Background(), c[0], c[1]))
			}
			time.Sleep(20 * time.Millisecond)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// createReleases stops Crossplane core and installs N HelmReleases of the
// chart equivalent to the first tenant cluster into the management cluster.
func (sc *scaleRun) createReleases(t *testing.T) {
	e := sc.e
	tgz, nobjs, nvalues := e.equivalentChart(t, sc.claims[0][1])
	sc.chartObjects, sc.chartValueBytes = nobjs, nvalues
	repo, err := serveCharts(map[string][]byte{"tenant-equivalent": tgz})
	e.must(t, err, "repository")
	t.Cleanup(func() { _ = repo.srv.Close() })
	e.core.stop()
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	ns := helmReferenceNS
	e.must(t, e.ensureNamespace(ctx, ns), "namespace")
	start := time.Now()
	e.must(t, apply(ctx, e.c, referenceRepository(ns, "reference", repo.url)), "HelmRepository")
	for i := 0; i < sc.s.n; i++ {
		e.must(t, apply(ctx, e.c, referenceRelease(ns, fmt.Sprintf("r%04d", i), "reference")), "HelmRelease")
	}
	waitFor(t, 10*time.Minute+time.Duration(sc.s.n)*6*time.Second, fmt.Sprintf("%d HelmReleases Ready", sc.s.n), func(ctx context.Context) (bool, string, error) {
		hrs, err := list(ctx, e.c, gvkHR)
		if err != nil {
			return false, "", err
		}
		ready, last := 0, ""
		for _, hr := range hrs {
			if hr.GetNamespace() != ns {
				continue
			}
			if s, r, m := condition(&hr, "Ready"); s == "True" {
				ready++
			} else {
				last = fmt.Sprintf("%s Ready=%s %s %q", hr.GetName(), s, r, m)
			}
		}
		return ready == sc.s.n, fmt.Sprintf("%d of %d Ready; %s", ready, sc.s.n, last), nil
	})
	sc.helmS = time.Since(start).Seconds()
}

func (sc *scaleRun) windowHelm(t *testing.T) { sc.b = sc.steady(t, "") }

// requestCount is the requests one user agent made in a window.
type requestCount struct {
	user, agent   string
	reads, writes int
	writesBy      map[string]int // resource[/subresource] → writes
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// countRequests counts the audit log's requests completed in [from, to) by
// user and user agent (its product token: "crossplane/v2.4.0 (...)" →
// "crossplane").
func countRequests(path string, from, to time.Time) ([]requestCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type ev struct {
		Verb string `json:"verb"`
		User struct {
			Username string `json:"username"`
		} `json:"user"`
		UserAgent string `json:"userAgent"`
		ObjectRef *struct {
			Resource    string `json:"resource"`
			Subresource string `json:"subresource"`
		} `json:"objectRef"`
		StageTimestamp time.Time `json:"stageTimestamp"`
	}
	by := map[[2]string]*requestCount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var x ev
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			return nil, err
		}
		if x.StageTimestamp.Before(from) || !x.StageTimestamp.Before(to) {
			continue
		}
		agent, _, _ := strings.Cut(x.UserAgent, "/")
		k := [2]string{x.User.Username, agent}
		c := by[k]
		if c == nil {
			c = &requestCount{user: k[0], agent: k[1], writesBy: map[string]int{}}
			by[k] = c
		}
		if writeVerbs[x.Verb] {
			c.writes++
			r := "-"
			if x.ObjectRef != nil {
				r = x.ObjectRef.Resource
				if x.ObjectRef.Subresource != "" {
					r += "/" + x.ObjectRef.Subresource
				}
			}
			c.writesBy[x.Verb+" "+r]++
		} else {
			c.reads++
		}
	}
	out := make([]requestCount, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].reads+out[i].writes, out[j].reads+out[j].writes; a != b {
			return a > b
		}
		return out[i].user+out[i].agent < out[j].user+out[j].agent
	})
	return out, sc.Err()
}

const crossplaneUser = "system:serviceaccount:" + xpNamespace + ":crossplane"

// coreIntervals are the --poll-interval and --sync-interval core ran with
// (deploy/crossplane/values.yaml, then E2E_CORE_ARGS; the last wins),
// Crossplane's defaults 1m and 1h where none is given.
func (sc *scaleRun) coreIntervals(t *testing.T) (poll, sync time.Duration) {
	args, err := crossplaneValuesArgs(sc.e.path("deploy", "crossplane", "values.yaml"))
	sc.e.must(t, err, "Crossplane values")
	poll, sync = time.Minute, time.Hour
	for _, a := range append(args, strings.Fields(os.Getenv("E2E_CORE_ARGS"))...) {
		for _, f := range []struct {
			flag string
			d    *time.Duration
		}{{"--poll-interval=", &poll}, {"--sync-interval=", &sync}} {
			if v, ok := strings.CutPrefix(a, f.flag); ok {
				*f.d, err = time.ParseDuration(v)
				sc.e.must(t, err, a)
			}
		}
	}
	return poll, sync
}

// watchedKinds is how many kinds Crossplane watches for one cluster's XR:
// the XR's own, CompositionRevision and each distinct kind of its composed
// resources (spec.crossplane.resourceRefs, or spec.resourceRefs); the
// kinds its functions require are left out. Each kind's informer resyncs
// once per --sync-interval, each at its own time (controller-runtime
// jitters every informer's period by ±10%), and each resync enqueues
// every XR that depends on one of its objects (crossplane v2.4,
// internal/controller/apiextensions/definition/handlers.go): at most
// about this many reconciles per XR and sync interval, fewer where two
// resyncs meet in the queue.
func (sc *scaleRun) watchedKinds(t *testing.T) int {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	c := sc.claims[0]
	xr, err := sc.e.xrName(ctx, c[0], c[1])
	sc.e.must(t, err, "XR of "+c[0]+"/"+c[1])
	u, err := get(ctx, sc.e.c, gvkXR, "", xr)
	sc.e.must(t, err, "XR "+xr)
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if len(refs) == 0 { // a claim's XR (legacy scope) keeps them at spec.resourceRefs
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	kinds := map[string]bool{}
	for _, r := range refs {
		m, _ := r.(map[string]any)
		kinds[fmt.Sprint(m["apiVersion"], "/", m["kind"])] = true
	}
	return len(kinds) + 2
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p/100+0.999999) - 1
	if k < 0 {
		k = 0
	}
	return s[k]
}

// result reports every figure and writes the one-line summary.
func (sc *scaleRun) result(t *testing.T) {
	n := float64(sc.s.n)
	perClusterHour := func(w windowFigures, ps ...string) float64 {
		total := 0.0
		for _, p := range ps {
			total += w.cpu(p)
		}
		return total / n / w.hours()
	}
	tkProcs := []string{"crossplane-core", "function-control-plane", "function-workers", "function-addons", "kube-apiserver", "etcd"}
	helmProcs := []string{"helm-controller", "source-controller", "kube-apiserver", "etcd"}
	helm := perClusterHour(sc.b, helmProcs...)
	// A window shorter than the poll interval sees few of the reconciles an
	// hour holds: each cluster is reconciled once per poll interval and
	// once per watched kind and --sync-interval (watchedKinds); whatever
	// the window saw counted, the rest added at the measured cost of one
	// reconcile.
	poll, sync := sc.coreIntervals(t)
	kinds := sc.watchedKinds(t)
	scheduled := time.Hour.Seconds()/poll.Seconds() + float64(kinds)*time.Hour.Seconds()/sync.Seconds()
	seen := float64(sc.aReconciles) / n / sc.a.hours()
	perReconcile := map[string]float64{}
	reconcileTotal := 0.0
	var costParts []string
	for _, p := range tkProcs {
		perReconcile[p] = sc.rounds.cpu(p) / float64(sc.roundReconciles)
		reconcileTotal += perReconcile[p]
		costParts = append(costParts, fmt.Sprintf("%s %.1f", p, perReconcile[p]*1000))
	}
	tk := perClusterHour(sc.a, tkProcs...)
	if seen < scheduled {
		tk += (scheduled - seen) * reconcileTotal
	}
	report("scale: one reconcile of one cluster (%d reconciles in %.0fs, every cluster nudged round after round): %.1f ms CPU (%s ms)",
		sc.roundReconciles, sc.rounds.hours()*3600, reconcileTotal*1000, strings.Join(costParts, ", "))
	report("scale: reconciles per cluster-hour: %.1f seen in window A, %.1f scheduled (poll interval %s; sync interval %s × %d watched kinds); tenantkube per cluster-hour = window A + %.1f reconciles at the cost above",
		seen, scheduled, poll, sync, kinds, max(0, scheduled-seen))
	report("scale: %d tenant clusters composed in %.1fs; %d HelmReleases of the equivalent chart (%d objects, %d bytes of values) Ready in %.1fs",
		sc.s.n, sc.createS, sc.s.n, sc.chartObjects, sc.chartValueBytes, sc.helmS)
	for _, w := range []struct {
		name  string
		w     windowFigures
		procs []string
	}{{"A (tenantkube)", sc.a, append(tkProcs, "helm-controller", "source-controller", "kube-controller-manager")},
		{"B (helm-controller, core stopped)", sc.b, append(helmProcs, "function-control-plane", "function-workers", "function-addons", "kube-controller-manager")}} {
		var parts []string
		for _, p := range w.procs {
			parts = append(parts, fmt.Sprintf("%s %.2f", p, perClusterHour(w.w, p)))
		}
		report("scale: window %s %.1f min, load average %s → %s; CPU s per cluster-hour: %s",
			w.name, w.w.hours()*60, w.w.from.load, w.w.to.load, strings.Join(parts, ", "))
		for _, r := range w.w.requests {
			var ws []string
			for k, v := range r.writesBy {
				ws = append(ws, fmt.Sprintf("%s %.1f", k, float64(v)/n/w.w.hours()))
			}
			sort.Strings(ws)
			report("scale: window %s requests per cluster-hour by %s (%s): reads %.1f, writes %.1f [%s]",
				w.name, r.user, r.agent, float64(r.reads)/n/w.w.hours(), float64(r.writes)/n/w.w.hours(), strings.Join(ws, "; "))
		}
	}
	writes := 0
	for _, r := range sc.a.requests {
		if r.user == crossplaneUser {
			writes += r.writes
		}
	}
	writesPerHour := float64(writes) / n / sc.a.hours()
	fnHour, fnReconcile := 0.0, 0.0
	for _, f := range functions {
		fnHour += perClusterHour(sc.a, "function-"+f)
		fnReconcile += perReconcile["function-"+f]
	}
	if seen < scheduled {
		fnHour += (scheduled - seen) * fnReconcile
	}
	report("scale: the functions' share of tenantkube's CPU: %.1f%% per cluster-hour (%.3f of %.2f s), %.1f%% of one reconcile",
		100*fnHour/tk, fnHour, tk, 100*fnReconcile/reconcileTotal)
	rss := func(p string) (total, per float64) {
		return sc.a.to.rss[p], (sc.a.to.rss[p] - sc.idle.rss[p]) / n
	}
	coreTotal, corePer := rss("crossplane-core")
	apiTotal, apiPer := rss("kube-apiserver")
	report("scale: resident memory at the end of window A: crossplane core %.0f MiB (%.0f before the claims; %.2f MiB per cluster), kube-apiserver %.0f MiB (%.0f; %.2f MiB per cluster), etcd %.0f MiB",
		coreTotal, sc.idle.rss["crossplane-core"], corePer, apiTotal, sc.idle.rss["kube-apiserver"], apiPer, sc.a.to.rss["etcd"])
	p50, p99 := percentile(sc.changes, 50), percentile(sc.changes, 99)
	report("scale: claim change → MachineDeployment changed over %d changes: p50 %.2fs, p99 %.2fs, max %.2fs",
		len(sc.changes), p50.Seconds(), p99.Seconds(), percentile(sc.changes, 100).Seconds())
	line := fmt.Sprintf("scale: clusters=%d cpu_per_cluster_hour_tenantkube=%.2f cpu_per_cluster_hour_helm=%.2f ratio=%.2f writes_per_cluster_hour=%.1f core_rss_mib=%.2f apiserver_rss_mib=%.2f change_p99_s=%.2f create_s=%.0f",
		sc.s.n, tk, helm, tk/helm, writesPerHour, corePer, apiPer, p99.Seconds(), sc.createS)
	t.Log(line)
	sc.e.must(t, os.WriteFile(filepath.Join(sc.s.out, "result.txt"), []byte(line+"\n"), 0o644), "result")
}

// growTo stops Flux (its HelmReleases stay), starts Crossplane core again,
// waits until it has reconciled every cluster and settled, then adds
// claims up to SCALE_GROW and times SCALE_CHANGES claim changes at that
// size.
func (sc *scaleRun) growTo(t *testing.T) {
	e := sc.e
	sc.fc.helm.stop()
	sc.fc.source.stop()
	start, err := e.runFunctionCalls("workers")
	e.must(t, err, "function metrics")
	e.must(t, e.core.start(), "start crossplane core")
	waitFor(t, 15*time.Minute, fmt.Sprintf("core reconciling %d clusters after its start", len(sc.claims)), func(ctx context.Context) (bool, string, error) {
		cur, err := e.runFunctionCalls("workers")
		return cur >= start+len(sc.claims), fmt.Sprintf("%d of %d", cur-start, len(sc.claims)), err
	})
	time.Sleep(sc.s.settle)
	sc.growFrom = sc.sample(t)
	sc.growS = sc.createClaims(t, sc.s.n, sc.s.grow)
	time.Sleep(sc.s.settle)
	sc.grown = sc.sample(t)
	sc.growChanges = sc.timeChanges(t)
}

// growResult reports the figures at SCALE_GROW clusters and appends their
// one-line summary to the result.
func (sc *scaleRun) growResult(t *testing.T) {
	added := float64(sc.s.grow - sc.s.n)
	per := func(p string) float64 { return (sc.grown.rss[p] - sc.growFrom.rss[p]) / added }
	report("scale: grown from %d to %d tenant clusters: the %d added composed in %.1fs (%.2f s each); resident memory crossplane core %.0f → %.0f MiB, kube-apiserver %.0f → %.0f MiB, etcd %.0f → %.0f MiB; load average %s",
		sc.s.n, sc.s.grow, sc.s.grow-sc.s.n, sc.growS, sc.growS/added,
		sc.growFrom.rss["crossplane-core"], sc.grown.rss["crossplane-core"], sc.growFrom.rss["kube-apiserver"], sc.grown.rss["kube-apiserver"],
		sc.growFrom.rss["etcd"], sc.grown.rss["etcd"], sc.grown.load)
	p50, p99 := percentile(sc.growChanges, 50), percentile(sc.growChanges, 99)
	report("scale: claim change → MachineDeployment changed at %d clusters over %d changes: p50 %.2fs, p99 %.2fs, max %.2fs",
		sc.s.grow, len(sc.growChanges), p50.Seconds(), p99.Seconds(), percentile(sc.growChanges, 100).Seconds())
	// create_s: the first SCALE_N and the rest, composed one batch after
	// the other.
	line := fmt.Sprintf("scale: clusters=%d core_rss_mib=%.2f apiserver_rss_mib=%.2f etcd_rss_mib=%.2f change_p99_s=%.2f create_s=%.0f",
		sc.s.grow, per("crossplane-core"), per("kube-apiserver"), per("etcd"), p99.Seconds(), sc.createS+sc.growS)
	t.Log(line)
	f, err := os.OpenFile(filepath.Join(sc.s.out, "result.txt"), os.O_APPEND|os.O_WRONLY, 0o644)
	sc.e.must(t, err, "result")
	_, err = fmt.Fprintln(f, line)
	sc.e.must(t, err, "result")
	sc.e.must(t, f.Close(), "result")
}

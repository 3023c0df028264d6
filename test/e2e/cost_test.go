//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// measurements are lines `make e2e` prints after the scenarios.
var (
	measurementsMu sync.Mutex
	measurements   []string
)

func report(format string, args ...any) {
	measurementsMu.Lock()
	defer measurementsMu.Unlock()
	measurements = append(measurements, fmt.Sprintf(format, args...))
}

// userHZ is the kernel's clock tick for /proc/<pid>/stat (USER_HZ, 100 on
// Linux for every architecture Go supports here).
const userHZ = 100

// cpuSeconds is the user+system CPU time of a running process, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks).
func cpuSeconds(p *proc) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is parenthesised and may hold spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// f[0] is field 3 (state): utime is field 14, stime 15.
	ut, err := strconv.ParseFloat(f[11], 64)
	if err != nil {
		return 0, err
	}
	st, err := strconv.ParseFloat(f[12], 64)
	if err != nil {
		return 0, err
	}
	return (ut + st) / userHZ, nil
}

// planeCPU is the CPU time of Crossplane core and of each function.
func (e *env) planeCPU(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	ps := map[string]*proc{"crossplane core": e.core}
	for _, f := range functions {
		ps["function-"+f] = e.fns[f]
	}
	for n, p := range ps {
		s, err := cpuSeconds(p)
		e.must(t, err, "CPU time of "+n)
		out[n] = s
	}
	return out
}

// nudgeAll changes an annotation of the XR of every claim, which makes
// Crossplane reconcile each once.
func (e *env) nudgeAll(ctx context.Context, claims [][2]string) error {
	for _, c := range claims {
		if err := e.nudge(ctx, c[0], c[1]); err != nil {
			return err
		}
	}
	return nil
}

// measureReconciles nudges every claim rounds times, waiting for each round
// to pass through the workers function, and returns the CPU seconds each
// component spent per reconcile of one cluster.
func (e *env) measureReconciles(t *testing.T, claims [][2]string, rounds int) (map[string]float64, int) {
	t.Helper()
	start, err := e.runFunctionCalls("workers")
	e.must(t, err, "function metrics")
	before := e.planeCPU(t)
	for r := 0; r < rounds; r++ {
		base, err := e.runFunctionCalls("workers")
		e.must(t, err, "function metrics")
		ctx, cancel := ctxT(time.Minute)
		e.must(t, e.nudgeAll(ctx, claims), "nudge")
		cancel()
		waitFor(t, 2*time.Minute, fmt.Sprintf("round %d: %d reconciles", r+1, len(claims)), func(ctx context.Context) (bool, string, error) {
			cur, err := e.runFunctionCalls("workers")
			if err != nil {
				return false, "", err
			}
			return cur >= base+len(claims), fmt.Sprintf("%d of %d", cur-base, len(claims)), nil
		})
	}
	// Let the last round's pipelines finish in core.
	time.Sleep(2 * time.Second)
	after := e.planeCPU(t)
	end, err := e.runFunctionCalls("workers")
	e.must(t, err, "function metrics")
	n := end - start
	out := map[string]float64{}
	for k := range after {
		out[k] = (after[k] - before[k]) / float64(n)
	}
	return out, n
}

func formatCost(c map[string]float64) string {
	total := 0.0
	var parts []string
	for _, k := range []string{"crossplane core", "function-control-plane", "function-workers", "function-addons"} {
		parts = append(parts, fmt.Sprintf("%s %.1f ms", k, c[k]*1000))
		total += c[k]
	}
	return fmt.Sprintf("%.1f ms CPU per reconcile (%s)", total*1000, strings.Join(parts, ", "))
}

// managementCost measures the management plane's CPU per reconcile of one
// tenant cluster in steady state, with the demo claim alone and with 20
// more claims, and the writes those reconciles make.
func (e *env) managementCost(t *testing.T) {
	one := [][2]string{{demoNS, demo}}
	before := e.snapshot(t, demo)
	c1, n1 := e.measureReconciles(t, one, 20)
	after := e.snapshot(t, demo)
	writes := 0
	for k, b := range before {
		if a, ok := after[k]; ok && crossplaneWrites(&unstructured.Unstructured{Object: a.obj}) != crossplaneWrites(&unstructured.Unstructured{Object: b.obj}) {
			writes++
		}
	}
	report("management plane, 1 tenant cluster, steady state: %s over %d reconciles; Crossplane writes per reconcile %.2f (%d objects written)",
		formatCost(c1), n1, float64(writes)/float64(n1), writes)
	if writes != 0 {
		errorf(t, "steady-state reconciles wrote %d composed objects", writes)
	}

	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	claims := [][2]string{{demoNS, demo}}
	for i := 0; i < 20; i++ {
		ns := fmt.Sprintf("tenant-cost-%02d", i)
		e.must(t, e.ensureNamespace(ctx, ns), "namespace "+ns)
		cl := loopbackClaim(ns, "c")
		e.must(t, apply(ctx, e.c, cl), "claim "+ns+"/c")
		claims = append(claims, [2]string{ns, "c"})
	}
	waitFor(t, 5*time.Minute, "20 more claims composed", func(ctx context.Context) (bool, string, error) {
		for _, c := range claims[1:] {
			why, err := e.expectedObjects(ctx, c[0], c[1], baseReleases)
			if err != nil || why != "" {
				return false, c[0] + ": " + why, err
			}
		}
		return true, "", nil
	})
	// Let their first reconciles settle.
	e.reconciles(t, "workers", 3, 2*time.Minute)
	c21, n21 := e.measureReconciles(t, claims, 3)
	report("management plane, 21 tenant clusters, steady state: %s over %d reconciles", formatCost(c21), n21)
	for _, c := range claims[1:] {
		e.deleteClaimQuick(t, c[0], c[1])
	}
}

// loopbackClaim is a claim of one node group that scales from zero,
// selecting the Composition whose charts come from the loopback repository.
func loopbackClaim(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			// Charts from the loopback repository: nothing may dial out.
			"compositionRef": map[string]any{"name": e2eComposition},
			"nodeGroups": map[string]any{"md0": map[string]any{
				"minReplicas": int64(0), "maxReplicas": int64(3), "instanceType": "u1.medium", "diskSize": "20Gi"}},
		},
	}}
}

// deleteClaimQuick deletes a claim without waiting.
func (e *env) deleteClaimQuick(t *testing.T, ns, name string) {
	ctx, cancel := ctxT(30 * time.Second)
	defer cancel()
	cl, err := get(ctx, e.c, gvkClaim, ns, name)
	if err != nil {
		return
	}
	e.must(t, e.c.Delete(ctx, cl), "delete claim "+ns+"/"+name)
}

// equivalentTemplate renders one ConfigMap per entry of .Values.objects, the
// entry as JSON: a chart of the size and object count of one tenant cluster.
const equivalentTemplate = `{{- range $i, $o := .Values.objects }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-object-{{ $i }}
data:
  object.json: {{ $o | toJson | quote }}
{{- end }}
`

// equivalentChart packages a chart equivalent to tenant cluster name: as
// many objects as the cluster composes, each carrying one composed object's
// spec. It returns the packaged chart, its object count and the bytes of
// its values.
func (e *env) equivalentChart(t *testing.T, name string) ([]byte, int, int) {
	t.Helper()
	snap := e.snapshot(t, name)
	var objs []any
	var keys []string
	for k := range snap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := snap[k].obj
		objs = append(objs, map[string]any{"kind": o["kind"], "name": k, "spec": o["spec"]})
	}
	values, err := json.Marshal(map[string]any{"objects": objs})
	e.must(t, err, "values")
	tgz, err := buildChart("tenant-equivalent", equivalentTemplate, string(values))
	e.must(t, err, "chart")
	return tgz, len(objs), len(values)
}

// referenceRepository is the HelmRepository serving the equivalent chart,
// at Cozystack's interval.
func referenceRepository(ns, name, url string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"url": url, "interval": "5m"},
	}}
}

// referenceRelease is a HelmRelease of the equivalent chart from
// HelmRepository repo, at Cozystack's interval (5m).
func referenceRelease(ns, name, repo string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"interval": "5m",
			"chart": map[string]any{"spec": map[string]any{
				"chart": "tenant-equivalent", "version": chartVersion,
				"sourceRef": map[string]any{"kind": "HelmRepository", "name": repo},
			}},
		},
	}}
}

// helmReference measures what helm-controller spends on one HelmRelease
// per reconcile in steady state, the release being a chart equivalent to one
// tenant cluster (equivalentChart of the demo cluster). It runs against the
// management cluster, reconciles forced by Flux's
// reconcile.fluxcd.io/requestedAt.
func (e *env) helmReference(t *testing.T, fc *fluxControllers) {
	tgz, nobjs, nvalues := e.equivalentChart(t, demo)
	repo, err := serveCharts(map[string][]byte{"tenant-equivalent": tgz})
	e.must(t, err, "repository")
	defer repo.srv.Close()
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	ns := helmReferenceNS
	e.must(t, e.ensureNamespace(ctx, ns), "namespace")
	for _, o := range []*unstructured.Unstructured{referenceRepository(ns, "reference", repo.url), referenceRelease(ns, "reference", "reference")} {
		e.must(t, apply(ctx, e.c, o), describe(o))
	}
	waitFor(t, 3*time.Minute, "reference HelmRelease Ready", func(ctx context.Context) (bool, string, error) {
		hr, err := get(ctx, e.c, gvkHR, ns, "reference")
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(hr, "Ready")
		return s == "True", fmt.Sprintf("Ready=%s %s %q %s", s, r, m, e.fluxState()), nil
	})
	const rounds = 20
	before, err := cpuSeconds(fc.helm)
	e.must(t, err, "helm-controller CPU")
	for i := 0; i < rounds; i++ {
		at := fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano(), i)
		e.must(t, mergePatch(ctx, e.c, gvkHR, ns, "reference",
			fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, at)), "request a reconcile")
		waitFor(t, time.Minute, "reconcile "+at, func(ctx context.Context) (bool, string, error) {
			hr, err := get(ctx, e.c, gvkHR, ns, "reference")
			if err != nil {
				return false, "", err
			}
			h, _, _ := unstructured.NestedString(hr.Object, "status", "lastHandledReconcileAt")
			return h == at, "lastHandledReconcileAt " + h, nil
		})
	}
	after, err := cpuSeconds(fc.helm)
	e.must(t, err, "helm-controller CPU")
	report("reference: helm-controller, one HelmRelease of a chart equivalent to one tenant cluster (%d objects, %d bytes of values), steady state: %.1f ms CPU per reconcile over %d reconciles",
		nobjs, nvalues, (after-before)/rounds*1000, rounds)
}

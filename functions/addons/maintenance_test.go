package main

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestKeptVersion: the rule by hand, for a source at 1.18.4 that still
// accepts 1.18.2 and 1.17.9.
func TestKeptVersion(t *testing.T) {
	src := &input.ChartSource{Kind: input.KindHelmRepository, Version: "1.18.4", EarlierVersions: []string{"1.18.2", "1.17.9"}}
	for _, c := range []struct {
		name, observed string
		platform       bool
		want           string
	}{
		{"window closed, listed", "1.18.2", false, "1.18.2"},
		{"window closed, other listed", "1.17.9", false, "1.17.9"},
		{"window closed, unlisted", "1.16.0", false, "1.18.4"},
		{"window closed, current", "1.18.4", false, "1.18.4"},
		{"window closed, none observed", "", false, "1.18.4"},
		{"window open, listed", "1.18.2", true, "1.18.4"},
		{"forged: spaces", " 1.18.2", false, "1.18.4"},
		{"forged: range", "1.18.*", false, "1.18.4"},
		{"forged: prefix", "v1.18.2", false, "1.18.4"},
		{"forged: list", "1.18.2,1.17.9", false, "1.18.4"},
	} {
		if got := keptVersion(src, c.observed, c.platform); got != c.want {
			t.Errorf("%s: keptVersion(%q, platform %v) = %q, want %q", c.name, c.observed, c.platform, got, c.want)
		}
	}
}

// holdInput lists an earlier version of cilium (HelmRepository, 1.18.4 by
// default) and of fluxcd (managed OCIRepository, tag 0.33.0 by default).
const holdInput = "charts: {cilium: {earlierVersions: ['1.18.2']}, fluxcd: {earlierVersions: ['0.32.0']}}\n"

// holdObserved: cilium's HelmRelease at chart version cilium, fluxcd's
// OCIRepository at tag fluxcd, coredns's HelmRelease at 1.40.0 (listed
// nowhere).
func holdObserved(cilium, fluxcd string) map[string]string {
	hr := func(name, version string) string {
		return fmt.Sprintf("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: demo-%s, namespace: tenant-demo}\nspec: {chart: {spec: {chart: %s, version: %q}}}\n%s",
			name, name, version, readyTrue)
	}
	return map[string]string{
		"kamajicontrolplane": kcpReady,
		"addon-cilium":       hr("cilium", cilium),
		"addon-coredns":      hr("coredns", "1.40.0"),
		"ocirepository-fluxcd": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: demo-fluxcd, namespace: tenant-demo}\n" +
			"spec: {url: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance, ref: {tag: " + fmt.Sprintf("%q", fluxcd) + "}}",
	}
}

// composedVersions are the chart versions rsp composes: cilium's and
// coredns's HelmRelease chart versions, fluxcd's OCIRepository tag.
func composedVersions(rsp *fnv1.RunFunctionResponse) [3]any {
	res := rsp.GetDesired().GetResources()
	get := func(name string, path ...string) any { return fntest.Get(res[name].GetResource().AsMap(), path...) }
	return [3]any{
		get("addon-cilium", "spec", "chart", "spec", "version"),
		get("addon-coredns", "spec", "chart", "spec", "version"),
		get("ocirepository-fluxcd", "spec", "ref", "tag"),
	}
}

// pendingOf is the desired XR's status.maintenance.pending and the
// MaintenancePending condition's reason.
func pendingOf(t *testing.T, rsp *fnv1.RunFunctionResponse) ([]v1alpha1.PendingChange, string) {
	t.Helper()
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	var m v1alpha1.MaintenanceStatus
	if raw, ok := st["maintenance"]; ok {
		decodeObject(t, raw.(map[string]any), &m)
	}
	reason := ""
	for _, c := range rsp.GetConditions() {
		if c.GetType() == v1alpha1.ConditionMaintenancePending {
			reason = c.GetReason()
		}
	}
	return m.Pending, reason
}

// TestChartVersionHeld: outside the window (the default, every day 01:00
// UTC for 4h) a listed earlier version is kept for a HelmRepository chart
// and a managed OCIRepository tag, an unlisted one is not; inside it, with
// rollNow or without confinement, the settings' versions apply; the
// control-plane step's decision in the pipeline context is followed.
// Expectations by hand from the default charts (cilium 1.18.4, coredns
// 1.43.3, fluxcd 0.33.0).
func TestChartVersionHeld(t *testing.T) {
	noon, two := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	current := [3]any{"1.18.4", "1.43.3", "0.33.0"}
	held := [3]any{"1.18.2", "1.43.3", "0.32.0"}
	bothHeld := []v1alpha1.PendingChange{
		{What: "addon/cilium", From: "1.18.2", To: "1.18.4", Reason: pendingChartVersion},
		{What: "addon/fluxcd", From: "0.32.0", To: "0.33.0", Reason: pendingChartVersion},
	}
	for _, c := range []struct {
		name, input, context string
		spec                 string // "" for fluxcd enabled
		now                  time.Time
		cilium, fluxcd       string
		want                 [3]any
		pending              []v1alpha1.PendingChange
		reason               string
	}{
		{name: "window closed", now: noon, cilium: "1.18.2", fluxcd: "0.32.0", want: held, pending: bothHeld, reason: v1alpha1.ReasonWaitingForWindow},
		{name: "window open", now: two, cilium: "1.18.2", fluxcd: "0.32.0", want: current},
		{name: "rollNow", input: "maintenance: {rollNow: [tenant-demo/demo]}\n", now: noon, cilium: "1.18.2", fluxcd: "0.32.0", want: current},
		{name: "not confined", input: "maintenance: {confinePlatformChanges: false}\n", now: noon, cilium: "1.18.2", fluxcd: "0.32.0", want: current},
		{name: "unlisted", now: noon, cilium: "1.17.0", fluxcd: "0.31.0", want: current},
		{name: "forged", now: noon, cilium: "1.18.2 ", fluxcd: "0.32.0-rc", want: current},
		{name: "one held", now: noon, cilium: "1.18.4", fluxcd: "0.32.0", want: [3]any{"1.18.4", "1.43.3", "0.32.0"},
			pending: bothHeld[1:], reason: v1alpha1.ReasonWaitingForWindow},
		{name: "waiting for a slot", context: "{platform: false, reason: WaitingForRollSlot}", now: two, cilium: "1.18.2", fluxcd: "0.32.0",
			want: held, pending: bothHeld, reason: v1alpha1.ReasonWaitingForRollSlot},
		// fluxcd disabled: its observed tag is no pending change.
		{name: "disabled add-on", spec: "{}", now: noon, cilium: "1.18.2", fluxcd: "0.32.0", want: [3]any{"1.18.2", "1.43.3", nil},
			pending: bothHeld[:1], reason: v1alpha1.ReasonWaitingForWindow},
		{name: "roll finishing", context: "{platform: true}", now: noon, cilium: "1.18.2", fluxcd: "0.32.0", want: current},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := "addons: {fluxcd: {enabled: true}}"
			if c.spec != "" {
				spec = c.spec
			}
			req := fntest.Call{Spec: spec, Input: holdInput + c.input, Observed: holdObserved(c.cilium, c.fluxcd)}.Request(t)
			if c.context != "" {
				req.Context = fntest.MustYAML(t, "tenantkube.io/maintenance: "+c.context)
			}
			rsp, err := fntest.Run((&Function{now: func() time.Time { return c.now }}).RunFunction, req)
			if err != nil {
				t.Fatal(err)
			}
			fntest.NoFatal(t, rsp)
			if got := composedVersions(rsp); got != c.want {
				t.Errorf("composed cilium, coredns, fluxcd versions %v, want %v", got, c.want)
			}
			pending, reason := pendingOf(t, rsp)
			if diff := cmp.Diff(c.pending, pending); diff != "" || reason != c.reason {
				t.Errorf("MaintenancePending %q, want %q; pending -want +got:\n%s", reason, c.reason, diff)
			}
		})
	}
}

// TestHeldReleaseTakesTheTenantsValues: while cilium's chart version is
// held, the tenant's valuesOverride applies at once.
func TestHeldReleaseTakesTheTenantsValues(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	req := fntest.Call{Spec: "addons: {cilium: {valuesOverride: {MTU: 1450}}}", Input: holdInput, Observed: holdObserved("1.18.2", "0.32.0")}.Request(t)
	rsp, err := fntest.Run((&Function{now: func() time.Time { return now }}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	hr := releases(rsp)["cilium"]
	if v, mtu := fntest.Get(hr, "spec", "chart", "spec", "version"), fntest.Get(hr, "spec", "values", "MTU"); v != "1.18.2" || mtu != 1450.0 {
		t.Errorf("cilium at %v with MTU %v, want 1.18.2 with 1450", v, mtu)
	}
}

// TestComposedVersionAlwaysAllowed: over generated observed versions
// (listed, current, unlisted, near misses, empty), clocks and policies,
// each add-on's composed version is the settings' version or one of its
// earlier versions.
func TestComposedVersionAlwaysAllowed(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	pick := func(vs ...string) string { return vs[rng.Intn(len(vs))] }
	allowed := map[int][]string{0: {"1.18.4", "1.18.2", "1.17.9"}, 1: {"1.43.3"}, 2: {"0.33.0", "0.32.0"}}
	const in = "charts: {cilium: {earlierVersions: ['1.18.2', '1.17.9']}, fluxcd: {earlierVersions: ['0.32.0']}}\n"
	for i := 0; i < 300; i++ {
		cilium := pick("1.18.2", "1.17.9", "1.18.4", "1.18.3", "", "1.18.2 ", "1.18.*", fmt.Sprintf("1.%d.%d", rng.Intn(20), rng.Intn(10)))
		fluxcd := pick("0.32.0", "0.33.0", "0.31.0", "latest", "", fmt.Sprintf("0.%d.0", rng.Intn(40)))
		policy := pick("", "maintenance: {rollNow: ['*']}\n", "maintenance: {confinePlatformChanges: false}\n")
		now := time.Date(2026, 12, 7, rng.Intn(24), rng.Intn(60), 0, 0, time.UTC)
		req := fntest.Call{Spec: "addons: {fluxcd: {enabled: true}}", Input: in + policy, Observed: holdObserved(cilium, fluxcd)}.Request(t)
		rsp, err := fntest.Run((&Function{now: func() time.Time { return now }}).RunFunction, req)
		if err != nil {
			t.Fatal(err)
		}
		fntest.NoFatal(t, rsp)
		for j, v := range composedVersions(rsp) {
			if s, _ := v.(string); !slices.Contains(allowed[j], s) {
				t.Fatalf("observed cilium %s, fluxcd %s, %q at %s: composed %v, want one of %v", cilium, fluxcd, policy, now, v, allowed[j])
			}
		}
	}
}

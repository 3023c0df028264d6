package main

import (
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// observedKCP is the observed KamajiControlPlane with status.ready as given.
func observedKCP(ready bool) string {
	if ready {
		return "apiVersion: controlplane.cluster.x-k8s.io/v1alpha2\nkind: KamajiControlPlane\nstatus: {ready: true}"
	}
	return "apiVersion: controlplane.cluster.x-k8s.io/v1alpha2\nkind: KamajiControlPlane\nstatus: {ready: false}"
}

// Every HelmRelease is suspended while the tenant API server is not
// observed answering, and resumed once it is (docs/architecture.md: Flux skips the
// in-tenant uninstall of a suspended release, so deleting a cluster whose
// API server is dead cannot hang on it).
func TestReleasesSuspendedWhileTenantAPIDoesNotAnswer(t *testing.T) {
	cases := map[string]struct {
		observed map[string]string
		want     any
	}{
		"control plane not observed": {observed: nil, want: true},
		"control plane not ready":    {observed: map[string]string{"kamajicontrolplane": observedKCP(false)}, want: true},
		"control plane ready":        {observed: map[string]string{"kamajicontrolplane": observedKCP(true)}, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Call{Spec: "addons: {velero: {enabled: true}}", Observed: tc.observed}.Run(t, runFn)
			fntest.NoFatal(t, rsp)
			rels := releases(rsp)
			if len(rels) != len(baseReleases)+1 {
				t.Fatalf("releases %v", names(rels))
			}
			for r, hr := range rels {
				if got := fntest.Get(hr, "spec", "suspend"); got != tc.want {
					t.Errorf("%s: spec.suspend = %v, want %v", r, got, tc.want)
				}
			}
		})
	}
}

// Uninstalling a release runs no hooks and does not wait: a cluster being
// deleted, or one that never got a Ready node, cannot run a hook Job or
// remove a LoadBalancer finalizer, and Flux retries a failed uninstall for
// ever.
func TestUninstallNeitherRunsHooksNorWaits(t *testing.T) {
	for r, hr := range releases(fntest.Call{Spec: "addons: {ingressNginx: {enabled: true}, certManager: {enabled: true}}"}.Run(t, runFn)) {
		if d := cmp.Diff(map[string]any{"disableHooks": true, "disableWait": true}, fntest.Get(hr, "spec", "uninstall")); d != "" {
			t.Errorf("%s: spec.uninstall (-want +got):\n%s", r, d)
		}
	}
}

// With the default DeletionOrder each release has a Usage keeping the
// KamajiControlPlane until Flux has uninstalled it; None emits none.
func TestUsageKeepsControlPlaneUntilReleaseIsGone(t *testing.T) {
	rsp := fntest.Call{Spec: "addons: {velero: {enabled: true}}"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	var usages []string
	for n, r := range rsp.GetDesired().GetResources() {
		rel, ok := strings.CutPrefix(n, "usage-kamajicontrolplane-by-addon-")
		if !ok {
			continue
		}
		usages = append(usages, rel)
		m := r.GetResource().AsMap()
		want := map[string]any{
			"of":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
			"by":             map[string]any{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "resourceRef": map[string]any{"name": "demo-" + rel}},
			"reason":         "Flux uninstalls add-on " + rel + " through the tenant API server before the control plane goes",
			"replayDeletion": true,
		}
		if d := cmp.Diff(want, m["spec"]); d != "" {
			t.Errorf("%s spec (-want +got):\n%s", n, d)
		}
		if got := fntest.Get(m, "metadata", "name"); got != "demo-control-plane-used-by-addon-"+rel {
			t.Errorf("%s name %v", n, got)
		}
		// A Usage is ready once Crossplane has put it in effect.
		if r.GetReady() != fnv1.Ready_READY_FALSE {
			t.Errorf("%s ready %v before it was observed Ready", n, r.GetReady())
		}
	}
	sort.Strings(usages)
	if d := cmp.Diff(names(releases(rsp)), usages); d != "" {
		t.Errorf("one Usage per release (-releases +usages):\n%s", d)
	}

	ready := "status: {conditions: [{type: Ready, status: 'True', reason: Available, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	rsp = fntest.Call{Spec: "{}", Observed: map[string]string{"usage-kamajicontrolplane-by-addon-cilium": ready}}.Run(t, runFn)
	if got := rsp.GetDesired().GetResources()["usage-kamajicontrolplane-by-addon-cilium"].GetReady(); got != fnv1.Ready_READY_TRUE {
		t.Errorf("observed Ready Usage: ready %v", got)
	}

	rsp = fntest.Call{Spec: "{}", Input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ndeletionOrder: None"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	for n := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(n, "usage-") {
			t.Errorf("deletionOrder None: %s emitted", n)
		}
	}
	if m := fntest.FatalMessage(fntest.Call{Spec: "{}", Input: "apiVersion: fn.tenantkube.io/v1alpha1\nkind: AddonsInput\ndeletionOrder: Later"}.Run(t, runFn)); !strings.Contains(m, "input.deletionOrder") || !strings.Contains(m, `"Later"`) {
		t.Errorf("bad deletionOrder: Fatal %q", m)
	}
}

// helm-controller makes a HelmChart from each release's chart template,
// labelled as the template says; the function asks for the labelled
// HelmCharts in NS and composes them for deletion with the cluster (Flux
// leaves the HelmChart of a suspended release it deletes).
func TestHelmChartsComposedForCleanup(t *testing.T) {
	rsp := fntest.Call{Spec: "{}"}.Run(t, runFn)
	fntest.NoFatal(t, rsp)
	want := map[string]any{"labels": map[string]any{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"}}
	if d := cmp.Diff(want, fntest.Get(releases(rsp)["cilium"], "spec", "chart", "metadata")); d != "" {
		t.Errorf("cilium chart template metadata (-want +got):\n%s", d)
	}
	sel := rsp.GetRequirements().GetResources()["cleanup-helmchart.source.toolkit.fluxcd.io"]
	if sel.GetKind() != "HelmChart" || sel.GetApiVersion() != "source.toolkit.fluxcd.io/v1" || sel.GetNamespace() != "tenant-demo" {
		t.Errorf("HelmChart requirement %v", sel)
	}
}

package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// Instants against the default window, every day 01:00-05:00 UTC
// (settings DefaultMaintenanceWindow).
var (
	outsideWindow = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	insideWindow  = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
)

// TestMaintenanceControlPlaneVersion: the control plane's version change
// waits for the window when the platform causes it (a new patch of the
// minor: the table's v1.35.6 replacing v1.35.1, which Cozystack's chart
// deployed before) or when the tenant confines its own (a new minor);
// rollNow and an open window let it through; a version the table never
// deployed is not kept.
func TestMaintenanceControlPlaneVersion(t *testing.T) {
	kcp := func(v string) map[string]string {
		return map[string]string{"kamajicontrolplane": `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: ` + v + `}, status: {ready: true, version: ` + v + `}}`}
	}
	newPatch := tkv1alpha1.PendingChange{What: "controlPlane", From: "v1.35.1", To: "v1.35.6", Reason: pendingNewPatch}
	cases := map[string]struct {
		spec, input, observed string
		now                   time.Time
		version, konn         string
		pending               []tkv1alpha1.PendingChange
		next                  string
	}{
		"PatchWaitsOutside":          {`{}`, ``, "v1.35.1", outsideWindow, "v1.35.1", "v0.34.0", []tkv1alpha1.PendingChange{newPatch}, "2026-12-08T01:00:00Z"},
		"PatchRollsInside":           {`{}`, ``, "v1.35.1", insideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"RollNowThisCluster":         {`{}`, `{maintenance: {rollNow: [tenant-demo/demo]}}`, "v1.35.1", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"RollNowEvery":               {`{}`, `{maintenance: {rollNow: ["*"]}}`, "v1.35.1", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"RollNowOtherCluster":        {`{}`, `{maintenance: {rollNow: [tenant-demo/other]}}`, "v1.35.1", outsideWindow, "v1.35.1", "v0.34.0", []tkv1alpha1.PendingChange{newPatch}, "2026-12-08T01:00:00Z"},
		"NotConfined":                {`{}`, `{maintenance: {confinePlatformChanges: false}}`, "v1.35.1", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"ForgedPatchNotKept":         {`{}`, ``, "v1.35.4", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"ForgedTextNotKept":          {`{}`, ``, "v1.35.1-evil", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"OwnMinorAtOnce":             {`{}`, ``, "v1.34.4", outsideWindow, "v1.35.6", "v0.34.0", nil, ""},
		"OwnMinorConfined":           {`{maintenance: {confineOwnChanges: true}}`, ``, "v1.34.4", outsideWindow, "v1.34.4", "", []tkv1alpha1.PendingChange{{What: "controlPlane", From: "v1.34.4", To: "v1.35.6", Reason: pendingOwnMinor}}, "2026-12-08T01:00:00Z"},
		"TenantWindowBerlinOpen":     {`{maintenance: {window: {start: "13:00", duration: 1h, timeZone: Europe/Berlin}}}`, ``, "v1.35.1", outsideWindow.Add(30 * time.Minute), "v1.35.6", "v0.34.0", nil, ""},
		"TenantWindowDaysNotToday":   {`{maintenance: {window: {start: "13:00", duration: 1h, days: [Tue], timeZone: Europe/Berlin}}}`, ``, "v1.35.1", outsideWindow.Add(30 * time.Minute), "v1.35.1", "v0.34.0", []tkv1alpha1.PendingChange{newPatch}, "2026-12-08T12:00:00Z"},
		"PlatformDefaultWindowOpen":  {`{}`, `{maintenance: {defaultWindow: {start: "11:30", duration: 30m}}}`, "v1.35.1", outsideWindow.Add(-time.Minute), "v1.35.6", "v0.34.0", nil, ""},
		"PlatformDefaultWindowEnded": {`{}`, `{maintenance: {defaultWindow: {start: "11:30", duration: 30m}}}`, "v1.35.1", outsideWindow, "v1.35.1", "v0.34.0", []tkv1alpha1.PendingChange{newPatch}, "2026-12-08T11:30:00Z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// No other cluster's roll record: a slot is free; the cluster
			// has waited for it for a minute (maintenance.Settled).
			obs := kcp(tc.observed)
			obs[nameManagementNamespace] = waitingRecord("tenant-demo", "demo", tc.now.Add(-time.Minute))
			p := planMaintenanceAt(t, fntest.Call{Spec: tc.spec, Observed: obs, Required: requiredRecords(nil)}, tc.input, tc.now)
			got := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane")
			if got.Spec.Version != tc.version || got.Spec.Addons.Konnectivity.Server.Version != tc.konn {
				t.Errorf("version %s konnectivity %q, want %s %q", got.Spec.Version, got.Spec.Addons.Konnectivity.Server.Version, tc.version, tc.konn)
			}
			st, _ := p.Status["maintenance"].(tkv1alpha1.MaintenanceStatus)
			if diff := cmp.Diff(tc.pending, st.Pending); diff != "" || st.NextWindowStart != tc.next {
				t.Errorf("status.maintenance next %q (want %q), pending -want +got:\n%s", st.NextWindowStart, tc.next, diff)
			}
			cond := conditionOf(p, tkv1alpha1.ConditionMaintenancePending)
			if (cond != nil) != (tc.pending != nil) || cond != nil && (!cond.True || cond.Reason != tkv1alpha1.ReasonWaitingForWindow) {
				t.Errorf("MaintenancePending %+v", cond)
			}
		})
	}
}

// TestMaintenanceBadWindowIsFatal: a bad window is refused naming field
// and value.
func TestMaintenanceBadWindowIsFatal(t *testing.T) {
	in := &cpinput.ControlPlaneInput{}
	in.Default()
	r, tenant := fntest.Call{Spec: `{maintenance: {window: {start: "25:00", duration: 1h}}}`}.Read(t)
	_, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, outsideWindow)
	if len(errs) == 0 || errs[0].Field != "spec.maintenance.window.start" || errs[0].BadValue != "25:00" {
		t.Fatalf("errors %v, want spec.maintenance.window.start 25:00", errs)
	}
}

// planMaintenanceAt is planOf at now.
func planMaintenanceAt(t *testing.T, c fntest.Call, inputYAML string, now time.Time) *function.Plan {
	t.Helper()
	in := &cpinput.ControlPlaneInput{}
	if err := yaml.UnmarshalStrict([]byte(inputYAML), in); err != nil {
		t.Fatalf("bad test input: %v", err)
	}
	in.Default()
	r, tenant := c.Read(t)
	p, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, now)
	if len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	return p
}

// conditionOf is p's last condition of type typ, nil for none.
func conditionOf(p *function.Plan, typ string) *function.Condition {
	var out *function.Condition
	for i := range p.Conditions {
		if p.Conditions[i].Type == typ {
			out = &p.Conditions[i]
		}
	}
	return out
}

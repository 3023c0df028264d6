package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// record is cluster ns/n's management namespace labelled with its roll
// state, named at (its own name unless forged).
func record(ns, n, at, state, since string) string {
	if at == "" {
		at = function.Identity{Namespace: ns, Name: n}.ManagementNamespace()
	}
	y := "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + at + ", labels: {tenantkube.io/management-namespace: \"true\", tenantkube.io/namespace: " + ns + ", tenantkube.io/cluster: " + n + ", tenantkube.io/roll: " + state + "}"
	if since != "" {
		y += ", annotations: {tenantkube.io/roll-since: \"" + since + "\"}"
	}
	return y + "}"
}

// waitingRecord is the Waiting record of claim ns/n written at since.
func waitingRecord(ns, n string, since time.Time) string {
	return waitingSince(record(ns, n, "", rollWaiting, ""), since)
}

// waitingSince is rec, a record without annotations, written at since.
func waitingSince(rec string, since time.Time) string {
	return strings.Replace(rec, "}}", "}, annotations: {tenantkube.io/waiting-since: \""+since.Format(time.RFC3339)+"\"}}", 1)
}

// terminating is rec with a deletionTimestamp: its claim was deleted.
func terminating(rec string) string {
	return strings.Replace(rec, "metadata: {", "metadata: {deletionTimestamp: \"2026-01-01T00:00:00Z\", ", 1)
}

// requiredRecords answers the four record requirements with recs, by
// kind and state.
func requiredRecords(recs []string) map[string][]string {
	out := map[string][]string{}
	for _, state := range rollStates {
		out[requiredRollPrefix+state], out[requiredRollBindingPrefix+state] = []string{}, []string{}
	}
	for _, r := range recs {
		prefix, state := requiredRollPrefix, rollWaiting
		if strings.Contains(r, "roll: "+rollRolling) {
			state = rollRolling
		}
		if strings.Contains(r, "kind: ClusterRoleBinding") {
			prefix = requiredRollBindingPrefix
		}
		out[prefix+state] = append(out[prefix+state], r)
	}
	return out
}

// TestSpread: inside the window (02:00 UTC) with a new patch waiting,
// the default limit of 3 rolls at once and a 2h deadline. Clusters
// a/a-1, a/a-2 roll; a/a-0 waits and ranks before tenant-demo/demo.
func TestSpread(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.1}, status: {ready: true, version: v1.35.1}}`
	started := insideWindow.Add(-30 * time.Minute).Format(time.RFC3339)
	failed := insideWindow.Add(-3 * time.Hour).Format(time.RFC3339)
	two := []string{record("a", "a-1", "", rollRolling, started), record("a", "a-2", "", rollRolling, started)}
	cases := map[string]struct {
		records   []string
		observed  string // the cluster's own record, "" for none
		input     string
		now       time.Time
		version   string
		reason    string
		state     string
		namespace bool
	}{
		"FreeSlot":                  {records: two, version: "v1.35.6", state: rollRolling, now: insideWindow},
		"SlotTakenByEarlierName":    {records: append(two, record("a", "a-0", "", rollWaiting, "")), version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
		"LaterNameWaitsBehind":      {records: append(two, record("z", "z-0", "", rollWaiting, "")), version: "v1.35.6", state: rollRolling, now: insideWindow},
		"Full":                      {records: append(two, record("a", "a-3", "", rollRolling, started)), version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
		"ForeignRecordsIgnored":     {records: append(two, record("a", "a-3", "tenant-demo", rollRolling, started), record("a", "a-4", "tenantkube-aaaaaaaaaaaaaaaaaaaaaaaaaa", rollRolling, failed)), version: "v1.35.6", state: rollRolling, now: insideWindow},
		"FailedRollStopsAll":        {records: []string{record("a", "a-1", "", rollRolling, failed)}, version: "v1.35.1", reason: tkv1alpha1.ReasonRollsStopped, state: rollWaiting, now: insideWindow},
		"TerminatingRecordIgnored":  {records: []string{terminating(record("a", "a-1", "", rollRolling, failed))}, version: "v1.35.6", state: rollRolling, now: insideWindow},
		"FailedRollLongerDeadline":  {records: []string{record("a", "a-1", "", rollRolling, failed)}, input: `{maintenance: {rollDeadline: 4h}}`, version: "v1.35.6", state: rollRolling, now: insideWindow},
		"RollNowSkipsTheSpread":     {records: append(two, record("a", "a-3", "", rollRolling, started)), input: `{maintenance: {rollNow: [tenant-demo/demo]}}`, version: "v1.35.6", state: rollRolling, now: insideWindow},
		"OwnRollGoesOnAfterWindow":  {records: nil, observed: record("tenant-demo", "demo", "", rollRolling, started), version: "v1.35.6", state: rollRolling, now: outsideWindow},
		"TenantClusterRecordCounts": {records: append(two, binding("a", "a-3", "", rollRolling, started)), version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
		"ForgedBindingIgnored":      {records: append(two, binding("a", "a-3", "tenantkube:kcsi-controller:other", rollRolling, failed)), version: "v1.35.6", state: rollRolling, now: insideWindow},
		"ClosedWindowNoRecord":      {records: two, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForWindow, now: outsideWindow},
		// A cluster starts only once its own Waiting record has been
		// published for maintenance.RollSettle (30s).
		"NewRecordSettlesFirst":   {records: two, observed: "none", version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
		"FreshRecordSettlesFirst": {records: two, observed: waitingRecord("tenant-demo", "demo", insideWindow.Add(-29*time.Second)), version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
		"SettledRecordStarts":     {records: two, observed: waitingRecord("tenant-demo", "demo", insideWindow.Add(-30*time.Second)), version: "v1.35.6", state: rollRolling, now: insideWindow},
		"FutureRecordSettlesNow":  {records: two, observed: waitingRecord("tenant-demo", "demo", insideWindow.Add(time.Hour)), version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, state: rollWaiting, now: insideWindow},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// By default the cluster waited before (a settled record).
			obs := map[string]string{"kamajicontrolplane": kcp, nameManagementNamespace: waitingRecord("tenant-demo", "demo", tc.now.Add(-time.Minute))}
			switch tc.observed {
			case "none":
				delete(obs, nameManagementNamespace)
			case "":
			default:
				obs[nameManagementNamespace] = tc.observed
			}
			p := planMaintenanceAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: requiredRecords(tc.records)}, tc.input, tc.now)
			if got := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane").Spec.Version; got != tc.version {
				t.Errorf("KamajiControlPlane at %s, want %s", got, tc.version)
			}
			cond := conditionOf(p, tkv1alpha1.ConditionMaintenancePending)
			if (cond == nil) != (tc.reason == "") || cond != nil && cond.Reason != tc.reason {
				t.Errorf("MaintenancePending %+v, want reason %q", cond, tc.reason)
			}
			ns := composedObject[corev1.Namespace](t, p, nameManagementNamespace)
			if state := ns.Labels[labelRoll]; state != tc.state {
				t.Errorf("roll record state %q, want %q", state, tc.state)
			}
			if name == "NewRecordSettlesFirst" || name == "FutureRecordSettlesNow" {
				if w := ns.Annotations[annotationWaitingSince]; w != "2026-12-07T02:00:00Z" {
					t.Errorf("waiting-since %q, want the render instant", w)
				}
			}
			if a := p.Context[maintenance.ContextKey].(maintenance.Admission); a.Platform != (tc.version == "v1.35.6") || a.Reason != tc.reason {
				t.Errorf("context %+v", a)
			}
		})
	}
}

// TestSpreadRerun: a change waiting for the window runs the pipeline
// again when it opens (01:00 UTC, 13 hours after 12:00); one waiting for
// a slot when its record settles (30s after a new one, 10s after one of
// 20s), else after rollRecheck.
func TestSpreadRerun(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.1}, status: {ready: true, version: v1.35.1}}`
	p := planMaintenanceAt(t, fntest.Call{Spec: `{}`, Observed: map[string]string{"kamajicontrolplane": kcp}}, ``, outsideWindow)
	if p.RunAgainAfter != 13*time.Hour {
		t.Errorf("closed window: run again after %s, want 13h", p.RunAgainAfter)
	}
	for since, want := range map[time.Duration]time.Duration{-1: 30 * time.Second, 20 * time.Second: 10 * time.Second, time.Minute: time.Minute} {
		obs := map[string]string{"kamajicontrolplane": kcp}
		if since > 0 {
			obs[nameManagementNamespace] = waitingRecord("tenant-demo", "demo", insideWindow.Add(-since))
		}
		p = planMaintenanceAt(t, fntest.Call{Spec: `{}`, Observed: obs}, ``, insideWindow)
		if p.RunAgainAfter != want {
			t.Errorf("waiting for %s: run again after %s, want %s", since, p.RunAgainAfter, want)
		}
	}
}

// TestSpreadUnseenChange: in the open window with nothing seen waiting
// (the control plane at the table's patch v1.35.6, no status.maintenance),
// a change the later steps find (a machine template, a chart) waits for
// a slot too: the context withholds the platform's changes
// (WaitingForRollSlot) without a record, a condition or a request, for a
// claim and a TenantCluster alike; rollNow, confinePlatformChanges false
// or a held slot let them through.
func TestSpreadUnseenChange(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {ready: true, version: v1.35.6}}`
	started := insideWindow.Add(-30 * time.Minute).Format(time.RFC3339)
	cases := map[string]struct {
		namespaced bool
		input      string
		grant      []string
		platform   bool
		reason     string
		request    bool // the roll just started: still asked for
	}{
		"Claim":                     {reason: tkv1alpha1.ReasonWaitingForRollSlot},
		"ClaimRollNow":              {input: `{maintenance: {rollNow: [tenant-demo/demo]}}`, platform: true},
		"ClaimNotConfined":          {input: `{maintenance: {confinePlatformChanges: false}}`, platform: true},
		"TenantCluster":             {namespaced: true, reason: tkv1alpha1.ReasonWaitingForRollSlot},
		"TenantClusterNotConfined":  {namespaced: true, input: `{maintenance: {confinePlatformChanges: false}}`, platform: true},
		"TenantClusterHoldsTheSlot": {namespaced: true, grant: []string{binding("tenant-demo", "demo", "", rollRolling, started)}, platform: true},
		"TenantClusterJustStarted":  {namespaced: true, grant: []string{binding("tenant-demo", "demo", "", rollRolling, insideWindow.Add(-10*time.Second).Format(time.RFC3339))}, platform: true, request: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[string]string{"kamajicontrolplane": kcp}
			call := fntest.Call{Spec: `{}`, Observed: obs, Required: requiredRecords(nil)}
			if tc.namespaced {
				if tc.grant != nil {
					obs["kamajicontrolplane"] = strings.Replace(kcp, "kind: KamajiControlPlane,", `kind: KamajiControlPlane, metadata: {labels: {tenantkube.io/roll-request: "true"}},`, 1)
				}
				call = fntest.Call{Namespaced: true, Spec: `{}`, Observed: obs, Required: map[string][]string{requiredRollGrant: tc.grant,
					requiredTenantDataStore: {`{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, metadata: {name: ` + tenantDS + `}, status: {ready: true}}`}}}
			}
			p := planMaintenanceAt(t, call, tc.input, insideWindow)
			if a := p.Context[maintenance.ContextKey].(maintenance.Admission); a.Platform != tc.platform || a.Reason != tc.reason {
				t.Errorf("context %+v, want platform %t reason %q", a, tc.platform, tc.reason)
			}
			if c := conditionOf(p, tkv1alpha1.ConditionMaintenancePending); c != nil {
				t.Errorf("MaintenancePending %+v with nothing pending", c)
			}
			if got := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane); (got.Labels[labelRollRequest] == "true") != tc.request {
				t.Errorf("request label %v, want %t", got.Labels, tc.request)
			}
			if !tc.namespaced && composedObject[corev1.Namespace](t, p, nameManagementNamespace).Labels[labelRoll] != "" {
				t.Error("a roll record with nothing seen waiting")
			}
		})
	}
}

// TestSpreadStaleReads: in the open window with nothing seen waiting
// and its MachineDeployments looking up to date (both may be read from
// Crossplane's cache before this cluster's own last change), a claim
// whose record is Waiting (settled, a slot free) is admitted, and one
// that started rolling 10s ago goes on; one that started 30s ago, its
// roll finished, gives its record up.
func TestSpreadStaleReads(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {ready: true, version: v1.35.6}}`
	for own, want := range map[string]string{
		waitingRecord("tenant-demo", "demo", insideWindow.Add(-time.Minute)):                                   rollRolling,
		record("tenant-demo", "demo", "", rollRolling, insideWindow.Add(-10*time.Second).Format(time.RFC3339)): rollRolling,
		record("tenant-demo", "demo", "", rollRolling, insideWindow.Add(-30*time.Second).Format(time.RFC3339)): "",
	} {
		obs := map[string]string{"kamajicontrolplane": kcp, nameManagementNamespace: own}
		p := planMaintenanceAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: requiredRecords(nil)}, ``, insideWindow)
		if got := composedObject[corev1.Namespace](t, p, nameManagementNamespace).Labels[labelRoll]; got != want {
			t.Errorf("own %s: record %q, want %q", own, got, want)
		}
		if a := p.Context[maintenance.ContextKey].(maintenance.Admission); a.Platform != (want == rollRolling) {
			t.Errorf("own %s: context %+v", own, a)
		}
	}
}

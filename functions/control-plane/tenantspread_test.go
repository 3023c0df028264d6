package main

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// binding is the CSI controller's ClusterRoleBinding of TenantCluster
// ns/n carrying its roll record, named at (its own name unless forged).
func binding(ns, n, at, state, since string) string {
	if at == "" {
		at = "tenantkube:kcsi-controller:" + function.Identity{Namespace: ns, Name: n}.ClusterScopedName()
	}
	y := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: \"" + at + "\", labels: {app.kubernetes.io/component: kcsi-controller, tenantkube.io/namespace: " + ns + ", tenantkube.io/cluster: " + n + ", tenantkube.io/roll: " + state + "}"
	if since != "" {
		y += ", annotations: {tenantkube.io/roll-since: \"" + since + "\"}"
	}
	return y + "}"
}

// requesting is the KamajiControlPlane n of controlPlane labelled with
// the roll request.
func requesting(n string) string {
	return "{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: " + n + ", namespace: tenant-demo, creationTimestamp: \"" + kcpCreated +
		"\", labels: {tenantkube.io/roll-request: \"true\"}, ownerReferences: [" + controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.NamespacedKind, n, true) + "]}, spec: {dataStoreName: " + tenantDS + "}}"
}

// TestDecideTenantRoll: the Tenant's decision for one TenantCluster.
func TestDecideTenantRoll(t *testing.T) {
	now := insideWindow
	started := now.Add(-time.Hour)
	yes := func() (bool, string) { return true, "" }
	no := func() (bool, string) { return false, tkv1alpha1.ReasonRollsStopped }
	cases := map[string]struct {
		own           rollRecord
		request, now_ bool
		admit         func() (bool, string)
		state, reason string
		since         time.Time
	}{
		"NoRequestNoRecord":      {own: rollRecord{State: rollRolling, Since: started}, admit: yes},
		"OwnRollGoesOn":          {own: rollRecord{State: rollRolling, Since: started}, request: true, admit: no, state: rollRolling, since: started},
		"RollNowSkipsAdmit":      {request: true, now_: true, admit: no, state: rollRolling, since: now},
		"Admitted":               {own: rollRecord{State: rollWaiting}, request: true, admit: yes, state: rollRolling, since: now},
		"RefusedWaitsWithReason": {request: true, admit: no, state: rollWaiting, reason: tkv1alpha1.ReasonRollsStopped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec, reason := decideTenantRoll(tc.own, tc.request, tc.now_, tc.admit, now)
			if rec.State != tc.state || !rec.Since.Equal(tc.since) || reason != tc.reason {
				t.Errorf("got %+v %q, want %s since %s %q", rec, reason, tc.state, tc.since, tc.reason)
			}
		})
	}
}

// TestTenantRolls: the Tenant tenant-demo serves a, b, c, d, e; a, b and
// c ask for a slot, d does not, e asks while being deleted. With
// maxConcurrentRolls 3 and one claim rolling elsewhere (x/x-0), two slots
// are free: a and b (first by name) start at now, c waits. A record d
// held before goes; e gets none.
func TestTenantRolls(t *testing.T) {
	now := insideWindow
	kcps := []string{requesting("a"), requesting("b"), requesting("c"), controlPlane("tenant-demo", "d", tenantDS),
		strings.Replace(requesting("e"), "metadata: {", "metadata: {deletionTimestamp: \"2026-12-07T01:00:00Z\", ", 1)}
	recs := requiredRecords([]string{record("x", "x-0", "", rollRolling, now.Add(-time.Minute).Format(time.RFC3339))})
	recs[requiredTenantControlPlanes] = kcps
	req := tenantCall{name: "tenant-demo", observed: map[string]string{nameTenantCSIBindingPrefix + "d": binding("tenant-demo", "d", "", rollWaiting, "")}, required: recs}.request(t)
	in := &cpinput.ControlPlaneInput{}
	in.Default()
	p, errs := planTenant("tenant-demo", &tkv1alpha1.TenantSpec{}, in, function.NewRequest(req), now)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]string{"a": rollRolling, "b": rollRolling, "c": rollWaiting, "d": "", "e": ""}
	for n, state := range want {
		b := composedObject[rbacv1.ClusterRoleBinding](t, p, nameTenantCSIBindingPrefix+n)
		if b.Labels[labelRoll] != state {
			t.Errorf("%s: record %q, want %q", n, b.Labels[labelRoll], state)
		}
		if state == rollRolling && b.Annotations[annotationRollSince] != "2026-12-07T02:00:00Z" {
			t.Errorf("%s: since %v", n, b.Annotations)
		}
		if state == rollWaiting && b.Annotations[annotationRollReason] != tkv1alpha1.ReasonWaitingForRollSlot {
			t.Errorf("%s: reason %v", n, b.Annotations)
		}
	}
	if p.RunAgainAfter != time.Minute {
		t.Errorf("run again after %s, want 1m", p.RunAgainAfter)
	}
}

// TestTenantRollsCountThisRun: a (in rollNow) starts at once, before the
// records are read; with x/x-0 and x/x-1 rolling elsewhere the default 3
// slots are then full (2 + a), so b, asking in the same run, waits.
func TestTenantRollsCountThisRun(t *testing.T) {
	now := insideWindow
	since := now.Add(-time.Minute).Format(time.RFC3339)
	recs := requiredRecords([]string{record("x", "x-0", "", rollRolling, since), record("x", "x-1", "", rollRolling, since)})
	recs[requiredTenantControlPlanes] = []string{requesting("a"), requesting("b")}
	req := tenantCall{name: "tenant-demo", required: recs}.request(t)
	in := &cpinput.ControlPlaneInput{}
	if err := yaml.UnmarshalStrict([]byte(`{maintenance: {rollNow: [tenant-demo/a]}}`), in); err != nil {
		t.Fatal(err)
	}
	in.Default()
	p, errs := planTenant("tenant-demo", &tkv1alpha1.TenantSpec{}, in, function.NewRequest(req), now)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for n, state := range map[string]string{"a": rollRolling, "b": rollWaiting} {
		if got := composedObject[rbacv1.ClusterRoleBinding](t, p, nameTenantCSIBindingPrefix+n).Labels[labelRoll]; got != state {
			t.Errorf("%s: record %q, want %q", n, got, state)
		}
	}
}

// TestNamespacedSpread: a TenantCluster (tenant-demo/demo) in its open
// window with a new patch waiting asks for a slot and rolls only while
// its Tenant's record says Rolling.
func TestNamespacedSpread(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.1}, status: {ready: true, version: v1.35.1}}`
	started := insideWindow.Add(-30 * time.Minute).Format(time.RFC3339)
	cases := map[string]struct {
		grant   []string
		kcp     string // observed, when not the default
		input   string
		now     time.Time
		version string
		reason  string
		request bool
	}{
		"Granted":               {grant: []string{binding("tenant-demo", "demo", "", rollRolling, started)}, now: insideWindow, version: "v1.35.6", request: true},
		"NoRecordYet":           {now: insideWindow, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, request: true},
		"Waiting":               {grant: []string{binding("tenant-demo", "demo", "", rollWaiting, "")}, now: insideWindow, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, request: true},
		"OtherCluster":          {grant: []string{binding("tenant-demo", "other", "tenantkube:kcsi-controller:"+function.Identity{Namespace: "tenant-demo", Name: "demo"}.ClusterScopedName(), rollRolling, started)}, now: insideWindow, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForRollSlot, request: true},
		"StoppedByTheTenant":    {grant: []string{strings.Replace(binding("tenant-demo", "demo", "", rollWaiting, ""), "roll: Waiting}", "roll: Waiting}, annotations: {tenantkube.io/roll-reason: RollsStopped}", 1)}, now: insideWindow, version: "v1.35.1", reason: tkv1alpha1.ReasonRollsStopped, request: true},
		"HoldsUntilFinished":    {grant: []string{binding("tenant-demo", "demo", "", rollRolling, started)}, kcp: "v1.35.6", now: insideWindow, version: "v1.35.6", request: true},
		"RollNowSkipsTheSpread": {input: `{maintenance: {rollNow: [tenant-demo/demo]}}`, now: insideWindow, version: "v1.35.6", request: true},
		"ClosedWindow":          {now: outsideWindow, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForWindow},
		"GoesOnAfterWindow":     {grant: []string{binding("tenant-demo", "demo", "", rollRolling, started)}, now: outsideWindow, version: "v1.35.6", request: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[string]string{"kamajicontrolplane": kcp}
			if tc.grant != nil {
				spec := "v1.35.1"
				if tc.kcp != "" {
					spec = tc.kcp // asked for; the control plane still runs v1.35.1
				}
				obs["kamajicontrolplane"] = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {labels: {tenantkube.io/roll-request: "true"}}, spec: {version: ` + spec + `}, status: {ready: true, version: v1.35.1}}`
			}
			call := fntest.Call{Namespaced: true, Spec: `{}`, Observed: obs, Required: map[string][]string{requiredRollGrant: tc.grant,
				requiredTenantDataStore: {`{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, metadata: {name: ` + tenantDS + `}, status: {ready: true}}`}}}
			p := planMaintenanceAt(t, call, tc.input, tc.now)
			got := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
			if got.Spec.Version != tc.version {
				t.Errorf("KamajiControlPlane at %s, want %s", got.Spec.Version, tc.version)
			}
			if (got.Labels[labelRollRequest] == "true") != tc.request {
				t.Errorf("request label %v, want %t", got.Labels, tc.request)
			}
			cond := conditionOf(p, tkv1alpha1.ConditionMaintenancePending)
			if (cond == nil) != (tc.reason == "") || cond != nil && cond.Reason != tc.reason {
				t.Errorf("MaintenancePending %+v, want reason %q", cond, tc.reason)
			}
			if a := p.Context[maintenance.ContextKey].(maintenance.Admission); a.Platform != (tc.version == "v1.35.6") {
				t.Errorf("context %+v", a)
			}
			if _, asked := p.Requirements[requiredRollGrant]; asked != (tc.now == insideWindow || tc.grant != nil) {
				t.Errorf("grant asked for: %t", asked)
			}
		})
	}
}

// TestRollRecordsNeedBothKinds: the records have arrived only when both
// kinds have, for both states.
func TestRollRecordsNeedBothKinds(t *testing.T) {
	all := requiredRecords(nil)
	for key := range all {
		some := requiredRecords(nil)
		delete(some, key)
		r, _ := fntest.Call{Spec: `{}`, Required: some}.Read(t)
		if _, arrived := readRollRecords(r); arrived {
			t.Errorf("without %s: arrived", key)
		}
	}
	r, _ := fntest.Call{Spec: `{}`, Required: all}.Read(t)
	if _, arrived := readRollRecords(r); !arrived {
		t.Error("with every key: not arrived")
	}
}

package main

import (
	"fmt"
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

// waitingBinding is TenantCluster ns/n's Waiting record written at since.
func waitingBinding(ns, n string, since time.Time) string {
	return waitingSince(binding(ns, n, "", rollWaiting, ""), since)
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
	started, settled := now.Add(-time.Hour), now.Add(-time.Minute)
	yes := func() (bool, string) { return true, "" }
	no := func() (bool, string) { return false, tkv1alpha1.ReasonRollsStopped }
	cases := map[string]struct {
		own                 rollRecord
		request, now_, held bool
		admit               func() (bool, string)
		state, reason       string
		since               time.Time
	}{
		"NoRequestNoRecord":      {own: rollRecord{State: rollRolling, Since: started}, admit: yes},
		"OwnRollGoesOn":          {own: rollRecord{State: rollRolling, Since: started}, request: true, held: true, admit: no, state: rollRolling, since: started},
		"RollingWithoutSince":    {own: rollRecord{State: rollRolling}, request: true, admit: no, state: rollWaiting, reason: tkv1alpha1.ReasonRollsStopped, since: now},
		"RollNowSkipsAdmit":      {request: true, now_: true, held: true, admit: no, state: rollRolling, since: now},
		"HeldBySibling":          {own: rollRecord{State: rollWaiting, Since: settled}, request: true, held: true, admit: yes},
		"Admitted":               {own: rollRecord{State: rollWaiting, Since: settled}, request: true, admit: yes, state: rollRolling, since: now},
		"FreshRecordSettles":     {own: rollRecord{State: rollWaiting, Since: now.Add(-10 * time.Second)}, request: true, admit: yes, state: rollWaiting, reason: tkv1alpha1.ReasonWaitingForRollSlot, since: now.Add(-10 * time.Second)},
		"NewRecordSettles":       {request: true, admit: yes, state: rollWaiting, reason: tkv1alpha1.ReasonWaitingForRollSlot, since: now},
		"RefusedWaitsWithReason": {own: rollRecord{State: rollWaiting, Since: settled}, request: true, admit: no, state: rollWaiting, reason: tkv1alpha1.ReasonRollsStopped, since: settled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec, reason := decideTenantRoll(tc.own, tc.request, tc.now_, tc.held, tc.admit, now)
			if rec.State != tc.state || !rec.Since.Equal(tc.since) || reason != tc.reason {
				t.Errorf("got %+v %q, want %s since %s %q", rec, reason, tc.state, tc.since, tc.reason)
			}
		})
	}
}

// tenantRollsOf plans the Tenant tenant-demo serving kcps, with the
// observed bindings and the records recs (both kinds), under settings
// input, at insideWindow; the record label of each cluster's binding.
func tenantRollsOf(t *testing.T, kcps []string, observed map[string]string, recs []string, input string) (map[string]*rbacv1.ClusterRoleBinding, *function.Plan) {
	t.Helper()
	required := requiredRecords(recs)
	required[requiredTenantControlPlanes] = kcps
	req := tenantCall{name: "tenant-demo", observed: observed, required: required}.request(t)
	in := &cpinput.ControlPlaneInput{}
	if err := yaml.UnmarshalStrict([]byte(input), in); err != nil {
		t.Fatal(err)
	}
	in.Default()
	p, errs := planTenant("tenant-demo", &tkv1alpha1.TenantSpec{}, in, function.NewRequest(req), insideWindow)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := map[string]*rbacv1.ClusterRoleBinding{}
	for _, c := range p.Composed {
		if b, ok := c.Object.(*rbacv1.ClusterRoleBinding); ok && strings.HasPrefix(c.Name, nameTenantCSIBindingPrefix) {
			out[strings.TrimPrefix(c.Name, nameTenantCSIBindingPrefix)] = b
		}
	}
	return out, p
}

// checkRecords compares each cluster's record label with want.
func checkRecords(t *testing.T, got map[string]*rbacv1.ClusterRoleBinding, want map[string]string) {
	t.Helper()
	for n, state := range want {
		b := got[n]
		if b == nil {
			t.Errorf("%s: no binding", n)
			continue
		}
		if b.Labels[labelRoll] != state {
			t.Errorf("%s: record %q, want %q", n, b.Labels[labelRoll], state)
		}
	}
}

// TestTenantRolls: the Tenant tenant-demo serves a, b, c, d, e; b, c and
// d ask for a slot, a does not (its Waiting record of an earlier run is
// still read back), e asks while being deleted. With maxConcurrentRolls
// 3 and x/x-0, x/x-1 rolling elsewhere, one slot is free: b, waiting
// for a minute (settled), takes it
// (a's old record is not counted against it), since 02:00 UTC; c and d
// wait without a record, behind b; a and e hold none. The Tenant runs
// again within a minute.
func TestTenantRolls(t *testing.T) {
	since := insideWindow.Add(-time.Minute).Format(time.RFC3339)
	kcps := []string{controlPlane("tenant-demo", "a", tenantDS), requesting("b"), requesting("c"), requesting("d"),
		strings.Replace(requesting("e"), "metadata: {", "metadata: {deletionTimestamp: \"2026-12-07T01:00:00Z\", ", 1)}
	old := binding("tenant-demo", "a", "", rollWaiting, "")
	got, p := tenantRollsOf(t, kcps, map[string]string{nameTenantCSIBindingPrefix + "a": old,
		nameTenantCSIBindingPrefix + "b": waitingBinding("tenant-demo", "b", insideWindow.Add(-time.Minute))},
		[]string{record("x", "x-0", "", rollRolling, since), record("x", "x-1", "", rollRolling, since), old}, `{}`)
	checkRecords(t, got, map[string]string{"a": "", "b": rollRolling, "c": "", "d": "", "e": ""})
	if a := got["b"].Annotations; a[annotationRollSince] != "2026-12-07T02:00:00Z" {
		t.Errorf("b: annotations %v, want roll-since 2026-12-07T02:00:00Z", a)
	}
	if p.RunAgainAfter != time.Minute {
		t.Errorf("run again after %s, want 1m", p.RunAgainAfter)
	}
}

// TestTenantRollsCountClaims: the claims of the Tenant's namespace count
// like any other: with x/x-0, x/x-1 and the claim tenant-demo/z rolling,
// the 3 slots are full and a waits (WaitingForRollSlot on its binding).
func TestTenantRollsCountClaims(t *testing.T) {
	since := insideWindow.Add(-time.Minute).Format(time.RFC3339)
	got, _ := tenantRollsOf(t, []string{requesting("a")}, map[string]string{nameTenantCSIBindingPrefix + "a": waitingBinding("tenant-demo", "a", insideWindow.Add(-time.Minute))}, []string{record("x", "x-0", "", rollRolling, since),
		record("x", "x-1", "", rollRolling, since), record("tenant-demo", "z", "", rollRolling, since)}, `{}`)
	checkRecords(t, got, map[string]string{"a": rollWaiting})
	if r := got["a"].Annotations[annotationRollReason]; r != tkv1alpha1.ReasonWaitingForRollSlot {
		t.Errorf("a: reason %q", r)
	}
}

// TestTenantRollsSettle: a first request with a slot free gets a Waiting
// record since the render instant, and the Tenant runs again when it
// settles (30s); the Tenant keeps the instant of one that waited 20s and
// runs again 10s later.
func TestTenantRollsSettle(t *testing.T) {
	got, p := tenantRollsOf(t, []string{requesting("a")}, nil, nil, `{}`)
	checkRecords(t, got, map[string]string{"a": rollWaiting})
	if w := got["a"].Annotations[annotationWaitingSince]; w != "2026-12-07T02:00:00Z" || p.RunAgainAfter != 30*time.Second {
		t.Errorf("waiting-since %q, run again after %s; want 2026-12-07T02:00:00Z, 30s", w, p.RunAgainAfter)
	}
	got, p = tenantRollsOf(t, []string{requesting("a")}, map[string]string{nameTenantCSIBindingPrefix + "a": waitingBinding("tenant-demo", "a", insideWindow.Add(-20*time.Second))}, nil, `{}`)
	if w := got["a"].Annotations[annotationWaitingSince]; w != "2026-12-07T01:59:40Z" || p.RunAgainAfter != 10*time.Second {
		t.Errorf("waiting-since %q, run again after %s; want 2026-12-07T01:59:40Z, 10s", w, p.RunAgainAfter)
	}
}

// TestTenantRollsOnePlace: the namespace's clusters hold one place. a,
// in rollNow, starts at once and b waits without a record; with d
// observed rolling (since 01:00 UTC) and still asking, c (first by name)
// waits without a record and d's roll goes on from its own start; f,
// waiting a minute, keeps the place (and takes the free slot) before e,
// first by name, asking anew.
func TestTenantRollsOnePlace(t *testing.T) {
	got, _ := tenantRollsOf(t, []string{requesting("a"), requesting("b")}, nil, nil, `{maintenance: {rollNow: [tenant-demo/a]}}`)
	checkRecords(t, got, map[string]string{"a": rollRolling, "b": ""})
	d := binding("tenant-demo", "d", "", rollRolling, "2026-12-07T01:00:00Z")
	got, _ = tenantRollsOf(t, []string{requesting("c"), requesting("d")}, map[string]string{nameTenantCSIBindingPrefix + "d": d}, []string{d}, `{}`)
	checkRecords(t, got, map[string]string{"c": "", "d": rollRolling})
	if s := got["d"].Annotations[annotationRollSince]; s != "2026-12-07T01:00:00Z" {
		t.Errorf("d: since %q", s)
	}
	// f waits (settled) and keeps the place e, first by name, asks for.
	f := waitingBinding("tenant-demo", "f", insideWindow.Add(-time.Minute))
	got, _ = tenantRollsOf(t, []string{requesting("e"), requesting("f")}, map[string]string{nameTenantCSIBindingPrefix + "f": f}, []string{f}, `{}`)
	checkRecords(t, got, map[string]string{"e": "", "f": rollRolling})
}

// TestLabelRollRecord: the record joins the binding's labels and
// annotations, keeping theirs; no record leaves the binding as composed.
func TestLabelRollRecord(t *testing.T) {
	compose := func() (*function.Plan, *rbacv1.ClusterRoleBinding) {
		b := &rbacv1.ClusterRoleBinding{}
		b.Labels, b.Annotations = map[string]string{"k": "v"}, map[string]string{"a": "b"}
		return &function.Plan{Composed: []function.Composed{{Name: "crb", Object: b}}}, b
	}
	p, b := compose()
	labelRollRecord(p, "crb", rollRecord{State: rollWaiting, Since: insideWindow}, tkv1alpha1.ReasonWaitingForRollSlot)
	if fmt.Sprint(b.Labels, b.Annotations) != "map[k:v tenantkube.io/roll:Waiting] map[a:b tenantkube.io/roll-reason:WaitingForRollSlot tenantkube.io/waiting-since:2026-12-07T02:00:00Z]" {
		t.Errorf("Waiting: %v %v", b.Labels, b.Annotations)
	}
	p, b = compose()
	labelRollRecord(p, "crb", rollRecord{}, "")
	if fmt.Sprint(b.Labels, b.Annotations) != "map[k:v] map[a:b]" {
		t.Errorf("none: %v %v", b.Labels, b.Annotations)
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

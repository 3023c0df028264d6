package main

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// exampleCall is examples/xr.yaml's spec with hibernation.enabled and
// the observed control plane of examples/observed (v1.35.1, ready), its
// KamajiControlPlane's spec.version set to desired.
func exampleCall(t *testing.T, desired string) fntest.Call {
	t.Helper()
	var xr struct {
		Spec map[string]any `json:"spec"`
	}
	b, err := os.ReadFile("../../examples/xr.yaml")
	if err != nil || yaml.Unmarshal(b, &xr) != nil {
		t.Fatalf("examples/xr.yaml: %v", err)
	}
	xr.Spec["hibernation"] = map[string]any{"enabled": true}
	spec, _ := yaml.Marshal(xr.Spec)
	obs, err := os.ReadFile("../../examples/observed/control-plane.yaml")
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]string{}
	for _, doc := range bytes.Split(obs, []byte("\n---\n")) {
		var o struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		observed[o.Metadata.Annotations["crossplane.io/composition-resource-name"]] = string(doc)
	}
	observed["kamajicontrolplane"] = string(bytes.Replace([]byte(observed["kamajicontrolplane"]), []byte("spec:\n  version: v1.35.1"), []byte("spec:\n  version: "+desired), 1))
	return fntest.Call{Spec: string(spec), Observed: observed, Required: map[string][]string{requiredMachines: {}}}
}

// TestSpreadAsleep: examples/xr.yaml hibernated (hibernation.enabled, no
// Machine left), the table at v1.35.6, the control plane running
// v1.35.1, inside the default window (02:00 UTC): the new patch waits
// for the wake and no record is composed; a roll started before the
// sleep is Paused, not Rolling, whatever its age; once Awake it rolls on
// with its clock started at the wake.
func TestSpreadAsleep(t *testing.T) {
	failed := insideWindow.Add(-3 * time.Hour).Format(time.RFC3339)
	for name, c := range map[string]struct {
		desired, own string // the KamajiControlPlane's spec.version; own record
		awake        bool
		version      string
		state, since string
		reason       string
	}{
		"PatchWaitsForWake":    {desired: "v1.35.1", version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForWake},
		"WaitingRecordDropped": {desired: "v1.35.1", own: rollWaiting, version: "v1.35.1", reason: tkv1alpha1.ReasonWaitingForWake},
		"RollAsleepPaused":     {desired: "v1.35.6", own: rollRolling, version: "v1.35.6", state: rollPaused},
		"PausedStaysPaused":    {desired: "v1.35.6", own: rollPaused, version: "v1.35.6", state: rollPaused},
		"PausedRollsOnAwake":   {desired: "v1.35.6", own: rollPaused, awake: true, version: "v1.35.6", state: rollRolling, since: "2026-12-07T02:00:00Z"},
	} {
		t.Run(name, func(t *testing.T) {
			call := exampleCall(t, c.desired)
			if c.awake {
				call = fntest.Call{Spec: `{}`, Observed: map[string]string{"kamajicontrolplane": call.Observed["kamajicontrolplane"]}, Required: map[string][]string{}}
			}
			if c.own != "" {
				call.Observed[nameManagementNamespace] = record("tenant-demo", "demo", "", c.own, failed)
			}
			maps.Copy(call.Required, requiredRecords(nil))
			p := planMaintenanceAt(t, call, ``, insideWindow)
			kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane")
			if kcp.Spec.Version != c.version {
				t.Errorf("KamajiControlPlane at %s, want %s", kcp.Spec.Version, c.version)
			}
			if !c.awake && (kcp.Spec.Replicas == nil || *kcp.Spec.Replicas != 0) {
				t.Errorf("replicas %v, want 0 (Hibernated)", kcp.Spec.Replicas)
			}
			ns := composedObject[corev1.Namespace](t, p, nameManagementNamespace)
			if ns.Labels[labelRoll] != c.state || ns.Annotations[annotationRollSince] != c.since {
				t.Errorf("record %q since %q, want %q since %q", ns.Labels[labelRoll], ns.Annotations[annotationRollSince], c.state, c.since)
			}
			cond := conditionOf(p, tkv1alpha1.ConditionMaintenancePending)
			if (cond == nil || !cond.True) != (c.reason == "") || cond != nil && c.reason != "" && cond.Reason != c.reason {
				t.Errorf("MaintenancePending %+v, want reason %q", cond, c.reason)
			}
			if a := p.Context[maintenance.ContextKey].(maintenance.Admission); a.Reason != c.reason {
				t.Errorf("context %+v, want reason %q", a, c.reason)
			}
			if _, asked := p.Requirements[requiredRollPrefix+rollRolling]; asked {
				t.Errorf("asks for the roll records")
			}
		})
	}
}

// sleeper is a claim's cluster in state (Hibernating, Hibernated or
// Waking, as TestHibernation builds them) with own roll record and its
// KamajiControlPlane asked for desired, running v1.35.1.
func sleeper(state tkv1alpha1.HibernationState, own, since, desired string) fntest.Call {
	md := function.MachineDeploymentResourceName("md0")
	kcp := `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: ` + desired + `}, status: {ready: true, version: v1.35.1}}`
	c := fntest.Call{Spec: `{hibernation: {enabled: true}, nodeGroups: {md0: {minReplicas: 2, maxReplicas: 3}}}`,
		Observed: map[string]string{"kamajicontrolplane": kcp, md: mdWith(1)},
		Required: map[string][]string{requiredMachines: {machine}}}
	switch state {
	case tkv1alpha1.HibernationHibernated:
		c.Observed[md], c.Required[requiredMachines] = mdWith(0), []string{}
	case tkv1alpha1.HibernationWaking:
		c.Spec, c.XRStatus = `{nodeGroups: {md0: {minReplicas: 2, maxReplicas: 3}}}`, `{hibernation: {state: Hibernated}}`
	}
	if own != "" {
		c.Observed[nameManagementNamespace] = record("tenant-demo", "demo", "", own, since)
	}
	maps.Copy(c.Required, requiredRecords(nil))
	return c
}

// TestSpreadSleepersNeverStopOthers: for generated clusters not Awake
// (any of the three states, any own record of any age, the roll started
// or not, rollNow or not, any instant of the window), the records they
// compose start no roll, and another cluster with the platform's changes
// waiting, beside at most two healthy rolls (limit 3), is admitted:
// never RollsStopped, never WaitingForRollSlot.
func TestSpreadSleepersNeverStopOthers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	states := []tkv1alpha1.HibernationState{tkv1alpha1.HibernationHibernating, tkv1alpha1.HibernationHibernated, tkv1alpha1.HibernationWaking}
	owns := []string{"", rollWaiting, rollRolling, rollPaused}
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.1}, status: {ready: true, version: v1.35.1}}`
	for i := range 60 {
		now := insideWindow.Add(-time.Hour + time.Duration(rng.IntN(4*60))*time.Minute) // 01:00 to 04:59
		var records []string
		for j := range 1 + rng.IntN(3) {
			state, own := states[rng.IntN(3)], owns[rng.IntN(4)]
			since := now.Add(-time.Duration(rng.IntN(12*60)) * time.Minute).Format(time.RFC3339)
			desired := []string{"v1.35.1", "v1.35.6"}[rng.IntN(2)]
			input := []string{``, `{maintenance: {rollNow: ["*"]}}`}[rng.IntN(2)]
			p := planMaintenanceAt(t, sleeper(state, own, since, desired), input, now)
			if st, _ := p.Status["hibernation"].(tkv1alpha1.HibernationStatus); st.State != state {
				t.Fatalf("case %d: built %s, got %+v", i, state, p.Status["hibernation"])
			}
			if v := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane").Spec.Version; v != desired {
				t.Errorf("case %d: %s cluster (%q, rollNow %q) composed %s from %s", i, state, own, input, v, desired)
			}
			ns := composedObject[corev1.Namespace](t, p, nameManagementNamespace)
			got := ns.Labels[labelRoll]
			if got == rollRolling || got == rollWaiting {
				t.Errorf("case %d: %s cluster with record %q composes %q", i, state, own, got)
			}
			if got != "" {
				records = append(records, record("s", "s-"+strconv.Itoa(j), "", got, ns.Annotations[annotationRollSince]))
			}
		}
		for j := range rng.IntN(3) {
			records = append(records, record("a", "a-"+strconv.Itoa(j), "", rollRolling, now.Add(-time.Minute).Format(time.RFC3339)))
		}
		awake := map[string]string{"kamajicontrolplane": kcp, nameManagementNamespace: waitingRecord("tenant-demo", "demo", now.Add(-time.Minute))}
		p := planMaintenanceAt(t, fntest.Call{Spec: `{}`, Observed: awake, Required: requiredRecords(records)}, ``, now)
		if cond := conditionOf(p, tkv1alpha1.ConditionMaintenancePending); cond != nil {
			t.Errorf("case %d: the awake cluster %s/%s beside %v", i, cond.Reason, cond.Message, records)
		}
		if v := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane").Spec.Version; v != "v1.35.6" {
			t.Errorf("case %d: the awake cluster composes %s, want v1.35.6", i, v)
		}
	}
}

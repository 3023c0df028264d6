package hibernation

import (
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

func TestDecide(t *testing.T) {
	// 22:00 to 06:00 UTC; the clock at 23:00 is asleep, at 12:00 awake.
	nightly := v1alpha1.Hibernation{Schedules: []v1alpha1.HibernationSchedule{{Start: "0 22 * * *", End: "0 6 * * *"}}}
	night := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)
	noon := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	const (
		awake = v1alpha1.HibernationAwake
		going = v1alpha1.HibernationHibernating
		gone  = v1alpha1.HibernationHibernated
		back  = v1alpha1.HibernationWaking
	)
	for _, c := range []struct {
		name string
		h    v1alpha1.Hibernation
		now  time.Time
		f    Facts
		want v1alpha1.HibernationState
		next string
	}{
		{"awake by schedule", nightly, noon, Facts{Prior: awake, ControlPlaneReady: true, WorkersAtMinimum: true}, awake, "2026-03-11T22:00:00Z"},
		{"fresh cluster, not ready yet", nightly, noon, Facts{}, awake, "2026-03-11T22:00:00Z"},
		{"asleep, machines not observed", nightly, night, Facts{Prior: awake, ControlPlaneReady: true}, going, "2026-03-11T06:00:00Z"},
		{"asleep, machines left", nightly, night, Facts{Prior: going, Machines: 2, MachinesKnown: true}, going, "2026-03-11T06:00:00Z"},
		{"asleep, no machine left", nightly, night, Facts{Prior: going, MachinesKnown: true}, gone, "2026-03-11T06:00:00Z"},
		{"enabled: no transition", v1alpha1.Hibernation{Enabled: true}, noon, Facts{MachinesKnown: true}, gone, ""},
		{"woken, control plane not ready", v1alpha1.Hibernation{}, noon, Facts{Prior: gone, WorkersAtMinimum: true}, back, ""},
		{"woken, workers below minimum", v1alpha1.Hibernation{}, noon, Facts{Prior: back, ControlPlaneReady: true}, back, ""},
		{"woken from hibernating", v1alpha1.Hibernation{}, noon, Facts{Prior: going, ControlPlaneReady: true}, back, ""},
		{"woken: all back", v1alpha1.Hibernation{}, noon, Facts{Prior: back, ControlPlaneReady: true, WorkersAtMinimum: true}, awake, ""},
		{"awake stays awake when not ready", v1alpha1.Hibernation{}, noon, Facts{Prior: awake}, awake, ""},
	} {
		d, err := Decide(c.h, c.now, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.State != c.want || d.Status().NextTransition != c.next {
			t.Errorf("%s: %s next %q, want %s next %q", c.name, d.State, d.Status().NextTransition, c.want, c.next)
		}
	}
}

func TestDecisionRoles(t *testing.T) {
	for _, c := range []struct {
		state                              v1alpha1.HibernationState
		ready                              bool
		workersDown, cpDown, addonsStopped bool
	}{
		{v1alpha1.HibernationAwake, true, false, false, false},
		{v1alpha1.HibernationAwake, false, false, false, false},
		{v1alpha1.HibernationHibernating, true, true, false, true},
		{v1alpha1.HibernationHibernated, false, true, true, true},
		{v1alpha1.HibernationWaking, false, true, false, true},
		{v1alpha1.HibernationWaking, true, false, false, true},
	} {
		d := Decision{State: c.state}
		if d.WorkersDown(c.ready) != c.workersDown || d.ControlPlaneDown() != c.cpDown || d.AddonsSuspended() != c.addonsStopped {
			t.Errorf("%s (control plane ready %t): workers down %t, control plane down %t, add-ons suspended %t; want %t %t %t",
				c.state, c.ready, d.WorkersDown(c.ready), d.ControlPlaneDown(), d.AddonsSuspended(), c.workersDown, c.cpDown, c.addonsStopped)
		}
	}
	for _, s := range []string{"", "Asleep", "hibernated"} {
		if got := ParseState(s); got != "" {
			t.Errorf("ParseState(%q) = %q, want \"\"", s, got)
		}
	}
	if got := ParseState("Waking"); got != v1alpha1.HibernationWaking {
		t.Errorf("ParseState(Waking) = %q", got)
	}
}

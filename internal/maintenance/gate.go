package maintenance

import (
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Policy is one cluster's maintenance policy at a point in time.
type Policy struct {
	Window Window
	// ConfinePlatform: the platform's maintenance.confinePlatformChanges.
	ConfinePlatform bool
	// ConfineOwn: the tenant's spec.maintenance.confineOwnChanges.
	ConfineOwn bool
	// RollNow: the platform's maintenance.rollNow names the cluster or
	// every cluster.
	RollNow bool
}

// Decision says which changes may roll the cluster now.
type Decision struct {
	// Platform: the platform's changes apply now.
	Platform bool
	// Own: the tenant's own changes apply now.
	Own bool
	// NextStart is the start of the window open now or of the next one.
	NextStart time.Time
	// Reason is why the platform's changes wait (a reason of
	// MaintenancePending), "" when they do not.
	Reason string
}

// Decide is p's decision at now: rollNow lets everything roll; otherwise
// the platform's changes roll at once when the platform does not confine
// them, else while the window is open; the tenant's own changes roll at
// once unless it confines them, then while the window is open.
func Decide(p Policy, now time.Time) Decision {
	d := Decision{NextStart: p.Window.NextStart(now)}
	open := p.Window.Open(now)
	d.Platform = p.RollNow || !p.ConfinePlatform || open
	d.Own = p.RollNow || !p.ConfineOwn || open
	if !d.Platform {
		d.Reason = v1alpha1.ReasonWaitingForWindow
	}
	return d
}

// Allows reports whether a change may apply now: a tenant's own change
// (own) under d.Own, the platform's under d.Platform.
func (d Decision) Allows(own bool) bool {
	if own {
		return d.Own
	}
	return d.Platform
}

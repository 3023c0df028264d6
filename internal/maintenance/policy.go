package maintenance

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	settingsv1alpha1 "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// For is cluster id's policy: its spec.maintenance window (else the
// platform's default window), the platform's confinement and rollNow,
// and the tenant's confineOwnChanges. It returns the window's problems
// (spec.maintenance.window, or the settings' defaultWindow).
func For(m *settingsv1alpha1.Maintenance, spec v1alpha1.Maintenance, id function.Identity) (Policy, field.ErrorList) {
	path := field.NewPath("spec", "maintenance", "window")
	if spec.Window == nil {
		path = field.NewPath("input", "maintenance", "defaultWindow")
	}
	w, errs := Parse(m.Window(spec.Window), path)
	if len(errs) > 0 {
		return Policy{}, errs
	}
	return Policy{
		Window:          w,
		ConfinePlatform: m.ConfinePlatformChanges == nil || *m.ConfinePlatformChanges,
		ConfineOwn:      spec.ConfineOwnChanges,
		RollNow:         m.RollsNow(id.Namespace, id.Name),
	}, nil
}

// statusKey is the XR's status key of the pending changes.
const statusKey = "maintenance"

// maxListed bounds the changes MaintenancePending's message names.
const maxListed = 5

// Report adds to p what waits for the window: this step's pending
// changes after those earlier steps of the pipeline set in
// status.maintenance, and MaintenancePending True. With nothing pending
// it sets MaintenancePending False only on an XR that carries the
// condition, so that a cluster that never waited shows none. A step that
// holds a change for a slot runs again within RollRecheck.
func Report(p *function.Plan, r *function.Request, d Decision, pending []v1alpha1.PendingChange) error {
	var all v1alpha1.MaintenanceStatus
	if _, err := r.DesiredStatus(statusKey, &all); err != nil {
		return fmt.Errorf("cannot read status.%s of an earlier step: %w", statusKey, err)
	}
	all.Pending = append(all.Pending, pending...)
	if len(all.Pending) == 0 {
		if status, _, _ := r.CompositeCondition(v1alpha1.ConditionMaintenancePending); status != "" {
			p.SetCondition(v1alpha1.ConditionMaintenancePending, false, v1alpha1.ReasonNothingPending, "nothing waits for the maintenance window")
		}
		return nil
	}
	all.NextWindowStart = d.NextStart.UTC().Format(time.RFC3339)
	if p.Status == nil {
		p.Status = map[string]any{}
	}
	p.Status[statusKey] = all
	reason := d.Reason
	if reason == "" {
		reason = v1alpha1.ReasonWaitingForWindow
	}
	if len(pending) > 0 && reason == v1alpha1.ReasonWaitingForRollSlot {
		// The status change runs the pipeline again, unless Crossplane's
		// circuit breaker drops the event: run again anyway.
		p.RunAgainWithin(RollRecheck)
	}
	p.SetCondition(v1alpha1.ConditionMaintenancePending, true, reason, message(all, reason))
	return nil
}

// message names the first maxListed changes of s and what they wait for
// (reason).
func message(s v1alpha1.MaintenanceStatus, reason string) string {
	var parts []string
	for i, c := range s.Pending {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(s.Pending)-maxListed))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s (%s)", c.What, c.From, c.To, c.Reason))
	}
	what := "the maintenance window opening at " + s.NextWindowStart
	switch reason {
	case v1alpha1.ReasonWaitingForRollSlot:
		what = "a roll slot: the platform's maintenance.maxConcurrentRolls clusters roll now"
	case v1alpha1.ReasonWaitingForWake:
		what = "the cluster to wake (status.hibernation): a cluster not Awake starts no roll"
	case v1alpha1.ReasonRollsStopped:
		what = "the platform: a cluster's roll failed (not finished within maintenance.rollDeadline), which stops every roll"
	}
	return fmt.Sprintf("%d change(s) wait for %s: %s", len(s.Pending), what, strings.Join(parts, "; "))
}

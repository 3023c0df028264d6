package maintenance

import (
	"time"

	"github.com/tenantkube/tenantkube/internal/function"
)

// ContextKey is the pipeline context key of the control-plane step's
// decision (Admission), which the workers and addons steps follow.
const ContextKey = "tenantkube.io/maintenance"

// Admission is the decision the control-plane step passes on: whether the
// platform's changes roll now (window, rollNow and the spread together)
// and, when they do not, why.
type Admission struct {
	Platform bool   `json:"platform"`
	Reason   string `json:"reason,omitempty"`
}

// Follow is d with the platform's part decided by a, the control-plane
// step's decision at the same time, which adds the spread and a roll
// that finishes after its window.
func (d Decision) Follow(a Admission) Decision {
	d.Platform, d.Reason = a.Platform, a.Reason
	return d
}

// Current is p's decision at now, with the platform's part as the
// control-plane step decided it (window, rollNow, the spread and a roll
// finishing after its window: the Admission under ContextKey), when it
// did; the later steps (workers, addons) follow it.
func Current(r *function.Request, p Policy, now time.Time) (Decision, error) {
	d := Decide(p, now)
	var a Admission
	ok, err := r.ContextValue(ContextKey, &a)
	if err != nil {
		return Decision{}, err
	}
	if ok {
		d = d.Follow(a)
	}
	return d, nil
}

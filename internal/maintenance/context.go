package maintenance

// ContextKey is the pipeline context key of the control-plane step's
// decision (Admission), which the workers step follows.
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

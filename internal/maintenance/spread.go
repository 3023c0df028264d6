package maintenance

import (
	"slices"
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Roll is one cluster's roll of the platform's changes, as its trusted
// record says (docs/platform-guide.md, Maintenance, Spread).
type Roll struct {
	// Cluster is <namespace>/<name>.
	Cluster string
	// Waiting: the cluster's window is open and the platform's changes
	// wait for a slot.
	Waiting bool
	// Since is when the cluster started rolling; zero when it does not.
	Since time.Time
	// Done: the roll finished (every node group up to date).
	Done bool
}

// Rolling reports whether r is a roll in progress.
func (r Roll) Rolling() bool { return !r.Since.IsZero() && !r.Done }

// Failed reports whether r is a roll in progress for longer than
// deadline at now.
func (r Roll) Failed(now time.Time, deadline time.Duration) bool {
	return r.Rolling() && now.Sub(r.Since) > deadline
}

// RollSettle is how long a cluster's Waiting record must have been
// published before the cluster may start: at least twice the time a
// record takes to reach every reader (Crossplane's apply, then its cache;
// milliseconds to seconds), so that two clusters deciding within that
// time of each other each see the other's Waiting record and rank alike.
// Without it, clusters that find a change at the same instant (a package
// upgrade reaching every cluster in an open window) would each see only
// themselves waiting and all start.
const RollSettle = 30 * time.Second

// RollRecheck is how soon a cluster that waits for a slot, or rolls,
// runs again at the latest (the response TTL, which Crossplane v2.4.0
// honours with realtime compositions: internal/controller/apiextensions/
// composite/reconciler.go:922).
const RollRecheck = time.Minute

// Settled reports whether a cluster waiting since waitingSince (its own
// Waiting record as observed) may be admitted at now.
func Settled(waitingSince, now time.Time) bool {
	return !waitingSince.IsZero() && now.Sub(waitingSince) >= RollSettle
}

// Admit reports whether cluster self may start rolling the platform's
// changes at now, given every cluster's record (self's included or not):
// no roll failed (one in progress longer than deadline); and self is
// among the first max - (rolls in progress of other clusters) of the
// waiting clusters (self counted as waiting), in order of their names.
// Two calls that see the same records never admit more than max
// clusters between them; a cluster already rolling is always admitted.
func Admit(self string, rolls []Roll, max int, now time.Time, deadline time.Duration) (bool, string) {
	waiting := []string{self}
	rolling := 0
	for _, r := range rolls {
		if r.Failed(now, deadline) {
			return false, v1alpha1.ReasonRollsStopped
		}
		if r.Cluster == self {
			if r.Rolling() {
				return true, ""
			}
			continue
		}
		switch {
		case r.Rolling():
			rolling++
		case r.Waiting:
			waiting = append(waiting, r.Cluster)
		}
	}
	slices.Sort(waiting)
	free := max - rolling
	if i := slices.Index(waiting, self); i < free {
		return true, ""
	}
	return false, v1alpha1.ReasonWaitingForRollSlot
}

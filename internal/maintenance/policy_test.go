package maintenance

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// TestReportRunsAgainWhileHeldForSlot: a step that holds a change for a
// slot asks to run again within a minute (the XR's status change may be
// dropped by Crossplane's circuit breaker); a step holding nothing, or
// holding for the window (the control-plane step runs again at its
// opening), does not.
func TestReportRunsAgainWhileHeldForSlot(t *testing.T) {
	change := []v1alpha1.PendingChange{{What: "nodeGroup/md0", From: "demo-md0-1", To: "demo-md0-2", Reason: "the platform changed the group's machine template or version"}}
	for _, c := range []struct {
		reason  string
		pending []v1alpha1.PendingChange
		want    time.Duration
	}{
		{v1alpha1.ReasonWaitingForRollSlot, change, time.Minute},
		{v1alpha1.ReasonWaitingForRollSlot, nil, 0},
		{"", change, 0},
		{v1alpha1.ReasonWaitingForWindow, change, 0},
	} {
		p := &function.Plan{}
		if err := Report(p, function.NewRequest(&fnv1.RunFunctionRequest{}), Decision{Reason: c.reason}, c.pending); err != nil {
			t.Fatal(err)
		}
		if p.RunAgainAfter != c.want {
			t.Errorf("reason %q, %d pending: run again after %s, want %s", c.reason, len(c.pending), p.RunAgainAfter, c.want)
		}
	}
}

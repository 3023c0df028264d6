package function

import "time"

// ResponseTTL is the TTL of a response that asks for no change driven by
// the clock (Plan.RunAgainAfter): none. Crossplane v2.4 with
// realtime compositions requeues an XR after the shortest non-zero TTL its
// functions return, else after its --poll-interval; it reconciles at once
// when a composed or required resource changes (it watches both). So a
// function asks to be run again only for what the clock changes, and the
// platform sets the steady-state cadence with --poll-interval
// (deploy/crossplane/values.yaml).
const ResponseTTL time.Duration = 0

// RunAgainWithin asks Crossplane to run the pipeline again within d, for
// a change the clock brings then: RunAgainAfter becomes the earliest of
// the positive durations the steps ask for; d <= 0 asks nothing.
func (p *Plan) RunAgainWithin(d time.Duration) {
	if d > 0 && (p.RunAgainAfter <= 0 || d < p.RunAgainAfter) {
		p.RunAgainAfter = d
	}
}

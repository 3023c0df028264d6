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

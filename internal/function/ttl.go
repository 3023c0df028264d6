package function

import "time"

// ResponseTTL is the TTL of every response: none. Crossplane v2.4 with
// realtime compositions requeues an XR after the shortest non-zero TTL its
// functions return, else after its --poll-interval; it reconciles at once
// when a composed or required resource changes (it watches both). So a
// function has no reason to ask to be run again, and the platform sets the
// steady-state cadence with --poll-interval (deploy/crossplane-values.yaml).
const ResponseTTL time.Duration = 0

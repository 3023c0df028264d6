package function

import (
	"os"
	"time"
)

// ClockEnv names the environment variable that fixes the functions' clock
// (RFC 3339); `make render` and the render tests set it so that output
// does not depend on when they run.
const ClockEnv = "TENANTKUBE_CLOCK"

// Clock is now() or, for nil, the function's time: ClockEnv when set and
// valid, else the system clock.
func Clock(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	if v := os.Getenv(ClockEnv); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return time.Now()
}

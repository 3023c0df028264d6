package function

import (
	"testing"
	"time"
)

// TestRunAgainWithin: the earliest positive duration asked for wins, in
// any order; zero and negative ones ask nothing.
func TestRunAgainWithin(t *testing.T) {
	for _, c := range []struct {
		asks []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{7 * time.Hour}, 7 * time.Hour},
		{[]time.Duration{24 * time.Hour, 7 * time.Hour, time.Minute}, time.Minute},
		{[]time.Duration{time.Minute, 13 * time.Hour}, time.Minute},
		{[]time.Duration{0, -time.Second}, 0},
		{[]time.Duration{2 * time.Hour, 0, -time.Second}, 2 * time.Hour},
		{[]time.Duration{-time.Second, time.Second}, time.Second},
	} {
		p := &Plan{}
		for _, d := range c.asks {
			p.RunAgainWithin(d)
		}
		if p.RunAgainAfter != c.want {
			t.Errorf("asks %v: RunAgainAfter %s, want %s", c.asks, p.RunAgainAfter, c.want)
		}
	}
}

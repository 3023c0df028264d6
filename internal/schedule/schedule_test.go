package schedule

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func must(t *testing.T, start, end, tz string) Window {
	t.Helper()
	w, err := Parse(start, end, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q, %q): %v", start, end, tz, err)
	}
	return w
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Expected values below are worked out by hand from the calendar and the
// zones' offsets (CET +1, CEST +2; EST -5, EDT -4).
func TestAsleep(t *testing.T) {
	nightly := must(t, "0 22 * * *", "0 6 * * *", "")
	berlin := must(t, "0 22 * * *", "0 6 * * *", "Europe/Berlin")
	weekendNY := must(t, "0 20 * * 5", "0 7 * * 1", "America/New_York")
	same := must(t, "0 22 * * *", "0 22 * * *", "")
	for _, c := range []struct {
		name string
		w    Window
		at   string
		want bool
	}{
		{"nightly before start", nightly, "2026-03-10T21:59:00Z", false},
		{"nightly at start", nightly, "2026-03-10T22:00:00Z", true},
		{"nightly past midnight", nightly, "2026-03-11T05:59:00Z", true},
		{"nightly at end", nightly, "2026-03-11T06:00:00Z", false},
		{"nightly midday", nightly, "2026-03-11T12:00:00Z", false},
		// 28 March 22:00 CET = 21:00Z; 29 March 06:00 CEST = 04:00Z.
		{"spring forward: before start", berlin, "2026-03-28T20:59:00Z", false},
		{"spring forward: at start", berlin, "2026-03-28T21:00:00Z", true},
		{"spring forward: before end", berlin, "2026-03-29T03:59:00Z", true},
		{"spring forward: at end", berlin, "2026-03-29T04:00:00Z", false},
		// 24 October 22:00 CEST = 20:00Z; 25 October 06:00 CET = 05:00Z.
		{"fall back: at start", berlin, "2026-10-24T20:00:00Z", true},
		{"fall back: before end", berlin, "2026-10-25T04:59:00Z", true},
		{"fall back: at end", berlin, "2026-10-25T05:00:00Z", false},
		// Friday 6 March 20:00 EST = 7 March 01:00Z; Monday 9 March
		// 07:00 EDT = 11:00Z (DST began on Sunday 8 March).
		{"weekend: Friday before start", weekendNY, "2026-03-07T00:59:00Z", false},
		{"weekend: Friday start", weekendNY, "2026-03-07T01:00:00Z", true},
		{"weekend: Sunday", weekendNY, "2026-03-08T12:00:00Z", true},
		{"weekend: Monday before end", weekendNY, "2026-03-09T10:59:00Z", true},
		{"weekend: Monday end", weekendNY, "2026-03-09T11:00:00Z", false},
		{"weekend: Wednesday", weekendNY, "2026-03-11T03:00:00Z", false},
		{"start == end at the instant", same, "2026-03-10T22:00:00Z", false},
		{"start == end after it", same, "2026-03-10T23:00:00Z", false},
	} {
		if got := c.w.Asleep(at(c.at)); got != c.want {
			t.Errorf("%s: Asleep(%s) = %t, want %t", c.name, c.at, got, c.want)
		}
	}
}

func TestNextTransition(t *testing.T) {
	nightly := must(t, "0 22 * * *", "0 6 * * *", "")
	morning := must(t, "0 4 * * *", "0 8 * * *", "")
	berlin := must(t, "0 22 * * *", "0 6 * * *", "Europe/Berlin")
	for _, c := range []struct {
		name string
		set  Set
		at   string
		want string // "" for none
	}{
		{"asleep: the end", Set{Windows: []Window{nightly}}, "2026-03-10T23:00:00Z", "2026-03-11T06:00:00Z"},
		{"awake: the start", Set{Windows: []Window{nightly}}, "2026-03-11T12:00:00Z", "2026-03-11T22:00:00Z"},
		{"overlap: the later end", Set{Windows: []Window{nightly, morning}}, "2026-03-10T23:00:00Z", "2026-03-11T08:00:00Z"},
		{"overlap: the earlier start", Set{Windows: []Window{morning, nightly}}, "2026-03-11T12:00:00Z", "2026-03-11T22:00:00Z"},
		{"spring forward", Set{Windows: []Window{berlin}}, "2026-03-28T23:00:00Z", "2026-03-29T04:00:00Z"},
		{"fall back", Set{Windows: []Window{berlin}}, "2026-10-24T23:00:00Z", "2026-10-25T05:00:00Z"},
		{"always", Set{Always: true, Windows: []Window{nightly}}, "2026-03-10T23:00:00Z", ""},
		{"no schedule", Set{}, "2026-03-10T23:00:00Z", ""},
		{"start == end", Set{Windows: []Window{must(t, "0 22 * * *", "0 22 * * *", "")}}, "2026-03-10T23:00:00Z", ""},
		// 20:00 is 10 hours (600 minutes, events of the every-minute pair)
		// away: a pair that cancels must not exhaust the walk.
		{"a pair that cancels beside", Set{Windows: []Window{must(t, "0 20 * * *", "0 7 * * *", ""), must(t, "* * * * *", "* * * * *", "")}}, "2026-03-11T10:00:00Z", "2026-03-11T20:00:00Z"},
		{"a start inside its end beside", Set{Windows: []Window{must(t, "0 20 * * *", "0 7 * * *", ""), must(t, "*/5 * * * 1-5", "* * * * *", "")}}, "2026-03-11T10:00:00Z", "2026-03-11T20:00:00Z"},
	} {
		got, ok := c.set.NextTransition(at(c.at))
		if c.want == "" {
			if ok {
				t.Errorf("%s: NextTransition(%s) = %s, want none", c.name, c.at, got)
			}
			continue
		}
		if !ok || !got.Equal(at(c.want)) {
			t.Errorf("%s: NextTransition(%s) = %s (%t), want %s", c.name, c.at, got.UTC().Format(time.RFC3339), ok, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ start, end, tz, field, says string }{
		{"@daily", "0 6 * * *", "", "start", "5 fields"},
		{"TZ=UTC 0 22 * * *", "0 6 * * *", "", "start", "time zone prefix"},
		{"0 22 * * *", "CRON_TZ=UTC 0 6 * * *", "", "end", "time zone prefix"},
		{"0 22 * *", "0 6 * * *", "", "start", "got 4"},
		{"0 22 * * * *", "0 6 * * *", "", "start", "got 6"},
		{"61 22 * * *", "0 6 * * *", "", "start", "61"},
		{"0 22 * * *", "0 0 30 2 *", "", "end", "never fires"},
		{"0 22 * * *", "0 6 * * *", "Mars/Olympus", "timeZone", "unknown time zone"},
		{"0 22 * * *", "0 6 * * *", "Local", "timeZone", "not an IANA zone"},
	} {
		_, err := Parse(c.start, c.end, c.tz)
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q, %q, %q) = %v, want an error of %s saying %q", c.start, c.end, c.tz, err, c.field, c.says)
		}
	}
	if _, err := Parse("0 22 29 2 *", "0 6 1 3 *", "Europe/Berlin"); err != nil {
		t.Errorf("29 February refused: %v", err)
	}
}

// fires reports whether e fires at minute m (brute force from Next).
func fires(e Expr, m time.Time) bool { return e.Next(m.Add(-time.Minute)).Equal(m) }

// quarter is the step of the brute-force walks: randomExpr fires on
// quarter hours only, and every zone of zones is a whole number of
// quarter hours from UTC.
const quarter = 15 * time.Minute

// bruteAsleep walks back quarter by quarter from t over days days and
// returns whether the last start is later than the last end (ties awake).
func bruteAsleep(w Window, t time.Time, days int) bool {
	for m := t.Truncate(quarter); m.After(t.Add(-time.Duration(days) * 24 * time.Hour)); m = m.Add(-quarter) {
		s, e := fires(w.Start, m), fires(w.End, m)
		switch {
		case e:
			return false
		case s:
			return true
		}
	}
	return false
}

// bruteStep is a window's state after minute m given its state before.
func bruteStep(w Window, m time.Time, asleep bool) bool {
	switch {
	case fires(w.End, m):
		return false
	case fires(w.Start, m):
		return true
	}
	return asleep
}

var zones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"}

// randomExpr is a daily or weekly expression, so that brute force over
// 8 days sees every start and end that matters.
func randomExpr(r *rand.Rand) string {
	dow := "*"
	if r.IntN(2) == 0 {
		dow = fmt.Sprint(r.IntN(7))
	}
	return fmt.Sprintf("%d %d * * %s", r.IntN(4)*15, r.IntN(24), dow)
}

// TestAsleepProperties compares Asleep and NextTransition of random
// schedules (overlapping, equal start and end, in zones with DST) with a
// minute-by-minute walk, on clocks around the 2026 DST changes.
func TestAsleepProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 2))
	clocks := []string{"2026-03-08T06:30:00Z", "2026-03-29T00:45:00Z", "2026-10-25T00:15:00Z", "2026-11-01T05:30:00Z", "2026-04-05T15:00:00Z"}
	for i := range 60 {
		var set Set
		for range 1 + r.IntN(3) {
			start := randomExpr(r)
			end := randomExpr(r)
			if r.IntN(8) == 0 {
				end = start
			}
			set.Windows = append(set.Windows, must(t, start, end, zones[r.IntN(len(zones))]))
		}
		now := at(clocks[i%len(clocks)]).Add(time.Duration(r.IntN(48*60)) * time.Minute)
		want := false
		for _, w := range set.Windows {
			want = want || bruteAsleep(w, now, 8)
		}
		if got := set.Asleep(now); got != want {
			t.Fatalf("case %d at %s: Asleep = %t, brute force %t", i, now, got, want)
		}
		next, ok := set.NextTransition(now)
		// Brute force forward: the first quarter whose state differs.
		state := make([]bool, len(set.Windows))
		for j, w := range set.Windows {
			state[j] = bruteAsleep(w, now, 8)
		}
		var flip time.Time
		for m := now.Truncate(quarter).Add(quarter); m.Before(now.Add(9 * 24 * time.Hour)); m = m.Add(quarter) {
			asleep := false
			for j, w := range set.Windows {
				state[j] = bruteStep(w, m, state[j])
				asleep = asleep || state[j]
			}
			if asleep != want {
				flip = m
				break
			}
		}
		if ok != !flip.IsZero() || ok && !next.Equal(flip) {
			t.Fatalf("case %d at %s: NextTransition = %s (%t), brute force %s", i, now, next, ok, flip)
		}
	}
}

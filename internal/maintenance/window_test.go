package maintenance

import (
	"math/rand"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

func mustParse(t *testing.T, w v1alpha1.MaintenanceWindow) Window {
	t.Helper()
	out, errs := Parse(w, field.NewPath("w"))
	if len(errs) > 0 {
		t.Fatalf("Parse(%+v): %v", w, errs)
	}
	return out
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestWindowCases checks hand-computed instants: 2026-12-07 is a Monday;
// Europe/Berlin goes from CET (+01) to CEST (+02) at 2026-03-29 01:00Z
// and back at 2026-10-25 01:00Z (EU rule: last Sunday of March and
// October, 01:00 UTC); America/New_York from EST (-05) to EDT (-04) at
// 2026-03-08 07:00Z (02:00 EST) and back at 2026-11-01 06:00Z (02:00
// EDT) (US rule: second Sunday of March, first Sunday of November).
func TestWindowCases(t *testing.T) {
	daily := v1alpha1.MaintenanceWindow{Start: "01:00", Duration: "4h"}
	mondayNight := v1alpha1.MaintenanceWindow{Start: "23:00", Duration: "2h", Days: []string{"Mon"}}
	berlin := v1alpha1.MaintenanceWindow{Start: "02:30", Duration: "1h", TimeZone: "Europe/Berlin"}
	nySpring := v1alpha1.MaintenanceWindow{Start: "02:30", Duration: "1h", TimeZone: "America/New_York"}
	nyFall := v1alpha1.MaintenanceWindow{Start: "01:30", Duration: "1h", TimeZone: "America/New_York"}
	weekend := v1alpha1.MaintenanceWindow{Start: "10:00", Duration: "30m", Days: []string{"Sat", "Sun"}, TimeZone: "America/New_York"}
	for _, c := range []struct {
		name string
		w    v1alpha1.MaintenanceWindow
		now  string
		open bool
		next string
	}{
		{"daily before", daily, "2026-12-07T00:59:59Z", false, "2026-12-07T01:00:00Z"},
		{"daily at start", daily, "2026-12-07T01:00:00Z", true, "2026-12-07T01:00:00Z"},
		{"daily last second", daily, "2026-12-07T04:59:59Z", true, "2026-12-07T01:00:00Z"},
		{"daily at end", daily, "2026-12-07T05:00:00Z", false, "2026-12-08T01:00:00Z"},
		{"crosses midnight: Tuesday 00:30 is Monday's", mondayNight, "2026-12-08T00:30:00Z", true, "2026-12-07T23:00:00Z"},
		{"crosses midnight: Monday 00:30 is Sunday's, not listed", mondayNight, "2026-12-07T00:30:00Z", false, "2026-12-07T23:00:00Z"},
		{"crosses midnight: ends Tuesday 01:00", mondayNight, "2026-12-08T01:00:00Z", false, "2026-12-14T23:00:00Z"},
		{"Berlin winter: 02:30 CET is 01:30Z", berlin, "2026-12-07T01:29:00Z", false, "2026-12-07T01:30:00Z"},
		{"Berlin summer: 02:30 CEST is 00:30Z", berlin, "2026-07-06T00:45:00Z", true, "2026-07-06T00:30:00Z"},
		{"Berlin spring gap: 02:30 opens at the change, 03:00 CEST = 01:00Z", berlin, "2026-03-29T00:59:00Z", false, "2026-03-29T01:00:00Z"},
		{"Berlin spring gap: open at 01:59Z", berlin, "2026-03-29T01:59:00Z", true, "2026-03-29T01:00:00Z"},
		{"Berlin spring gap: closed at 02:00Z", berlin, "2026-03-29T02:00:00Z", false, "2026-03-30T00:30:00Z"},
		{"Berlin fall repeat: first 02:30 (CEST) = 00:30Z", berlin, "2026-10-25T00:15:00Z", false, "2026-10-25T00:30:00Z"},
		{"Berlin fall repeat: open at 00:45Z", berlin, "2026-10-25T00:45:00Z", true, "2026-10-25T00:30:00Z"},
		{"Berlin fall repeat: closed at 01:30Z (second 02:30)", berlin, "2026-10-25T01:30:00Z", false, "2026-10-26T01:30:00Z"},
		{"New York spring gap: 02:30 opens at the change, 03:00 EDT = 07:00Z", nySpring, "2026-03-08T06:45:00Z", false, "2026-03-08T07:00:00Z"},
		{"New York spring gap: open at 07:59Z", nySpring, "2026-03-08T07:59:00Z", true, "2026-03-08T07:00:00Z"},
		{"New York fall repeat: first 01:30 (EDT) = 05:30Z", nyFall, "2026-11-01T05:15:00Z", false, "2026-11-01T05:30:00Z"},
		{"New York fall repeat: closed at 06:30Z (second 01:30)", nyFall, "2026-11-01T06:30:00Z", false, "2026-11-02T06:30:00Z"},
		{"New York Saturday 10:00 EST = 15:00Z", weekend, "2026-12-11T12:00:00Z", false, "2026-12-12T15:00:00Z"},
		{"New York Sunday 10:29 EST open", weekend, "2026-12-13T15:29:00Z", true, "2026-12-13T15:00:00Z"},
		{"New York Sunday 10:30 EST closed, next Saturday", weekend, "2026-12-13T15:30:00Z", false, "2026-12-19T15:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := mustParse(t, c.w)
			now := at(c.now)
			if got := w.Open(now); got != c.open {
				t.Errorf("Open(%s) = %v, want %v", c.now, got, c.open)
			}
			if got := w.NextStart(now); !got.Equal(at(c.next)) {
				t.Errorf("NextStart(%s) = %s, want %s", c.now, got.UTC().Format(time.RFC3339), c.next)
			}
		})
	}
}

// zones of the generated windows: whole-hour, half-hour (Lord Howe's DST
// is 30 minutes), 45-minute offsets, and southern-hemisphere DST.
var zones = []string{"", "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham", "America/Sao_Paulo"}

// genWindow is a random valid window: minute-aligned start, duration
// from 30m to 6h in minutes, any subset of days (empty: every day).
func genWindow(rng *rand.Rand) v1alpha1.MaintenanceWindow {
	w := v1alpha1.MaintenanceWindow{
		Start:    time.Date(0, 1, 1, rng.Intn(24), rng.Intn(60), 0, 0, time.UTC).Format("15:04"),
		Duration: v1alpha1.Duration((time.Duration(30+rng.Intn(331)) * time.Minute).String()),
		TimeZone: zones[rng.Intn(len(zones))],
	}
	w.Duration = v1alpha1.Duration(trimZeroUnits(string(w.Duration)))
	for _, d := range v1alpha1.WeekDays {
		if rng.Intn(3) == 0 {
			w.Days = append(w.Days, d)
		}
	}
	return w
}

// trimZeroUnits drops the "0s" time.Duration.String writes, which the
// API's duration form allows anyway.
func trimZeroUnits(s string) string {
	if len(s) > 2 && s[len(s)-2:] == "0s" {
		return s[:len(s)-2]
	}
	return s
}

// oracleStart is the start of w's window on local date day (its
// year, month and day) by a minute walk: the first minute whose wall
// clock in w's zone reads that date at w's start or later.
func oracleStart(w v1alpha1.MaintenanceWindow, day time.Time) time.Time {
	loc, _ := w.Location()
	want := day.Format("2006-01-02") + " " + w.Start
	wall, _ := time.Parse("2006-01-02 15:04", want)
	for u := wall.Add(-15 * time.Hour); ; u = u.Add(time.Minute) {
		if u.In(loc).Format("2006-01-02 15:04") >= want {
			return u
		}
	}
}

// oracleStarts are the starts of w's windows on the listed local dates
// of t and the day before (a window is at most 6h long).
func oracleStarts(w v1alpha1.MaintenanceWindow, t time.Time) []time.Time {
	loc, _ := w.Location()
	l := t.In(loc)
	var out []time.Time
	for i := -1; i <= 0; i++ {
		day := time.Date(l.Year(), l.Month(), l.Day()+i, 0, 0, 0, 0, time.UTC)
		if onDay(w, day.Weekday()) {
			out = append(out, oracleStart(w, day))
		}
	}
	return out
}

// oracleOpen reports whether one of oracleStarts covers t.
func oracleOpen(w v1alpha1.MaintenanceWindow, t time.Time) bool {
	d, _ := time.ParseDuration(string(w.Duration))
	for _, s := range oracleStarts(w, t) {
		if !s.After(t) && s.Add(d).After(t) {
			return true
		}
	}
	return false
}

func onDay(w v1alpha1.MaintenanceWindow, d time.Weekday) bool {
	if len(w.Days) == 0 {
		return true
	}
	for _, n := range w.Days {
		if n == d.String()[:3] {
			return true
		}
	}
	return false
}

// TestWindowProperties checks generated windows at generated instants
// from 2024 to 2031, daylight-saving changes included, against the
// minute-walk oracle, and NextStart's
// properties: the window is open from NextStart for its duration and
// closed between a closed instant and NextStart.
func TestWindowProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	base := at("2024-01-01T00:00:00Z")
	for i := 0; i < 2000; i++ {
		aw := genWindow(rng)
		w := mustParse(t, aw)
		now := base.Add(time.Duration(rng.Int63n(int64(7*365*24*time.Hour))) / time.Second * time.Second)
		open, s := w.Open(now), w.NextStart(now)
		if want := oracleOpen(aw, now); open != want {
			t.Fatalf("%+v at %s: Open = %v, oracle %v", aw, now, open, want)
		}
		if !slices.ContainsFunc(oracleStarts(aw, s), s.Equal) {
			t.Fatalf("%+v at %s: NextStart %s is not a start", aw, now, s)
		}
		if open != !s.After(now) || !s.Add(w.duration).After(now) {
			t.Fatalf("%+v at %s: Open %v, NextStart %s", aw, now, open, s)
		}
		if !w.Open(s) || !w.Open(s.Add(w.duration-time.Second)) || w.Open(s.Add(-time.Second)) && !open {
			t.Fatalf("%+v: not open over [%s, +%s)", aw, s, w.duration)
		}
		for j := 0; !open && j < 20; j++ {
			u := now.Add(time.Duration(rng.Int63n(int64(s.Sub(now)))))
			if w.Open(u) {
				t.Fatalf("%+v: open at %s, between %s and NextStart %s", aw, u, now, s)
			}
		}
	}
}

// TestParseRefuses: Parse returns the rules' errors.
func TestParseRefuses(t *testing.T) {
	_, errs := Parse(v1alpha1.MaintenanceWindow{Start: "24:00", Duration: "7h", Days: []string{"Monday"}, TimeZone: "Mars/Olympus"}, field.NewPath("w"))
	want := []string{"w.start", "w.duration", "w.days[0]", "w.timeZone"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want one at each of %v", errs, want)
	}
	for i, e := range errs {
		if e.Field != want[i] {
			t.Errorf("error %d at %s, want %s", i, e.Field, want[i])
		}
	}
}

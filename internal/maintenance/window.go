// Package maintenance is the pure logic of maintenance windows: when a
// window is open, when it next opens, whether the platform's changes may
// roll a cluster now, and how many clusters may start rolling at once
// (docs/platform-guide.md, Maintenance).
package maintenance

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Window is a parsed, valid maintenance window.
type Window struct {
	hour, minute int
	duration     time.Duration
	// days[d] says the window opens on weekday d; all true for every day.
	days [7]bool
	loc  *time.Location
}

// Parse reads w (validated by its rules) at path; it returns every
// problem of w otherwise.
func Parse(w v1alpha1.MaintenanceWindow, path *field.Path) (Window, field.ErrorList) {
	if errs := w.Validate(path); len(errs) > 0 {
		return Window{}, errs
	}
	out := Window{loc: time.UTC}
	if _, err := fmt.Sscanf(w.Start, "%02d:%02d", &out.hour, &out.minute); err != nil {
		return Window{}, field.ErrorList{field.Invalid(path.Child("start"), w.Start, err.Error())}
	}
	d, ferr := w.Duration.Parse(path.Child("duration"), v1alpha1.MinMaintenanceDuration, v1alpha1.MaxMaintenanceDuration)
	if ferr != nil {
		return Window{}, field.ErrorList{ferr}
	}
	out.duration = d
	for i, name := range v1alpha1.WeekDays {
		out.days[(i+1)%7] = len(w.Days) == 0 || slices.Contains(w.Days, name)
	}
	loc, err := w.Location()
	if err != nil {
		return Window{}, field.ErrorList{field.Invalid(path.Child("timeZone"), w.TimeZone, err.Error())}
	}
	out.loc = loc
	return out, nil
}

// startOn is the start of the window on the local date (y, m, d): the
// first instant whose wall clock in w's zone reads that date at the start
// time or later. A start that a daylight-saving change skips opens at the
// change, the first instant after the gap (02:30 on a day clocks jump
// from 02:00 to 03:00 opens at 03:00); one that a change repeats opens at
// its first occurrence. The zone's periods are walked with ZoneBounds:
// time.Date's choice in a gap or repeat depends on the sign of the zone's
// offset (its doc: "the choice of time zone, and therefore the time, is
// not guaranteed").
func (w Window) startOn(y int, m time.Month, d int) time.Time {
	wall := time.Date(y, m, d, w.hour, w.minute, 0, 0, time.UTC) // the wall clock read as UTC
	// UTC offsets lie within -12h..+14h: start in the period 15h before.
	t := wall.Add(-15 * time.Hour).In(w.loc)
	for {
		_, offset := t.Zone()
		begin, end := t.ZoneBounds() // zero: unbounded
		at := wall.Add(-time.Duration(offset) * time.Second)
		switch {
		case at.Before(begin):
			return begin // the wall clock jumped past the start at begin
		case end.IsZero() || at.Before(end):
			return at
		}
		t = end.In(w.loc)
	}
}

// NextStart is the start of the window open at t, or else of the next
// window after t; the zero time for a window that never opens (no day).
func (w Window) NextStart(t time.Time) time.Time {
	local := t.In(w.loc)
	// A window is at most 6h long, so the one open at t started on t's
	// local date or the day before; the next opens within 8 days.
	for i := -1; i <= 8; i++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+i, 0, 0, 0, 0, time.UTC) // a calendar date
		if !w.days[day.Weekday()] {
			continue
		}
		s := w.startOn(day.Year(), day.Month(), day.Day())
		if s.Add(w.duration).After(t) {
			return s
		}
	}
	return time.Time{}
}

// Open reports whether the window is open at t: a start s with
// s <= t < s + duration.
func (w Window) Open(t time.Time) bool {
	s := w.NextStart(t)
	return !s.IsZero() && !s.After(t)
}

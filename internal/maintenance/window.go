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

// startOn is the start of the window on the local date (y, m, d) in w's
// time zone. time.Date places a wall time that a daylight-saving change
// skips after the change by the gap (its doc: "In such cases, the choice
// of time zone, and therefore the time, is not guaranteed"; Go's
// implementation, time/time.go Date, looks the offset up at the wall
// time read as UTC: 02:30 in a 02:00→03:00 gap is 03:30, and a wall time
// a 03:00→02:00 change repeats is its second occurrence).
func (w Window) startOn(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, w.hour, w.minute, 0, 0, w.loc)
}

// NextStart is the start of the window open at t, or else of the next
// window after t; the zero time for a window that never opens (no day).
func (w Window) NextStart(t time.Time) time.Time {
	local := t.In(w.loc)
	// A window is at most 6h long, so the one open at t started on t's
	// local date or the day before; the next opens within 8 days.
	for i := -1; i <= 8; i++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+i, 12, 0, 0, 0, w.loc)
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

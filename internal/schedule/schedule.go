// Package schedule is the time arithmetic of hibernation schedules: each
// schedule is a pair of 5-field cron expressions (start, end) read in an
// IANA time zone, and a cluster sleeps between a start and the end that
// follows it (docs/tenant-guide.md, Hibernation). Pure: the clock is an
// argument.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// The IANA database inside the binary: the functions' images carry no
	// zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// DefaultTimeZone is the zone of a schedule that names none.
const DefaultTimeZone = "UTC"

// horizon is how far back Prev looks for a start or an end: a 5-field
// expression that fires at all fires at least once in 8 years (the rarest,
// 29 February, skips 2100 and recurs after 8 years then).
const horizon = 8 * 366 * 24 * time.Hour

// parser reads exactly the five standard fields (minute, hour, day of
// month, month, day of week); no descriptors such as @daily or @every.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Expr is one parsed cron expression in its time zone.
type Expr struct {
	spec *cron.SpecSchedule
}

// ParseExpr parses a 5-field cron expression read in loc. A time zone
// prefix (TZ=, CRON_TZ=) is refused: the zone is the schedule's field. An
// expression that never fires within 5 years (cron v3 Next's bound, e.g.
// 30 February) is refused too.
func ParseExpr(expr string, loc *time.Location) (Expr, error) {
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return Expr{}, errors.New("a time zone prefix is not allowed: set timeZone")
	}
	if n := len(strings.Fields(expr)); n != 5 {
		return Expr{}, fmt.Errorf("want 5 fields (minute hour day-of-month month day-of-week), got %d", n)
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return Expr{}, err
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return Expr{}, fmt.Errorf("not a field expression")
	}
	spec.Location = loc
	e := Expr{spec: spec}
	if e.Next(time.Unix(0, 0)).IsZero() {
		return Expr{}, errors.New("never fires")
	}
	return e, nil
}

// Next is the first time the expression fires strictly after t; zero when
// it does not within 5 years of t (cron v3 spec.go Next).
func (e Expr) Next(t time.Time) time.Time { return e.spec.Next(t) }

// Prev is the last time the expression fires at or before t, and false
// when it does not within horizon. cron v3 has no Prev: Next(x) <= t holds
// for every x up to some instant and for none after, so a bisection over
// whole minutes (5-field expressions fire on whole minutes) finds the last
// x with Next(x) <= t, and Next(x) is the answer (about 22 calls of Next).
func (e Expr) Prev(t time.Time) (time.Time, bool) {
	t = t.Truncate(time.Minute)
	lo := t.Add(-horizon)
	if n := e.Next(lo); n.IsZero() || n.After(t) {
		return time.Time{}, false
	}
	hiMin := int64(horizon / time.Minute) // Next(t) > t always
	loMin := int64(0)
	for hiMin-loMin > 1 {
		mid := (loMin + hiMin) / 2
		if n := e.Next(lo.Add(time.Duration(mid) * time.Minute)); !n.IsZero() && !n.After(t) {
			loMin = mid
		} else {
			hiMin = mid
		}
	}
	return e.Next(lo.Add(time.Duration(loMin) * time.Minute)), true
}

// Window is one hibernation schedule: asleep from each start to the next
// end.
type Window struct {
	Start, End Expr
}

// Parse parses a schedule's start and end in time zone tz ("" is
// DefaultTimeZone). Its errors say which field is wrong: *FieldError.
func Parse(start, end, tz string) (Window, error) {
	if tz == "" {
		tz = DefaultTimeZone
	}
	loc, err := LoadZone(tz)
	if err != nil {
		return Window{}, &FieldError{Field: "timeZone", Err: err}
	}
	s, err := ParseExpr(start, loc)
	if err != nil {
		return Window{}, &FieldError{Field: "start", Err: err}
	}
	e, err := ParseExpr(end, loc)
	if err != nil {
		return Window{}, &FieldError{Field: "end", Err: err}
	}
	return Window{Start: s, End: e}, nil
}

// LoadZone loads an IANA zone by name from the embedded database. "Local"
// is refused: it would depend on the machine.
func LoadZone(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, errors.New(`"Local" is not an IANA zone`)
	}
	return time.LoadLocation(name)
}

// FieldError is a Parse error of one field of a schedule.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Asleep reports whether t lies in a sleep of w: the last start at or
// before t is later than the last end at or before t. A start and an end
// at the same instant cancel (awake), so start == end never sleeps.
func (w Window) Asleep(t time.Time) bool {
	s, ok := w.Start.Prev(t)
	if !ok {
		return false
	}
	e, ok := w.End.Prev(t)
	return !ok || s.After(e)
}

// dead reports whether w can never be asleep: its end fires at every
// instant its start fires (Asleep: they cancel), e.g. start == end.
// Conservative: the start's minutes, hours and months are subsets of the
// end's, and its days are the end's or the end fires every day (cron v3
// spec.go:179-188 dayMatches, starBit spec.go:53).
func (w Window) dead() bool {
	const star = uint64(1) << 63
	s, e := w.Start.spec, w.End.spec
	sub := func(a, b uint64) bool { return a&^star&^b == 0 }
	const allDom, allDow = uint64(1)<<32 - 2, uint64(1)<<7 - 1 // days 1-31; Sunday 0 to Saturday 6
	everyDay := e.Dom&allDom == allDom && e.Dow&allDow == allDow
	sameDays := s.Dom == e.Dom && s.Dow == e.Dow
	return s.Location == e.Location && s.Second == e.Second && sub(s.Minute, e.Minute) && sub(s.Hour, e.Hour) &&
		sub(s.Month, e.Month) && (everyDay || sameDays)
}

// maxSteps bounds the events NextTransition walks: a union of schedules
// changes state at one of its starts or ends, and 8 schedules with
// overlapping sleeps need at most a few events each.
const maxSteps = 256

// Set is the union of schedules (asleep when any is) or, with Always,
// asleep whatever the schedules say.
type Set struct {
	Always  bool
	Windows []Window
}

// Asleep reports whether the set is asleep at t.
func (s Set) Asleep(t time.Time) bool {
	if s.Always {
		return true
	}
	for _, w := range s.Windows {
		if w.Asleep(t) {
			return true
		}
	}
	return false
}

// NextTransition is the first instant after t at which Asleep changes,
// and false when none does within maxSteps events (Always, no schedule,
// only dead windows, or a change further than maxSteps starts and ends of
// the other windows, e.g. a start every minute while asleep).
func (s Set) NextTransition(t time.Time) (time.Time, bool) {
	if s.Always || len(s.Windows) == 0 {
		return time.Time{}, false
	}
	now := s.Asleep(t)
	at := t
	for range maxSteps {
		next := time.Time{}
		for _, w := range s.Windows {
			if w.dead() {
				continue // never changes Asleep
			}
			for _, x := range []Expr{w.Start, w.End} {
				if n := x.Next(at); !n.IsZero() && (next.IsZero() || n.Before(next)) {
					next = n
				}
			}
		}
		if next.IsZero() {
			return time.Time{}, false
		}
		if s.Asleep(next) != now {
			return next, true
		}
		at = next
	}
	return time.Time{}, false
}

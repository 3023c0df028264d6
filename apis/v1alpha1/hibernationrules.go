package v1alpha1

import (
	"cmp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/internal/schedule"
)

// Validate returns every problem of h at path (spec.hibernation).
func (h Hibernation) Validate(path *field.Path) field.ErrorList {
	return hibernationRules.check(h, path)
}

// Set is the schedule arithmetic of a validated h (Validate found no
// problem): enabled, and each schedule parsed in its zone.
func (h Hibernation) Set() (schedule.Set, error) {
	set := schedule.Set{Always: h.Enabled}
	for _, s := range h.Schedules {
		w, err := schedule.Parse(s.Start, s.End, s.TimeZone)
		if err != nil {
			return schedule.Set{}, err
		}
		set.Windows = append(set.Windows, w)
	}
	return set, nil
}

// hibernationRules are the rules of spec.hibernation: Go only, as CEL
// cannot parse cron expressions or time zones.
var hibernationRules = ruleTable[Hibernation]{{
	RuleDoc: RuleDoc{ID: "hibernation.schedules.count", Object: "hibernation", Field: "schedules", Go: EnforcedValidate},
	Check: func(h Hibernation, path *field.Path) *field.Error {
		if len(h.Schedules) > MaxHibernationSchedules {
			return field.TooMany(path.Child("schedules"), len(h.Schedules), MaxHibernationSchedules)
		}
		return nil
	},
}, {
	RuleDoc: RuleDoc{ID: "hibernation.schedules.cron", Object: "hibernation.schedules", Field: "start, end, timeZone", Go: EnforcedValidate},
	CheckEach: func(h Hibernation, path *field.Path) field.ErrorList {
		var errs field.ErrorList
		for i, s := range h.Schedules {
			if i == MaxHibernationSchedules {
				break
			}
			errs = append(errs, checkSchedule(path.Child("schedules").Index(i), s)...)
		}
		return errs
	},
}}

// checkSchedule returns every problem of one schedule at path: a field
// too long is not parsed; start and end are parsed in UTC when the zone
// is refused, so each field's problem shows.
func checkSchedule(path *field.Path, s HibernationSchedule) field.ErrorList {
	var errs field.ErrorList
	loc, err := schedule.LoadZone(cmp.Or(s.TimeZone, schedule.DefaultTimeZone))
	switch {
	case longerThan(s.TimeZone, MaxTimeZoneLength):
		errs = append(errs, tooLong(path.Child("timeZone"), s.TimeZone, MaxTimeZoneLength))
	case err != nil:
		errs = append(errs, field.Invalid(path.Child("timeZone"), s.TimeZone, err.Error()))
	}
	if loc == nil {
		loc = time.UTC
	}
	for _, f := range []struct{ name, v string }{{"start", s.Start}, {"end", s.End}} {
		if longerThan(f.v, MaxCronLength) {
			errs = append(errs, tooLong(path.Child(f.name), f.v, MaxCronLength))
			continue
		}
		if _, err := schedule.ParseExpr(f.v, loc); err != nil {
			errs = append(errs, field.Invalid(path.Child(f.name), f.v, "not a 5-field cron expression: "+err.Error()))
		}
	}
	return errs
}

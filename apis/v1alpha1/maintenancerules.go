package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Form and messages of the maintenance window's rules.
const (
	startForm      = `^([01][0-9]|2[0-3]):[0-5][0-9]$`
	msgWindowStart = "must be a time of day HH:MM on a 24-hour clock, such as 02:30"
	msgWindowDay   = "must be one of Mon, Tue, Wed, Thu, Fri, Sat, Sun"
	msgTimeZone    = "must be an IANA time zone name such as Europe/Berlin"
)

var startPattern = regexp.MustCompile(startForm)

// maintenanceWindowRules are the rules of spec.maintenance.window.
var maintenanceWindowRules = concat([]Rule[MaintenanceWindow]{{
	RuleDoc: RuleDoc{ID: "maintenance.window.start", Object: "maintenance.window", Field: "start", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{
			Rule:              "self.start.matches(" + celString(startForm) + ")",
			MessageExpression: refusal("self.start", msgWindowStart),
			FieldPath:         ".start",
		}
	},
	Check: func(w MaintenanceWindow, path *field.Path) *field.Error {
		if !startPattern.MatchString(w.Start) {
			return field.Invalid(path.Child("start"), w.Start, msgWindowStart)
		}
		return nil
	},
}, {
	RuleDoc: RuleDoc{ID: "maintenance.window.duration.required", Object: "maintenance.window", Field: "duration", Go: EnforcedValidate},
	Check: func(w MaintenanceWindow, path *field.Path) *field.Error {
		if w.Duration == "" {
			return field.Required(path.Child("duration"), fmt.Sprintf("from %s to %s", MinMaintenanceDuration, MaxMaintenanceDuration))
		}
		return nil
	},
}}, durationRules("maintenance.window.duration", "maintenance.window.duration", "duration",
	MinMaintenanceDuration, MaxMaintenanceDuration, func(w MaintenanceWindow) Duration { return w.Duration }),
	[]Rule[MaintenanceWindow]{{
		RuleDoc: RuleDoc{ID: "maintenance.window.days", Object: "maintenance.window.days", Field: "days", Go: EnforcedValidate},
		CEL: func() apiextensionsv1.ValidationRule {
			known := "d in [" + celDays() + "]"
			// The first unknown day, else the first repeated one.
			bad := "(self.exists(d, !(" + known + ")) ? self.filter(d, !(" + known + "))[0] : self.filter(d, !self.exists_one(e, e == d))[0])"
			return apiextensionsv1.ValidationRule{
				Rule:              "self.all(d, " + known + ") && self.all(d, self.exists_one(e, e == d))",
				MessageExpression: refusal(celExpr(bad), "days "+msgWindowDay+", each at most once"),
				// What the API server prints when the expression's
				// message is not one line (an entry holding a line break):
				// apiextensions-apiserver v0.36.4
				// pkg/apiserver/schema/cel/validation.go:738-758.
				Message: "days " + msgWindowDay + ", each at most once",
			}
		},
		CheckEach: func(w MaintenanceWindow, path *field.Path) field.ErrorList {
			var errs field.ErrorList
			for i, d := range w.Days {
				switch {
				case !slices.Contains(WeekDays, d):
					errs = append(errs, field.NotSupported(path.Child("days").Index(i), d, WeekDays))
				case slices.Index(w.Days, d) < i:
					errs = append(errs, field.Duplicate(path.Child("days").Index(i), d))
				}
			}
			return errs
		},
	}, {
		RuleDoc: RuleDoc{ID: "maintenance.window.timeZone", Object: "maintenance.window", Field: "timeZone", Go: EnforcedValidate},
		Check: func(w MaintenanceWindow, path *field.Path) *field.Error {
			// "Local" is the function pod's own zone (time.LoadLocation).
			if _, err := w.Location(); err != nil || w.TimeZone == "Local" || len(w.TimeZone) > MaxTimeZoneLength || strings.ContainsAny(w.TimeZone, " \t\n") {
				return field.Invalid(path.Child("timeZone"), w.TimeZone, msgTimeZone)
			}
			return nil
		},
	}},
)

// celDays is WeekDays as CEL string literals, comma-separated.
func celDays() string {
	out := make([]string, len(WeekDays))
	for i, d := range WeekDays {
		out[i] = celString(d)
	}
	return strings.Join(out, ", ")
}

package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestHibernationValidate(t *testing.T) {
	path := field.NewPath("spec", "hibernation")
	ok := HibernationSchedule{Start: "0 20 * * 1-5", End: "0 7 * * 1-5", TimeZone: "Europe/Berlin"}
	nine := make([]HibernationSchedule, 9)
	for i := range nine {
		nine[i] = ok
	}
	for _, c := range []struct {
		name string
		h    Hibernation
		want []string // "field: detail substring", every problem
	}{
		{"valid", Hibernation{Enabled: true, Schedules: []HibernationSchedule{ok, {Start: "30 1 * * *", End: "0 5 * * *"}}}, nil},
		{"every problem at once", Hibernation{Schedules: []HibernationSchedule{{Start: "@daily", End: "0 7 * * * *", TimeZone: "Mars/Olympus"}}},
			[]string{"spec.hibernation.schedules[0].timeZone: unknown time zone", "spec.hibernation.schedules[0].start: want 5 fields",
				"spec.hibernation.schedules[0].end: got 6"}},
		{"zone prefix", Hibernation{Schedules: []HibernationSchedule{{Start: "CRON_TZ=UTC 0 1 * * *", End: "0 7 * * *"}}},
			[]string{"spec.hibernation.schedules[0].start: a time zone prefix"}},
		{"never fires", Hibernation{Schedules: []HibernationSchedule{{Start: "0 1 * * *", End: "0 7 31 4 *"}}},
			[]string{"spec.hibernation.schedules[0].end: never fires"}},
		{"too long", Hibernation{Schedules: []HibernationSchedule{{Start: strings.Repeat("1", 101), End: "0 7 * * *", TimeZone: strings.Repeat("A", 65)}}},
			[]string{"spec.hibernation.schedules[0].timeZone: must be at most 64 characters", "spec.hibernation.schedules[0].start: must be at most 100 characters"}},
		{"too many", Hibernation{Schedules: nine}, []string{"spec.hibernation.schedules: Too many: 9: must have at most 8"}},
	} {
		errs := c.h.Validate(path)
		if len(errs) != len(c.want) {
			t.Errorf("%s: %d problems %v, want %d %v", c.name, len(errs), errs, len(c.want), c.want)
			continue
		}
		for i, w := range c.want {
			f, detail, _ := strings.Cut(w, ": ")
			if errs[i].Field != f || !strings.Contains(errs[i].Error(), detail) {
				t.Errorf("%s: problem %d is %q, want %s saying %q", c.name, i, errs[i].Error(), f, detail)
			}
		}
	}
}

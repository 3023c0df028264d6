package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestMaintenanceWindowRules: each rule refuses its bad value, naming the
// field and the value, and passes the good ones (bounds 30m and 6h are
// Gardener's).
func TestMaintenanceWindowRules(t *testing.T) {
	good := MaintenanceWindow{Start: "23:59", Duration: "30m", Days: []string{"Mon", "Sun"}, TimeZone: "Asia/Kathmandu"}
	if errs := (Maintenance{Window: &good}).Validate(field.NewPath("spec", "maintenance")); len(errs) > 0 {
		t.Fatalf("good window refused: %v", errs)
	}
	if errs := (Maintenance{Window: &MaintenanceWindow{Start: "00:00", Duration: "6h"}}).Validate(field.NewPath("spec", "maintenance")); len(errs) > 0 {
		t.Fatalf("6h refused: %v", errs)
	}
	for _, c := range []struct {
		w     MaintenanceWindow
		field string
		value string
	}{
		{MaintenanceWindow{Start: "24:00", Duration: "1h"}, "start", "24:00"},
		{MaintenanceWindow{Start: "2:30", Duration: "1h"}, "start", "2:30"},
		{MaintenanceWindow{Start: "02:60", Duration: "1h"}, "start", "02:60"},
		{MaintenanceWindow{Start: "02:00", Duration: "29m"}, "duration", "29m"},
		{MaintenanceWindow{Start: "02:00", Duration: "6h1m"}, "duration", "6h1m"},
		{MaintenanceWindow{Start: "02:00", Duration: "1d"}, "duration", "1d"},
		{MaintenanceWindow{Start: "02:00"}, "duration", ""},
		{MaintenanceWindow{Start: "02:00", Duration: "1h", Days: []string{"Monday"}}, "days[0]", "Monday"},
		{MaintenanceWindow{Start: "02:00", Duration: "1h", Days: []string{"Mon", "Tue", "Mon"}}, "days[2]", "Mon"},
		{MaintenanceWindow{Start: "02:00", Duration: "1h", TimeZone: "Mars/Olympus"}, "timeZone", "Mars/Olympus"},
		{MaintenanceWindow{Start: "02:00", Duration: "1h", TimeZone: "../../etc/passwd"}, "timeZone", "../../etc/passwd"},
		{MaintenanceWindow{Start: "02:00", Duration: "1h", TimeZone: "Local"}, "timeZone", "Local"},
	} {
		errs := (Maintenance{Window: &c.w}).Validate(field.NewPath("spec", "maintenance"))
		if len(errs) != 1 || errs[0].Field != "spec.maintenance.window."+c.field || !strings.Contains(errs[0].Error(), c.value) {
			t.Errorf("%+v: errors %v, want one at spec.maintenance.window.%s naming %q", c.w, errs, c.field, c.value)
		}
	}
}

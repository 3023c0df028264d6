package v1alpha1

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestMaintenanceDefaults: an empty object gets the documented defaults
// (docs/platform-guide.md, Maintenance windows: daily 01:00 UTC for 4h,
// confined, 3 rolls at once).
func TestMaintenanceDefaults(t *testing.T) {
	s := Settings{}
	s.Default()
	m := s.Maintenance
	if m.DefaultWindow == nil || !reflect.DeepEqual(*m.DefaultWindow, tkv1alpha1.MaintenanceWindow{Start: "01:00", Duration: "4h", TimeZone: "UTC"}) {
		t.Errorf("defaultWindow %+v", m.DefaultWindow)
	}
	if m.ConfinePlatformChanges == nil || !*m.ConfinePlatformChanges || m.MaxConcurrentRolls == nil || *m.MaxConcurrentRolls != 3 || m.RollDeadline != "2h" {
		t.Errorf("confinePlatformChanges %v, maxConcurrentRolls %v", m.ConfinePlatformChanges, m.MaxConcurrentRolls)
	}
	off := false
	s = Settings{Maintenance: Maintenance{ConfinePlatformChanges: &off}}
	s.Default()
	if *s.Maintenance.ConfinePlatformChanges {
		t.Error("confinePlatformChanges: false became true")
	}
}

// TestMaintenanceValidate: each bad value is named with its path.
func TestMaintenanceValidate(t *testing.T) {
	s := Settings{}
	s.Default()
	s.Maintenance.DefaultWindow = &tkv1alpha1.MaintenanceWindow{Start: "1:00", Duration: "4h"}
	tooMany := int32(1001)
	s.Maintenance.MaxConcurrentRolls = &tooMany
	s.Maintenance.RollDeadline = "5m"
	s.Maintenance.RollNow = []string{"*", "team-a/prod", "team-a", "Team/x", "a/b/c"}
	want := map[string]bool{
		"input.maintenance.defaultWindow.start": true, "input.maintenance.maxConcurrentRolls": true, "input.maintenance.rollDeadline": true,
		"input.maintenance.rollNow[2]": true, "input.maintenance.rollNow[3]": true, "input.maintenance.rollNow[4]": true,
	}
	errs := s.validateMaintenance(field.NewPath("input"))
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want one at each of %v", errs, want)
	}
	for _, e := range errs {
		if !want[e.Field] {
			t.Errorf("unexpected error %v", e)
		}
	}
}

// TestMaxConcurrentRollsExplicit: only an absent key defaults to 3; an
// explicit value outside 1..1000 (the schema's bounds) is refused naming
// the key and the value.
func TestMaxConcurrentRollsExplicit(t *testing.T) {
	for doc, want := range map[string]string{
		`{maintenance: {}}`:                         "",
		`{maintenance: {maxConcurrentRolls: 1}}`:    "",
		`{maintenance: {maxConcurrentRolls: 1000}}`: "",
		`{maintenance: {maxConcurrentRolls: 0}}`:    "maintenance.maxConcurrentRolls: Invalid value: 0: must be from 1 to 1000",
		`{maintenance: {maxConcurrentRolls: -2}}`:   "maintenance.maxConcurrentRolls: Invalid value: -2: must be from 1 to 1000",
		`{maintenance: {maxConcurrentRolls: 1001}}`: "maintenance.maxConcurrentRolls: Invalid value: 1001: must be from 1 to 1000",
	} {
		var s Settings
		if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
			t.Fatal(err)
		}
		s.Default()
		errs := s.validateMaintenance(nil)
		if got := errs.ToAggregate(); (got == nil) != (want == "") || got != nil && got.Error() != want {
			t.Errorf("%s: %v, want %q", doc, got, want)
		}
		if want == "" && s.Maintenance.MaxConcurrentRolls == nil {
			t.Errorf("%s: no value after defaulting", doc)
		}
	}
}

// TestRollsNow: "*" names every cluster, ns/name one.
func TestRollsNow(t *testing.T) {
	m := Maintenance{RollNow: []string{"team-a/prod"}}
	if !m.RollsNow("team-a", "prod") || m.RollsNow("team-a", "dev") || m.RollsNow("team-b", "prod") {
		t.Error("one cluster")
	}
	m.RollNow = []string{RollNowAll}
	if !m.RollsNow("x", "y") {
		t.Error("every cluster")
	}
}

// TestMaintenanceWindowOf: the cluster's window, else the platform's.
func TestMaintenanceWindowOf(t *testing.T) {
	own := tkv1alpha1.MaintenanceWindow{Start: "22:00", Duration: "1h"}
	platform := tkv1alpha1.MaintenanceWindow{Start: "03:00", Duration: "2h"}
	m := Maintenance{DefaultWindow: &platform}
	if !reflect.DeepEqual(m.Window(&own), own) || !reflect.DeepEqual(m.Window(nil), platform) {
		t.Error("window")
	}
}

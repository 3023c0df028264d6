package v1alpha1

import (
	"time"
	// The function images carry no zoneinfo: timeZone is resolved from
	// the IANA database embedded in the binary.
	_ "time/tzdata"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of a maintenance window's duration: Gardener's bounds of a
// shoot's spec.maintenance.timeWindow, 30 minutes to 6 hours
// (gardener/gardener pkg/apis/core/types_shoot.go:1263-1266, enforced in
// pkg/api/core/validation/shoot.go:2166-2180).
const (
	MinMaintenanceDuration Duration = "30m"
	MaxMaintenanceDuration Duration = "6h"
)

// WeekDays are the names of a maintenance window's days, Monday first;
// WeekDays[i] is time.Weekday (i+1)%7.
var WeekDays = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// Maintenance says when the platform's changes to the cluster's machines,
// control-plane version and add-on charts are applied
// (docs/tenant-guide.md, Maintenance).
type Maintenance struct {
	// Window the platform's changes wait for. Empty: the platform's
	// default window.
	// +optional
	Window *MaintenanceWindow `json:"window,omitempty"`

	// ConfineOwnChanges makes the tenant's own changes of spec.version
	// and of its node groups wait for the window too.
	// +optional
	ConfineOwnChanges bool `json:"confineOwnChanges,omitempty"`
}

// MaintenanceWindow is a recurring window: it opens at start (wall clock
// in timeZone) on each of days and stays open for duration.
type MaintenanceWindow struct {
	// Start is the local time the window opens, HH:MM (24-hour clock): at
	// the first instant the wall clock reads it on that day. A start that
	// a daylight-saving change skips opens the window at the change, the
	// first instant after the gap (02:30 on a day clocks jump from 02:00
	// to 03:00 opens at 03:00), in every time zone; one that a change
	// repeats opens at its first occurrence.
	// +kubebuilder:validation:MaxLength=5
	Start string `json:"start"`

	// Duration the window stays open (elapsed time), from 30m to 6h.
	// +kubebuilder:validation:MaxLength=24
	Duration Duration `json:"duration"`

	// Days the window opens on (Mon, Tue, Wed, Thu, Fri, Sat, Sun); empty:
	// every day. A window that crosses midnight belongs to the day it
	// opens on.
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:MaxLength=3
	// +optional
	Days []string `json:"days,omitempty"`

	// TimeZone is an IANA time zone name such as Europe/Berlin; empty is
	// UTC.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// Validate returns every problem of m at path (spec.maintenance).
func (m Maintenance) Validate(path *field.Path) field.ErrorList {
	if m.Window == nil {
		return nil
	}
	return m.Window.Validate(path.Child("window"))
}

// Validate returns every problem of w at path.
func (w MaintenanceWindow) Validate(path *field.Path) field.ErrorList {
	return maintenanceWindowRules.check(w, path)
}

// Location is w's time zone, UTC for an empty one. It returns an error
// for a name the embedded IANA database does not hold.
func (w MaintenanceWindow) Location() (*time.Location, error) {
	if w.TimeZone == "" {
		return time.UTC, nil
	}
	return time.LoadLocation(w.TimeZone)
}

// MaintenanceStatus is what waits for the cluster's maintenance window.
type MaintenanceStatus struct {
	// NextWindowStart is when the window next opens (the current one's
	// start while it is open), RFC 3339 in UTC.
	// +optional
	NextWindowStart string `json:"nextWindowStart,omitempty"`
	// Pending are the changes that wait, in the order of the pipeline's
	// steps.
	// +optional
	Pending []PendingChange `json:"pending,omitempty"`
}

// PendingChange is one change that waits for the window.
type PendingChange struct {
	// What changes: controlPlane, nodeGroup/<G> or addon/<release>.
	What string `json:"what"`
	// From is the running value (a version, a machine template's name).
	From string `json:"from"`
	// To is the value applied when the window opens.
	To string `json:"to"`
	// Reason says why it waits.
	Reason string `json:"reason"`
}

package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Defaults of the maintenance settings (docs/platform-guide.md,
// Maintenance).
var (
	// DefaultMaintenanceWindow opens every day at 01:00 UTC for 4 hours.
	DefaultMaintenanceWindow = tkv1alpha1.MaintenanceWindow{Start: "01:00", Duration: "4h", TimeZone: "UTC"}
	// DefaultMaxConcurrentRolls: at most 3 clusters roll the platform's
	// changes at once.
	DefaultMaxConcurrentRolls int32 = 3
	// DefaultRollDeadline: a roll not finished within 2 hours has failed.
	DefaultRollDeadline tkv1alpha1.Duration = "2h"
)

// Bounds of rollDeadline.
const (
	MinRollDeadline tkv1alpha1.Duration = "10m"
	MaxRollDeadline tkv1alpha1.Duration = "48h"
)

// Bounds of the maintenance settings.
const (
	MaxConcurrentRollsLimit = 1000
	MaxRollNowEntries       = 256
	// RollNowAll in rollNow lets every cluster roll at once.
	RollNowAll = "*"
)

// Maintenance are the platform's rules for its own changes to tenant
// clusters: a new patch of the version table, a changed machine template
// or container disk, a changed add-on chart version.
type Maintenance struct {
	// DefaultWindow is the window of a cluster without
	// spec.maintenance.window.
	// +kubebuilder:default={"start":"01:00","duration":"4h","timeZone":"UTC"}
	// +optional
	DefaultWindow *tkv1alpha1.MaintenanceWindow `json:"defaultWindow,omitempty"`

	// ConfinePlatformChanges makes the platform's changes wait for each
	// cluster's window; false applies them at once.
	// +kubebuilder:default=true
	// +optional
	ConfinePlatformChanges *bool `json:"confinePlatformChanges,omitempty"`

	// MaxConcurrentRolls bounds the clusters that roll the platform's
	// changes at once, even in overlapping windows; absent: 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxConcurrentRolls *int32 `json:"maxConcurrentRolls,omitempty"`

	// RollNow lets clusters roll the platform's changes at once, outside
	// their window and the spread limit (a security fix): "*" for every
	// cluster, or <namespace>/<name> of one cluster (the claim's or the
	// TenantCluster's).
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=127
	// +optional
	RollNow []string `json:"rollNow,omitempty"`

	// RollDeadline is how long a cluster's roll may take (its control
	// plane at the new version, every MachineDeployment up to date)
	// before it counts as failed, which stops every other cluster's roll
	// until it finishes or the platform acts.
	// +kubebuilder:default="2h"
	// +kubebuilder:validation:MaxLength=24
	// +optional
	RollDeadline string `json:"rollDeadline,omitempty"`
}

// defaultMaintenance fills the maintenance defaults.
func (s *Settings) defaultMaintenance() {
	m := &s.Maintenance
	if m.DefaultWindow == nil {
		w := DefaultMaintenanceWindow
		m.DefaultWindow = &w
	}
	if m.ConfinePlatformChanges == nil {
		on := true
		m.ConfinePlatformChanges = &on
	}
	if m.MaxConcurrentRolls == nil {
		n := DefaultMaxConcurrentRolls
		m.MaxConcurrentRolls = &n
	}
	if m.RollDeadline == "" {
		m.RollDeadline = string(DefaultRollDeadline)
	}
}

// validateMaintenance checks the maintenance settings under p.
func (s *Settings) validateMaintenance(p *field.Path) field.ErrorList {
	m, p := &s.Maintenance, p.Child("maintenance")
	var errs field.ErrorList
	if m.DefaultWindow != nil {
		errs = append(errs, m.DefaultWindow.Validate(p.Child("defaultWindow"))...)
	}
	if n := m.MaxConcurrentRolls; n != nil && (*n < 1 || *n > MaxConcurrentRollsLimit) {
		errs = append(errs, field.Invalid(p.Child("maxConcurrentRolls"), *n, fmt.Sprintf("must be from 1 to %d", MaxConcurrentRollsLimit)))
	}
	if m.RollDeadline != "" {
		if _, err := tkv1alpha1.Duration(m.RollDeadline).Parse(p.Child("rollDeadline"), MinRollDeadline, MaxRollDeadline); err != nil {
			errs = append(errs, err)
		}
	}
	if len(m.RollNow) > MaxRollNowEntries {
		errs = append(errs, field.TooMany(p.Child("rollNow"), len(m.RollNow), MaxRollNowEntries))
	}
	for i, e := range m.RollNow {
		if e != RollNowAll && !isClusterRef(e) {
			errs = append(errs, field.Invalid(p.Child("rollNow").Index(i), e, `must be "*" or <namespace>/<name> of a cluster`))
		}
	}
	return errs
}

// isClusterRef reports whether s is <namespace>/<name>, two DNS labels.
func isClusterRef(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return len(validation.IsDNS1123Label(s[:i])) == 0 && len(validation.IsDNS1123Label(s[i+1:])) == 0
		}
	}
	return false
}

// RollsNow reports whether rollNow names the cluster ns/name or every
// cluster.
func (m *Maintenance) RollsNow(ns, name string) bool {
	for _, e := range m.RollNow {
		if e == RollNowAll || e == ns+"/"+name {
			return true
		}
	}
	return false
}

// Window is the window of a cluster whose spec.maintenance.window is w
// (nil: the platform's default window).
func (m *Maintenance) Window(w *tkv1alpha1.MaintenanceWindow) tkv1alpha1.MaintenanceWindow {
	switch {
	case w != nil:
		return *w
	case m.DefaultWindow != nil:
		return *m.DefaultWindow
	}
	return DefaultMaintenanceWindow
}

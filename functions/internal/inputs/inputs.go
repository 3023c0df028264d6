// Package inputs lists the three function input types, whose fields are
// the platform settings (the EnvironmentConfig tenantkube), and holds the
// reader of those settings every function uses.
package inputs

import (
	addonsinput "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	workersinput "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/platform"
)

// All returns a zero value of each function input type: every key of the
// EnvironmentConfig's data must be a field of one of them.
func All() []any {
	return []any{&cpinput.ControlPlaneInput{}, &workersinput.WorkersInput{}, &addonsinput.AddonsInput{}}
}

// Platform reads the platform settings over any of the inputs; it accepts
// the keys of all three, so a setting of one function is no error in the
// others.
var Platform = platform.NewReader(All()...)

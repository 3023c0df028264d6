package main

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/hibernation"
)

// releasesSuspended reports whether the add-on HelmReleases are suspended
// (spec.suspend): while the tenant API server does not answer
// (tenantAPIAnswers), and while the cluster is not awake
// (internal/hibernation): asleep, and waking until its control plane is
// ready and its node groups at their minimum, as add-ons resume last.
// asleep says the cluster is asleep by spec.
func releasesSuspended(spec *v1alpha1.KubernetesClusterSpec, r *function.Request, now time.Time) (suspended, asleep bool, _ error) {
	d, err := hibernation.Decide(spec.Hibernation, now, r.HibernationFacts(spec, ""))
	if err != nil { // checked by spec.Validate
		return false, false, field.InternalError(field.NewPath("spec", "hibernation"), err)
	}
	asleep = d.State == v1alpha1.HibernationHibernating || d.State == v1alpha1.HibernationHibernated
	return !tenantAPIAnswers(r) || d.AddonsSuspended(), asleep, nil
}

// setAsleep replaces AddonsReady while the cluster is asleep by spec.
func setAsleep(p *function.Plan) {
	p.ReplaceCondition(v1alpha1.ConditionAddonsReady, false, v1alpha1.ReasonSleeping,
		"asleep by spec.hibernation: every add-on release is suspended until the cluster wakes")
}

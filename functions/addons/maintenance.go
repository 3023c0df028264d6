package main

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
)

// pendingChartVersion is the reason of an add-on's pending change
// (status.maintenance).
const pendingChartVersion = "the platform changed the add-on's chart version"

// observedChartVersion is the chart version add-on release runs, as
// observed: its HelmRelease's spec.chart.spec.version for a HelmRepository
// source, its managed OCIRepository's spec.ref.tag (one per release,
// N-<release>) for a managed OCIRepository source; "" for any other
// source. Both objects are the tenant's to write (Flux aggregates into
// edit): the value is only compared, never trusted (keptVersion).
func observedChartVersion(r *function.Request, release string, src *input.ChartSource) string {
	switch {
	case src.Kind == input.KindHelmRepository:
		return r.ObservedString(ComposedReleaseName(release), "spec", "chart", "spec", "version")
	case src.Kind == input.KindOCIRepository && src.URL != "":
		return r.ObservedString(composedOCIRepositoryName(release), "spec", "ref", "tag")
	}
	return ""
}

// keptVersion is the chart version to compose for src: the observed one
// while the platform's changes wait (platform false) and it is one of
// src.EarlierVersions, the versions the platform still runs; src.Version
// otherwise, and for any observed value not listed.
func keptVersion(src *input.ChartSource, observed string, platform bool) string {
	if platform || !slices.Contains(src.EarlierVersions, observed) {
		return src.Version
	}
	return observed
}

// holdChartVersions returns in with each add-on's chart version as
// keptVersion says under decision d, and the add-ons whose change waits,
// in the order of their release names. in itself is not changed.
func holdChartVersions(in *input.AddonsInput, r *function.Request, d maintenance.Decision) (*input.AddonsInput, []v1alpha1.PendingChange) {
	out := *in
	var held []v1alpha1.PendingChange
	for _, release := range input.Releases() {
		src, _ := out.Charts.Source(release)
		observed := observedChartVersion(r, release, src)
		if v := keptVersion(src, observed, d.Allows(false)); v != src.Version {
			held = append(held, v1alpha1.PendingChange{What: "addon/" + release, From: v, To: src.Version, Reason: pendingChartVersion})
			src.Version = v
		}
	}
	return &out, held
}

// renderedOnly is the changes of held whose release objs render.
func renderedOnly(held []v1alpha1.PendingChange, objs []Object) []v1alpha1.PendingChange {
	var out []v1alpha1.PendingChange
	for _, c := range held {
		if slices.ContainsFunc(objs, func(o Object) bool { return "addon/"+o.Release == c.What }) {
			out = append(out, c)
		}
	}
	return out
}

// heldInput is the input with the chart versions kept for the window, and
// the changes that wait.
type heldInput struct {
	in      *input.AddonsInput
	changes []v1alpha1.PendingChange
}

// holdForWindow is cluster t's maintenance decision at now (the
// control-plane step's, maintenance.Current) and in with the chart
// versions it keeps (holdChartVersions); it returns the problems of the
// cluster's window.
func holdForWindow(t *function.Cluster, in *input.AddonsInput, r *function.Request, now time.Time) (maintenance.Decision, heldInput, error) {
	policy, errs := maintenance.For(&in.Settings.Maintenance, t.Spec.Maintenance, t.ID)
	if len(errs) > 0 {
		return maintenance.Decision{}, heldInput{}, errs.ToAggregate()
	}
	d, err := maintenance.Current(r, policy, now)
	if err != nil {
		return maintenance.Decision{}, heldInput{}, field.InternalError(field.NewPath("context", maintenance.ContextKey), err)
	}
	h := heldInput{}
	h.in, h.changes = holdChartVersions(in, r, d)
	return d, h, nil
}

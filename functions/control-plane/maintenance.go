package main

import (
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	"github.com/tenantkube/tenantkube/internal/versions"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Reasons of the control plane's pending changes (status.maintenance).
const (
	pendingNewPatch = "a new patch in the platform's version table"
	pendingOwnMinor = "spec.version changed and spec.maintenance.confineOwnChanges is set"
)

// decideMaintenance is the cluster's maintenance decision at now
// (internal/maintenance).
func (s *scope) decideMaintenance() field.ErrorList {
	policy, errs := maintenance.For(&s.in.Settings.Maintenance, s.spec.Maintenance, s.t.ID)
	if len(errs) > 0 {
		return errs
	}
	s.maint, s.maintPolicy = maintenance.Decide(policy, s.now), policy
	return nil
}

// versionNow is the version row the KamajiControlPlane is composed with:
// s.version, or the observed spec.version while the change to s.version
// waits for the window. A new patch of the same minor is the platform's
// change; a new minor is the tenant's (spec.version). Only a version the
// table deploys or deployed (versions.Produced) is kept: the tenant can
// write the KamajiControlPlane in its namespace.
func (s *scope) versionNow() versions.KubernetesVersion {
	from, to := s.observed.Desired, s.version.Patch
	if from == "" || from == to {
		return s.version
	}
	row, ok := versions.Produced(from)
	if !ok {
		return s.version
	}
	own := row.Minor != s.version.Minor
	if s.maint.Allows(own) {
		return s.version
	}
	reason := pendingNewPatch
	if own {
		reason = pendingOwnMinor
	}
	s.pending = append(s.pending, tkv1alpha1.PendingChange{What: "controlPlane", From: from, To: to, Reason: reason})
	row.Patch = from
	return row
}

// maintenance reports what waits for the window (maintenance.Report).
func (s *scope) maintenance(p *function.Plan) field.ErrorList {
	if err := maintenance.Report(p, s.r, s.maint, s.pending); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("status", "maintenance"), err)}
	}
	return nil
}

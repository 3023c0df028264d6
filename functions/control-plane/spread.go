package main

import (
	"slices"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
)

// The roll records of the spread (docs/platform-guide.md, Maintenance
// windows): a claim's cluster that waits for a slot or rolls the
// platform's changes labels its management namespace labelRoll (Waiting
// or Rolling, with annotationWaitingSince or annotationRollSince); each
// cluster that needs a slot
// reads every such Namespace. Tenants cannot create or label a Namespace.
const (
	labelRoll           = "tenantkube.io/roll"
	annotationRollSince = "tenantkube.io/roll-since"
	// annotationWaitingSince: when a Waiting record was first written
	// (maintenance.Settled).
	annotationWaitingSince = "tenantkube.io/waiting-since"
	requiredRollPrefix     = "roll-records-"
	// requiredRollBindingPrefix: the TenantClusters' records
	// (tenantspread.go), by state.
	requiredRollBindingPrefix = "roll-bindings-"
	rollWaiting               = "Waiting"
	rollRolling               = "Rolling"
	rollPaused                = "Paused"
)

// rollStates are the label values of a record, in the order asked for;
// a Paused record (a roll of a cluster gone to sleep) is asked for by no
// cluster, so it never counts as running or failed.
var rollStates = []string{rollRolling, rollWaiting}

// rollRecord is a cluster's roll state: "" (none), rollWaiting or
// rollRolling since Since (for rollWaiting: waiting since).
type rollRecord struct {
	State string
	Since time.Time
}

// spread decides the roll after the sleep (decideSleep).
func (s *scope) spread(*function.Plan) field.ErrorList {
	s.spreadRoll(s.maintPolicy)
	return nil
}

// spreadRoll decides whether the platform's changes may start rolling a
// claim's cluster now (s.maint.Platform from the window) and sets s.roll.
// A cluster not Awake starts no roll (sleepingRoll). A roll in progress
// goes on until it finishes, in or out of the window; a cluster with the
// platform's changes waiting and its window open starts only when
// maintenance.Admit lets it (rollNow: at once). A namespaced cluster's
// record is its Tenant's (namespacedRoll).
func (s *scope) spreadRoll(policy maintenance.Policy) {
	waiting := s.platformChangesWaiting()
	if s.sleep.State != tkv1alpha1.HibernationAwake {
		s.sleepingRoll(waiting)
		return
	}
	s.waitingForWindow = waiting && !s.maint.Platform
	if s.t.Namespaced {
		s.namespacedRoll(waiting, policy)
		return
	}
	own := s.observedRollRecord()
	// A cluster that waited at its last run still does: the later steps'
	// report (status.maintenance) may be read before its own record.
	waiting = waiting || own.State == rollWaiting
	switch {
	case (own.State == rollRolling || own.State == rollPaused) && (waiting || !s.rollFinished() || s.justStarted(own)):
		s.roll = own
		if own.State == rollPaused {
			s.roll = rollRecord{State: rollRolling, Since: s.now}
		}
		s.maint.Platform, s.maint.Reason = true, ""
	case !s.maint.Platform:
	case !waiting:
		// In an open window a change no earlier run has seen (a machine
		// template, a chart) waits too: the later steps report it in
		// status.maintenance, whose change has Crossplane run the
		// pipeline again, and that run asks for a slot.
		if policy.ConfinePlatform && !policy.RollNow {
			s.maint.Platform, s.maint.Reason = false, tkv1alpha1.ReasonWaitingForRollSlot
		}
	case policy.RollNow:
		s.roll = rollRecord{State: rollRolling, Since: s.now}
	default:
		s.roll = s.admit()
	}
}

// sleepingRoll: a cluster not Awake (Hibernating, Hibernated, Waking)
// starts no roll, whatever the window, the slots or rollNow; its
// platform changes wait for the wake. A roll it started before is
// Paused: no cluster counts it, and once Awake it goes on with its
// clock (rollDeadline) started again from the wake. Kamaji reports no
// new version of a control plane at zero replicas, so a roll asleep
// would otherwise pass the deadline and stop every cluster's rolls.
func (s *scope) sleepingRoll(waiting bool) {
	if waiting {
		s.maint.Platform, s.maint.Reason = false, tkv1alpha1.ReasonWaitingForWake
	}
	if s.t.Namespaced {
		return
	}
	if own := s.observedRollRecord(); own.State == rollRolling || own.State == rollPaused {
		s.roll = rollRecord{State: rollPaused}
	}
}

// admit asks for every roll record and starts the roll when
// maintenance.Admit lets it and the cluster's Waiting record has settled;
// until the records arrive the cluster waits.
func (s *scope) admit() rollRecord {
	m := &s.in.Settings.Maintenance
	deadline, _ := time.ParseDuration(string(m.RollDeadline)) // validated with the settings
	rec, reason := admitSettled(s.observedRollRecord(), s.now, func() (bool, string) {
		rolls, arrived := s.rollRecords()
		if !arrived {
			return false, tkv1alpha1.ReasonWaitingForRollSlot
		}
		return maintenance.Admit(s.t.ID.Namespace+"/"+s.t.ID.Name, rolls, int(*m.MaxConcurrentRolls), s.now, deadline)
	})
	if rec.State == rollWaiting {
		s.maint.Platform, s.maint.Reason = false, reason
	}
	return rec
}

// admitSettled is the record of a cluster that needs a slot, own its
// observed record: Rolling from now when admit lets it and its Waiting
// record has settled (maintenance.Settled), else Waiting since its
// record's instant (now for a new one, or one that does not parse or
// lies ahead) with admit's reason.
func admitSettled(own rollRecord, now time.Time, admit func() (bool, string)) (rollRecord, string) {
	since := now
	if own.State == rollWaiting && !own.Since.IsZero() && !own.Since.After(now) {
		since = own.Since
	}
	ok, reason := admit()
	if ok && !maintenance.Settled(since, now) {
		ok, reason = false, tkv1alpha1.ReasonWaitingForRollSlot
	}
	if !ok {
		return rollRecord{State: rollWaiting, Since: since}, reason
	}
	return rollRecord{State: rollRolling, Since: now}, ""
}

// recheckAfter is how soon a cluster with record rec looks again: when
// a Waiting record settles, at the latest after rollRecheck.
func recheckAfter(rec rollRecord, now time.Time) time.Duration {
	if rec.State == rollWaiting {
		if left := rec.Since.Add(maintenance.RollSettle).Sub(now); left > 0 {
			return min(left, rollRecheck)
		}
	}
	return rollRecheck
}

// platformChangesWaiting reports whether the platform changed something
// the cluster does not run yet: a new patch of the control plane's minor,
// or, at the last reconcile, a pending change in the XR's
// status.maintenance (a claim's XR status is written by Crossplane only).
func (s *scope) platformChangesWaiting() bool {
	if d := s.observed.Desired; d != "" && d != s.version.Patch && strings.HasPrefix(d, s.version.Minor+".") {
		return true
	}
	var st tkv1alpha1.MaintenanceStatus
	_, _ = s.r.ObservedStatus("maintenance", &st) // unreadable: none
	return len(st.Pending) > 0
}

// rollFinished reports whether the control plane reports the version it
// is asked for and every observed MachineDeployment is up to date (Cluster
// API v1beta2: status.observedGeneration = metadata.generation and
// status.upToDateReplicas = status.replicas).
func (s *scope) rollFinished() bool {
	if s.observed.Exists && s.observed.Running != s.observed.Desired {
		return false
	}
	for name := range s.r.ObservedNames() {
		if s.r.ObservedString(name, "kind") != "MachineDeployment" {
			continue
		}
		num := func(p ...string) float64 { return s.r.ObservedNumber(name, p...) }
		if num("status", "observedGeneration") < num("metadata", "generation") || num("status", "upToDateReplicas") < num("status", "replicas") {
			return false
		}
	}
	return true
}

// annotations are the record's instant: roll-since of a Rolling record,
// waiting-since of a Waiting one (RFC 3339, UTC); nil for the others.
func (r rollRecord) annotations() map[string]string {
	switch r.State {
	case rollRolling:
		return map[string]string{annotationRollSince: r.Since.UTC().Format(time.RFC3339)}
	case rollWaiting:
		return map[string]string{annotationWaitingSince: r.Since.UTC().Format(time.RFC3339)}
	}
	return nil
}

// observedRollRecord is the cluster's own record as observed on its
// management namespace.
func (s *scope) observedRollRecord() rollRecord {
	return observedRollRecordOf(s.r, nameManagementNamespace)
}

// rollRecords are every cluster's records, and whether they arrived
// (readRollRecords); the cluster asks for them (composeRollRecord).
func (s *scope) rollRecords() ([]maintenance.Roll, bool) {
	s.requireRollRecords = true
	return readRollRecords(s.r)
}

// readRollRecords reads the records of both kinds of cluster: a claim's
// on its management namespace, a TenantCluster's on the CSI controller's
// ClusterRoleBinding its Tenant composes (tenantspread.go). Only an
// object named for the cluster its labels name, and not being deleted (a
// claim deleted mid-roll leaves its label on the Terminating namespace),
// counts. A roll-since that does not parse leaves the roll unstarted.
func readRollRecords(r *function.Request) ([]maintenance.Roll, bool) {
	var out []maintenance.Roll
	for _, state := range rollStates {
		nss, arrived, err := function.Required[metav1.PartialObjectMetadata](r, requiredRollPrefix+state)
		if !arrived || err != nil {
			return nil, false
		}
		crbs, arrived, err := function.Required[metav1.PartialObjectMetadata](r, requiredRollBindingPrefix+state)
		if !arrived || err != nil {
			return nil, false
		}
		for _, o := range append(nss, crbs...) {
			l := o.Labels
			id := function.Identity{Namespace: l[function.LabelNamespace], Name: l[function.LabelCluster]}
			if l[labelRoll] != state || o.DeletionTimestamp != nil || id.Namespace == "" || id.Name == "" || o.Name != rollRecordName(o.Kind, id) {
				continue
			}
			r := maintenance.Roll{Cluster: id.Namespace + "/" + id.Name, Waiting: state == rollWaiting}
			if rec := recordFrom(state, o.Annotations[annotationRollSince], ""); rec.rolling() {
				r.Since = rec.Since
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b maintenance.Roll) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out, true
}

// rollRecordName is the name of the object of kind that may carry the
// record of cluster id: its management namespace (a claim's), its CSI
// controller's ClusterRoleBinding (a TenantCluster's); "" for any other
// kind (an object has a name).
func rollRecordName(kind string, id function.Identity) string {
	switch kind {
	case "Namespace":
		return id.ManagementNamespace()
	case "ClusterRoleBinding":
		return id.ClusterRoleBindingName(function.CSIControllerComponent)
	}
	return ""
}

// requireRollRecords asks for every record of both kinds, by state.
func requireRollRecords(p *function.Plan) {
	for _, state := range rollStates {
		p.Require(requiredRollPrefix+state, &fnv1.ResourceSelector{
			ApiVersion: "v1", Kind: "Namespace",
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
				function.LabelManagementNamespace: "true", labelRoll: state,
			}}},
		})
		p.Require(requiredRollBindingPrefix+state, &fnv1.ResourceSelector{
			ApiVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding",
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
				function.LabelComponent: function.CSIControllerComponent, labelRoll: state,
			}}},
		})
	}
}

// composeRollRecord labels the cluster's management namespace while it
// waits or rolls, asks for the records while it needs a slot, and passes
// the decision to the workers and addons steps (maintenance.ContextKey).
func (s *scope) composeRollRecord(p *function.Plan) field.ErrorList {
	s.composeRollRequest(p)
	if s.requireRollRecords {
		requireRollRecords(p)
	}
	if p.Context == nil {
		p.Context = map[string]any{}
	}
	p.Context[maintenance.ContextKey] = maintenance.Admission{Platform: s.maint.Platform, Reason: s.maint.Reason}
	if s.roll.State == "" {
		return nil
	}
	for _, c := range p.Composed {
		ns, ok := c.Object.(*corev1.Namespace)
		if c.Name != nameManagementNamespace || !ok {
			continue
		}
		ns.Labels[labelRoll] = s.roll.State
		if a := s.roll.annotations(); a != nil {
			ns.Annotations = a
		}
	}
	return nil
}

// rerun makes Crossplane run the pipeline again, with nothing else
// changed, when the window opens on changes waiting for it, and every
// rollRecheck while the cluster waits for a slot or rolls: its poll
// interval (an hour, deploy/crossplane/values.yaml) could miss a window.
func (s *scope) rerun(p *function.Plan) field.ErrorList {
	var after time.Duration
	switch {
	case s.roll.State == rollRolling || s.roll.State == rollWaiting || s.rollRequest:
		after = recheckAfter(s.roll, s.now)
	case s.waitingForWindow:
		after = max(s.maint.NextStart.Sub(s.now), time.Second)
	default:
		return nil
	}
	p.RunAgainWithin(after)
	return nil
}

// rollRecheck is how soon a cluster waiting for a slot looks again
// (besides Crossplane's watch of the records it required).
const rollRecheck = maintenance.RollRecheck

// justStarted: a roll that started less than maintenance.RollSettle ago
// goes on whatever the MachineDeployments look like, since they may be
// read from Crossplane's cache before the change that started it.
func (s *scope) justStarted(own rollRecord) bool {
	return own.State == rollRolling && s.now.Sub(own.Since) < maintenance.RollSettle
}

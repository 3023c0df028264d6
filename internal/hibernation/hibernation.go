// Package hibernation decides a cluster's sleep state from its spec, the
// clock and what the functions observe; each function reads the same
// decision (docs/tenant-guide.md, Hibernation). Pure: the clock and the
// observations are arguments.
package hibernation

import (
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Facts are what a function observes of the cluster.
type Facts struct {
	// Prior is the state status.hibernation last recorded; anything but
	// a HibernationState (a tenant can write a namespaced XR's status)
	// is "".
	Prior v1alpha1.HibernationState
	// Machines is the number of Machines of the cluster; MachinesKnown is
	// false until they arrived (only the control-plane step asks).
	Machines      int
	MachinesKnown bool
	// ControlPlaneReady: the observed KamajiControlPlane's status.ready.
	ControlPlaneReady bool
	// WorkersAtMinimum: every node group's observed MachineDeployment
	// has at least minReplicas machines (status.replicas).
	WorkersAtMinimum bool
}

// Decision is a cluster's sleep state at one instant.
type Decision struct {
	State v1alpha1.HibernationState
	// Next is when the schedules next change between asleep and awake;
	// zero for never.
	Next time.Time
}

// Decide is the state of a cluster whose spec.hibernation is h (validated)
// at now:
//   - asleep by spec with no Machine left: Hibernated (control plane to
//     zero, only now: kube-controller-manager must stay up until the
//     Nodes are gone);
//   - asleep by spec otherwise: Hibernating (node groups to zero);
//   - awake by spec after a sleep (Prior not Awake nor ""), until the
//     control plane is ready and the node groups at their minimum: Waking;
//   - else Awake.
func Decide(h v1alpha1.Hibernation, now time.Time, f Facts) (Decision, error) {
	set, err := h.Set()
	if err != nil {
		return Decision{}, err
	}
	d := Decision{}
	if next, ok := set.NextTransition(now); ok {
		d.Next = next
	}
	slept := f.Prior == v1alpha1.HibernationHibernating || f.Prior == v1alpha1.HibernationHibernated || f.Prior == v1alpha1.HibernationWaking
	switch {
	case set.Asleep(now) && f.MachinesKnown && f.Machines == 0:
		d.State = v1alpha1.HibernationHibernated
	case set.Asleep(now):
		d.State = v1alpha1.HibernationHibernating
	case slept && !(f.ControlPlaneReady && f.WorkersAtMinimum):
		d.State = v1alpha1.HibernationWaking
	default:
		d.State = v1alpha1.HibernationAwake
	}
	return d, nil
}

// ParseState is s when it names a HibernationState, else "".
func ParseState(s string) v1alpha1.HibernationState {
	switch st := v1alpha1.HibernationState(s); st {
	case v1alpha1.HibernationAwake, v1alpha1.HibernationHibernating, v1alpha1.HibernationHibernated, v1alpha1.HibernationWaking:
		return st
	}
	return ""
}

// WorkersDown: the node groups are held at zero machines, the
// autoscaler stopped and remediation off: while asleep, and while waking
// until the control plane is ready (it comes back first).
func (d Decision) WorkersDown(controlPlaneReady bool) bool {
	switch d.State {
	case v1alpha1.HibernationHibernating, v1alpha1.HibernationHibernated:
		return true
	case v1alpha1.HibernationWaking:
		return !controlPlaneReady
	}
	return false
}

// ControlPlaneDown: the control plane is at zero replicas.
func (d Decision) ControlPlaneDown() bool { return d.State == v1alpha1.HibernationHibernated }

// AddonsSuspended: the add-on releases are suspended; they resume last.
func (d Decision) AddonsSuspended() bool { return d.State != v1alpha1.HibernationAwake }

// Status is status.hibernation for d.
func (d Decision) Status() v1alpha1.HibernationStatus {
	s := v1alpha1.HibernationStatus{State: d.State}
	if !d.Next.IsZero() {
		s.NextTransition = d.Next.UTC().Format(time.RFC3339)
	}
	return s
}

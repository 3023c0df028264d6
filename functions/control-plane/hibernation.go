package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/hibernation"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// requiredMachines is the required-resource key of the cluster's
// Machines, asked for while the cluster is asleep by spec: the control
// plane goes to zero only once none is left.
const requiredMachines = "hibernation-machines"

// maxSleepMachines bounds the Machines asked for: while the observed
// MachineDeployments report more, the function waits for them to scale
// down first, so that a request stays far under gRPC's 4 MiB.
const maxSleepMachines = 200

// decideSleep decides the cluster's sleep (internal/hibernation) and,
// while it is asleep by spec, asks for its Machines (machinesSelector).
func (s *scope) decideSleep(p *function.Plan) field.ErrorList {
	facts := s.r.HibernationFacts(s.spec, "")
	d, err := hibernation.Decide(s.spec.Hibernation, s.now, facts)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "hibernation"), err)}
	}
	if d.State == tkv1alpha1.HibernationHibernating && s.r.ObservedMachines(s.spec) <= maxSleepMachines {
		p.Require(requiredMachines, machinesSelector(s.t.ID))
		if d, err = hibernation.Decide(s.spec.Hibernation, s.now, s.r.HibernationFacts(s.spec, requiredMachines)); err != nil {
			return field.ErrorList{field.InternalError(field.NewPath("spec", "hibernation"), err)}
		}
	}
	s.sleep, s.sleepFacts = d, facts
	return nil
}

// machinesSelector selects the Machines of cluster N in NS (Cluster API
// labels each with cluster.x-k8s.io/cluster-name).
func machinesSelector(id function.Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: clusterv1.GroupVersion.String(),
		Kind:       "Machine",
		Namespace:  ptrTo(id.Namespace),
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{function.LabelCAPICluster: id.Name},
		}},
	}
}

// sleepControlPlane sets kcp's replicas to zero while the cluster is
// Hibernated: Kamaji then reports the TenantControlPlane Sleeping (Kamaji
// e51909fa internal/resources/k8s_deployment_resource.go:85-88) and the
// provider copies replicas through (provider v0.20.0
// controllers/kamajicontrolplane_controller_tcp.go:80-81). The
// DataStore, its etcd and the PKI Secrets are untouched.
func (s *scope) sleepControlPlane(kcp *kamajiv1alpha2.KamajiControlPlane) {
	if s.sleep.ControlPlaneDown() {
		kcp.Spec.Replicas = ptrTo(int32(0))
	}
}

// sleepStatus sets status.hibernation, Hibernated and Waking, and asks
// to run again at the next transition, on a cluster that uses
// hibernation (spec.hibernation set, or a state recorded).
func (s *scope) sleepStatus(p *function.Plan) field.ErrorList {
	h := s.spec.Hibernation
	if !h.Enabled && len(h.Schedules) == 0 && s.sleepFacts.Prior == "" {
		return nil
	}
	d := s.sleep
	p.Status["hibernation"] = d.Status()
	if !d.Next.IsZero() {
		p.RunAgainWithin(d.Next.Sub(s.now))
	}
	hibernated, waking := sleepConditions(d, s.sleepFacts)
	p.SetCondition(tkv1alpha1.ConditionHibernated, hibernated.True, hibernated.Reason, hibernated.Message)
	p.SetCondition(tkv1alpha1.ConditionWaking, waking.True, waking.Reason, waking.Message)
	if d.State == tkv1alpha1.HibernationHibernated {
		p.ReplaceCondition(tkv1alpha1.ConditionControlPlaneReady, false, tkv1alpha1.ReasonControlPlaneAsleep,
			"the cluster is hibernated: the control plane is at zero replicas, its etcd and PKI kept")
	}
	return nil
}

// sleepConditions are Hibernated and Waking for d.
func sleepConditions(d hibernation.Decision, f hibernation.Facts) (hibernated, waking function.Condition) {
	awake := function.Condition{Reason: tkv1alpha1.ReasonAwake, Message: "the cluster runs as its spec says"}
	sleeping := function.Condition{Reason: tkv1alpha1.ReasonSleeping, Message: "the cluster is asleep by spec.hibernation"}
	switch d.State {
	case tkv1alpha1.HibernationHibernating:
		return function.Condition{Reason: tkv1alpha1.ReasonScalingDownWorkers,
			Message: "asleep by spec.hibernation: the node groups scale to zero; the control plane goes to zero once no Machine is left"}, sleeping
	case tkv1alpha1.HibernationHibernated:
		return function.Condition{True: true, Reason: tkv1alpha1.ReasonControlPlaneAsleep,
			Message: "no Machine is left and the control plane is at zero replicas; etcd and volumes are kept"}, sleeping
	case tkv1alpha1.HibernationWaking:
		if !f.ControlPlaneReady {
			return awake, function.Condition{True: true, Reason: tkv1alpha1.ReasonWaitingForControlPlaneWake,
				Message: "the control plane is coming back; the node groups stay at zero until it is ready"}
		}
		return awake, function.Condition{True: true, Reason: tkv1alpha1.ReasonWaitingForWorkersWake,
			Message: "the control plane is ready; the node groups scale to their minReplicas, then the add-ons resume"}
	}
	return awake, awake
}

package main

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/hibernation"
)

// planAt is plan at the clock now, with the cluster's hibernation
// (internal/hibernation): while its node groups are held down
// (Decision.WorkersDown), holdDown, and WorkersReady says it sleeps
// while asleep; waking once they are no longer held, wakeToMinimum;
// while it is not awake, a minimum that
// no longer fits a quota is reported as what waking needs
// (wakeCapacity).
func planAt(t *function.Cluster, in *inputv1alpha1.WorkersInput, r *function.Request, now time.Time) (*function.Plan, field.ErrorList) {
	p, errs := plan(t, in, r, now)
	if len(errs) > 0 {
		return nil, errs
	}
	machines := ""
	if machinesBounded(t.Spec) { // requireStatusInputs asks for them
		machines = requirementMachines
	}
	facts := r.HibernationFacts(t.Spec, machines)
	d, err := hibernation.Decide(t.Spec.Hibernation, now, facts)
	if err != nil { // checked by plan's checkSpec
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "hibernation"), err)}
	}
	if d.WorkersDown(facts.ControlPlaneReady) {
		holdDown(p, d.ControlPlaneDown())
	} else {
		wakeToMinimum(p, t.Spec, r)
	}
	if d.State == v1alpha1.HibernationHibernating || d.State == v1alpha1.HibernationHibernated {
		p.ReplaceCondition(v1alpha1.ConditionWorkersReady, false, v1alpha1.ReasonSleeping,
			"asleep by spec.hibernation: every node group is held at zero machines; minReplicas is kept for waking")
	}
	if d.State != v1alpha1.HibernationAwake {
		wakeCapacity(p)
	}
	return p, nil
}

// holdDown changes p's objects so that the node groups go to and stay at
// zero machines without losing what waking needs:
//   - each MachineDeployment: spec.replicas 0 and the autoscaler's min and
//     max size 0; the spec keeps minReplicas, which waking raises the
//     group to (wakeToMinimum);
//   - each MachineHealthCheck: remediation only while at most 0 machines
//     are unhealthy, i.e. never (cluster-api v1.13.6
//     internal/controllers/machinehealthcheck/machinehealthcheck_controller.go:749-753);
//     the object and its status stay;
//   - cluster-autoscaler's Deployment at zero replicas, so that it does not
//     scale a group back; with the control plane down too (no Machine is
//     left, so no VM has a volume to detach or a node to serve), the
//     KubeVirt cloud and CSI controllers' Deployments as well: they only
//     talk to the tenant API server. The LoadBalancer Services and
//     DataVolumes they made stay.
func holdDown(p *function.Plan, controlPlaneDown bool) {
	zero := int32(0)
	for _, c := range p.Composed {
		switch o := c.Object.(type) {
		case *clusterv1.MachineDeployment:
			o.Spec.Replicas = &zero
			o.Annotations[annotationAutoscalerMin], o.Annotations[annotationAutoscalerMax] = "0", "0"
		case *clusterv1.MachineHealthCheck:
			o.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo = ptr(intstr.FromInt32(0))
		case *appsv1.Deployment:
			name := strings.TrimPrefix(c.Name, managementPrefix)
			if name == nameAutoscalerDeployment || controlPlaneDown && (name == nameCCMDeployment || name == nameCSIDeployment) {
				o.Spec.Replicas = &zero
			}
		}
	}
}

// wakeToMinimum writes, on each node group's MachineDeployment that is
// not held down and whose observed spec.replicas is below minReplicas (the
// 0 written asleep), spec.replicas minReplicas; the others stay unwritten
// (the autoscaler's). Leaving replicas unwritten is not enough: Crossplane
// applies server-side (crossplane v2.4.0
// internal/controller/apiextensions/composite/composition_functions.go:689),
// so the 0 written asleep stays while another field manager
// (cluster-autoscaler) also owns it, and Cluster API's webhook defaults
// spec.replicas only when it is absent (cluster-api v1.13.6
// internal/webhooks/machinedeployment.go:356-359). The observed spec, not
// status.replicas, decides: status.replicas counts Machines still being
// deleted (cluster-api v1.13.6
// internal/controllers/machineset/machineset_controller.go:615), so a
// cluster woken while its hold-down deletions run would look awake at 0.
func wakeToMinimum(p *function.Plan, spec *v1alpha1.KubernetesClusterSpec, r *function.Request) {
	mds := map[string]*clusterv1.MachineDeployment{}
	for _, c := range p.Composed {
		if o, ok := c.Object.(*clusterv1.MachineDeployment); ok {
			mds[c.Name] = o
		}
	}
	for g, ng := range spec.NodeGroups {
		name := machineDeploymentResourceName(g)
		md, ok := mds[name]
		observed, known := r.ObservedNumberAt(name, "spec", "replicas")
		if !ok || !known {
			continue
		}
		if n, write := wakeReplicas(deref(ng.MinReplicas), observed); write {
			md.Spec.Replicas = &n
		}
	}
}

// wakeReplicas is the spec.replicas written on a node group with
// minReplicas minimum whose observed MachineDeployment has spec.replicas
// spec, and whether it is written: minimum while spec is
// below it; from then on nothing, the autoscaler owns
// it within [minReplicas, maxReplicas] (its annotations).
func wakeReplicas(minimum int32, spec float64) (int32, bool) {
	if spec >= float64(minimum) {
		return 0, false
	}
	return minimum, true
}

// wakeCapacity turns the pre-flight's MinimumExceedsQuota (warnings and
// CapacityFits) into WakeExceedsQuota: a cluster that is not awake holds
// no machine, so its minimum is what waking needs of the quota.
func wakeCapacity(p *function.Plan) {
	const prefix = "waking needs the node groups at minReplicas: "
	for i, w := range p.Warnings {
		if w.Reason == v1alpha1.ReasonMinimumExceedsQuota {
			p.Warnings[i] = function.Warning{Reason: v1alpha1.ReasonWakeExceedsQuota, Message: prefix + w.Message}
		}
	}
	for i, c := range p.Conditions {
		if c.Type == v1alpha1.ConditionCapacityFits && c.Reason == v1alpha1.ReasonMinimumExceedsQuota {
			p.Conditions[i].Reason = v1alpha1.ReasonWakeExceedsQuota
			p.Conditions[i].Message = prefix + strings.TrimPrefix(c.Message, prefix)
		}
	}
}

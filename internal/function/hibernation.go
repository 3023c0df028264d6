package function

import (
	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/hibernation"
)

// MachineDeploymentResourceName is the composed-resource name of node
// group G's MachineDeployment (function workers).
func MachineDeploymentResourceName(g string) string { return "nodegroup-" + g + "-machinedeployment" }

// HibernationFacts reads what hibernation.Decide needs from the observed
// state: the state the XR's status recorded, the KamajiControlPlane's
// status.ready, whether every node group of spec has its minReplicas
// machines and asks for them (spec.replicas), and the Machines under the required-resource key machines
// ("" leaves them unknown).
func (r *Request) HibernationFacts(spec *v1alpha1.KubernetesClusterSpec, machines string) hibernation.Facts {
	f := hibernation.Facts{
		Prior:             hibernation.ParseState(r.CompositeString("status", "hibernation", "state")),
		ControlPlaneReady: r.ObservedBool(KamajiControlPlaneResourceName, "status", "ready"),
		WorkersAtMinimum:  true,
	}
	for g, ng := range spec.NodeGroups {
		name, minimum := MachineDeploymentResourceName(g), float64(ptrValue(ng.MinReplicas))
		// status.replicas counts Machines still being deleted
		// (cluster-api v1.13.6
		// internal/controllers/machineset/machineset_controller.go:615):
		// a group still held at 0 has not woken whatever it counts.
		held, known := r.ObservedNumberAt(name, "spec", "replicas")
		if r.ObservedNumber(name, "status", "replicas") < minimum || known && held < minimum {
			f.WorkersAtMinimum = false
		}
	}
	if machines != "" {
		f.Machines, f.MachinesKnown = r.RequiredArrived(machines)
	}
	return f
}

// ObservedMachines is the sum of the observed MachineDeployments'
// status.replicas over spec's node groups.
func (r *Request) ObservedMachines(spec *v1alpha1.KubernetesClusterSpec) int {
	n := 0
	for g := range spec.NodeGroups {
		n += int(r.ObservedNumber(MachineDeploymentResourceName(g), "status", "replicas"))
	}
	return n
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// ReplaceCondition sets typ on p in place of the conditions of typ set
// before.
func (p *Plan) ReplaceCondition(typ string, isTrue bool, reason, message string) {
	kept := p.Conditions[:0]
	for _, c := range p.Conditions {
		if c.Type != typ {
			kept = append(kept, c)
		}
	}
	p.Conditions = kept
	p.SetCondition(typ, isTrue, reason, message)
}

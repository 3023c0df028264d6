package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestHibernationFactsWorkersAtMinimum: a node group with minReplicas 2
// is at its minimum when its MachineDeployment counts 2 Machines and asks
// for 2 or more; one still asking for the 0 it slept at is not, whatever
// it counts (Machines being deleted are counted in status.replicas).
func TestHibernationFactsWorkersAtMinimum(t *testing.T) {
	two := int32(2)
	spec := &v1alpha1.KubernetesClusterSpec{NodeGroups: map[string]v1alpha1.NodeGroup{"md0": {MinReplicas: &two}}}
	for _, c := range []struct {
		name   string
		status map[string]any
		spec   map[string]any
		want   bool
	}{
		{"2 Machines, asks for 2", map[string]any{"replicas": 2.0}, map[string]any{"replicas": 2.0}, true},
		{"3 Machines, asks for 3", map[string]any{"replicas": 3.0}, map[string]any{"replicas": 3.0}, true},
		{"2 Machines being deleted, asks for 0", map[string]any{"replicas": 2.0}, map[string]any{"replicas": 0.0}, false},
		{"1 Machine, asks for 2", map[string]any{"replicas": 1.0}, map[string]any{"replicas": 2.0}, false},
		{"2 Machines, spec.replicas absent", map[string]any{"replicas": 2.0}, map[string]any{}, true},
	} {
		md := mustStruct(t, map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "spec": c.spec, "status": c.status})
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{
			MachineDeploymentResourceName("md0"): {Resource: md},
		}}}
		if got := NewRequest(req).HibernationFacts(spec, "").WorkersAtMinimum; got != c.want {
			t.Errorf("%s: WorkersAtMinimum %t, want %t", c.name, got, c.want)
		}
	}
}

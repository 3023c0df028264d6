package main

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Health-check timing of every node group, in seconds (docs/spec.md §5.2).
const (
	// nodeStartupTimeoutSeconds is how long a machine may take to get a node (10m).
	nodeStartupTimeoutSeconds = 600
	// readyUnknownTimeoutSeconds is how long a node may be Ready=Unknown.
	readyUnknownTimeoutSeconds = 30
	// readyFalseTimeoutSeconds is how long a node may be Ready=False.
	readyFalseTimeoutSeconds = 300
)

// buildMachineHealthCheck returns the MachineHealthCheck N-G of a node group
// (CAPI v1beta2, docs/spec.md §5.2): machines of the group whose node has not
// started within 10 minutes, or is Ready=Unknown for 30s or Ready=False for
// 300s, are unhealthy and remediated (remediation always enabled: up to
// 100% of the group).
func buildMachineHealthCheck(id function.Identity, p nodeGroupPlan) *clusterv1.MachineHealthCheck {
	name := p.ObjectName(id)
	return &clusterv1.MachineHealthCheck{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineHealthCheck"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: id.Namespace,
			Labels:    groupLabels(id, p.Name),
		},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: id.Name,
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{
				function.LabelCAPICluster: id.Name, labelDeploymentName: name,
			}},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr(int32(nodeStartupTimeoutSeconds)),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr(int32(readyUnknownTimeoutSeconds))},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr(int32(readyFalseTimeoutSeconds))},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{TriggerIf: clusterv1.MachineHealthCheckRemediationTriggerIf{
				UnhealthyLessThanOrEqualTo: ptr(intstr.FromString("100%")),
			}},
		},
	}
}

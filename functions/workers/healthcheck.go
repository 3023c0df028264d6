package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// healthCheck is the effective health check of one node group:
// spec.nodeHealthCheck with the group's overrides.
type healthCheck struct {
	// MaxUnhealthy is CAPI's unhealthyLessThanOrEqualTo: machines, or a
	// percentage of the group's machines rounded down.
	MaxUnhealthy intstr.IntOrString
	// Timeouts in whole seconds.
	NodeStartupTimeout, ReadyUnknownTimeout, ReadyFalseTimeout int32
}

// groupHealthCheck returns the health check of node group ng at path:
// the group's maxUnhealthy and nodeStartupTimeout when set, otherwise the
// cluster's, and the cluster's Ready timeouts. spec is defaulted and
// validated; a bad value is still an error naming its field.
func groupHealthCheck(spec *v1alpha1.KubernetesClusterSpec, path *field.Path, ng v1alpha1.NodeGroup) (healthCheck, field.ErrorList) {
	hp := field.NewPath("spec", "nodeHealthCheck")
	h := spec.NodeHealthCheck
	limit, limitPath := h.MaxUnhealthy, hp.Child("maxUnhealthy")
	if ng.MaxUnhealthy != "" {
		limit, limitPath = ng.MaxUnhealthy, path.Child("maxUnhealthy")
	}
	startup, startupPath := h.NodeStartupTimeout, hp.Child("nodeStartupTimeout")
	if ng.NodeStartupTimeout != "" {
		startup, startupPath = ng.NodeStartupTimeout, path.Child("nodeStartupTimeout")
	}
	var out healthCheck
	var errs field.ErrorList
	var err *field.Error
	if out.MaxUnhealthy, err = limit.Parse(limitPath); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		to   *int32
		v    v1alpha1.Duration
		path *field.Path
		lo   v1alpha1.Duration
	}{
		{&out.NodeStartupTimeout, startup, startupPath, v1alpha1.MinNodeStartupTimeout},
		{&out.ReadyUnknownTimeout, h.ReadyUnknownTimeout, hp.Child("readyUnknownTimeout"), v1alpha1.MinTimeout},
		{&out.ReadyFalseTimeout, h.ReadyFalseTimeout, hp.Child("readyFalseTimeout"), v1alpha1.MinTimeout},
	} {
		v, err := d.v.Parse(d.path, d.lo, v1alpha1.MaxTimeout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*d.to = int32(v / time.Second)
	}
	return out, errs
}

// remediationLimit is how many unhealthy machines of a group of n the
// MachineHealthCheck still remediates at limit: CAPI scales a percentage
// against the machines it checks and rounds down
// (intstr.GetScaledValueFromIntOrPercent, roundUp false; cluster-api
// #12904), and stops remediating while more machines than that are
// unhealthy or still starting.
func remediationLimit(limit intstr.IntOrString, n int) int {
	v, err := intstr.GetScaledValueFromIntOrPercent(&limit, n, false)
	if err != nil {
		return 0
	}
	return v
}

// neverRemediates reports whether a group of at most maxReplicas machines
// can never have a machine remediated at a non-zero limit: a percentage
// that rounds down to 0 even at the group's largest size (50% of 1, 20%
// of 4).
func neverRemediates(limit intstr.IntOrString, maxReplicas int32) bool {
	if maxReplicas == 0 || remediationLimit(limit, int(maxReplicas)) > 0 {
		return false
	}
	return limit.Type == intstr.String && limit.StrVal != "0%"
}

// warnNeverRemediated warns for each node group whose maxUnhealthy rounds
// down to no machine at the size it runs by design: CAPI takes the
// percentage of the machines that exist at the time (cluster-api #12904),
// so that is its minReplicas when at least 1, else its maxReplicas (a
// group scaled from zero).
func warnNeverRemediated(p *function.Plan, spec *v1alpha1.KubernetesClusterSpec) {
	for _, g := range sortedKeys(spec.NodeGroups) {
		ng := spec.NodeGroups[g]
		h, errs := groupHealthCheck(spec, NodeGroupPath(g), ng)
		size, field := deref(ng.MaxReplicas), "maxReplicas"
		if m := deref(ng.MinReplicas); m >= 1 {
			size, field = m, "minReplicas"
		}
		if len(errs) > 0 || !neverRemediates(h.MaxUnhealthy, size) {
			continue
		}
		p.Warn(v1alpha1.ReasonRemediationNeverAllowed, fmt.Sprintf("node group %s: maxUnhealthy %s rounds down to 0 machines at its %s %d, so no unhealthy machine of it is replaced at that size; set nodeGroups.%s.maxUnhealthy to a number of machines such as \"1\" to allow it (a storage or host outage then replaces that many)",
			g, h.MaxUnhealthy.String(), field, size, g))
	}
}

// buildMachineHealthCheck returns the MachineHealthCheck N-G of a node group
// (CAPI v1beta2): a machine without a node after the
// startup timeout, or whose node is Ready=Unknown or Ready=False for the
// group's timeouts, is unhealthy, and is remediated while at most
// maxUnhealthy machines of the group are unhealthy.
func buildMachineHealthCheck(id function.Identity, p nodeGroupPlan) *clusterv1.MachineHealthCheck {
	name := p.ObjectName(id)
	h := p.Health
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
				NodeStartupTimeoutSeconds: ptr(h.NodeStartupTimeout),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr(h.ReadyUnknownTimeout)},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr(h.ReadyFalseTimeout)},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{TriggerIf: clusterv1.MachineHealthCheckRemediationTriggerIf{
				UnhealthyLessThanOrEqualTo: ptr(h.MaxUnhealthy),
			}},
		},
	}
}

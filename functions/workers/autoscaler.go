package main

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// autoscalerComponent is the component name of cluster-autoscaler: its
// Deployment is N-cluster-autoscaler.
const autoscalerComponent = function.AutoscalerComponent

// buildClusterAutoscaler returns cluster-autoscaler for the tenant cluster:
// Cluster API provider, auto-discovering N's node groups in NS
// through its in-cluster ServiceAccount (authoritative cloud config, so
// --kubeconfig is only the tenant cluster), min size enforced, DaemonSet and
// mirror pods ignored, scale-down after 30s unneeded, a 25s scan, and
// unregistered nodes force-deleted. Its permissions in NS are the
// ClusterRole tenantkube:cluster-autoscaler (deploy/crossplane-rbac.yaml);
// only its container holds a token for them.
func buildClusterAutoscaler(id function.Identity, in *v1alpha1.WorkersInput, waitImage string) controller {
	c := corev1.Container{
		Name:    autoscalerComponent,
		Image:   in.Images.ClusterAutoscaler,
		Command: []string{"/cluster-autoscaler"},
		Args: []string{
			"--cloud-provider=clusterapi",
			"--kubeconfig=" + tenantKubeconfigPath,
			"--clusterapi-cloud-config-authoritative",
			"--node-group-auto-discovery=clusterapi:namespace=" + id.Namespace + ",clusterName=" + id.Name,
			"--enforce-node-group-min-size=true",
			"--ignore-daemonsets-utilization=true",
			"--ignore-mirror-pods-utilization=true",
			"--scale-down-unneeded-time=30s",
			"--scan-interval=25s",
		},
		VolumeMounts: []corev1.VolumeMount{kubeconfigMount()},
	}
	return newController(id, in, waitImage, controllerSpec{
		component: autoscalerComponent, containers: []corev1.Container{c},
		managementAPI: []string{autoscalerComponent}, tmp: []string{autoscalerComponent},
	})
}

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestGPUNodeLabel: the nodes of a group with GPUs carry gpu=on, the node
// selector of HAMi's device plugin (HAMi chart devicePlugin.
// nvidiaNodeSelector; without it HAMi advertises no GPU), set as the
// seed chart's kubeadm config sets it: kubeletExtraArgs node-labels
// "gpu=on". The scale-from-zero labels announce it too; a group without
// GPUs has neither.
func TestGPUNodeLabel(t *testing.T) {
	nodeLabels := func(args []bootstrapv1.Arg) []bootstrapv1.Arg {
		var out []bootstrapv1.Arg
		for _, a := range args {
			if a.Name == "node-labels" {
				out = append(out, a)
			}
		}
		return out
	}
	cases := map[string]struct {
		reason     string
		group      v1alpha1.NodeGroup
		wantArgs   []bootstrapv1.Arg
		wantLabels string // capacity.cluster-autoscaler.kubernetes.io/labels
	}{
		"GPUs": {
			reason: "One L40S: the kubelet labels its Node gpu=on.",
			group: group(func(g *v1alpha1.NodeGroup) {
				g.Roles = []string{"ingress-nginx"}
				g.GPUs = []v1alpha1.GPU{{Name: "nvidia.com/AD102GL_L40S"}}
			}),
			wantArgs:   []bootstrapv1.Arg{{Name: "node-labels", Value: ptr("gpu=on")}},
			wantLabels: "gpu=on,node-role.kubernetes.io/ingress-nginx=",
		},
		"GPUsWithoutRoles": {
			reason: "The label does not depend on roles.",
			group: group(func(g *v1alpha1.NodeGroup) {
				g.GPUs = []v1alpha1.GPU{{Name: "nvidia.com/GH200"}, {Name: "nvidia.com/GH200"}}
			}),
			wantArgs:   []bootstrapv1.Arg{{Name: "node-labels", Value: ptr("gpu=on")}},
			wantLabels: "gpu=on",
		},
		"NoGPUs": {
			reason:     "Without GPUs no gpu label: HAMi's device plugin stays off the node.",
			group:      group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"ingress-nginx"} }),
			wantLabels: "node-role.kubernetes.io/ingress-nginx=",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := groupPlan(t, "md0", tc.group)
			kct := buildKubeadmConfigTemplate(testID, p, defaultInput())
			if d := cmp.Diff(tc.wantArgs, nodeLabels(kct.Spec.Template.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs)); d != "" {
				t.Errorf("%s\nnode-labels kubelet args (-want +got):\n%s", tc.reason, d)
			}
			md := buildMachineDeployment(testID, p, "x")
			if got := md.Annotations[annotationCapacityLabels]; got != tc.wantLabels {
				t.Errorf("%s\n%s: got %q, want %q", tc.reason, annotationCapacityLabels, got, tc.wantLabels)
			}
		})
	}
}

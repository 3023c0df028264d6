package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// TestMachineTemplateVMSettings holds the VM settings of a node
// group to the KubeVirt fields the seed chart writes (Cozystack's
// kubernetes chart, templates/cluster.yaml and its tests
// serial_console_log_test.yaml, nodegroup_pod_cpu_*_test.yaml): each key
// only when asked for, so a group that sets none keeps its template.
func TestMachineTemplateVMSettings(t *testing.T) {
	explicit := func(change func(*v1alpha1.NodeGroup)) v1alpha1.NodeGroup {
		return group(func(g *v1alpha1.NodeGroup) {
			g.Resources = v1alpha1.Resources{CPU: "2", Memory: "4Gi"}
			g.AntiAffinity = v1alpha1.AntiAffinityNone
			if change != nil {
				change(g)
			}
		})
	}
	// The ephemeral-storage pair every VM has (the presets of docs/tenant-guide.md: 2Gi and
	// 2Gi/40 in whole bytes).
	eph, ephReq := resource.MustParse("2Gi"), resource.MustParse("53687091")
	type args struct {
		g v1alpha1.NodeGroup
	}
	type want struct {
		logSerialConsole *bool
		resources        kubevirtv1.ResourceRequirements
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Unset": {
			reason: "Neither field set: no logSerialConsole key, no CPU in the virt-launcher resources.",
			args:   args{g: explicit(nil)},
			want: want{resources: kubevirtv1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: eph},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: ephReq},
			}},
		},
		"LogSerialConsole": {
			reason: "logSerialConsole: true is devices.logSerialConsole: true.",
			args:   args{g: explicit(func(g *v1alpha1.NodeGroup) { g.LogSerialConsole = true })},
			want: want{logSerialConsole: ptr(true), resources: kubevirtv1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: eph},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: ephReq},
			}},
		},
		"PodCPULimitOnly": {
			reason: "podCpuLimit 3 is domain.resources.limits.cpu 3 and no CPU request (the chart's test: KubeVirt copies the limit).",
			args:   args{g: explicit(func(g *v1alpha1.NodeGroup) { g.PodCPULimit = "3" })},
			want: want{resources: kubevirtv1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: eph, corev1.ResourceCPU: resource.MustParse("3")},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: ephReq},
			}},
		},
		"PodCPUPair": {
			reason: "podCpuLimit 4 and podCpuRequest 1500m: both keys.",
			args:   args{g: explicit(func(g *v1alpha1.NodeGroup) { g.PodCPULimit, g.PodCPURequest = "4", "1500m" })},
			want: want{resources: kubevirtv1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: eph, corev1.ResourceCPU: resource.MustParse("4")},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: ephReq, corev1.ResourceCPU: resource.MustParse("1500m")},
			}},
		},
		"PodCPUZeroPair": {
			reason: "podCpuLimit 0 with podCpuRequest 0: no ceiling, nothing reserved; both zero keys are written.",
			args:   args{g: explicit(func(g *v1alpha1.NodeGroup) { g.PodCPULimit, g.PodCPURequest = "0", "0" })},
			want: want{resources: kubevirtv1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: eph, corev1.ResourceCPU: resource.MustParse("0")},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: ephReq, corev1.ResourceCPU: resource.MustParse("0")},
			}},
		},
	}
	unset, err := buildKubevirtMachineTemplate(testID, groupPlan(t, "md0", explicit(nil)), "img:v1.35", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kmt, err := buildKubevirtMachineTemplate(testID, groupPlan(t, "md0", tc.args.g), "img:v1.35", "")
			if err != nil {
				t.Fatal(err)
			}
			d := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template.Spec.Domain
			if diff := cmp.Diff(tc.want.logSerialConsole, d.Devices.LogSerialConsole); diff != "" {
				t.Errorf("%s\nlogSerialConsole (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.resources, d.Resources); diff != "" {
				t.Errorf("%s\nresources (-want +got):\n%s", tc.reason, diff)
			}
			if changed := name != "Unset"; changed == (kmt.Name == unset.Name) {
				t.Errorf("%s\nname %s beside the unset group's %s: a set field must rename (roll), none must not", tc.reason, kmt.Name, unset.Name)
			}
		})
	}
}

// TestMachineTemplatePlacement holds each antiAffinity value to the VM's
// affinity: a pod anti-affinity over kubernetes.io/hostname (the node
// label, k8s.io/api's LabelHostname) against the virt-launcher pods of this
// cluster's group only, preferred with the highest weight (100, the most
// the API allows) or required.
func TestMachineTemplatePlacement(t *testing.T) {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenantkube.io/cluster": "demo", "tenantkube.io/node-group": "md0"}},
		TopologyKey:   "kubernetes.io/hostname",
	}
	groupLabels := map[string]string{"node-role.kubernetes.io/ingress-nginx": "", "tenantkube.io/cluster": "demo", "tenantkube.io/node-group": "md0"}
	type args struct {
		a        v1alpha1.AntiAffinity
		observed string // the observed MachineDeployment's template
	}
	type want struct {
		affinity *corev1.Affinity
		labels   map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"UnsetIsSoft": {
			reason: "A new group spreads softly.",
			args:   args{},
			want: want{affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}},
			}}, labels: groupLabels},
		},
		"Soft": {
			reason: "Soft is a preference.",
			args:   args{a: v1alpha1.AntiAffinitySoft},
			want: want{affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}},
			}}, labels: groupLabels},
		},
		"Hard": {
			reason: "Hard is a requirement.",
			args:   args{a: v1alpha1.AntiAffinityHard},
			want: want{affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
			}}, labels: groupLabels},
		},
		"None": {
			reason: "None: no affinity and only the role labels, the template without placement.",
			args:   args{a: v1alpha1.AntiAffinityNone},
			want:   want{labels: map[string]string{"node-role.kubernetes.io/ingress-nginx": ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"ingress-nginx"}; g.AntiAffinity = tc.args.a })
			p := groupPlan(t, "md0", g)
			p.ObservedTemplate = tc.args.observed
			kmt, err := buildKubevirtMachineTemplate(testID, p, "img:v1.35", "")
			if err != nil {
				t.Fatal(err)
			}
			tmpl := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template
			if diff := cmp.Diff(tc.want.affinity, tmpl.Spec.Affinity); diff != "" {
				t.Errorf("%s\naffinity (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.labels, tmpl.ObjectMeta.Labels); diff != "" {
				t.Errorf("%s\nVM labels (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlacementSelectsOneGroup: the selector of one group matches the
// labels of no other group's VMs, of this cluster or of another cluster in
// the namespace, also where N-G would read the same (a-b + c, a + b-c).
func TestPlacementSelectsOneGroup(t *testing.T) {
	type vm struct{ cluster, group string }
	vms := []vm{{"a-b", "c"}, {"a", "b-c"}, {"a", "c"}, {"a-b", "d"}}
	for _, owner := range vms {
		for _, other := range vms {
			sel := vmAntiAffinity(clusterID(owner.cluster), owner.group, v1alpha1.AntiAffinitySoft).
				PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector
			p := groupPlan(t, other.group, group(func(g *v1alpha1.NodeGroup) { g.AntiAffinity = v1alpha1.AntiAffinitySoft }))
			kmt, err := buildKubevirtMachineTemplate(clusterID(other.cluster), p, "img:v1.35", "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				t.Fatal(err)
			}
			labels := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template.ObjectMeta.Labels
			if got, want := s.Matches(labelSet(labels)), owner == other; got != want {
				t.Errorf("selector of %v matches the VMs of %v: %t, want %t", owner, other, got, want)
			}
		}
	}
}

// clusterID is the identity of cluster name in testNS.
func clusterID(name string) function.Identity {
	return function.Identity{Name: name, Namespace: testNS}
}

// labelSet is m as the labels a selector matches.
func labelSet(m map[string]string) k8slabels.Set { return k8slabels.Set(m) }

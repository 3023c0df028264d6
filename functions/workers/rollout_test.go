package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// capiMachineSet is a MachineSet of cluster n in tenant-foo, of the
// MachineDeployment deployment, using template, with status.replicas.
func capiMachineSet(t testing.TB, name, n, deployment, template string, replicas int) *structpb.Struct {
	return mustStruct(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: `+name+`
  namespace: tenant-foo
  labels: {cluster.x-k8s.io/cluster-name: `+n+`, cluster.x-k8s.io/deployment-name: `+deployment+`}
spec:
  clusterName: `+n+`
  replicas: `+itoa(replicas)+`
  template: {spec: {clusterName: `+n+`, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: KubevirtMachineTemplate, name: `+template+`}}}
status: {replicas: `+itoa(replicas)+`}`)
}

// capiMachine is a Machine of cluster demo's MachineDeployment deployment
// whose node reports kubelet ("" for no node yet).
func capiMachine(t testing.TB, name, deployment, kubelet string) *structpb.Struct {
	y := `apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: ` + name + `
  namespace: tenant-foo
  labels: {cluster.x-k8s.io/cluster-name: demo, cluster.x-k8s.io/deployment-name: ` + deployment + `}
spec: {clusterName: demo}`
	if kubelet != "" {
		y += "\nstatus: {nodeInfo: {kubeletVersion: '" + kubelet + "'}}"
	}
	return mustStruct(t, y)
}

// rollingMD0 is md0's observed MachineDeployment, rolling to
// demo-md0-bbbbbb: 3 machines, 1 up to date.
func rollingMD0(t testing.TB) *structpb.Struct {
	return mustStruct(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md0, namespace: tenant-foo, generation: 2}
spec: {template: {spec: {version: v1.35.1, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: KubevirtMachineTemplate, name: demo-md0-bbbbbb}}}}
status: {observedGeneration: 2, replicas: 3, readyReplicas: 3, upToDateReplicas: 1}`)
}

// TestNodeGroupRolloutStatus checks status.nodeGroups.md0's rollout and
// kubelet versions (docs/tenant-guide.md, Status) from the observed
// MachineDeployment, the MachineSets and the Machines.
func TestNodeGroupRolloutStatus(t *testing.T) {
	type want struct {
		Rollout         *v1alpha1.NodeGroupRollout
		KubeletVersions []v1alpha1.KubeletVersionCount
	}
	cases := map[string]struct {
		reason   string
		sets     []*structpb.Struct
		machines []*structpb.Struct // nil: not arrived
		want     want
	}{
		"RollInProgress": {
			reason: "Two MachineSets of md0: the old one (aaaaaa) still has 2 machines, the new one (bbbbbb, the MachineDeployment's) 1; an emptied older one (cccccc), another group's and another cluster's do not count. Machines: 2 old kubelets, 1 new, 1 without a node yet, 1 of md1.",
			sets: []*structpb.Struct{
				capiMachineSet(t, "demo-md0-old", "demo", "demo-md0", "demo-md0-aaaaaa", 2),
				capiMachineSet(t, "demo-md0-new", "demo", "demo-md0", "demo-md0-bbbbbb", 1),
				capiMachineSet(t, "demo-md0-older", "demo", "demo-md0", "demo-md0-cccccc", 0),
				capiMachineSet(t, "demo-md1-x", "demo", "demo-md1", "demo-md1-dddddd", 1),
				capiMachineSet(t, "other-md0-x", "other", "demo-md0", "demo-md0-eeeeee", 1),
			},
			machines: []*structpb.Struct{
				capiMachine(t, "m1", "demo-md0", "v1.34.4"),
				capiMachine(t, "m2", "demo-md0", "v1.34.4"),
				capiMachine(t, "m3", "demo-md0", "v1.35.1"),
				capiMachine(t, "m4", "demo-md0", ""),
				capiMachine(t, "m5", "demo-md1", "v1.33.8"),
			},
			want: want{
				Rollout:         &v1alpha1.NodeGroupRollout{From: []string{"demo-md0-aaaaaa"}, To: "demo-md0-bbbbbb", UpToDateReplicas: 1, Replicas: 3},
				KubeletVersions: []v1alpha1.KubeletVersionCount{{Version: "v1.34.4", Machines: 2}, {Version: "v1.35.1", Machines: 1}},
			},
		},
		"Rolled": {
			reason: "Only the MachineDeployment's template has machines: no rollout. Versions sort semantically (v1.35.10 after v1.35.9); a value that is not a semantic version (the tenant writes it, text after the version included) is \"unknown\", last; one without \"v\" is printed with it.",
			sets: []*structpb.Struct{
				capiMachineSet(t, "demo-md0-old", "demo", "demo-md0", "demo-md0-aaaaaa", 0),
				capiMachineSet(t, "demo-md0-new", "demo", "demo-md0", "demo-md0-bbbbbb", 3),
			},
			machines: []*structpb.Struct{
				capiMachine(t, "m1", "demo-md0", "v1.35.10"),
				capiMachine(t, "m2", "demo-md0", "v1.35.9"),
				capiMachine(t, "m3", "demo-md0", "<script>"),
				capiMachine(t, "m4", "demo-md0", "v1.35.1 see https://evil.example"),
				capiMachine(t, "m5", "demo-md0", "1.35.9"),
			},
			want: want{KubeletVersions: []v1alpha1.KubeletVersionCount{
				{Version: "v1.35.9", Machines: 2}, {Version: "v1.35.10", Machines: 1}, {Version: "unknown", Machines: 2},
			}},
		},
		"MachinesNotArrived": {
			reason: "The Machines have not been fetched: no kubelet versions; the rollout is still reported.",
			sets: []*structpb.Struct{
				capiMachineSet(t, "demo-md0-old", "demo", "demo-md0", "demo-md0-aaaaaa", 1),
				capiMachineSet(t, "demo-md0-older", "demo", "demo-md0", "demo-md0-9aaaaa", 1),
			},
			want: want{Rollout: &v1alpha1.NodeGroupRollout{From: []string{"demo-md0-9aaaaa", "demo-md0-aaaaaa"}, To: "demo-md0-bbbbbb", UpToDateReplicas: 1, Replicas: 3}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := []fntest.RequestOption{
				withInstancetypes(t, "u1.large"),
				fntest.WithRequired(requirementMachineSets, tc.sets...),
				fntest.WithObserved(map[string]*structpb.Struct{machineDeploymentResourceName("md0"): rollingMD0(t)}),
			}
			if tc.machines != nil {
				opts = append(opts, fntest.WithRequired(requirementMachines, tc.machines...))
			}
			p, errs, _ := planOf(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 1, maxReplicas: 3}}`, opts...))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			st := p.Status["nodeGroups"].(map[string]v1alpha1.NodeGroupStatus)["md0"]
			if diff := cmp.Diff(tc.want, want{Rollout: st.Rollout, KubeletVersions: st.KubeletVersions}); diff != "" {
				t.Errorf("%s\nstatus.nodeGroups.md0: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestMachinesRequirementBounded checks that the Machines are required only
// while the cluster can hold at most maxObservedMachines (200) of them:
// twice the sum of maxReplicas (a roll surges by maxReplicas).
func TestMachinesRequirementBounded(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string
		want   bool
	}{
		"AtBound":   {"2 × (60 + 40) = 200 machines at most: required.", `nodeGroups: {a: {instanceType: "", maxReplicas: 60}, b: {instanceType: "", maxReplicas: 40}}`, true},
		"PastBound": {"2 × (60 + 41) = 202: not required.", `nodeGroups: {a: {instanceType: "", maxReplicas: 60}, b: {instanceType: "", maxReplicas: 41}}`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs, _ := planOf(t, newRequest(t, tc.spec, withMachineSets(t)))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			sel, got := p.Requirements[requirementMachines]
			if got != tc.want {
				t.Errorf("%s\nMachines required: %v, want %v", tc.reason, got, tc.want)
			}
			if got && (sel.GetKind() != "Machine" || sel.GetNamespace() != testNS ||
				!cmp.Equal(sel.GetMatchLabels().GetLabels(), map[string]string{"cluster.x-k8s.io/cluster-name": testN})) {
				t.Errorf("%s\nMachines selector %v, want Machines of cluster %s in %s", tc.reason, sel, testN, testNS)
			}
		})
	}
}

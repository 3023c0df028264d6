package preview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestRolls(t *testing.T) {
	base := func() *clusterv1.MachineTemplateSpec {
		return &clusterv1.MachineTemplateSpec{
			ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"node-role.kubernetes.io/ingress-nginx": ""}},
			Spec: clusterv1.MachineSpec{
				ClusterName: "demo",
				Version:     "v1.35.1",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "demo-md0"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Name: "demo-md0-1f5c9f"},
			},
		}
	}
	seconds := int32(300)
	cases := []struct {
		reason string
		change func(*clusterv1.MachineTemplateSpec)
		want   bool
	}{
		{reason: "nothing changes", change: func(*clusterv1.MachineTemplateSpec) {}, want: false},
		{reason: "a new machine template name rolls", change: func(s *clusterv1.MachineTemplateSpec) { s.Spec.InfrastructureRef.Name = "demo-md0-bea741" }, want: true},
		{reason: "a new bootstrap template name rolls", change: func(s *clusterv1.MachineTemplateSpec) { s.Spec.Bootstrap.ConfigRef.Name = "demo-md0-2" }, want: true},
		{reason: "a new version rolls", change: func(s *clusterv1.MachineTemplateSpec) { s.Spec.Version = "v1.35.2" }, want: true},
		{reason: "a new failure domain rolls", change: func(s *clusterv1.MachineTemplateSpec) { s.Spec.FailureDomain = "zone-b" }, want: true},
		{reason: "template labels and annotations are updated in place", change: func(s *clusterv1.MachineTemplateSpec) {
			s.Labels = map[string]string{"node-role.kubernetes.io/gpu": ""}
			s.Annotations = map[string]string{"a": "b"}
		}, want: false},
		{reason: "deletion timeouts, minReadySeconds, readinessGates and taints are updated in place", change: func(s *clusterv1.MachineTemplateSpec) {
			s.Spec.Deletion.NodeDrainTimeoutSeconds = &seconds
			s.Spec.Deletion.NodeDeletionTimeoutSeconds = &seconds
			s.Spec.Deletion.NodeVolumeDetachTimeoutSeconds = &seconds
			s.Spec.MinReadySeconds = &seconds
			s.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "X"}}
			s.Spec.Taints = []clusterv1.MachineTaint{{Key: "k", Effect: "NoSchedule"}}
		}, want: false},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			old, new := base(), base()
			c.change(new)
			if diff := cmp.Diff(c.want, Rolls(old, new)); diff != "" {
				t.Errorf("Rolls(...): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestCauses holds the reasons table to the paths the workers function
// writes (test/testdata/control-plane/example.golden.yaml shows each) and
// the claim fields that set them.
func TestCauses(t *testing.T) {
	const vm = "spec.template.spec.virtualMachineTemplate.spec."
	const kubeadm = "spec.template.spec."
	type args struct {
		kind           string
		changes        []change
		versionChanged bool
	}
	cases := []struct {
		reason string
		args   args
		want   []string
	}{
		{reason: "disk size", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "dataVolumeTemplates[*].spec.storage.resources.requests.storage"}}}, want: []string{"diskSize"}},
		{reason: "storage class set", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "dataVolumeTemplates[*].spec.storage.storageClassName"}}}, want: []string{"storageClass"}},
		{reason: "instance type name", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "instancetype.name"}}}, want: []string{"instanceType"}},
		{reason: "instance type replaced by resources", args: args{kind: "KubevirtMachineTemplate", changes: []change{
			{Path: vm + "instancetype.kind", Removed: true}, {Path: vm + "instancetype.name", Removed: true},
			{Path: vm + "template.spec.domain.cpu.cores"}, {Path: vm + "template.spec.domain.memory.guest"},
		}}, want: []string{"instanceType", "resources"}},
		{reason: "GPUs", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.spec.domain.devices.gpus[*].deviceName"}}}, want: []string{"gpus"}},
		{reason: "role labels", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.metadata.labels[node-role.kubernetes.io/ingress-nginx]"}}}, want: []string{"roles"}},
		{reason: "placement", args: args{kind: "KubevirtMachineTemplate", changes: []change{
			{Path: vm + "template.metadata.labels[tenantkube.io/cluster]"}, {Path: vm + "template.metadata.labels[tenantkube.io/node-group]"},
			{Path: vm + "template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight"},
		}}, want: []string{"antiAffinity"}},
		{reason: "serial console and virt-launcher CPU", args: args{kind: "KubevirtMachineTemplate", changes: []change{
			{Path: vm + "template.spec.domain.devices.logSerialConsole"},
			{Path: vm + "template.spec.domain.resources.limits.cpu"}, {Path: vm + "template.spec.domain.resources.requests.cpu"},
		}}, want: []string{"logSerialConsole", "podCpuLimit", "podCpuRequest"}},
		{reason: "the bootstrap hash names nothing itself", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.metadata.annotations[tenantkube.io/bootstrap-hash]"}}}, want: []string{}},
		{reason: "container disk with the version", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.spec.volumes[*].containerDisk.image"}}, versionChanged: true}, want: []string{"version"}},
		{reason: "container disk without the version", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.spec.volumes[*].containerDisk.image"}}}, want: []string{"platform setting containerDiskImages"}},
		{reason: "kubelet flags", args: args{kind: "KubeadmConfigTemplate", changes: []change{{Path: kubeadm + "joinConfiguration.nodeRegistration.kubeletExtraArgs[*].value"}}}, want: []string{"kubelet reservations"}},
		{reason: "kubelet download with the version", args: args{kind: "KubeadmConfigTemplate", changes: []change{{Path: kubeadm + "preKubeadmCommands[*]"}}, versionChanged: true}, want: []string{"version"}},
		{reason: "kubelet download without the version", args: args{kind: "KubeadmConfigTemplate", changes: []change{{Path: kubeadm + "preKubeadmCommands[*]"}}}, want: []string{"platform setting kubernetesBinaryMirror"}},
		{reason: "registry mirror files", args: args{kind: "KubeadmConfigTemplate", changes: []change{{Path: kubeadm + "files[*].path"}}, versionChanged: true}, want: []string{"platform setting registryMirror"}},
		{reason: "MachineDeployment version", args: args{kind: "MachineDeployment", changes: []change{{Path: "spec.template.spec.version"}}, versionChanged: true}, want: []string{"version"}},
		{reason: "a path of another kind is not mapped", args: args{kind: "KubeadmConfigTemplate", changes: []change{{Path: vm + "instancetype.name"}}}, want: []string{"KubeadmConfigTemplate " + vm + "instancetype.name"}},
		{reason: "a prefix that is not a whole segment is not mapped", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "instancetypeX"}}}, want: []string{"KubevirtMachineTemplate " + vm + "instancetypeX"}},
		{reason: "an unknown removed path is a default of the API server", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: vm + "template.spec.terminationGracePeriodSeconds", Removed: true}}}, want: []string{}},
		{reason: "an unknown path is named", args: args{kind: "KubevirtMachineTemplate", changes: []change{{Path: "spec.template.spec.virtualMachineBootstrapCheck.checkStrategy"}}}, want: []string{"KubevirtMachineTemplate spec.template.spec.virtualMachineBootstrapCheck.checkStrategy"}},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			got := causes(c.args.kind, c.args.changes, c.args.versionChanged)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("causes(...): -want, +got:\n%s", diff)
			}
		})
	}
}

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

var testID = function.Identity{Name: testN, Namespace: testNS}

func defaultInput() *inputv1alpha1.WorkersInput {
	in := &inputv1alpha1.WorkersInput{}
	in.Default()
	return in
}

// plan builds a nodeGroupPlan for group g sized by instance type
// (u1.large: 2 cores, 8Gi) unless resources are explicit.
func groupPlan(t *testing.T, name string, g v1alpha1.NodeGroup) nodeGroupPlan {
	t.Helper()
	s := InstancetypeSizing(2, ptr(resource.MustParse("8Gi")))
	if explicit(g) {
		var err error
		if s, err = ExplicitSizing(g); err != nil {
			t.Fatal(err)
		}
	}
	r, err := computeReservations(NodeGroupPath(name), g.Kubelet, s)
	if err != nil {
		t.Fatal(err)
	}
	return nodeGroupPlan{Name: name, Group: g, Sizing: s, Kubelet: r, Version: "v1.35.1", Minor: "v1.35",
		Health: chartHealthCheck, MaxNodeProvisionTime: "30m", StorageClass: g.StorageClass}
}

// chartHealthCheck is the Cozystack chart's default nodeHealthCheck
// (maxUnhealthy 50%, nodeStartupTimeout 20m, readyUnknownTimeout 5m,
// readyFalseTimeout 10m) in seconds.
var chartHealthCheck = healthCheck{MaxUnhealthy: intstr.FromString("50%"), NodeStartupTimeout: 1200, ReadyUnknownTimeout: 300, ReadyFalseTimeout: 600}

func TestBuildKubeadmConfigTemplate(t *testing.T) {
	in := defaultInput()
	in.RegistryMirror = &inputv1alpha1.RegistryMirror{SecretName: "mirrors", Hosts: []string{"docker.io"}}
	kct := buildKubeadmConfigTemplate(testID, groupPlan(t, "md0", group(nil)), in)
	if kct.Name != "demo-md0" || kct.Namespace != "tenant-foo" {
		t.Errorf("name %s/%s, want tenant-foo/demo-md0", kct.Namespace, kct.Name)
	}
	if d := cmp.Diff(map[string]string{
		"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo",
		"cluster.x-k8s.io/cluster-name": "demo", "tenantkube.io/node-group": "md0",
	}, kct.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	s := kct.Spec.Template.Spec
	if got := s.JoinConfiguration.Discovery.BootstrapToken.APIServerEndpoint; got != "demo.tenant-foo.svc.cluster.local:6443" {
		t.Errorf("join endpoint %q", got)
	}
	if d := cmp.Diff([]string{"FileExisting-conntrack"}, s.JoinConfiguration.NodeRegistration.IgnorePreflightErrors); d != "" {
		t.Errorf("preflight (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"addon/kube-proxy"}, s.InitConfiguration.SkipPhases); d != "" {
		t.Errorf("skip phases (-want +got):\n%s", d)
	}
	if d := cmp.Diff(bootstrapv1.Arg{Name: "system-reserved", Value: ptr("memory=409Mi,cpu=100m")}, s.JoinConfiguration.NodeRegistration.KubeletExtraArgs[0]); d != "" {
		t.Errorf("first kubelet arg (-want +got):\n%s", d)
	}
	// partition: none, as the seed chart writes it: the whole disk.
	if d := cmp.Diff([]bootstrapv1.Filesystem{{Device: "/dev/vdb", Filesystem: "xfs", Label: "persistent", Partition: "none", Overwrite: ptr(false)}}, s.DiskSetup.Filesystems); d != "" {
		t.Errorf("filesystems (-want +got):\n%s", d)
	}
	if len(s.Mounts) != 1 || s.Mounts[0][0] != "LABEL=persistent" || s.Mounts[0][1] != "/persistent" {
		t.Errorf("mounts %v", s.Mounts)
	}
	if d := cmp.Diff([]bootstrapv1.File{{
		Path: "/etc/containerd/certs.d/docker.io/hosts.toml", Owner: "root:root", Permissions: "0644",
		ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "mirrors", Key: "docker.io"}},
	}}, s.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	cmds := strings.Join(s.PreKubeadmCommands, "\n")
	for _, want := range []string{
		"https://dl.k8s.io/release/v1.35.1/bin/linux/amd64/kubelet",
		"https://dl.k8s.io/release/v1.35.1/bin/linux/amd64/kubeadm",
		"systemctl stop containerd",
		"/persistent/var/lib/kubelet /var/lib/kubelet none bind",
		"/persistent/var/lib/containerd /var/lib/containerd none bind",
		`config_path = "/etc/containerd/certs.d"`,
		"systemctl start containerd",
	} {
		if !strings.Contains(cmds, want) {
			t.Errorf("preKubeadmCommands lack %q", want)
		}
	}
	// Order: install, stop containerd, bind-mount, config_path, start.
	order := []string{"kubeadm.new", "systemctl stop containerd", "mount /var/lib/kubelet", "config_path", "systemctl start containerd"}
	last := -1
	for _, o := range order {
		i := strings.Index(cmds, o)
		if i <= last {
			t.Errorf("%q out of order in preKubeadmCommands", o)
		}
		last = i
	}
	if noMirror := buildKubeadmConfigTemplate(testID, groupPlan(t, "md0", group(nil)), defaultInput()); len(noMirror.Spec.Template.Spec.Files) != 0 {
		t.Errorf("files without a registry mirror: %v", noMirror.Spec.Template.Spec.Files)
	}
}

func TestBuildKubevirtMachineTemplate(t *testing.T) {
	g := group(func(g *v1alpha1.NodeGroup) {
		g.InstanceType = ptr("u1.large")
		g.Roles = []string{"ingress-nginx", "edge"}
		g.StorageClass = "fast"
		g.DiskSize = "30Gi"
		g.GPUs = []v1alpha1.GPU{{Name: "nvidia.com/A"}, {Name: "nvidia.com/B"}}
	})
	kmt, err := buildKubevirtMachineTemplate(testID, groupPlan(t, "md0", g), "img:v1.35", "0123456789abcdef0123")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := canonicalHash(kmt.Spec)
	if kmt.Name != "demo-md0-"+sum[:6] {
		t.Errorf("name %s, want demo-md0-%s", kmt.Name, sum[:6])
	}
	if kmt.Spec.Template.Spec.BootstrapCheckSpec.CheckStrategy != "ssh" {
		t.Errorf("check strategy %q", kmt.Spec.Template.Spec.BootstrapCheckSpec.CheckStrategy)
	}
	vm := kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec
	if *vm.RunStrategy != kubevirtv1.RunStrategyAlways {
		t.Errorf("runStrategy %v", *vm.RunStrategy)
	}
	if d := cmp.Diff(&kubevirtv1.InstancetypeMatcher{Kind: "VirtualMachineClusterInstancetype", Name: "u1.large"}, vm.Instancetype); d != "" {
		t.Errorf("instancetype (-want +got):\n%s", d)
	}
	dv := vm.DataVolumeTemplates[0]
	if dv.Name != "disk-kubelet" || dv.Annotations["cdi.kubevirt.io/storage.usePopulator"] != "false" || dv.Spec.Source.Blank == nil ||
		*dv.Spec.Storage.StorageClassName != "fast" || dv.Spec.Storage.Resources.Requests.Storage().String() != "30Gi" {
		t.Errorf("data volume template %+v", dv)
	}
	tmpl := vm.Template
	// The roles, and the cluster and group the default placement selects.
	if d := cmp.Diff(map[string]string{"node-role.kubernetes.io/ingress-nginx": "", "node-role.kubernetes.io/edge": "",
		"tenantkube.io/cluster": "demo", "tenantkube.io/node-group": "md0"}, tmpl.ObjectMeta.Labels); d != "" {
		t.Errorf("VM labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"kubevirt.io/allow-pod-bridge-network-live-migration": "true", annotationBootstrapHash: "0123456789abcdef"}, tmpl.ObjectMeta.Annotations); d != "" {
		t.Errorf("VM annotations (-want +got):\n%s", d)
	}
	spec := tmpl.Spec
	if *spec.EvictionStrategy != kubevirtv1.EvictionStrategyExternal {
		t.Errorf("eviction strategy %v", *spec.EvictionStrategy)
	}
	wantDisks := []kubevirtv1.Disk{
		{Name: "system", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio", PciAddress: "0000:07:00.0"}}},
		{Name: "disk-kubelet", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio", PciAddress: "0000:08:00.0"}},
			BlockSize: &kubevirtv1.BlockSize{MatchVolume: &kubevirtv1.FeatureState{Enabled: ptr(true)}}},
	}
	if d := cmp.Diff(wantDisks, spec.Domain.Devices.Disks); d != "" {
		t.Errorf("disks (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/A"}, {Name: "gpu2", DeviceName: "nvidia.com/B"}}, spec.Domain.Devices.GPUs); d != "" {
		t.Errorf("gpus (-want +got):\n%s", d)
	}
	if len(spec.Domain.Devices.Interfaces) != 1 || spec.Domain.Devices.Interfaces[0].Name != "default" || spec.Domain.Devices.Interfaces[0].Bridge == nil {
		t.Errorf("interfaces %+v", spec.Domain.Devices.Interfaces)
	}
	if len(spec.Networks) != 1 || spec.Networks[0].Pod == nil {
		t.Errorf("networks %+v", spec.Networks)
	}
	if spec.Volumes[0].ContainerDisk.Image != "img:v1.35" || spec.Volumes[1].DataVolume.Name != "disk-kubelet" {
		t.Errorf("volumes %+v", spec.Volumes)
	}
	lim, req := spec.Domain.Resources.Limits[corev1.ResourceEphemeralStorage], spec.Domain.Resources.Requests[corev1.ResourceEphemeralStorage]
	// The seed chart: int(2Gi / 40) = int(2147483648 / 40) = 53687091 bytes.
	if lim.String() != "2Gi" || req.String() != "53687091" {
		t.Errorf("ephemeral storage limit %s request %s, want 2Gi and 53687091", lim.String(), req.String())
	}
	if spec.Domain.CPU != nil || spec.Domain.Memory != nil {
		t.Error("instance-type VM has explicit cpu or memory")
	}

	// Without a storage class (neither the group's nor the cluster's) the
	// DataVolume uses the management cluster's default.
	g.StorageClass = ""
	kmt2, _ := buildKubevirtMachineTemplate(testID, groupPlan(t, "md0", g), "img:v1.35", "0123456789abcdef0123")
	if kmt2.Spec.Template.Spec.VirtualMachineTemplate.Spec.DataVolumeTemplates[0].Spec.Storage.StorageClassName != nil {
		t.Error("storageClassName set without a storage class")
	}
	if kmt2.Name == kmt.Name {
		t.Error("storage class change kept the template name")
	}
	again, _ := buildKubevirtMachineTemplate(testID, groupPlan(t, "md0", g), "img:v1.35", "0123456789abcdef0123")
	if again.Name != kmt2.Name {
		t.Error("the same input gave a different template name")
	}
}

func TestBuildMachineDeployment(t *testing.T) {
	g := group(func(g *v1alpha1.NodeGroup) {
		g.MinReplicas, g.MaxReplicas = i32(1), i32(4)
		g.Roles = []string{"ingress-nginx"}
	})
	md := buildMachineDeployment(testID, groupPlan(t, "md0", g), "demo-md0-abc123")
	want := clusterv1.MachineDeploymentSpec{
		ClusterName: "demo",
		Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
			Type: "RollingUpdate",
			RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
				MaxSurge: ptr(intstr.FromInt32(4)), MaxUnavailable: ptr(intstr.FromInt32(1)),
			},
		}},
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0"}},
		Template: clusterv1.MachineTemplateSpec{
			ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{
				"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0", "node-role.kubernetes.io/ingress-nginx": "",
			}},
			Spec: clusterv1.MachineSpec{
				ClusterName:       "demo",
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "demo-md0"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Name: "demo-md0-abc123"},
				Version:           "v1.35.1",
				Deletion: clusterv1.MachineDeletionSpec{
					NodeDrainTimeoutSeconds: ptr(int32(300)), NodeVolumeDetachTimeoutSeconds: ptr(int32(300)), NodeDeletionTimeoutSeconds: ptr(int32(60)),
				},
			},
		},
	}
	if d := cmp.Diff(want, md.Spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	wantAnn := map[string]string{
		annotationAutoscalerMin: "1", annotationAutoscalerMax: "4",
		annotationCapacityMemory: "6800Mi", annotationCapacityCPU: "1800m",
		annotationCapacityLabels:       "node-role.kubernetes.io/ingress-nginx=",
		annotationMaxNodeProvisionTime: "30m",
	}
	if d := cmp.Diff(wantAnn, md.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	// Unknown sizing: no capacity annotations.
	p := groupPlan(t, "md0", group(nil))
	p.Kubelet.AllocatableMemory, p.Kubelet.AllocatableCPU = "", ""
	for k := range buildMachineDeployment(testID, p, "x").Annotations {
		if strings.HasPrefix(k, annotationCapacityPrefix) {
			t.Errorf("capacity annotation %s without a known size", k)
		}
	}
}

func TestGPUCapacity(t *testing.T) {
	for _, c := range []struct {
		gpus []v1alpha1.GPU
		typ  string
		n    int
	}{
		{nil, "", 0},
		{[]v1alpha1.GPU{{Name: "nvidia.com/AD102GL_L40S"}}, "nvidia.com/gpu", 1},
		{[]v1alpha1.GPU{{Name: "nvidia.com/A"}, {Name: "nvidia.com/A"}, {Name: "nvidia.com/A"}}, "nvidia.com/gpu", 3},
		{[]v1alpha1.GPU{{Name: "amd.com/MI300"}}, "amd.com/gpu", 1},
	} {
		typ, n := gpuCapacity(nodeGroupPlan{Group: v1alpha1.NodeGroup{GPUs: c.gpus}})
		if typ != c.typ || n != c.n {
			t.Errorf("%v: got %q×%d, want %q×%d", c.gpus, typ, n, c.typ, c.n)
		}
	}
}

func TestBuildMachineHealthCheck(t *testing.T) {
	mhc := buildMachineHealthCheck(testID, groupPlan(t, "md0", group(nil)))
	want := clusterv1.MachineHealthCheckSpec{
		ClusterName: "demo",
		Selector:    metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0"}},
		Checks: clusterv1.MachineHealthCheckChecks{
			NodeStartupTimeoutSeconds: ptr(int32(1200)),
			UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr(int32(300))},
				{Type: "Ready", Status: "False", TimeoutSeconds: ptr(int32(600))},
			},
		},
		Remediation: clusterv1.MachineHealthCheckRemediation{TriggerIf: clusterv1.MachineHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: ptr(intstr.FromString("50%"))}},
	}
	if d := cmp.Diff(want, mhc.Spec); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if mhc.Name != "demo-md0" || mhc.Namespace != "tenant-foo" {
		t.Errorf("name %s/%s", mhc.Namespace, mhc.Name)
	}
}

func TestControllers(t *testing.T) {
	in := defaultInput()
	for _, c := range []struct {
		ctl         controller
		name        string
		image       string
		args        []string
		clusterRole string
		// clusterWide is the ClusterRoleBinding the controller needs for
		// cluster-scoped reads (nil: none).
		clusterWide *rbacv1.ClusterRoleBinding
	}{
		{buildClusterAutoscaler(testID, in, "busybox"), "demo-cluster-autoscaler", in.Images.ClusterAutoscaler,
			[]string{"--cloud-provider=clusterapi", "--node-group-auto-discovery=clusterapi:namespace=tenant-foo,clusterName=demo", "--enforce-node-group-min-size=true",
				"--ignore-daemonsets-utilization=true", "--ignore-mirror-pods-utilization=true", "--scale-down-unneeded-time=30s", "--scan-interval=25s",
				"--clusterapi-cloud-config-authoritative", "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc"},
			"tenantkube:cluster-autoscaler", nil},
		{buildCloudControllerManager(testID, in, "busybox"), "demo-kccm", in.Images.CloudControllerManager,
			[]string{"--cloud-provider=kubevirt", "--cluster-name=demo", "--cloud-config=/etc/cloud/cloud-config", "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc"},
			"tenantkube:kccm", nil},
		{buildCSIController(testID, in, "busybox"), "demo-kcsi-controller", in.Images.CSIDriver,
			[]string{"--infra-cluster-namespace=tenant-foo", "--run-controller-service=true", "--run-node-service=false", "--tenant-cluster-kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc"},
			"tenantkube:kcsi-controller",
			// kubevirt/csi-driver EnsureControllerResize gets the infra PV;
			// named tenantkube:<component>:<NS>.<N>.
			&rbacv1.ClusterRoleBinding{
				TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: "tenantkube:kcsi-controller:tenant-foo.demo", Labels: map[string]string{
					"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo", "app.kubernetes.io/component": "kcsi-controller", "tenantkube.io/namespace": "tenant-foo"}},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tenantkube:kcsi-persistentvolumes"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "demo-kcsi-controller", Namespace: "tenant-foo"}},
			}},
	} {
		d := c.ctl.Deployment
		for _, n := range []string{d.Name, c.ctl.ServiceAccount.Name, c.ctl.RoleBinding.Name, c.ctl.RoleBinding.Subjects[0].Name, d.Spec.Template.Spec.ServiceAccountName} {
			if n != c.name {
				t.Errorf("%s: name %q", c.name, n)
			}
		}
		if d.Namespace != "tenant-foo" || c.ctl.RoleBinding.Subjects[0].Namespace != "tenant-foo" {
			t.Errorf("%s: namespace %q", c.name, d.Namespace)
		}
		main := d.Spec.Template.Spec.Containers[0]
		if main.Image != c.image {
			t.Errorf("%s: image %q, want %q", c.name, main.Image, c.image)
		}
		for _, a := range c.args {
			if !contains(main.Args, a) {
				t.Errorf("%s: args %v lack %q", c.name, main.Args, a)
			}
		}
		// The permissions are the ClusterRole's in deploy/, granted in NS
		// only: a RoleBinding (test/rbac_test.go checks the ClusterRoles).
		if ref := c.ctl.RoleBinding.RoleRef; ref != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: c.clusterRole}) {
			t.Errorf("%s: roleRef %+v, want ClusterRole %s", c.name, ref, c.clusterRole)
		}
		if c.ctl.RoleBinding.Namespace != "tenant-foo" {
			t.Errorf("%s: RoleBinding in %q", c.name, c.ctl.RoleBinding.Namespace)
		}
		if diff := cmp.Diff(c.clusterWide, c.ctl.ClusterRoleBinding); diff != "" {
			t.Errorf("%s: ClusterRoleBinding (-want +got):\n%s", c.name, diff)
		}
		init := d.Spec.Template.Spec.InitContainers
		if len(init) != 1 || init[0].Image != "busybox" || !strings.Contains(init[0].Command[2], "-ge 600") {
			t.Errorf("%s: init containers %+v", c.name, init)
		}
		vol := d.Spec.Template.Spec.Volumes[0]
		if vol.Secret == nil || vol.Secret.SecretName != "demo-admin-kubeconfig" || vol.Secret.Optional == nil || !*vol.Secret.Optional {
			t.Errorf("%s: kubeconfig volume %+v", c.name, vol)
		}
	}
}

// TestBuildCloudConfig: the keys are cloud-provider-kubevirt's
// (pkg/provider/cloud.go); Selectorless is the seed chart's
// loadBalancer.selectorless: true with enableEPSController: true.
func TestBuildCloudConfig(t *testing.T) {
	for mode, lb := range map[inputv1alpha1.LoadBalancerMode]string{
		inputv1alpha1.LoadBalancerSelectorless: "  enableEPSController: true\n  enabled: true\n  selectorless: true\n",
		inputv1alpha1.LoadBalancerSelector:     "  enableEPSController: false\n  enabled: true\n  selectorless: false\n",
	} {
		cm, err := buildCloudConfig(testID, mode)
		if err != nil {
			t.Fatal(err)
		}
		want := `infraLabels:
  cluster.x-k8s.io/cluster-name: demo
  tenantkube.io/cluster: demo
instancesV2:
  enabled: true
  zoneAndRegionEnabled: false
loadBalancer:
  creationPollInterval: 5
  creationPollTimeout: 60
` + lb + `namespace: tenant-foo
`
		if d := cmp.Diff(want, cm.Data["cloud-config"]); d != "" {
			t.Errorf("%s (-want +got):\n%s", mode, d)
		}
		if cm.Name != "demo-kccm-cloud-config" {
			t.Errorf("name %s", cm.Name)
		}
	}
}

func TestCanonicalHash(t *testing.T) {
	a, _ := canonicalHash(map[string]any{"b": 1, "a": []any{nil, "x"}, "c": nil})
	b, _ := canonicalHash(map[string]any{"a": []any{nil, "x"}, "b": 1})
	if a != b {
		t.Error("key order or nulls change the hash")
	}
	c, _ := canonicalHash(map[string]any{"a": []any{"x"}, "b": 1})
	if a == c || len(a) != 64 {
		t.Errorf("hash %q vs %q", a, c)
	}
}

// A node group's worker disks use its storageClass, else the cluster's
// storageClass, else the management cluster's default (storageClassName
// unset). Cases and values are the Cozystack chart's own tests
// (tests/cluster_test.yaml: "falls back to .Values.storageClass when
// nodeGroup storageClass is empty" and its neighbours).
func TestWorkerDiskStorageClassFallback(t *testing.T) {
	cases := map[string]struct {
		spec string
		want any // storageClassName, nil when unset
	}{
		"EmptyGroupReplicated":  {`{storageClass: replicated, nodeGroups: {md0: {storageClass: ""}}}`, "replicated"},
		"EmptyGroupCustomClass": {`{storageClass: my-app-sc, nodeGroups: {md0: {storageClass: ""}}}`, "my-app-sc"},
		"AbsentGroupDefault":    {`{nodeGroups: {md0: {}}}`, "replicated"},
		"GroupSet":              {`{nodeGroups: {md0: {storageClass: my-storage}}}`, "my-storage"},
		"GroupWins":             {`{storageClass: app-sc, nodeGroups: {md0: {storageClass: group-sc}}}`, "group-sc"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\nremoteStorageClasses: [replicated, my-app-sc, app-sc, my-storage, group-sc]"))
			rsp := run(t, newRequest(t, c.spec, withMachineSets(t), withInstancetypes(t, "u1.medium"), in))
			mustNoFatal(t, rsp)
			got := get(oneTemplate(t, rsp, "md0"), "spec", "template", "spec", "virtualMachineTemplate", "spec",
				"dataVolumeTemplates", 0, "spec", "storage", "storageClassName")
			if got != c.want {
				t.Errorf("storageClassName %v, want %v", got, c.want)
			}
		})
	}
	// Both empty (an XR that skipped defaulting): no storageClassName.
	if sc := diskStorageClass(&v1alpha1.KubernetesClusterSpec{}, v1alpha1.NodeGroup{}); sc != "" {
		t.Errorf("both empty: %q, want none", sc)
	}
	if sc := diskStorageClass(&v1alpha1.KubernetesClusterSpec{StorageClass: "replicated"}, v1alpha1.NodeGroup{StorageClass: "fast"}); sc != "fast" {
		t.Errorf("group fast, cluster replicated: %q, want fast", sc)
	}
}

// The cluster-autoscaler runs without --force-delete-unregistered-nodes: on
// the clusterapi provider it does not force anything below min size, it
// only skips trimming a delete batch to the group's headroom, so a group of
// 3 above min 1 with three long-unregistered machines loses none instead of
// two (the Cozystack chart's cluster_autoscaler_args test asserts the same
// absence).
func TestAutoscalerWithoutForceDeleteUnregistered(t *testing.T) {
	ctl := buildClusterAutoscaler(testID, defaultInput(), "busybox")
	args := ctl.Deployment.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--cloud-provider=clusterapi") {
		t.Fatalf("args %v lack --cloud-provider=clusterapi", args)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--force-delete-unregistered-nodes") {
			t.Errorf("args carry %q", a)
		}
	}
}

package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Bootstrap constants.
const (
	// persistentDevice is the VM's second disk (disk-kubelet, PCI 08:00.0).
	persistentDevice = "/dev/vdb"
	// persistentLabel is the xfs label of the persistent disk.
	persistentLabel = "persistent"
	// persistentMount is where the persistent disk is mounted.
	persistentMount = "/persistent"
	// containerdCertsDir is containerd's registry host configuration dir.
	containerdCertsDir = "/etc/containerd/certs.d"
	// apiServerPort is the tenant API server Service's port.
	apiServerPort = 6443
	// binaryArch is the architecture of the kubelet/kubeadm downloads.
	binaryArch = "amd64"
)

// persistentDirs are the state directories bind-mounted from the persistent
// disk, so kubelet and containerd state survive VM reboots.
var persistentDirs = []string{"/var/lib/kubelet", "/var/lib/containerd"}

// hashEndpoint is the tenant API server host in the spec a bootstrap hash
// is computed from: its Service's short name N.NS.svc, whatever the
// workers are given (N.NS.svc.<clusterDomain>). The endpoint names the same
// Service under any domain, and the bootstrap template is updated in place
// (machines created later join through the name given), so the endpoint's
// domain (clusterDomain) rolls no running group.
func hashEndpoint(id function.Identity) string { return id.APIServerServiceHost() }

// kubeadmBootstrapHash is the bootstrap hash of kct (the machine
// template's annotationBootstrapHash): canonicalHash of its spec with the
// join endpoint's short name (hashEndpoint).
func kubeadmBootstrapHash(id function.Identity, kct *bootstrapv1.KubeadmConfigTemplate) (string, error) {
	spec := kct.Spec.DeepCopy()
	spec.Template.Spec.JoinConfiguration.Discovery.BootstrapToken.APIServerEndpoint = fmt.Sprintf("%s:%d", hashEndpoint(id), apiServerPort)
	return canonicalHash(*spec)
}

// buildKubeadmConfigTemplate returns the KubeadmConfigTemplate N-G of a
// node group (CAPI v1beta2): a join through a bootstrap token to
// N.NS.svc.<clusterDomain>:6443 (fully qualified: the VM takes its DNS
// servers from DHCP without the management cluster's search path) with the
// group's kubelet flags, the conntrack preflight
// check ignored, init skipping addon/kube-proxy (Cilium replaces it), the
// persistent disk formatted once and bind-mounted over /var/lib/kubelet and
// /var/lib/containerd, kubelet/kubeadm of the plan's patch version from the
// input's mirror, and optional registry-mirror files from the input's
// Secret.
func buildKubeadmConfigTemplate(id function.Identity, p nodeGroupPlan, in *v1alpha1.WorkersInput) *bootstrapv1.KubeadmConfigTemplate {
	var args []bootstrapv1.Arg
	for _, a := range p.Kubelet.KubeletExtraArgs() {
		args = append(args, bootstrapv1.Arg{Name: a[0], Value: ptr(a[1])})
	}
	// Cluster API copies only the node-role.kubernetes.io,
	// node-restriction.kubernetes.io and node.cluster.x-k8s.io labels of a
	// Machine to its Node: the kubelet sets the others.
	if labels := p.NodeLabels(); len(labels) > 0 {
		args = append(args, bootstrapv1.Arg{Name: "node-labels", Value: ptr(joinLabels(labels))})
	}
	spec := bootstrapv1.KubeadmConfigSpec{
		InitConfiguration: bootstrapv1.InitConfiguration{SkipPhases: []string{"addon/kube-proxy"}},
		JoinConfiguration: bootstrapv1.JoinConfiguration{
			NodeRegistration: bootstrapv1.NodeRegistrationOptions{
				KubeletExtraArgs:      args,
				IgnorePreflightErrors: []string{"FileExisting-conntrack"},
			},
			Discovery: bootstrapv1.Discovery{BootstrapToken: bootstrapv1.BootstrapTokenDiscovery{
				APIServerEndpoint: fmt.Sprintf("%s:%d", id.APIServerServiceFQDN(in.ClusterDomain), apiServerPort),
			}},
		},
		DiskSetup: bootstrapv1.DiskSetup{Filesystems: []bootstrapv1.Filesystem{{
			Device:     persistentDevice,
			Filesystem: "xfs",
			Label:      persistentLabel,
			// The whole disk, unpartitioned (the seed chart's).
			Partition: "none",
			Overwrite: ptr(false),
		}}},
		Mounts:             []bootstrapv1.MountPoints{{"LABEL=" + persistentLabel, persistentMount, "xfs", "defaults,nofail", "0", "2"}},
		PreKubeadmCommands: preKubeadmCommands(p.Version, in.KubernetesBinaryMirror),
	}
	if rm := in.RegistryMirror; rm != nil {
		for _, host := range rm.Hosts {
			spec.Files = append(spec.Files, bootstrapv1.File{
				Path:        containerdCertsDir + "/" + host + "/hosts.toml",
				Owner:       "root:root",
				Permissions: "0644",
				ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: rm.SecretName, Key: host}},
			})
		}
	}
	return &bootstrapv1.KubeadmConfigTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfigTemplate"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      p.ObjectName(id),
			Namespace: id.Namespace,
			Labels:    groupLabels(id, p.Name),
		},
		Spec: bootstrapv1.KubeadmConfigTemplateSpec{Template: bootstrapv1.KubeadmConfigTemplateResource{Spec: spec}},
	}
}

// preKubeadmCommands installs kubelet and kubeadm of version from mirror,
// stops containerd, bind-mounts the persistent state directories (recorded
// in /etc/fstab, so they come back after a reboot), points containerd's
// registry config_path at /etc/containerd/certs.d and starts containerd.
func preKubeadmCommands(version, mirror string) []string {
	var cmds []string
	for _, bin := range []string{"kubelet", "kubeadm"} {
		cmds = append(cmds, fmt.Sprintf(
			"curl -fsSL --retry 10 --retry-delay 3 -o /usr/bin/%[1]s.new %[2]s/%[3]s/bin/linux/%[4]s/%[1]s && chmod 0755 /usr/bin/%[1]s.new && mv -f /usr/bin/%[1]s.new /usr/bin/%[1]s",
			bin, mirror, version, binaryArch))
	}
	cmds = append(cmds, "systemctl stop containerd")
	for _, dir := range persistentDirs {
		src := persistentMount + dir
		cmds = append(cmds,
			fmt.Sprintf("mkdir -p %s %s", src, dir),
			fmt.Sprintf("grep -q ' %[2]s none bind' /etc/fstab || echo '%[1]s %[2]s none bind,x-systemd.requires-mounts-for=%[3]s 0 0' >> /etc/fstab", src, dir, persistentMount),
			fmt.Sprintf("mountpoint -q %[1]s || mount %[1]s", dir),
		)
	}
	cmds = append(cmds,
		"mkdir -p "+containerdCertsDir,
		fmt.Sprintf(`if grep -q 'config_path' /etc/containerd/config.toml; then sed -i 's|config_path *=.*|config_path = "%[1]s"|' /etc/containerd/config.toml; else printf '\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "%[1]s"\n' >> /etc/containerd/config.toml; fi`, containerdCertsDir),
		"systemctl start containerd",
	)
	return cmds
}

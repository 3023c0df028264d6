package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	cabptv1alpha3 "github.com/tenantkube/tenantkube/internal/upstream/cabpt/v1alpha3"
)

// Talos worker constants.
const (
	// talosSystemDiskName is a Talos VM's only disk and its DataVolume
	// template: the Image Factory disk image, imported by CDI, which also
	// holds the kubelet and containerd state (PCI 07:00.0, /dev/vda).
	talosSystemDiskName = "disk-system"
	// checkStrategyNone: CAPK does not ssh into a Talos VM (Talos has no
	// ssh); the Machine is bootstrapped once its Node joins.
	checkStrategyNone = "none"
)

// talosTemplate is what the Talos machine configuration of a node group
// needs beyond the group: the cluster's spec.talos and the platform's
// settings.
type talosTemplate struct {
	Spec     v1alpha1.Talos
	Platform inputv1alpha1.TalosPlatform
	// PodCIDR and ServiceCIDR are the tenant cluster's networks.
	PodCIDR, ServiceCIDR string
}

// buildTalosConfigTemplate returns the TalosConfigTemplate N-G of a Talos
// node group (CABPT v1alpha3): a worker (generateType join) of spec.talos's
// release, hostnamed after its Machine, with one strategic patch of the
// machine configuration (talosPatch).
func buildTalosConfigTemplate(id function.Identity, p nodeGroupPlan, t talosTemplate) (*cabptv1alpha3.TalosConfigTemplate, error) {
	patch, err := sigsyaml.Marshal(talosPatch(id, p, t))
	if err != nil {
		return nil, err
	}
	return &cabptv1alpha3.TalosConfigTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: cabptv1alpha3.GroupVersion.String(), Kind: cabptv1alpha3.TalosConfigTemplateKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      p.ObjectName(id),
			Namespace: id.Namespace,
			Labels:    groupLabels(id, p.Name),
		},
		Spec: cabptv1alpha3.TalosConfigTemplateSpec{Template: cabptv1alpha3.TalosConfigTemplateResource{Spec: cabptv1alpha3.TalosConfigSpec{
			GenerateType:     cabptv1alpha3.GenerateTypeJoin,
			TalosVersion:     t.Spec.Version,
			Hostname:         &cabptv1alpha3.HostnameSpec{Source: cabptv1alpha3.HostnameSourceMachineName},
			StrategicPatches: []string{string(patch)},
		}}},
	}, nil
}

// talosPatch is the Talos machine configuration (v1alpha1) a node group's
// workers get over CABPT's generated one:
//   - machine.kubelet.extraArgs: the reservations and eviction thresholds
//     of the kubeadm path's kubelet flags (KubeletExtraArgs);
//   - machine.nodeLabels: gpu=on for a group with GPUs (NodeLabels; the
//     role labels come from the Machine, as on the kubeadm path);
//   - machine.install.image: the platform's installer of spec.talos
//     (<installerRepository>/<schematicID>:<version>), used by upgrades;
//   - machine.registries.mirrors: spec.talos.registryMirrors;
//   - cluster.controlPlane.endpoint: the tenant API server Service,
//     https://N.NS.svc:6443, resolved by the management cluster's DNS the
//     VM gets from its pod network;
//   - cluster.network: the platform's pod and service CIDRs (the kubelet's
//     cluster DNS is the service CIDR's 10th address), no CNI (Cilium is
//     an add-on); cluster.proxy disabled (Cilium replaces kube-proxy);
//     cluster.discovery disabled (it would call the public discovery
//     service).
func talosPatch(id function.Identity, p nodeGroupPlan, t talosTemplate) map[string]any {
	args := map[string]any{}
	for _, a := range p.Kubelet.KubeletExtraArgs() {
		args[a[0]] = a[1]
	}
	machine := map[string]any{
		"kubelet": map[string]any{"extraArgs": args},
		"install": map[string]any{"image": t.Platform.InstallerImage(t.Spec.SchematicID, t.Spec.Version)},
	}
	if labels := p.NodeLabels(); len(labels) > 0 {
		nl := map[string]any{}
		for k, v := range labels {
			nl[k] = v
		}
		machine["nodeLabels"] = nl
	}
	if len(t.Spec.RegistryMirrors) > 0 {
		mirrors := map[string]any{}
		for host, m := range t.Spec.RegistryMirrors {
			eps := make([]any, len(m.Endpoints))
			for i, e := range m.Endpoints {
				eps[i] = e
			}
			mc := map[string]any{"endpoints": eps}
			if m.SkipFallback {
				mc["skipFallback"] = true
			}
			mirrors[host] = mc
		}
		machine["registries"] = map[string]any{"mirrors": mirrors}
	}
	return map[string]any{
		"machine": machine,
		"cluster": map[string]any{
			"controlPlane": map[string]any{"endpoint": fmt.Sprintf("https://%s:%d", id.APIServerServiceHost(), apiServerPort)},
			"network": map[string]any{
				"podSubnets":     []any{t.PodCIDR},
				"serviceSubnets": []any{t.ServiceCIDR},
				"cni":            map[string]any{"name": "none"},
			},
			"proxy":     map[string]any{"disabled": true},
			"discovery": map[string]any{"enabled": false},
		},
	}
}

// talosSystemDisk makes vm a Talos VM: its only disk is disk-system, a
// DataVolume of the group's diskSize imported over HTTP from the
// platform's Image Factory (<imageFactoryURL>/image/<schematicID>/
// <version>/openstack-amd64.raw.xz), replacing the container disk and the
// kubelet disk; CAPK checks no ssh sentinel.
func talosSystemDisk(spec *infrav1.KubevirtMachineTemplateSpec, imageURL string) {
	ms := &spec.Template.Spec
	ms.BootstrapCheckSpec.CheckStrategy = checkStrategyNone
	vm := &ms.VirtualMachineTemplate.Spec
	dvt := &vm.DataVolumeTemplates[0]
	dvt.Name = talosSystemDiskName
	dvt.Spec.Source = &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: imageURL}}
	d := &vm.Template.Spec.Domain.Devices
	d.Disks = []kubevirtv1.Disk{{
		Name:       talosSystemDiskName,
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio, PciAddress: systemDiskPCI}},
		BootOrder:  ptr(uint(1)),
	}}
	vm.Template.Spec.Volumes = []kubevirtv1.Volume{{
		Name:         talosSystemDiskName,
		VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: talosSystemDiskName}},
	}}
}

// isTalos reports whether node group ng boots Talos: its os, or the
// platform's defaultWorkerOS when it sets none.
func isTalos(ng v1alpha1.NodeGroup, in *inputv1alpha1.WorkersInput) bool {
	return in.WorkerOS(ng.OS) == v1alpha1.WorkerOSTalos
}

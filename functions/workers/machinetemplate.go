package main

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/presets"
	"github.com/tenantkube/tenantkube/internal/quantity"
)

// VM constants.
const (
	// systemDiskName is the container-disk system volume (PCI 07:00.0).
	systemDiskName = "system"
	// systemDiskPCI is the system disk's guest PCI address.
	systemDiskPCI = "0000:07:00.0"
	// kubeletDiskName is the persistent kubelet/containerd volume and its
	// DataVolume template (PCI 08:00.0, /dev/vdb in the guest).
	kubeletDiskName = "disk-kubelet"
	// kubeletDiskPCI is the persistent disk's guest PCI address.
	kubeletDiskPCI = "0000:08:00.0"
	// podNetworkName is the VM's single pod-network interface.
	podNetworkName = "default"
	// instancetypeKind is the kind of instance type a VM refers to.
	instancetypeKind = "VirtualMachineClusterInstancetype"
	// templateHashLength is the number of hex characters of the spec's
	// SHA-256 in a KubevirtMachineTemplate name.
	templateHashLength = 6

	annotationUsePopulator       = "cdi.kubevirt.io/storage.usePopulator"
	annotationBridgeLiveMigation = "kubevirt.io/allow-pod-bridge-network-live-migration"
)

// vmEphemeralStorage is the virt-launcher pod's ephemeral-storage limit,
// the preset value (docs/tenant-guide.md); its request is a fortieth of it in whole
// bytes.
var vmEphemeralStorage = presets.EphemeralStorage

// buildKubevirtMachineTemplate returns the KubevirtMachineTemplate of a
// node group (CAPI provider KubeVirt v1alpha1), named
// N-G-<templateHash of its spec>, so any change of the VM gives a new name
// and CAPI rolls the group. image is the container disk for the plan's
// minor version; bootstrapHash is canonicalHash of the group's bootstrap
// template spec with the endpoint's short name (kubeadmBootstrapHash,
// talosBootstrapHash; an annotation of the VM template, so bootstrap
// changes roll too). It returns an error when resources.cpu is
// not a whole number of cores or the spec does not hash.
//
// Placement (antiAffinity): unset is Soft, except for a group whose observed
// MachineDeployment still refers to the template without placement: that
// template stays, so upgrading
// tenantkube rolls no running group; the group takes the default placement
// with its next template change.
func buildKubevirtMachineTemplate(id function.Identity, p nodeGroupPlan, image, bootstrapHash string) (*infrav1.KubevirtMachineTemplate, error) {
	placement := p.Group.AntiAffinity
	if placement == "" {
		unplaced, err := buildMachineTemplate(id, p, image, bootstrapHash, v1alpha1.AntiAffinityNone)
		if err != nil || (p.ObservedTemplate != "" && unplaced.Name == p.ObservedTemplate) {
			return unplaced, err
		}
		placement = v1alpha1.AntiAffinitySoft
	}
	return buildMachineTemplate(id, p, image, bootstrapHash, placement)
}

// buildMachineTemplate is buildKubevirtMachineTemplate with the placement
// given: None gives exactly the template of a group without placement.
func buildMachineTemplate(id function.Identity, p nodeGroupPlan, image, bootstrapHash string, placement v1alpha1.AntiAffinity) (*infrav1.KubevirtMachineTemplate, error) {
	domain, instancetype, err := vmDomain(p)
	if err != nil {
		return nil, err
	}
	storage, err := kubeletDiskStorage(p)
	if err != nil {
		return nil, err
	}
	tmplMeta, affinity := vmMeta(id, p, bootstrapHash, placement)
	vm := kubevirtv1.VirtualMachineSpec{
		RunStrategy:  ptr(kubevirtv1.RunStrategyAlways),
		Instancetype: instancetype,
		DataVolumeTemplates: []kubevirtv1.DataVolumeTemplateSpec{{
			ObjectMeta: metav1.ObjectMeta{
				Name:        kubeletDiskName,
				Annotations: map[string]string{annotationUsePopulator: "false"},
			},
			Spec: cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{Blank: &cdiv1.DataVolumeBlankImage{}}, Storage: storage},
		}},
		Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
			ObjectMeta: tmplMeta,
			Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain:           domain,
				Affinity:         affinity,
				EvictionStrategy: ptr(kubevirtv1.EvictionStrategyExternal),
				Networks:         []kubevirtv1.Network{{Name: podNetworkName, NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
				Volumes: []kubevirtv1.Volume{
					{Name: systemDiskName, VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: image}}},
					{Name: kubeletDiskName, VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: kubeletDiskName}}},
				},
			},
		},
	}
	spec := infrav1.KubevirtMachineTemplateSpec{Template: infrav1.KubevirtMachineTemplateResource{Spec: infrav1.KubevirtMachineSpec{
		VirtualMachineTemplate: infrav1.VirtualMachineTemplateSpec{Spec: vm},
		BootstrapCheckSpec:     infrav1.VirtualMachineBootstrapCheckSpec{CheckStrategy: "ssh"},
	}}}
	if p.TalosImageURL != "" {
		talosSystemDisk(&spec, p.TalosImageURL)
	}
	hash, err := templateHash(spec)
	if err != nil {
		return nil, err
	}
	return &infrav1.KubevirtMachineTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: "KubevirtMachineTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ObjectName(id) + "-" + hash, Namespace: id.Namespace, Labels: groupLabels(id, p.Name)},
		Spec:       spec,
	}, nil
}

// vmDomain is the virtual hardware of node group p's VMs: the system and
// kubelet disks, the pod network's NIC, CPU and memory (or the instance
// type that sets them) and the GPUs.
func vmDomain(p nodeGroupPlan) (kubevirtv1.DomainSpec, *kubevirtv1.InstancetypeMatcher, error) {
	g := p.Group
	domain := kubevirtv1.DomainSpec{
		Resources: kubevirtv1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: vmEphemeralStorage.DeepCopy()},
			Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: quantity.DivideWholeBytes(vmEphemeralStorage, 40)},
		},
		Devices: kubevirtv1.Devices{
			Disks: []kubevirtv1.Disk{
				{Name: systemDiskName, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio, PciAddress: systemDiskPCI}}},
				{
					Name:       kubeletDiskName,
					DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio, PciAddress: kubeletDiskPCI}},
					BlockSize:  &kubevirtv1.BlockSize{MatchVolume: &kubevirtv1.FeatureState{Enabled: ptr(true)}},
				},
			},
			Interfaces: []kubevirtv1.Interface{{
				Name:                   podNetworkName,
				InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}},
			}},
		},
	}
	if g.LogSerialConsole {
		// Only true is written: false would change the hash of every
		// group that never set it.
		domain.Devices.LogSerialConsole = ptr(true)
	}
	if err := setPodCPU(&domain.Resources, g); err != nil {
		return domain, nil, err
	}
	for i, gpu := range g.GPUs {
		domain.Devices.GPUs = append(domain.Devices.GPUs, kubevirtv1.GPU{Name: fmt.Sprintf("gpu%d", i+1), DeviceName: gpu.Name})
	}
	var instancetype *kubevirtv1.InstancetypeMatcher
	if p.Sizing.Explicit {
		cores, err := wholeCores(*p.Sizing.CPU)
		if err != nil {
			return domain, nil, err
		}
		domain.CPU = &kubevirtv1.CPU{Cores: cores, Threads: 1, Sockets: 1}
		mem := p.Sizing.Memory.DeepCopy()
		domain.Memory = &kubevirtv1.Memory{Guest: &mem}
	} else if usesInstancetype(g) {
		instancetype = &kubevirtv1.InstancetypeMatcher{Kind: instancetypeKind, Name: g.InstanceTypeName()}
	}
	return domain, instancetype, nil
}

// kubeletDiskStorage is the storage of node group p's kubelet disk: its
// diskSize, in its storage class.
func kubeletDiskStorage(p nodeGroupPlan) (*cdiv1.StorageSpec, error) {
	storage := &cdiv1.StorageSpec{
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{}},
	}
	disk, err := p.Group.DiskSize.Parse()
	if err != nil {
		return nil, err
	}
	storage.Resources.Requests[corev1.ResourceStorage] = disk
	if p.StorageClass != "" {
		storage.StorageClassName = ptr(p.StorageClass)
	}
	return storage, nil
}

// vmMeta is the metadata of node group p's VMs (live migration, the
// bootstrap data's hash, role labels, and the labels placement selects
// on) and their affinity for placement.
func vmMeta(id function.Identity, p nodeGroupPlan, bootstrapHash string, placement v1alpha1.AntiAffinity) (metav1.ObjectMeta, *corev1.Affinity) {
	tmplMeta := metav1.ObjectMeta{
		Annotations: map[string]string{annotationBridgeLiveMigation: "true"},
	}
	if bootstrapHash != "" {
		tmplMeta.Annotations[annotationBootstrapHash] = bootstrapHash[:min(len(bootstrapHash), 16)]
	}
	labels := p.RoleLabels()
	affinity := vmAntiAffinity(id, p.Name, placement)
	if affinity != nil {
		labels[function.LabelCluster], labels[labelNodeGroup] = id.Name, p.Name
	}
	if len(labels) > 0 {
		tmplMeta.Labels = labels
	}
	return tmplMeta, affinity
}

// antiAffinityWeight is the weight of the Soft placement's preference, the
// most Kubernetes allows (1..100): it is the VM's only preference.
const antiAffinityWeight = 100

// vmAntiAffinity is the affinity of node group g's VMs for placement: a
// pod anti-affinity on kubernetes.io/hostname against the virt-launcher
// pods labelled tenantkube.io/cluster=N and tenantkube.io/node-group=G in
// NS (a term without namespaces means the pod's own), so the VMs of one
// group of one cluster repel each other and nothing else; preferred with
// Soft, required with Hard, nil with None.
func vmAntiAffinity(id function.Identity, g string, placement v1alpha1.AntiAffinity) *corev1.Affinity {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{function.LabelCluster: id.Name, labelNodeGroup: g}},
		TopologyKey:   corev1.LabelHostname,
	}
	switch placement {
	case v1alpha1.AntiAffinitySoft:
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: antiAffinityWeight, PodAffinityTerm: term}},
		}}
	case v1alpha1.AntiAffinityHard:
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
		}}
	}
	return nil
}

// setPodCPU sets the virt-launcher compute container's CPU limit and
// request from podCpuLimit and podCpuRequest, each only when given (an
// absent key leaves KubeVirt's derivation, and the hash, as before). It
// returns an error when one is not a quantity (checked by Validate).
func setPodCPU(r *kubevirtv1.ResourceRequirements, g v1alpha1.NodeGroup) error {
	for _, f := range []struct {
		val  v1alpha1.Quantity
		list corev1.ResourceList
	}{{g.PodCPULimit, r.Limits}, {g.PodCPURequest, r.Requests}} {
		if !f.val.IsSet() {
			continue
		}
		q, err := f.val.Parse()
		if err != nil {
			return err
		}
		f.list[corev1.ResourceCPU] = q
	}
	return nil
}

// templateHash is the hash in a KubevirtMachineTemplate's name: the first
// templateHashLength hex characters of canonicalHash of its spec.
func templateHash(spec infrav1.KubevirtMachineTemplateSpec) (string, error) {
	sum, err := canonicalHash(spec)
	if err != nil {
		return "", err
	}
	return sum[:templateHashLength], nil
}

// wholeCores returns a CPU quantity as a whole number of cores, or an error
// when it is not one (a VM's domain has whole cores).
func wholeCores(q resource.Quantity) (uint32, error) {
	m := q.MilliValue()
	if m <= 0 || m%1000 != 0 || m/1000 > 1<<16 {
		return 0, fmt.Errorf("%s is not a whole number of cores", q.String())
	}
	return uint32(m / 1000), nil
}

// scaleFromZeroLabels returns the value of cluster-autoscaler's
// capacity.../labels annotation: the role labels and the node labels
// (NodeLabels) as sorted "key=value" pairs joined by commas, or "" without
// any.
func scaleFromZeroLabels(p nodeGroupPlan) string {
	labels := p.RoleLabels()
	for k, v := range p.NodeLabels() {
		labels[k] = v
	}
	return joinLabels(labels)
}

// joinLabels returns labels as sorted "key=value" pairs joined by commas
// (the shape of kubelet's --node-labels).
func joinLabels(labels map[string]string) string {
	keys := sortedKeys(labels)
	pairs := make([]string, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, k+"="+labels[k])
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

package main

import (
	"encoding/base64"
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/talos"
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

// talosSystemDiskBlockSize is the sector sizes, in bytes, the Talos system
// disk presents: 512 logical for the BIOS boot of the disk image, 4096
// physical for 4 KiB-native volumes (Cozystack's chart:
// packages/apps/kubernetes/templates/cluster.yaml:168-171, commit 39cdc8866).
var talosSystemDiskBlockSize = struct{ Logical, Physical uint }{512, 4096}

// talosTemplate is what the Talos machine configuration of a node group
// needs beyond the group: the cluster's spec.talos and the platform's
// settings.
type talosTemplate struct {
	Spec     v1alpha1.Talos
	Platform inputv1alpha1.TalosPlatform
	// PodCIDR and ServiceCIDR are the tenant cluster's networks.
	PodCIDR, ServiceCIDR string
	// ClusterDomain is the management cluster's DNS domain, from which
	// machine.network.searchDomains are made; empty in the bootstrap hash
	// (as the endpoint is short there), so it rolls no running group.
	ClusterDomain string
	// Endpoint is the tenant API server host the workers dial: its
	// Service's fully qualified name N.NS.svc.<clusterDomain>
	// (hashEndpoint for the bootstrap hash).
	Endpoint string
	// PKI is the observed Talos CA and Kubernetes CA.
	PKI talosPKI
}

// Required-resource keys of the Talos PKI.
const (
	// requirementTalosCA is the Secret N-talos-ca: the Talos machine CA
	// cert-manager issues (the control-plane step composes it).
	requirementTalosCA = "talos-ca"
	// requirementClusterCA is Kamaji's Kubernetes CA Secret N-ca.
	requirementClusterCA = "cluster-ca"
)

// talosPKI is what a Talos worker's machine configuration takes from the
// observed state: the Talos CA (certificate, and its key, from which the
// tokens are derived: talos.DeriveTokens) and the Kubernetes CA
// certificate. Needed says some node group boots Talos. The Secrets are in
// NS, which the tenant may write: a tenant that replaces them breaks only
// its own cluster's joins.
type talosPKI struct {
	Needed                bool
	CACert, ClusterCACert []byte
	Tokens                talos.Tokens
}

// Ready reports whether both CAs have been observed.
func (k *talosPKI) Ready() bool { return len(k.CACert) > 0 && len(k.ClusterCACert) > 0 }

// Waiting says what a Talos group waits for.
func (k *talosPKI) Waiting(id function.Identity) string {
	return fmt.Sprintf("waiting for the Talos CA Secret %s/%s (cert-manager, composed with the control plane) and Kamaji's CA Secret %s/%s, from which its machine configuration is computed",
		id.Namespace, talos.CASecretName(id), id.Namespace, talos.ClusterCASecretName(id))
}

// requireTalosPKI asks, when some node group of spec boots Talos, for the
// Secrets N-talos-ca and N-ca of NS, and returns what arrived of them.
func requireTalosPKI(p *function.Plan, r *function.Request, id function.Identity, spec *v1alpha1.KubernetesClusterSpec, in *inputv1alpha1.WorkersInput) (*talosPKI, *field.Error) {
	out := &talosPKI{}
	for _, ng := range spec.NodeGroups {
		out.Needed = out.Needed || isTalos(ng, in)
	}
	if !out.Needed {
		return out, nil
	}
	secret := func(key, name string) (*corev1.Secret, *field.Error) {
		p.Require(key, &fnv1.ResourceSelector{
			ApiVersion: "v1", Kind: "Secret",
			Match:     &fnv1.ResourceSelector_MatchName{MatchName: name},
			Namespace: proto.String(id.Namespace),
		})
		items, _, err := function.Required[corev1.Secret](r, key)
		if err != nil {
			return nil, field.InternalError(field.NewPath("requiredResources", key), fmt.Errorf("cannot decode the Secret %s/%s: %w", id.Namespace, name, err))
		}
		if len(items) != 1 {
			return nil, nil
		}
		return items[0], nil
	}
	ca, ferr := secret(requirementTalosCA, talos.CASecretName(id))
	if ferr != nil {
		return nil, ferr
	}
	cluster, ferr := secret(requirementClusterCA, talos.ClusterCASecretName(id))
	if ferr != nil {
		return nil, ferr
	}
	if ca == nil || cluster == nil || len(ca.Data[corev1.TLSPrivateKeyKey]) == 0 {
		return out, nil
	}
	out.CACert, out.ClusterCACert = ca.Data[corev1.TLSCertKey], cluster.Data["ca.crt"]
	out.Tokens = talos.DeriveTokens(ca.Data[corev1.TLSPrivateKeyKey])
	return out, nil
}

// talosBootstrapHash is the bootstrap hash of the TalosConfigTemplate of
// p and t (the machine template's annotationBootstrapHash): canonicalHash
// of its spec with the endpoint's short name (hashEndpoint).
func talosBootstrapHash(id function.Identity, p nodeGroupPlan, t talosTemplate) (string, error) {
	t.Endpoint, t.ClusterDomain = hashEndpoint(id), ""
	tct, err := buildTalosConfigTemplate(id, p, t)
	if err != nil {
		return "", err
	}
	return canonicalHash(tct.Spec)
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
//   - machine.ca.crt and machine.token: the Talos CA (N-talos-ca) the
//     CSR signer beside the API server signs with, and the token it
//     accepts (talos.DeriveTokens);
//   - cluster.ca.crt and cluster.token: Kamaji's Kubernetes CA (N-ca) and
//     the kubelet's bootstrap token;
//   - cluster.controlPlane.endpoint: the tenant API server Service by its
//     fully qualified name, https://N.NS.svc.<clusterDomain>:6443: the VM
//     takes its DNS servers from DHCP without the management cluster's
//     search path, so a short N.NS.svc would not resolve there;
//   - machine.network.searchDomains: svc.<clusterDomain> and
//     <clusterDomain>, so the management cluster's N.NS.svc names resolve
//     on the host: Talos takes its nameservers from the DHCP KubeVirt
//     serves (the virt-launcher pod's resolv.conf) but drops the DHCP
//     search list (siderolabs/talos v1.13.9
//     internal/app/machined/pkg/controllers/network/operator/dhcp4.go:494);
//     Cozystack's chart sets the same two
//     (packages/apps/kubernetes/templates/talos/talos-reconcile-job.yaml:370-372);
//   - machine.features.kubePrism.enabled false: KubePrism balances over
//     the cluster endpoint and the `kubernetes` EndpointSlice's addresses
//     (control-plane nodes); with Kamaji both are the API server Service,
//     which already balances over its pods (docs/platform-guide.md,
//     "Talos workers"). CABPT's generated config enables it from Talos
//     v1.6 (siderolabs/talos v1.13.9 pkg/machinery/config/generate/init.go:67);
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
	if t.ClusterDomain != "" {
		machine["network"] = map[string]any{"searchDomains": []any{"svc." + t.ClusterDomain, t.ClusterDomain}}
	}
	machine["features"] = map[string]any{"kubePrism": map[string]any{"enabled": false}}
	machine["ca"] = map[string]any{"crt": base64.StdEncoding.EncodeToString(t.PKI.CACert)}
	machine["token"] = t.PKI.Tokens.Machine
	return map[string]any{
		"machine": machine,
		"cluster": map[string]any{
			"ca":           map[string]any{"crt": base64.StdEncoding.EncodeToString(t.PKI.ClusterCACert)},
			"token":        t.PKI.Tokens.ClusterToken(),
			"controlPlane": map[string]any{"endpoint": fmt.Sprintf("https://%s:%d", t.Endpoint, apiServerPort)},
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
// kubelet disk, presented with 512-byte logical and 4096-byte physical
// sectors (talosSystemDiskBlockSize); CAPK checks no ssh sentinel.
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
		BlockSize:  &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: talosSystemDiskBlockSize.Logical, Physical: talosSystemDiskBlockSize.Physical}},
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

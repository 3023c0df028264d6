package preview

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Kinds of a node group's objects.
const (
	kindMachineDeployment = "MachineDeployment"
	kindMachineTemplate   = "KubevirtMachineTemplate"
	kindBootstrapTemplate = "KubeadmConfigTemplate"
	kindTalosTemplate     = "TalosConfigTemplate"
)

// Rolls reports whether Cluster API replaces the machines of a
// MachineDeployment whose spec.template changes from old to new: when
// spec.version, spec.bootstrap, spec.infrastructureRef or
// spec.failureDomain differ. Labels, annotations, the deletion timeouts,
// minReadySeconds, readinessGates and taints are updated in place, and a
// template object's contents are not compared, only the reference (Cluster
// API v1.13.6, internal/controllers/machinedeployment/mdutil
// MachineTemplateUpToDate).
func Rolls(old, new *clusterv1.MachineTemplateSpec) bool {
	o, n := old.Spec, new.Spec
	return o.Version != n.Version ||
		!reflect.DeepEqual(o.Bootstrap, n.Bootstrap) ||
		!reflect.DeepEqual(o.InfrastructureRef, n.InfrastructureRef) ||
		o.FailureDomain != n.FailureDomain
}

// vmSpec is the path of the VirtualMachine spec in a KubevirtMachineTemplate.
const vmSpec = "spec.template.spec.virtualMachineTemplate.spec"

// reason maps the changed paths of one kind of a node group's objects,
// under path, to the field of the claim whose change causes them
// (docs/architecture.md says how the workers function builds each path).
// field "" marks a path that only mirrors another object's change. A path
// the Kubernetes version and a platform setting both determine names the
// version when the group's version changes too, else the platform setting.
type reason struct {
	kind, path, field, platform string
}

// reasons is the one table from changed template paths to the fields that
// cause them.
var reasons = []reason{
	{kind: kindMachineDeployment, path: "spec.template.spec.version", field: "version"},
	{kind: kindMachineTemplate, path: vmSpec + ".dataVolumeTemplates[*].spec.storage.resources.requests.storage", field: "diskSize"},
	{kind: kindMachineTemplate, path: vmSpec + ".dataVolumeTemplates[*].spec.storage.storageClassName", field: "storageClass"},
	{kind: kindMachineTemplate, path: vmSpec + ".instancetype", field: "instanceType"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.cpu", field: "resources"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.memory", field: "resources"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.devices.gpus", field: "gpus"},
	// The labels the placement selects, before the role labels.
	{kind: kindMachineTemplate, path: vmSpec + ".template.metadata.labels[tenantkube.io/cluster]", field: "antiAffinity"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.metadata.labels[tenantkube.io/node-group]", field: "antiAffinity"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.metadata.labels", field: "roles"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.affinity", field: "antiAffinity"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.devices.logSerialConsole", field: "logSerialConsole"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.resources.limits.cpu", field: "podCpuLimit"},
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.domain.resources.requests.cpu", field: "podCpuRequest"},
	// The hash of the KubeadmConfigTemplate's spec: its own paths say why.
	{kind: kindMachineTemplate, path: vmSpec + ".template.metadata.annotations[tenantkube.io/bootstrap-hash]"},
	// The container disk of the version's minor (platform: containerDiskImages).
	{kind: kindMachineTemplate, path: vmSpec + ".template.spec.volumes[*].containerDisk.image", field: "version", platform: "containerDiskImages"},
	// Reservations sized from the node's memory and CPU and the group's kubelet overrides.
	{kind: kindBootstrapTemplate, path: "spec.template.spec.joinConfiguration.nodeRegistration.kubeletExtraArgs", field: "kubelet reservations"},
	// The kubelet and kubeadm downloads of the version (platform: kubernetesBinaryMirror).
	{kind: kindBootstrapTemplate, path: "spec.template.spec.preKubeadmCommands", field: "version", platform: "kubernetesBinaryMirror"},
	{kind: kindBootstrapTemplate, path: "spec.template.spec.files", platform: "registryMirror"},
	// A Talos group: its system disk's image (spec.talos's version and
	// schematic, or the platform's talos.imageFactoryURL), its machine
	// configuration (the kubelet reservations, the registry mirrors, the
	// installer) and release.
	{kind: kindMachineTemplate, path: vmSpec + ".dataVolumeTemplates[*].spec.source.http.url", field: "talos", platform: "talos.imageFactoryURL"},
	{kind: kindTalosTemplate, path: "spec.template.spec.strategicPatches", field: "talos or kubelet reservations"},
	{kind: kindTalosTemplate, path: "spec.template.spec.talosVersion", field: "talos"},
}

// causes names what causes the changes of an object of kind: the fields of
// the reasons table, "platform setting <name>" for the platform's, and
// "<kind> <path>" for a path the table does not know. A removed path the
// table does not know is left out (an API server's defaults are on the
// observed object only). versionChanged says whether the group's version
// changes too.
func causes(kind string, changes []change, versionChanged bool) []string {
	set := map[string]bool{}
	for _, c := range changes {
		r, ok := lookup(kind, c.Path)
		switch {
		case !ok && c.Removed:
		case !ok:
			set[kind+" "+c.Path] = true
		case r.platform != "" && (r.field == "" || !versionChanged):
			set["platform setting "+r.platform] = true
		case r.field != "":
			set[r.field] = true
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// lookup returns the row of reasons for path of an object of kind: the
// one whose path is path or a prefix of it.
func lookup(kind, path string) (reason, bool) {
	for _, r := range reasons {
		if r.kind != kind {
			continue
		}
		if path == r.path || strings.HasPrefix(path, r.path+".") || strings.HasPrefix(path, r.path+"[") {
			return r, true
		}
	}
	return reason{}, false
}

// rollCauses returns why a node group's machines are replaced when its
// MachineDeployment moves from oldMD (in old) to newMD (in new): the causes
// of the changes of its version and of the templates it refers to, each
// template found by its reference's name. A template missing from old or
// new is named as such.
func rollCauses(old Objects, oldMD *clusterv1.MachineDeployment, new Objects, newMD *clusterv1.MachineDeployment) []string {
	ov, nv := oldMD.Spec.Template.Spec.Version, newMD.Spec.Template.Spec.Version
	versionChanged := ov != nv
	var out []string
	if versionChanged {
		out = append(out, causes(kindMachineDeployment, []change{{Path: "spec.template.spec.version"}}, true)...)
	}
	if oldMD.Spec.Template.Spec.FailureDomain != newMD.Spec.Template.Spec.FailureDomain {
		out = append(out, kindMachineDeployment+" spec.template.spec.failureDomain")
	}
	// A new bootstrap kind is a new worker OS (os, or the platform's
	// defaultWorkerOS): every other difference of the group follows from it.
	if ok, nk := oldMD.Spec.Template.Spec.Bootstrap.ConfigRef.Kind, newMD.Spec.Template.Spec.Bootstrap.ConfigRef.Kind; ok != nk {
		return uniqueSorted(append(out, "os ("+osOf(ok)+" to "+osOf(nk)+")"))
	}
	refs := []struct {
		kind, oldName, newName string
	}{
		{kindMachineTemplate, oldMD.Spec.Template.Spec.InfrastructureRef.Name, newMD.Spec.Template.Spec.InfrastructureRef.Name},
		{newMD.Spec.Template.Spec.Bootstrap.ConfigRef.Kind, oldMD.Spec.Template.Spec.Bootstrap.ConfigRef.Name, newMD.Spec.Template.Spec.Bootstrap.ConfigRef.Name},
	}
	for _, ref := range refs {
		o := find(old, ref.kind, oldMD.Namespace, ref.oldName)
		n := find(new, ref.kind, newMD.Namespace, ref.newName)
		switch {
		case o == nil:
			out = append(out, ref.kind+" "+ref.oldName+" not observed")
		case n == nil:
			out = append(out, ref.kind+" "+ref.newName+" not rendered")
		default:
			out = append(out, causes(ref.kind, diff(specOf(o), specOf(n)), versionChanged)...)
		}
	}
	return uniqueSorted(out)
}

// osOf is the worker OS of a bootstrap template kind.
func osOf(kind string) string {
	if kind == kindTalosTemplate {
		return "Talos"
	}
	return "Ubuntu"
}

// specOf is u with its spec only, so diff's paths start at "spec".
func specOf(u *unstructured.Unstructured) map[string]any {
	return map[string]any{"spec": u.Object["spec"]}
}

func find(objs Objects, kind, namespace, name string) *unstructured.Unstructured {
	for k, u := range objs {
		if k.Kind == kind && k.Namespace == namespace && k.Name == name {
			return u
		}
	}
	return nil
}

func uniqueSorted(l []string) []string {
	set := map[string]bool{}
	out := []string{}
	for _, s := range l {
		if !set[s] {
			set[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// machineDeployment decodes u.
func machineDeployment(u *unstructured.Unstructured) (*clusterv1.MachineDeployment, error) {
	md := &clusterv1.MachineDeployment{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, md)
	return md, err
}

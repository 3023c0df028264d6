package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const ns = "tenant-demo"

func obj(apiVersion, kind, name, resourceName string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{AnnotationResourceName: resourceName}}
	if labels != nil {
		meta["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta, "spec": spec}}
}

// md is node group g's MachineDeployment at version referring to the
// machine template tmpl, with the autoscaler's minimum min.
func md(g, version, tmpl, min string) *unstructured.Unstructured {
	u := obj("cluster.x-k8s.io/v1beta2", "MachineDeployment", "demo-"+g, "nodegroup-"+g+"-machinedeployment",
		map[string]any{labelNodeGroup: g},
		map[string]any{"clusterName": "demo", "template": map[string]any{"spec": map[string]any{
			"clusterName": "demo",
			"version":     version,
			"bootstrap": map[string]any{"configRef": map[string]any{
				"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "demo-" + g}},
			"infrastructureRef": map[string]any{
				"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "KubevirtMachineTemplate", "name": tmpl},
		}}})
	u.SetAnnotations(map[string]string{AnnotationResourceName: "nodegroup-" + g + "-machinedeployment",
		"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": min})
	return u
}

// kmt is a machine template with disk size disk and container disk image.
func kmt(name, disk, image string) *unstructured.Unstructured {
	return obj("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", name, "nodegroup-md0-machinetemplate-"+name[len(name)-6:], nil,
		map[string]any{"template": map[string]any{"spec": map[string]any{"virtualMachineTemplate": map[string]any{"spec": map[string]any{
			"dataVolumeTemplates": []any{map[string]any{"spec": map[string]any{"storage": map[string]any{
				"resources": map[string]any{"requests": map[string]any{"storage": disk}}}}}},
			"template": map[string]any{"spec": map[string]any{"volumes": []any{
				map[string]any{"name": "system", "containerDisk": map[string]any{"image": image}}}}},
		}}}}})
}

// kct is node group g's bootstrap template downloading kubelet version.
func kct(g, version string) *unstructured.Unstructured {
	return obj("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", "demo-"+g, "nodegroup-"+g+"-bootstrap", nil,
		map[string]any{"template": map[string]any{"spec": map[string]any{
			"preKubeadmCommands": []any{"curl https://dl.k8s.io/release/" + version + "/bin/linux/amd64/kubelet"}}}})
}

func kcp(version string) *unstructured.Unstructured {
	return obj("controlplane.cluster.x-k8s.io/v1alpha2", "KamajiControlPlane", "demo", "kamajicontrolplane", nil,
		map[string]any{"version": version, "replicas": int64(2)})
}

func hr(addon string, values map[string]any) *unstructured.Unstructured {
	return obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", "demo-"+addon, "addon-"+addon, nil, map[string]any{"values": values})
}

func objects(us ...*unstructured.Unstructured) Objects {
	o := Objects{}
	for _, u := range us {
		o[KeyOf(u)] = u
	}
	return o
}

const (
	image134 = "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.34-v1.5.2"
	image135 = "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.35-v1.5.2"
)

func TestCompare(t *testing.T) {
	observed := objects(kcp("v1.34.4"), md("md0", "v1.34.4", "demo-md0-aaaaaa", "0"), kmt("demo-md0-aaaaaa", "20Gi", image134), kct("md0", "v1.34.4"),
		md("md1", "v1.34.4", "demo-md1-cccccc", "0"), kmt("demo-md1-cccccc", "20Gi", image134), kct("md1", "v1.34.4"),
		hr("cilium", map[string]any{"MTU": int64(1350), "routingMode": "tunnel"}), hr("coredns", map[string]any{"replicas": int64(2)}))
	type args struct{ observed, first, final Objects }
	cases := []struct {
		reason string
		args   args
		want   Report
		text   string
	}{
		{
			reason: "a disk size change rolls md0; a minimum changes md1 in place; a value and a removed add-on",
			args: args{observed: observed, first: objects(kcp("v1.34.4"),
				md("md0", "v1.34.4", "demo-md0-bbbbbb", "0"), kmt("demo-md0-aaaaaa", "20Gi", image134), kmt("demo-md0-bbbbbb", "30Gi", image134), kct("md0", "v1.34.4"),
				md("md1", "v1.34.4", "demo-md1-cccccc", "3"), kmt("demo-md1-cccccc", "20Gi", image134), kct("md1", "v1.34.4"),
				hr("cilium", map[string]any{"MTU": int64(1450), "routingMode": "tunnel"}))},
			want: Report{
				ControlPlane: Upgrade{From: "v1.34.4", To: "v1.34.4"},
				NodeGroups:   []NodeGroup{{Name: "md0", Roll: &Roll{Causes: []string{"diskSize"}}}, {Name: "md1"}},
				Addons:       []Addon{{Name: "cilium", Keys: []string{"MTU"}}},
				Created:      []Key{{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-bbbbbb"}},
				Updated: []Key{
					{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease", Namespace: ns, Name: "demo-cilium"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md0"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md1"},
				},
				Deleted: []Key{{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease", Namespace: ns, Name: "demo-coredns"}},
			},
			text: `control plane: no upgrade
md0: rolls (diskSize)
md1: no roll
add-ons: cilium values change (MTU)
created: KubevirtMachineTemplate demo-md0-bbbbbb
updated: HelmRelease demo-cilium
updated: MachineDeployment demo-md0
updated: MachineDeployment demo-md1
deleted: HelmRelease demo-coredns
`,
		},
		{
			reason: "a version bump upgrades the control plane first, then md0 rolls; md1 is removed and md2 is new",
			args: args{observed: observed,
				first: objects(kcp("v1.35.1"), md("md0", "v1.34.4", "demo-md0-aaaaaa", "0"), kmt("demo-md0-aaaaaa", "20Gi", image134), kct("md0", "v1.34.4"),
					hr("cilium", map[string]any{"MTU": int64(1350), "routingMode": "tunnel"}), hr("coredns", map[string]any{"replicas": int64(2)})),
				final: objects(kcp("v1.35.1"), md("md0", "v1.35.1", "demo-md0-dddddd", "0"), kmt("demo-md0-dddddd", "20Gi", image135), kct("md0", "v1.35.1"),
					md("md2", "v1.35.1", "demo-md2-eeeeee", "0"), kmt("demo-md2-eeeeee", "20Gi", image135), kct("md2", "v1.35.1"),
					hr("cilium", map[string]any{"MTU": int64(1350), "routingMode": "tunnel"}), hr("coredns", map[string]any{"replicas": int64(2)}))},
			want: Report{
				ControlPlane: Upgrade{From: "v1.34.4", To: "v1.35.1"},
				NodeGroups: []NodeGroup{
					{Name: "md0", AfterControlPlane: &Roll{Causes: []string{"version"}}},
					{Name: "md1", Removed: true},
					{Name: "md2", New: true},
				},
				Created: []Key{
					{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Namespace: ns, Name: "demo-md2"},
					{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-dddddd"},
					{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md2-eeeeee"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md2"},
				},
				Updated: []Key{
					{Group: "controlplane.cluster.x-k8s.io", Kind: "KamajiControlPlane", Namespace: ns, Name: "demo"},
					{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Namespace: ns, Name: "demo-md0"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md0"},
				},
				Deleted: []Key{
					{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Namespace: ns, Name: "demo-md1"},
					{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-aaaaaa"},
					{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md1-cccccc"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md1"},
				},
			},
			text: `control plane: upgrades v1.34.4 -> v1.35.1
md0: rolls (version) after the control plane upgrade
md1: removed, its machines are deleted
md2: new node group
add-ons: no values change
created: KubeadmConfigTemplate demo-md2
created: KubevirtMachineTemplate demo-md0-dddddd
created: KubevirtMachineTemplate demo-md2-eeeeee
created: MachineDeployment demo-md2
updated: KamajiControlPlane demo
updated: KubeadmConfigTemplate demo-md0
updated: MachineDeployment demo-md0
deleted: KubeadmConfigTemplate demo-md1
deleted: KubevirtMachineTemplate demo-md0-aaaaaa
deleted: KubevirtMachineTemplate demo-md1-cccccc
deleted: MachineDeployment demo-md1
`,
		},
		{
			reason: "a disk size change with a version bump rolls twice",
			args: args{observed: objects(kcp("v1.34.4"), md("md0", "v1.34.4", "demo-md0-aaaaaa", "0"), kmt("demo-md0-aaaaaa", "20Gi", image134), kct("md0", "v1.34.4")),
				first: objects(kcp("v1.35.1"), md("md0", "v1.34.4", "demo-md0-bbbbbb", "0"), kmt("demo-md0-bbbbbb", "30Gi", image134), kct("md0", "v1.34.4")),
				final: objects(kcp("v1.35.1"), md("md0", "v1.35.1", "demo-md0-dddddd", "0"), kmt("demo-md0-dddddd", "30Gi", image135), kct("md0", "v1.35.1"))},
			want: Report{
				ControlPlane: Upgrade{From: "v1.34.4", To: "v1.35.1"},
				NodeGroups:   []NodeGroup{{Name: "md0", Roll: &Roll{Causes: []string{"diskSize"}}, AfterControlPlane: &Roll{Causes: []string{"version"}}}},
				Created:      []Key{{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-dddddd"}},
				Updated: []Key{
					{Group: "controlplane.cluster.x-k8s.io", Kind: "KamajiControlPlane", Namespace: ns, Name: "demo"},
					{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Namespace: ns, Name: "demo-md0"},
					{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md0"},
				},
				Deleted: []Key{{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-aaaaaa"}},
			},
			text: "control plane: upgrades v1.34.4 -> v1.35.1\nmd0: rolls (diskSize), then again (version) after the control plane upgrade\n",
		},
		{
			reason: "the observed machine template is missing",
			args: args{observed: objects(kcp("v1.35.1"), md("md0", "v1.35.1", "demo-md0-aaaaaa", "0"), kct("md0", "v1.35.1")),
				first: objects(kcp("v1.35.1"), md("md0", "v1.35.1", "demo-md0-bbbbbb", "0"), kmt("demo-md0-bbbbbb", "30Gi", image135), kct("md0", "v1.35.1"))},
			want: Report{
				ControlPlane: Upgrade{From: "v1.35.1", To: "v1.35.1"},
				NodeGroups:   []NodeGroup{{Name: "md0", Roll: &Roll{Causes: []string{"KubevirtMachineTemplate demo-md0-aaaaaa not observed"}}}},
				Created:      []Key{{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate", Namespace: ns, Name: "demo-md0-bbbbbb"}},
				Updated:      []Key{{Group: "cluster.x-k8s.io", Kind: "MachineDeployment", Namespace: ns, Name: "demo-md0"}},
			},
			text: "control plane: no upgrade\nmd0: rolls (KubevirtMachineTemplate demo-md0-aaaaaa not observed)\n",
		},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			got, err := Compare(c.args.observed, c.args.first, c.args.final)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Compare(...): -want, +got:\n%s", diff)
			}
			if s := got.String(); !strings.HasPrefix(s, c.text) {
				t.Errorf("String() does not start with\n%s\ngot:\n%s", c.text, s)
			}
		})
	}
}

func TestUpdated(t *testing.T) {
	withStatus := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		c := u.DeepCopy()
		c.Object["status"] = map[string]any{"version": "v1.35.1"}
		c.SetResourceVersion("42")
		c.SetAnnotations(map[string]string{AnnotationResourceName: "kamajicontrolplane", "crossplane.io/external-name": "demo"})
		_ = unstructured.SetNestedField(c.Object, "ClusterIP", "spec", "network", "serviceType")
		return c
	}
	cases := []struct {
		reason            string
		observed, desired *unstructured.Unstructured
		want              bool
	}{
		{reason: "status, server metadata and defaults only the observed object has", observed: withStatus(kcp("v1.35.1")), desired: kcp("v1.35.1"), want: false},
		{reason: "a spec field the desired object changes", observed: withStatus(kcp("v1.35.1")), desired: kcp("v1.35.2"), want: true},
		{reason: "a label the desired object adds", observed: kcp("v1.35.1"), desired: func() *unstructured.Unstructured {
			u := kcp("v1.35.1")
			u.SetLabels(map[string]string{"tenantkube.io/cluster": "demo"})
			return u
		}(), want: true},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			if diff := cmp.Diff(c.want, updated(c.observed, c.desired)); diff != "" {
				t.Errorf("updated(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestAfterControlPlaneUpgrade(t *testing.T) {
	observedMD := md("md0", "v1.34.4", "demo-md0-aaaaaa", "0")
	observedMD.Object["status"] = map[string]any{"readyReplicas": int64(2)}
	observed := objects(kcp("v1.34.4"), observedMD)
	first := objects(kcp("v1.35.1"), md("md0", "v1.34.4", "demo-md0-aaaaaa", "0"), kmt("demo-md0-aaaaaa", "20Gi", image134))

	next, ok := AfterControlPlaneUpgrade(observed, first)
	if !ok {
		t.Fatal("AfterControlPlaneUpgrade: no upgrade found for v1.34.4 -> v1.35.1")
	}
	wantKCP := kcp("v1.35.1")
	wantKCP.Object["status"] = map[string]any{"version": "v1.35.1"}
	wantMD := md("md0", "v1.34.4", "demo-md0-aaaaaa", "0")
	wantMD.Object["status"] = map[string]any{"readyReplicas": int64(2)}
	if diff := cmp.Diff(objects(wantKCP, wantMD, kmt("demo-md0-aaaaaa", "20Gi", image134)), next); diff != "" {
		t.Errorf("AfterControlPlaneUpgrade(...): -want, +got:\n%s", diff)
	}
	if _, ok := first[KeyOf(wantKCP)].Object["status"]; ok {
		t.Error("AfterControlPlaneUpgrade changed the first render's objects")
	}
	if _, ok := AfterControlPlaneUpgrade(first, first); ok {
		t.Error("AfterControlPlaneUpgrade: an upgrade found where the version does not change")
	}
}

func TestReadYAML(t *testing.T) {
	// What `kubectl get a,b -o yaml` prints, and a plain stream.
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: demo-kccm-cloud-config
    namespace: tenant-demo
    annotations:
      crossplane.io/composition-resource-name: kccm-cloud-config
- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: demo-kccm
    namespace: tenant-demo
metadata:
  resourceVersion: ""
---
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-kccm
  namespace: tenant-demo
  annotations:
    crossplane.io/composition-resource-name: kccm-deployment
`
	objs, err := ReadYAML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []Key
	for _, u := range objs {
		got = append(got, KeyOf(u))
	}
	want := []Key{
		{Kind: "ConfigMap", Namespace: ns, Name: "demo-kccm-cloud-config"},
		{Kind: "ServiceAccount", Namespace: ns, Name: "demo-kccm"},
		{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "demo-kccm"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadYAML: -want, +got:\n%s", diff)
	}
	composed, err := Composed(objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Key{want[0], want[2]}, composed.Keys()); diff != "" {
		t.Errorf("Composed: -want, +got (the ServiceAccount has no composition-resource-name):\n%s", diff)
	}
}

func TestRenderOutput(t *testing.T) {
	stream := `---
apiVersion: tenantkube.io/v1alpha1
kind: XKubernetesCluster
metadata:
  name: demo-x7k2p
  annotations:
    crossplane.io/composition-resource-name: not-a-composed-resource
---
apiVersion: render.crossplane.io/v1beta1
kind: Result
metadata:
  annotations:
    crossplane.io/composition-resource-name: x
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: demo-kccm
  namespace: tenant-demo
  annotations:
    crossplane.io/composition-resource-name: kccm-serviceaccount
`
	got, err := RenderOutput([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Key{{Kind: "ServiceAccount", Namespace: ns, Name: "demo-kccm"}}, got.Keys()); diff != "" {
		t.Errorf("RenderOutput: -want, +got:\n%s", diff)
	}
}

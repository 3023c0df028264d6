package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestDefault(t *testing.T) {
	in := &WorkersInput{ContainerDiskImages: map[string]string{"v1.35": "mirror.example/disk:v1.35"}, RegistryMirror: &RegistryMirror{SecretName: "m"}}
	in.Default()
	if in.ContainerDiskImages["v1.35"] != "mirror.example/disk:v1.35" {
		t.Error("an explicit container disk was overwritten")
	}
	if in.ContainerDiskImages["v1.30"] != "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.30-v1.5.2" {
		t.Errorf("v1.30 default %q", in.ContainerDiskImages["v1.30"])
	}
	if len(in.ContainerDiskImages) != 6 {
		t.Errorf("%d container disks, want one per supported version (6)", len(in.ContainerDiskImages))
	}
	if d := cmp.Diff(DefaultRegistryMirrorHosts, in.RegistryMirror.Hosts); d != "" {
		t.Errorf("mirror hosts (-want +got):\n%s", d)
	}
	if in.CPUAllocationRatio != 10 || in.KubernetesBinaryMirror != "https://dl.k8s.io/release" || in.Images.WaitForKubeconfig != DefaultWaitForKubeconfigImage {
		t.Errorf("defaults not applied: %+v", in)
	}
	if err := in.Validate(); err != nil {
		t.Errorf("defaulted input rejected: %v", err)
	}
	bad := &WorkersInput{CPUAllocationRatio: -1}
	bad.Default()
	if err := bad.Validate(); err == nil {
		t.Error("negative cpuAllocationRatio accepted")
	}
	if _, err := in.ContainerDiskImage("v1.29"); err == nil {
		t.Error("container disk of an unsupported version found")
	}
}

// TestCRDDefaultsMatchGo checks that the generated CRD's defaults (from
// the kubebuilder markers) equal what Default fills in.
func TestCRDDefaultsMatchGo(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "package", "functions", "workers", "input", "fn.tenantkube.io_workersinputs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	got := map[string]any{}
	for _, k := range []string{"kubernetesBinaryMirror", "cpuAllocationRatio"} {
		var v any
		_ = json.Unmarshal(props[k].Default.Raw, &v)
		got[k] = v
	}
	for k, p := range props["images"].Properties {
		var v any
		_ = json.Unmarshal(p.Default.Raw, &v)
		got["images."+k] = v
	}
	in := &WorkersInput{}
	in.Default()
	want := map[string]any{
		"kubernetesBinaryMirror":        in.KubernetesBinaryMirror,
		"cpuAllocationRatio":            float64(in.CPUAllocationRatio),
		"images.clusterAutoscaler":      in.Images.ClusterAutoscaler,
		"images.cloudControllerManager": in.Images.CloudControllerManager,
		"images.csiDriver":              in.Images.CSIDriver,
		"images.csiProvisioner":         in.Images.CSIProvisioner,
		"images.csiAttacher":            in.Images.CSIAttacher,
		"images.csiResizer":             in.Images.CSIResizer,
		"images.csiLivenessProbe":       in.Images.CSILivenessProbe,
		"images.waitForKubeconfig":      in.Images.WaitForKubeconfig,
		"images.csiSnapshotter":         in.Images.CSISnapshotter,
		"images.snapshotController":     in.Images.SnapshotController,
	}
	for k, p := range props["controllers"].Properties {
		if p.Default == nil {
			continue
		}
		var v any
		_ = json.Unmarshal(p.Default.Raw, &v)
		got["controllers."+k] = v
	}
	res, err := json.Marshal(in.Controllers.Resources)
	if err != nil {
		t.Fatal(err)
	}
	var resources any
	_ = json.Unmarshal(res, &resources)
	want["controllers.resources"] = resources
	want["controllers.runAsUser"] = float64(in.Controllers.RunAsUser)
	want["controllers.csiPriorityClassName"] = in.Controllers.CSIPriorityClassName
	want["controllers.loadBalancerMode"] = string(in.Controllers.LoadBalancerMode)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CRD defaults vs Default() (-go +crd):\n%s", d)
	}
}

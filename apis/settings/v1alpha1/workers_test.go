package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDefault(t *testing.T) {
	in := &Settings{ContainerDiskImages: map[string]string{"v1.35": "mirror.example/disk:v1.35"}, RegistryMirror: &RegistryMirror{SecretName: "m"}}
	in.Default()
	if in.ContainerDiskImages["v1.35"] != "mirror.example/disk:v1.35" {
		t.Error("an explicit container disk was overwritten")
	}
	if in.ContainerDiskImages["v1.31"] != "ghcr.io/cozystack/cozystack/ubuntu-container-disk:v1.31-v1.5.2" {
		t.Errorf("v1.31 default %q", in.ContainerDiskImages["v1.31"])
	}
	if len(in.ContainerDiskImages) != 5 {
		t.Errorf("%d container disks, want one per supported version (5: v1.31 to v1.35)", len(in.ContainerDiskImages))
	}
	if d := cmp.Diff(DefaultRegistryMirrorHosts, in.RegistryMirror.Hosts); d != "" {
		t.Errorf("mirror hosts (-want +got):\n%s", d)
	}
	if in.CPUAllocationRatio != 10 || in.KubernetesBinaryMirror != "https://dl.k8s.io/release" || in.Images.WaitForKubeconfig != DefaultWaitForKubeconfigImage {
		t.Errorf("defaults not applied: %+v", in)
	}
	if err := in.Validate().ToAggregate(); err != nil {
		t.Errorf("defaulted input rejected: %v", err)
	}
	if in.AllowPodCPURequestBelowRatio || in.MinPodCPURequest.String() != "100m" {
		t.Errorf("pod CPU request defaults: allow below ratio %v (want false), floor %s (want 100m)", in.AllowPodCPURequestBelowRatio, in.MinPodCPURequest)
	}
	bad := &Settings{CPUAllocationRatio: -1}
	bad.Default()
	if err := bad.Validate().ToAggregate(); err == nil {
		t.Error("negative cpuAllocationRatio accepted")
	}
	for _, floor := range []string{"0", "0.0001", "257"} {
		q := resource.MustParse(floor)
		bad := &Settings{MinPodCPURequest: &q}
		bad.Default()
		if err := bad.Validate().ToAggregate(); err == nil || !strings.Contains(err.Error(), "input.minPodCpuRequest") {
			t.Errorf("minPodCpuRequest %s: got %v, want an error naming input.minPodCpuRequest", floor, err)
		}
	}
	if _, err := in.ContainerDiskImage("v1.29"); err == nil {
		t.Error("container disk of an unsupported version found")
	}
}

// TestCRDDefaultsMatchGo checks that the generated CRD's defaults (from
// the kubebuilder markers) equal what Default fills in.
func TestWorkerCRDDefaultsMatchGo(t *testing.T) {
	props := schemaProperties(t)
	got := map[string]any{}
	for _, k := range []string{"kubernetesBinaryMirror", "cpuAllocationRatio", "minPodCpuRequest"} {
		var v any
		_ = json.Unmarshal(props[k].Default.Raw, &v)
		got[k] = v
	}
	for k, p := range props["images"].Properties {
		var v any
		_ = json.Unmarshal(p.Default.Raw, &v)
		got["images."+k] = v
	}
	in := &Settings{}
	in.Default()
	want := map[string]any{
		"kubernetesBinaryMirror":        in.KubernetesBinaryMirror,
		"cpuAllocationRatio":            float64(in.CPUAllocationRatio),
		"minPodCpuRequest":              in.MinPodCPURequest.String(),
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
	want["controllers.csiKubeAPIQPS"] = float64(in.Controllers.CSIKubeAPIQPS)
	want["controllers.csiKubeAPIBurst"] = float64(in.Controllers.CSIKubeAPIBurst)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CRD defaults vs Default() (-go +crd):\n%s", d)
	}
}

// TestValidateCSIRateLimits: the CSI controller's client rate limits
// default to Cozystack's driver build's 100 QPS and 200 burst and stay in
// 1..1000 and 1..2000, each tried at its edge and one past it.
func TestValidateCSIRateLimits(t *testing.T) {
	type args struct {
		qps, burst int32
	}
	type want struct {
		qps, burst int32
		err        string // the field named; "" accepted
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Defaults":  {reason: "Unset is 100 and 200.", want: want{qps: 100, burst: 200}},
		"Least":     {reason: "1 and 1 are the least.", args: args{1, 1}, want: want{qps: 1, burst: 1}},
		"Most":      {reason: "1000 and 2000 are the most.", args: args{1000, 2000}, want: want{qps: 1000, burst: 2000}},
		"QPSPast":   {reason: "1001 is past the most.", args: args{1001, 2000}, want: want{qps: 1001, burst: 2000, err: "input.controllers.csiKubeAPIQPS"}},
		"BurstPast": {reason: "2001 is past the most.", args: args{1000, 2001}, want: want{qps: 1000, burst: 2001, err: "input.controllers.csiKubeAPIBurst"}},
		"Negative":  {reason: "A negative rate is no rate (client-go: unlimited).", args: args{-1, 10}, want: want{qps: -1, burst: 10, err: "input.controllers.csiKubeAPIQPS"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &Settings{Controllers: Controllers{CSIKubeAPIQPS: tc.args.qps, CSIKubeAPIBurst: tc.args.burst}}
			in.Default()
			if d := cmp.Diff(want{qps: tc.want.qps, burst: tc.want.burst}, want{qps: in.Controllers.CSIKubeAPIQPS, burst: in.Controllers.CSIKubeAPIBurst}, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s\nDefault() (-want +got):\n%s", tc.reason, d)
			}
			errs := in.Validate()
			err := errs.ToAggregate()
			got := ""
			if len(errs) == 1 {
				got = errs[0].Field
			} else if err != nil {
				got = err.Error()
			}
			if got != tc.want.err {
				t.Errorf("%s\nValidate() = %v, want an error naming %q", tc.reason, err, tc.want.err)
			}
		})
	}
}

// TestValidateCloudControllerImage: cloud-provider-kubevirt has the
// selectorless mode and the EndpointSlice controller from v0.6.0
// (pkg/provider/cloud.go:62-69 there; v0.5.1 has neither key).
func TestValidateCloudControllerImage(t *testing.T) {
	const imageField = "input.images.cloudControllerManager"
	cases := map[string]struct {
		reason string
		image  string
		mode   LoadBalancerMode
		err    string // the field named; "" accepted
	}{
		"Default":        {reason: "The default image runs the default mode.", mode: LoadBalancerSelectorless},
		"V051":           {reason: "v0.5.1 has no selectorless mode.", image: "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.5.1", mode: LoadBalancerSelectorless, err: imageField},
		"V050Mirror":     {reason: "A mirror of an upstream release before v0.6.0 is that release.", image: "mirror.example:5000/kubevirt/kubevirt-cloud-controller-manager:v0.5.0", mode: LoadBalancerSelectorless, err: imageField},
		"V051Digest":     {reason: "A tag with a digest is still that tag.", image: "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.5.1@sha256:" + strings.Repeat("a", 64), mode: LoadBalancerSelectorless, err: imageField},
		"V060":           {reason: "v0.6.0 is the first release with both.", image: "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.6.0", mode: LoadBalancerSelectorless},
		"V051Selector":   {reason: "Selector mode needs neither.", image: "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.5.1", mode: LoadBalancerSelector},
		"Fork":           {reason: "Another repository's tags are its own.", image: "ghcr.io/cozystack/cozystack/kubevirt-cloud-provider:0.5.1", mode: LoadBalancerSelectorless},
		"DigestOnly":     {reason: "A digest names no release.", image: "quay.io/kubevirt/kubevirt-cloud-controller-manager@sha256:" + strings.Repeat("b", 64), mode: LoadBalancerSelectorless},
		"RegistryPortNo": {reason: "A registry port is not a tag.", image: "mirror.example:5000/kubevirt/kubevirt-cloud-controller-manager", mode: LoadBalancerSelectorless},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &Settings{Controllers: Controllers{LoadBalancerMode: tc.mode}, Images: Images{CloudControllerManager: tc.image}}
			in.Default()
			errs := in.Validate()
			err := errs.ToAggregate()
			got := ""
			if len(errs) == 1 {
				got = errs[0].Field
			} else if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("%s\nValidate() = %v, want an error naming %q", tc.reason, err, tc.err)
			}
		})
	}
}

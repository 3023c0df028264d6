package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
)

func i32(v int32) *int32 { return &v }

// TestValidatePlatform covers the rules that need the workers input; the
// rules of the spec alone are tested with spec.Validate (apis/v1alpha1 and
// test/validation_test.go).
func TestValidatePlatform(t *testing.T) {
	type args struct {
		groups map[string]v1alpha1.NodeGroup
		image  string
		// storageClass is spec.storageClass ("": the default, replicated).
		storageClass string
		in           func(*inputv1alpha1.WorkersInput)
	}
	type want struct {
		errs  field.ErrorList
		image string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"AtTheCeiling": {
			reason: "The default platform ceiling is 100 replicas.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": {MinReplicas: i32(100), MaxReplicas: i32(100)}}},
		},
		"PastTheCeiling": {
			reason: "101 replicas is past the default ceiling, for both bounds.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": {MinReplicas: i32(101), MaxReplicas: i32(101)}}},
			want: want{errs: field.ErrorList{
				field.Invalid(field.NewPath("spec", "nodeGroups").Key("md0").Child("minReplicas"), int32(101), "must be at most 100 (the platform's ceiling)"),
				field.Invalid(field.NewPath("spec", "nodeGroups").Key("md0").Child("maxReplicas"), int32(101), "must be at most 100 (the platform's ceiling)"),
			}},
		},
		"LoweredCeiling": {
			reason: "The input may lower the ceiling.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"md0": {MaxReplicas: i32(11)}},
				in: func(in *inputv1alpha1.WorkersInput) { in.MaxReplicas = 10 }},
			want: want{errs: field.ErrorList{
				field.Invalid(field.NewPath("spec", "nodeGroups").Key("md0").Child("maxReplicas"), int32(11), "must be at most 10 (the platform's ceiling)"),
			}},
		},
		"TooManyGroups": {
			reason: "The input may allow fewer node groups than the XRD's 50.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"a": {}, "b": {}},
				in: func(in *inputv1alpha1.WorkersInput) { in.MaxNodeGroups = 1 }},
			want: want{errs: field.ErrorList{field.TooMany(field.NewPath("spec", "nodeGroups"), 2, 1)}},
		},
		// The virt-launcher CPU request's floor: vCPUs ÷ cpuAllocationRatio
		// (default 10) unless the input allows less, down to
		// minPodCpuRequest (default 100m).
		"PodCPURequestAtRatio": {
			reason: "4 cores ÷ 10 = 400m: a request of exactly 400m is KubeVirt's own.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "400m" })}},
		},
		"PodCPURequestBelowRatio": {
			reason: "399m on 4 cores is below 4 ÷ 10 = 400m.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "399m" })}},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuRequest"), "399m",
				"must be at least 400m: the VM's 4 vCPUs ÷ the platform's cpuAllocationRatio 10, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio")}},
		},
		"PodCPULimitAloneBelowRatio": {
			reason: "The issue's case: podCpuLimit 1m on 256 cores and no request: the limit is the request, below 256 ÷ 10 = 25.6 = 25600m.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("256", func(g *v1alpha1.NodeGroup) { g.PodCPULimit = "1m" })}},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuLimit"), "1m",
				"without podCpuRequest, podCpuLimit is also the pod's CPU request (KubeVirt copies it), which must be at least 25600m: the VM's 256 vCPUs ÷ the platform's cpuAllocationRatio 10, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio")}},
		},
		"PodCPULimitWithRequestAboveRatio": {
			reason: "A limit of 1 beside a request of 1 on 8 cores: 1 ≥ 8 ÷ 10 = 800m; the limit alone is not a request.",
			args:   args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("8", func(g *v1alpha1.NodeGroup) { g.PodCPULimit, g.PodCPURequest = "1", "1" })}},
		},
		"PodCPURequestRatioThree": {
			reason: "1 core ÷ 3 = 333.3m: 333m is below it (333 × 3 = 999 < 1000), shown rounded up as 334m.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("1", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "333m" }), "md1": cores("1", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "334m" })},
				in: func(in *inputv1alpha1.WorkersInput) { in.CPUAllocationRatio = 3 }},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuRequest"), "333m",
				"must be at least 334m: the VM's 1 vCPUs ÷ the platform's cpuAllocationRatio 3, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio")}},
		},
		"PodCPURequestUnknownSize": {
			reason: "instanceType \"\" without resources: KubeVirt's default topology has ⌈50m⌉ = 1 vCPU, 1 ÷ 10 = 100m; a limit of 1500m gives ⌈1.5⌉ = 2 vCPUs, 200m, which 1500m passes.",
			args: args{groups: map[string]v1alpha1.NodeGroup{
				"md0": group(func(g *v1alpha1.NodeGroup) { g.InstanceType, g.PodCPURequest = ptr(""), "50m" }),
				"md1": group(func(g *v1alpha1.NodeGroup) { g.InstanceType, g.PodCPULimit = ptr(""), "1500m" }),
			}},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuRequest"), "50m",
				"must be at least 100m: the VM's 1 vCPUs ÷ the platform's cpuAllocationRatio 10, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio")}},
		},
		"PodCPURequestBelowRatioAllowed": {
			reason: "The platform allows less than the ratio: 150m on 4 cores passes (the default floor is 100m); 99m does not.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "99m" }), "md1": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "150m" })},
				in: func(in *inputv1alpha1.WorkersInput) { in.AllowPodCPURequestBelowRatio = true }},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuRequest"), "99m", "must be at least 100m (the platform's minPodCpuRequest)")}},
		},
		"PodCPURequestFloorSet": {
			reason: "The platform's floor 10m: 10m passes, a limit of 9m alone does not.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPULimit = "9m" }), "md1": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "10m" })},
				in: func(in *inputv1alpha1.WorkersInput) {
					in.AllowPodCPURequestBelowRatio, in.MinPodCPURequest = true, ptr(resource.MustParse("10m"))
				}},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuLimit"), "9m",
				"without podCpuRequest, podCpuLimit is also the pod's CPU request (KubeVirt copies it), which must be at least 10m (the platform's minPodCpuRequest)")}},
		},
		"PodCPUFloorIgnoredUnlessAllowed": {
			reason: "A floor without allowPodCpuRequestBelowRatio changes nothing: 10m on 4 cores is below 400m.",
			args: args{groups: map[string]v1alpha1.NodeGroup{"md0": cores("4", func(g *v1alpha1.NodeGroup) { g.PodCPURequest = "10m" })},
				in: func(in *inputv1alpha1.WorkersInput) { in.MinPodCPURequest = ptr(resource.MustParse("10m")) }},
			want: want{errs: field.ErrorList{field.Invalid(md0Path.Child("podCpuRequest"), "10m",
				"must be at least 400m: the VM's 4 vCPUs ÷ the platform's cpuAllocationRatio 10, the request KubeVirt gives a VM without one; a lower request overcommits the host's CPUs beyond the platform's ratio")}},
		},
		"NoImage": {
			reason: "Without spec.images.waitForKubeconfig the controllers run the input's image (its default: busybox 1.37.0).",
			args:   args{in: func(in *inputv1alpha1.WorkersInput) {}},
			want:   want{image: "docker.io/library/busybox:1.37.0"},
		},
		"ImageAllowed": {
			reason: "docker.io/library is allowed by default; the name is normalized.",
			args:   args{image: "busybox:1.37"},
			want:   want{image: "docker.io/library/busybox:1.37"},
		},
		"StorageClassNotRemote": {
			reason: "A cluster class the platform does not list is refused, naming the value and the classes allowed (by default replicated).",
			args:   args{storageClass: "local"},
			want:   want{errs: field.ErrorList{field.NotSupported(field.NewPath("spec", "storageClass"), "local", []string{"replicated"})}},
		},
		"StorageClassRemote": {
			reason: "Any class the platform lists may be the cluster's.",
			args: args{storageClass: "replicated-nvme", in: func(in *inputv1alpha1.WorkersInput) {
				in.RemoteStorageClasses = []string{"replicated", "replicated-nvme"}
			}},
		},
		"GroupStorageClassNotRemote": {
			reason: "A node group's class is its VMs' disk class on the management cluster: one the platform does not list is refused like the cluster's, each group named.",
			args: args{groups: map[string]v1alpha1.NodeGroup{
				"md0": group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "local-path-platform-only" }),
				"md1": group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "replicated" }),
				"md2": group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "local" }),
			}},
			want: want{errs: field.ErrorList{
				field.NotSupported(md0Path.Child("storageClass"), "local-path-platform-only", []string{"replicated"}),
				field.NotSupported(field.NewPath("spec", "nodeGroups").Key("md2").Child("storageClass"), "local", []string{"replicated"}),
			}},
		},
		"GroupStorageClassRemote": {
			reason: "A group may put its disks on any class the platform lists; without one it takes the cluster's.",
			args: args{groups: map[string]v1alpha1.NodeGroup{
				"md0": group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "replicated-nvme" }),
				"md1": group(nil),
			}, in: func(in *inputv1alpha1.WorkersInput) {
				in.RemoteStorageClasses = []string{"replicated", "replicated-nvme"}
			}},
		},
		"StorageClassesSettingsPending": {
			reason: "Before the platform settings arrive the classes are not checked: Crossplane calls again with them, and a Fatal now would end the pipeline first.",
			args: args{storageClass: "fast-ssd", groups: map[string]v1alpha1.NodeGroup{
				"md0": group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "fast-ssd" }),
			}, in: func(in *inputv1alpha1.WorkersInput) { in.SettingsPending = true }},
		},
		"ImageRefused": {
			reason: "quay.io is not allowed by default.",
			args:   args{image: "quay.io/x/y:1"},
			want:   want{errs: field.ErrorList{field.Forbidden(field.NewPath("spec", "images", "waitForKubeconfig"), "")}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := &inputv1alpha1.WorkersInput{}
			if c.args.in != nil {
				c.args.in(in)
			}
			in.Default()
			spec := &v1alpha1.KubernetesClusterSpec{NodeGroups: c.args.groups, Images: v1alpha1.Images{WaitForKubeconfig: c.args.image}, StorageClass: c.args.storageClass}
			if spec.StorageClass == "" {
				spec.StorageClass = v1alpha1.DefaultStorageClass
			}
			errs := validatePlatform(spec, sortedKeys(spec.NodeGroups), in)
			// The image's detail lists the allowed registries: compared by
			// field and value.
			for _, e := range errs {
				if e.Field == "spec.images.waitForKubeconfig" {
					e.Detail = ""
				}
			}
			if d := cmp.Diff(c.want.errs, errs); d != "" {
				t.Errorf("%s\nvalidatePlatform(...): -want, +got:\n%s", c.reason, d)
			}
			if image, _ := waitForKubeconfigImage(spec, in); (c.want.image != "" || c.args.image != "") && image != c.want.image {
				t.Errorf("%s\nwaitForKubeconfigImage(...) = %q, want %q", c.reason, image, c.want.image)
			}
			if spec.Images.WaitForKubeconfig != c.args.image {
				t.Errorf("%s\nvalidatePlatform changed the spec's image to %q", c.reason, spec.Images.WaitForKubeconfig)
			}
		})
	}
}

// md0Path is the field path of node group md0.
var md0Path = field.NewPath("spec", "nodeGroups").Key("md0")

// cores returns a defaulted node group of cpu cores and 8Gi with changes
// applied.
func cores(cpu string, change func(*v1alpha1.NodeGroup)) v1alpha1.NodeGroup {
	return group(func(g *v1alpha1.NodeGroup) {
		g.Resources = v1alpha1.Resources{CPU: v1alpha1.Quantity(cpu), Memory: "8Gi"}
		change(g)
	})
}

// group returns a defaulted node group with changes applied.
func group(change func(*v1alpha1.NodeGroup)) v1alpha1.NodeGroup {
	g := v1alpha1.NodeGroup{}
	if change != nil {
		change(&g)
	}
	g.Default()
	return g
}

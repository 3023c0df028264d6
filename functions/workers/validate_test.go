package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
		in     func(*inputv1alpha1.WorkersInput)
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
			spec := &v1alpha1.KubernetesClusterSpec{NodeGroups: c.args.groups, Images: v1alpha1.Images{WaitForKubeconfig: c.args.image}}
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

// group returns a defaulted node group with changes applied.
func group(change func(*v1alpha1.NodeGroup)) v1alpha1.NodeGroup {
	g := v1alpha1.NodeGroup{}
	if change != nil {
		change(&g)
	}
	g.Default()
	return g
}

package v1alpha1

import (
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Most rules are held to the XRD's by test/validation_test.go. These cases
// pin the exact errors, and the rules the XRD cannot express.

func TestSpecValidate(t *testing.T) {
	md0 := field.NewPath("spec", "nodeGroups").Key("md0")
	type args struct {
		change func(*KubernetesClusterSpec)
	}
	cases := map[string]struct {
		reason string
		args   args
		want   field.ErrorList
	}{
		"Defaults": {
			reason: "The seed's defaults are valid.",
		},
		"EveryProblemAtOnce": {
			reason: "Each problem is named, in field order, node groups by name.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.StorageClass = "Fast_SSD"
				s.NodeGroups = map[string]NodeGroup{"md1": {DiskSize: "-1Gi"}, "MD0": {}}
				s.Addons.HAMi.Enabled = true
				s.ControlPlane.Replicas = ptr(int32(8))
			}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "storageClass"), "Fast_SSD", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
				field.Invalid(field.NewPath("spec", "nodeGroups"), "MD0", "node group names must be DNS labels (lower-case letters, digits and hyphens) of at most 16 characters"),
				field.Invalid(field.NewPath("spec", "nodeGroups").Key("md1").Child("diskSize"), "-1Gi", "diskSize must be greater than zero"),
				field.Invalid(field.NewPath("spec", "addons", "hami", "enabled"), true, "hami requires addons.gpuOperator.enabled: true (HAMi runs on top of the NVIDIA GPU operator)"),
				field.Invalid(field.NewPath("spec", "controlPlane", "replicas"), int32(8), "must be between 1 and 7"),
			},
		},
		"AbsurdExponent": {
			reason: "A quantity whose exponent makes exact arithmetic take minutes is refused (Go only: the XRD cannot bound an exponent).",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.NodeGroups = map[string]NodeGroup{"md0": {DiskSize: "1e-999999999"}}
			}},
			want: field.ErrorList{field.Invalid(md0.Child("diskSize"), "1e-999999999", "out of range: at most 64 characters and a decimal exponent of at most 30")},
		},
		"MinAboveMax": {
			reason: "The message says maxReplicas' value.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.NodeGroups = map[string]NodeGroup{"md0": {MinReplicas: ptr(int32(4)), MaxReplicas: ptr(int32(3))}}
			}},
			want: field.ErrorList{field.Invalid(md0.Child("minReplicas"), int32(4), "minReplicas must be less than or equal to maxReplicas (3)")},
		},
		"CPUAlone": {
			reason: "The missing field is named, with the one that is set.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.NodeGroups = map[string]NodeGroup{"md0": {Resources: Resources{CPU: "2"}}}
			}},
			want: field.ErrorList{field.Required(md0.Child("resources", "memory"), `resources.cpu and resources.memory must be set together or not at all (resources.cpu is "2")`)},
		},
		"OverrideKeys": {
			reason: "65 top-level keys is one past 64.",
			args: args{change: func(s *KubernetesClusterSpec) {
				raw := []byte("{")
				for i := range 65 {
					if i > 0 {
						raw = append(raw, ',')
					}
					raw = append(raw, []byte(`"k`+string(rune('a'+i/26))+string(rune('a'+i%26))+`":1`)...)
				}
				s.Addons.Cilium.ValuesOverride = &apiextensionsv1.JSON{Raw: append(raw, '}')}
			}},
			want: field.ErrorList{field.TooMany(field.NewPath("spec", "addons", "cilium", "valuesOverride"), 65, 64)},
		},
		"EachRepeatOnce": {
			reason: "Every repeated flag, volume name, mount path, undeclared volume and email is named, each once.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.ControlPlane.APIServer.ExtraArgs = []APIServerArg{"--v=2", "--profiling", "--v=4", "--profiling=false", "--v=3"}
				s.ControlPlane.APIServer.ExtraVolumes = []APIServerVolume{
					{Name: "a", Secret: &SecretVolume{SecretName: "s"}}, {Name: "b", Secret: &SecretVolume{SecretName: "s"}},
					{Name: "a", Secret: &SecretVolume{SecretName: "s"}}, {Name: "b", Secret: &SecretVolume{SecretName: "s"}},
				}
				s.ControlPlane.APIServer.ExtraVolumeMounts = []APIServerVolumeMount{
					{Name: "a", MountPath: "/srv/x"}, {Name: "x", MountPath: "/srv/y"}, {Name: "y", MountPath: "/srv/x"},
					{Name: "x", MountPath: "/srv/y"},
				}
				s.OIDC.Users = []OIDCUser{{Email: "a@example.com", Role: OIDCRoleView}, {Email: "b@example.com", Role: OIDCRoleView},
					{Email: "b@example.com", Role: OIDCRoleAdmin}, {Email: "a@example.com", Role: OIDCRoleAdmin}}
			}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraArgs"), "--v", "each flag at most once (Kamaji keys them by name)"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraArgs"), "--profiling", "each flag at most once (Kamaji keys them by name)"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumes"), "a", "names must be unique"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumes"), "b", "names must be unique"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumeMounts"), "x", "each name must be a volume of extraVolumes"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumeMounts"), "y", "each name must be a volume of extraVolumes"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumeMounts"), "/srv/x", "mount paths must be unique"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumeMounts"), "/srv/y", "mount paths must be unique"),
				field.Invalid(field.NewPath("spec", "oidc", "users"), "a@example.com", "each email at most once"),
				field.Invalid(field.NewPath("spec", "oidc", "users"), "b@example.com", "each email at most once"),
			},
		},
		"OIDCFlags": {
			reason: "Each OIDC flag is refused at its index whatever oidc.mode (None here), with the way to configure OIDC.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.ControlPlane.APIServer.ExtraArgs = []APIServerArg{"--oidc-issuer-url=https://id.example.com", "--authentication-config=/a", "--oidc-client-id=k"}
			}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraArgs").Index(0), "--oidc-issuer-url=https://id.example.com",
					"--oidc-issuer-url cannot be set in extraArgs: configure OIDC with spec.oidc (mode System or CustomConfig), from which the platform sets --authentication-config"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraArgs").Index(1), "--authentication-config=/a",
					"--authentication-config cannot be set in extraArgs: configure OIDC with spec.oidc (mode System or CustomConfig), from which the platform sets --authentication-config"),
				field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraArgs").Index(2), "--oidc-client-id=k",
					"--oidc-client-id cannot be set in extraArgs: configure OIDC with spec.oidc (mode System or CustomConfig), from which the platform sets --authentication-config"),
			},
		},
		"LengthInCharacters": {
			reason: "Lengths count characters, as the schema's maxLength: 254 two-byte characters pass the email bound of 254; 255 fail, the message counting 255 and the value cut to 64 characters.",
			args: args{change: func(s *KubernetesClusterSpec) {
				local := strings.Repeat("é", 254-len("@example.com"))
				s.OIDC.Users = []OIDCUser{{Email: local + "@example.com", Role: OIDCRoleView}, {Email: "é" + local + "@example.com", Role: OIDCRoleView}}
			}},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "oidc", "users").Index(1).Child("email"), strings.Repeat("é", 64)+"...", "must be at most 254 characters (is 255)")},
		},
		"ConfigTooLong": {
			reason: "32769 characters is one past the inline configuration's bound; the error holds the value.",
			args: args{change: func(s *KubernetesClusterSpec) {
				s.OIDC.Mode = OIDCModeCustomConfig
				s.OIDC.CustomConfig.Config = strings.Repeat("#", 32769)
			}},
			want: field.ErrorList{field.TooLongCharacters(field.NewPath("spec", "oidc", "customConfig", "config"), strings.Repeat("#", 32769), 32768)},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := &KubernetesClusterSpec{}
			if c.args.change != nil {
				c.args.change(s)
			}
			s.Default()
			if d := cmp.Diff(c.want, s.Validate()); d != "" {
				t.Errorf("%s\nValidate(): -want, +got:\n%s", c.reason, d)
			}
		})
	}
}

func TestKubeletValidate(t *testing.T) {
	p := field.NewPath("k")
	type args struct {
		k Kubelet
	}
	cases := map[string]struct {
		reason string
		args   args
		want   field.ErrorList
	}{
		"Defaults":  {reason: "7% below 10%.", args: args{k: Kubelet{EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}}},
		"Absolute":  {reason: "200Mi below 1Gi.", args: args{k: Kubelet{EvictionHardMemory: "200Mi", EvictionSoftMemory: "1Gi"}}},
		"Decimal":   {reason: "0.5 cores and 100m are CPU.", args: args{k: Kubelet{SystemReservedCPU: "0.5", KubeReservedCPU: "100m", EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}}},
		"BinaryCPU": {reason: "A binary suffix is no CPU.", args: args{k: Kubelet{KubeReservedCPU: "1Ki", EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}}, want: field.ErrorList{field.Invalid(p.Child("kubeReservedCpu"), "1Ki", "kubeReservedCpu must be whole millicores such as 100m or decimal cores such as 0.5")}},
		"NegativeCPU": {reason: "A reservation is positive.", args: args{k: Kubelet{SystemReservedCPU: "-100m", EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}},
			want: field.ErrorList{field.Invalid(p.Child("systemReservedCpu"), "-100m", "systemReservedCpu must be whole millicores such as 100m or decimal cores such as 0.5")}},
		"ZeroMemory": {reason: "A reservation is positive.", args: args{k: Kubelet{KubeReservedMemory: "0Mi", EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}},
			want: field.ErrorList{field.Invalid(p.Child("kubeReservedMemory"), "0Mi", "kubeReservedMemory must be greater than zero")}},
		"NotAQuantity": {reason: "Words are no quantity.", args: args{k: Kubelet{SystemReservedMemory: "lots", EvictionHardMemory: "7%", EvictionSoftMemory: "10%"}},
			want: field.ErrorList{field.Invalid(p.Child("systemReservedMemory"), "lots", "must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e9")}},
		"HardAboveSoft": {reason: "10% is above 5%.", args: args{k: Kubelet{EvictionHardMemory: "10%", EvictionSoftMemory: "5%"}},
			want: field.ErrorList{field.Invalid(p.Child("evictionHardMemory"), "10%", `the hard eviction threshold must be strictly below the soft one (evictionSoftMemory is "5%")`)}},
		"HardEqualsSoft": {reason: "1Gi is not below 1024Mi.", args: args{k: Kubelet{EvictionHardMemory: "1Gi", EvictionSoftMemory: "1024Mi"}},
			want: field.ErrorList{field.Invalid(p.Child("evictionHardMemory"), "1Gi", `the hard eviction threshold must be strictly below the soft one (evictionSoftMemory is "1024Mi")`)}},
		"MixedUnits": {reason: "5% and 500Mi cannot be compared.", args: args{k: Kubelet{EvictionHardMemory: "5%", EvictionSoftMemory: "500Mi"}},
			want: field.ErrorList{field.Invalid(p.Child("evictionHardMemory"), "5%", `evictionHardMemory and evictionSoftMemory must both be percentages or both absolute quantities (evictionSoftMemory is "500Mi")`)}},
		"ZeroPercent": {reason: "A percentage is in (0, 100].", args: args{k: Kubelet{EvictionHardMemory: "0%", EvictionSoftMemory: "10%"}},
			want: field.ErrorList{field.Invalid(p.Child("evictionHardMemory"), "0%", "a percentage must be in (0, 100]")}},
		"BadPercentage": {reason: "ten% is no number; both thresholds are named.", args: args{k: Kubelet{EvictionHardMemory: "lots", EvictionSoftMemory: "ten%"}},
			want: field.ErrorList{
				field.Invalid(p.Child("evictionHardMemory"), "lots", "must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e9"),
				field.Invalid(p.Child("evictionSoftMemory"), "ten%", "must be a percentage such as 7% or an absolute quantity such as 500Mi"),
			}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, c.args.k.Validate(p)); d != "" {
				t.Errorf("%s\nValidate(): -want, +got:\n%s", c.reason, d)
			}
		})
	}
}

func TestThresholdParse(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Threshold
		want   ParsedThreshold
	}{
		"Percent":  {reason: "7.5% is 3/40 of the node's memory.", in: "7.5%", want: ParsedThreshold{Percent: true, Fraction: big.NewRat(3, 40)}},
		"Absolute": {reason: "500Mi is 524288000 bytes.", in: "500Mi", want: ParsedThreshold{Bytes: resource.MustParse("524288000")}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := c.in.Parse(field.NewPath("t"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Percent != c.want.Percent ||
				(got.Percent && got.Fraction.Cmp(c.want.Fraction) != 0) ||
				(!got.Percent && got.Bytes.Cmp(c.want.Bytes) != 0) {
				t.Errorf("%s\nParse(%q) = %+v, want %+v", c.reason, c.in, got, c.want)
			}
		})
	}
}

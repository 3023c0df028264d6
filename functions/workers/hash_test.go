package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
)

// hashTyped is a typed value with the field kinds canonicalHash meets in
// CAPI and KubeVirt specs: omitempty, nil pointers and maps (null),
// custom marshallers (Quantity, Time, IntOrString, RawMessage) and bytes.
type hashTyped struct {
	Name     string             `json:"name"`
	Optional *string            `json:"optional"`
	Omitted  *string            `json:"omitted,omitempty"`
	Labels   map[string]string  `json:"labels"`
	Empty    map[string]string  `json:"empty"`
	List     []string           `json:"list"`
	Time     metav1.Time        `json:"time"`
	Quantity resource.Quantity  `json:"quantity"`
	Port     intstr.IntOrString `json:"port"`
	Raw      json.RawMessage    `json:"raw,omitempty"`
	Bytes    []byte             `json:"bytes"`
	Float    float64            `json:"float"`
	Uint     uint64             `json:"uint"`
	Nested   *hashTyped         `json:"nested,omitempty"`
}

// TestCanonicalHashPinned pins canonicalHash to the values the first
// implementation (encoding/json → map[string]any → drop nulls → encoding/json)
// gave. The hashes name KubevirtMachineTemplates and annotate their VMs: a
// different value for the same spec would roll every tenant's nodes.
func TestCanonicalHashPinned(t *testing.T) {
	kctIn := defaultInput()
	kctIn.RegistryMirror = &inputv1alpha1.RegistryMirror{SecretName: "mirrors", Hosts: []string{"docker.io", "ghcr.io"}}
	kctPlan := groupPlan(t, "md0", group(func(g *v1alpha1.NodeGroup) {
		g.InstanceType = ptr("u1.large")
		g.Kubelet.SystemReservedMemory = "700Mi"
	}))
	explicitPlan := groupPlan(t, "md1", group(func(g *v1alpha1.NodeGroup) {
		g.Resources = v1alpha1.Resources{CPU: "4", Memory: "12Gi"}
		g.Roles = []string{"ingress", "edge"}
		g.StorageClass = "fast"
		g.DiskSize = "30Gi"
	}))
	gpuPlan := groupPlan(t, "gpu", group(func(g *v1alpha1.NodeGroup) {
		g.InstanceType = ptr("gn1.xlarge")
		g.GPUs = []v1alpha1.GPU{{Name: "nvidia.com/TU104GL_Tesla_T4"}, {Name: "nvidia.com/A<&>"}}
	}))
	// antiAffinity None is the template without placement: its hashes are
	// pinned, since running groups keep it. Unset is Soft for a group not running yet.
	kmt := func(p nodeGroupPlan, bootstrapHash string) any {
		if p.Group.AntiAffinity == "" {
			p.Group.AntiAffinity = v1alpha1.AntiAffinityNone
		}
		m, err := buildKubevirtMachineTemplate(testID, p, "quay.io/capk/ubuntu-2404-container-disk:v1.35", bootstrapHash)
		if err != nil {
			t.Fatal(err)
		}
		return m.Spec
	}
	raw := json.RawMessage(`{"z" : [1.0, 2e3, -0, 1E-7, 1.0e+2, null, {"n": null}], "a\u0041\/": "\u003c\u00e9\ud83d\ude00", "dup": 1, "dup": null, "num": 12345678901234567890}`)
	typed := hashTyped{
		Name:     "<tenant> & \"quoted\" \\ \u2028\u2029 é 😀 \x01\t\n\r\b\f \xff",
		Labels:   map[string]string{"b": "2", "a": "1", "B": "3", "": "empty", "<key>": "&"},
		Empty:    map[string]string{},
		List:     []string{},
		Time:     metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		Quantity: resource.MustParse("51.2Mi"),
		Port:     intstr.FromString("https"),
		Bytes:    []byte("secret\x00"),
		Float:    1e21,
		Uint:     math.MaxUint64,
		Nested:   &hashTyped{Port: intstr.FromInt32(6443), Float: 1e-7, Uint: 1 << 53, List: nil},
	}
	typed.Raw = nil
	rawTyped := typed
	rawTyped.Raw = json.RawMessage(`{"b": [null, [null, {"x": null, "y": [ ]}]], "a": {}}`)
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"kubeadm config template spec, registry mirror": {
			buildKubeadmConfigTemplate(testID, kctPlan, kctIn).Spec, "57141df256c20220a68cfda095a899a223f776baca967acac882381a2752de8d",
		},
		"kubeadm config template spec, defaults": {
			buildKubeadmConfigTemplate(testID, explicitPlan, defaultInput()).Spec, "cd3912ebcf71d7bafe4377870d3f5ab15ee1fadc23934222aee589b1a3b779ef",
		},
		"machine template spec, instance type": {kmt(kctPlan, "0123456789abcdef0123"), "67eabc90d92b0a665e4412d8b356e8732ccbfcb15defc79febc58a44125f24ea"},
		"machine template spec, explicit":      {kmt(explicitPlan, "fedcba9876543210"), "4fefbbe26d58f0d70e6937d1bc54731197cc382e8ecc4740709daa74c98780b9"},
		"machine template spec, GPUs":          {kmt(gpuPlan, ""), "372b2bb39e7ab016418f6bfae269aaad1b0300ccfc0df37def050af6a4082fea"},
		"machine template spec, instance type, Soft": {kmt(withAntiAffinity(kctPlan, v1alpha1.AntiAffinitySoft), "0123456789abcdef0123"),
			"8f8012fbc1b18b13b9e3a75fd78d08c4bc349ed0b03b285ec586592a255d52c2"},
		"container with probes and ports": {corev1.Container{
			Name:  "c",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz?a=1&b=<2>", Port: intstr.FromInt32(8080),
			}}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1.5Gi")}},
		}, "e264404aa86b5fb1ee4b98a167166f0279a3e07854866d3fd6f94684285bea9b"},
		"typed, escapes and numbers": {typed, "5cd7da71940d3301c724b027a95ab7df2a11cc133dff27ad8b6e8c28bf390b68"},
		"typed, raw message":         {rawTyped, "3a45ef7c4e060031dc96558f80e867dc4abe3134464bdfdcc26dab292195b2f5"},
		"raw message":                {raw, "f2380d3c5ea04b06e6d61b92310a5f06ae65bcfa0821d049a368ce7e05e60a98"},
		"unstructured": {map[string]any{
			"b": 1, "a": []any{nil, "x", map[string]any{"n": nil, "m": map[string]any{}}, []any{nil, map[string]any{"deep": nil}}},
			"c": nil, "f": 3.14, "g": -2.5, "h": 0.000001, "i": 1e20, "j": int64(123456789012345678),
			"k": 1.5e300, "l": -0.0, "m": true, "n": false, "o": "\u007f<>&",
		}, "a93aaea733dd866e5f8837db5a853d465c1b02b8c0d644197927d3e9408f45a9"},
		"empty map":  {map[string]any{}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
		"only nulls": {map[string]any{"a": nil, "b": nil}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
		"nil":        {nil, "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"},
		"string":     {"a<b>&c", "e888ef29c42647a91aee9cb5c89124239ba2ef89861f19b741d90c0fbc2ff182"},
		"list":       {[]any{nil, 1, "x", map[string]any{"y": nil}}, "56aaf2d1311851b51ac4f38caf2747dc18a4311e03cdb3128c9ad3a394cc058f"},
	} {
		got, err := canonicalHash(tc.v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: canonicalHash = %s, want %s", name, got, tc.want)
		}
	}
}

// TestCanonicalHashErrors checks that a value that does not marshal, or
// whose JSON has a number beyond float64, is an error, not a hash.
func TestCanonicalHashErrors(t *testing.T) {
	for name, v := range map[string]any{
		"channel":          map[string]any{"c": make(chan int)},
		"NaN":              math.NaN(),
		"number too large": json.RawMessage(`{"a": [1e400]}`),
	} {
		if got, err := canonicalHash(v); err == nil {
			t.Errorf("%s: canonicalHash = %s, want an error", name, got)
		}
	}
}

// TestTemplateHash holds the machine-template names (N-G-<templateHash>)
// and the bootstrap hash composeGroup computes to the hashes
// TestCanonicalHashPinned pins: the name is the first 6 hex characters of
// the spec's, so a change here would roll every tenant's nodes.
func TestTemplateHash(t *testing.T) {
	mirrored := defaultInput()
	mirrored.RegistryMirror = &inputv1alpha1.RegistryMirror{SecretName: "mirrors", Hosts: []string{"docker.io", "ghcr.io"}}
	md0 := groupPlan(t, "md0", group(func(g *v1alpha1.NodeGroup) {
		g.InstanceType = ptr("u1.large")
		g.Kubelet.SystemReservedMemory = "700Mi"
	}))
	md1 := groupPlan(t, "md1", group(func(g *v1alpha1.NodeGroup) {
		g.Resources = v1alpha1.Resources{CPU: "4", Memory: "12Gi"}
		g.Roles = []string{"ingress", "edge"}
		g.StorageClass = "fast"
		g.DiskSize = "30Gi"
	}))
	type args struct {
		p             nodeGroupPlan
		bootstrapHash string
	}
	type want struct {
		name       string
		annotation string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"InstanceType": {
			reason: "The spec hashed to 67eabc90… (TestCanonicalHashPinned) names the template demo-md0-67eabc; the annotation is the bootstrap hash's first 16 characters.",
			args:   args{p: withAntiAffinity(md0, v1alpha1.AntiAffinityNone), bootstrapHash: "0123456789abcdef0123"},
			want:   want{name: "demo-md0-67eabc", annotation: "0123456789abcdef"},
		},
		"Explicit": {
			reason: "The spec hashed to 4fefbbe2… names the template demo-md1-4fefbb.",
			args:   args{p: withAntiAffinity(md1, v1alpha1.AntiAffinityNone), bootstrapHash: "fedcba9876543210"},
			want:   want{name: "demo-md1-4fefbb", annotation: "fedcba9876543210"},
		},
		"NewGroupSoft": {
			reason: "A group with no observed MachineDeployment gets the default placement, Soft: the spec hashed to 8f8012fb….",
			args:   args{p: md0, bootstrapHash: "0123456789abcdef0123"},
			want:   want{name: "demo-md0-8f8012", annotation: "0123456789abcdef"},
		},
		"RunningGroupKeepsItsTemplate": {
			reason: "A group whose MachineDeployment runs the template without placement keeps it: upgrading rolls nothing.",
			args:   args{p: observing(md0, "demo-md0-67eabc"), bootstrapHash: "0123456789abcdef0123"},
			want:   want{name: "demo-md0-67eabc", annotation: "0123456789abcdef"},
		},
		"RunningGroupChangedTakesSoft": {
			reason: "Once the group's template changes for another reason (here the bootstrap), the new one carries the default placement.",
			args:   args{p: observing(md0, "demo-md0-67eabc"), bootstrapHash: "1123456789abcdef0123"},
			want:   want{name: "demo-md0-" + hash6(t, withAntiAffinity(md0, v1alpha1.AntiAffinitySoft), "1123456789abcdef0123"), annotation: "1123456789abcdef"},
		},
		"RunningGroupOnSoftStays": {
			reason: "A group already on the Soft template stays there.",
			args:   args{p: observing(md0, "demo-md0-8f8012"), bootstrapHash: "0123456789abcdef0123"},
			want:   want{name: "demo-md0-8f8012", annotation: "0123456789abcdef"},
		},
		"ExplicitSoftRolls": {
			reason: "antiAffinity: Soft set by the user is the user's change: it rolls a group on the template without placement.",
			args:   args{p: withAntiAffinity(observing(md0, "demo-md0-67eabc"), v1alpha1.AntiAffinitySoft), bootstrapHash: "0123456789abcdef0123"},
			want:   want{name: "demo-md0-8f8012", annotation: "0123456789abcdef"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kmt, err := buildKubevirtMachineTemplate(testID, tc.args.p, "quay.io/capk/ubuntu-2404-container-disk:v1.35", tc.args.bootstrapHash)
			if err != nil {
				t.Fatal(err)
			}
			got := want{name: kmt.Name, annotation: kmt.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template.ObjectMeta.Annotations[annotationBootstrapHash]}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nbuildKubevirtMachineTemplate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	// The bootstrap hash of md0's KubeadmConfigTemplate with a registry
	// mirror is its spec's canonicalHash with the join endpoint's short
	// name (hashEndpoint): the same under any clusterDomain, so the
	// endpoint's domain rolls no running group.
	for _, domain := range []string{"cluster.local", "corp.example"} {
		in := mirrored.DeepCopy()
		in.ClusterDomain = domain
		got, err := kubeadmBootstrapHash(testID, buildKubeadmConfigTemplate(testID, md0, in))
		if err != nil {
			t.Fatal(err)
		}
		if want := "e9c112ae76ec18168cc08244a019ca4ecb32f9cd58b5e0990f464520287fce0e"; got != want {
			t.Errorf("clusterDomain %s: bootstrap hash %s, want %s", domain, got, want)
		}
	}
}

// withAntiAffinity is p with antiAffinity a.
func withAntiAffinity(p nodeGroupPlan, a v1alpha1.AntiAffinity) nodeGroupPlan {
	p.Group.AntiAffinity = a
	return p
}

// observing is p with its MachineDeployment observed on template name.
func observing(p nodeGroupPlan, name string) nodeGroupPlan {
	p.ObservedTemplate = name
	return p
}

// hash6 is the template hash of p's machine template built with the
// placement p names.
func hash6(t *testing.T, p nodeGroupPlan, bootstrapHash string) string {
	t.Helper()
	kmt, err := buildMachineTemplate(testID, p, "quay.io/capk/ubuntu-2404-container-disk:v1.35", bootstrapHash, p.Group.AntiAffinity)
	if err != nil {
		t.Fatal(err)
	}
	h, err := templateHash(kmt.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

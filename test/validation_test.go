package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestValidationAgrees holds the XRD's admission (OpenAPI schema and CEL
// rules, as the API server runs them) and the functions' Go check
// (KubernetesClusterSpec.Validate, on the spec defaulted by Go as for an XR
// that skipped admission) to one table: both reject a case, naming the
// same fields, or both accept it. Bounds are the numbers of
// docs/validation.md, written here by hand; each is tried at its edge and
// one past it.
func TestValidationAgrees(t *testing.T) {
	xrd := clusterAdmission(t)

	rep := strings.Repeat
	list := func(item string, n int) string { return strings.TrimSuffix(rep(item+", ", n), ", ") }
	keys := func(n int) string {
		kv := make([]string, n)
		for i := range kv {
			kv[i] = fmt.Sprintf("k%d: 1", i)
		}
		return strings.Join(kv, ", ")
	}
	groups := func(n int) string {
		g := make([]string, n)
		for i := range g {
			g[i] = fmt.Sprintf("g%d: {}", i)
		}
		return "{nodeGroups: {" + strings.Join(g, ", ") + "}}"
	}
	ng := func(fields string) string { return "{nodeGroups: {md0: {" + fields + "}}}" }
	flags := func(n int) []string {
		f := make([]string, n)
		for i := range f {
			f[i] = fmt.Sprintf("--flag-%d=x", i)
		}
		return f
	}
	volumes := func(n int) []string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf("{name: v%d, secret: {secretName: s%d}}", i, i)
		}
		return v
	}
	users := func(n int) []string {
		u := make([]string, n)
		for i := range u {
			u[i] = fmt.Sprintf("{email: u%d@example.com, role: view}", i)
		}
		return u
	}
	mirrors := func(n int) string {
		m := make([]string, n)
		for i := range m {
			m[i] = fmt.Sprintf(`"r%d.example.com": {endpoints: ["https://m.example.com"]}`, i)
		}
		return strings.Join(m, ", ")
	}
	kubelet := func(fields string) string { return ng("kubelet: {" + fields + "}") }
	const md0 = "spec.nodeGroups[md0]"

	type args struct {
		spec string // YAML
	}
	type want struct {
		paths []string // fields named by both, Go's notation; none: accepted
		msg   string   // a substring of both messages
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Defaults": {
			reason: "The seed's defaults are valid.",
			args:   args{spec: `{}`},
		},
		"EveryProblemAtOnce": {
			reason: "A negative diskSize and hami without the GPU operator are both named.",
			args:   args{spec: `{nodeGroups: {md0: {diskSize: -1Gi}}, addons: {hami: {enabled: true}}}`},
			want:   want{paths: []string{"spec.addons.hami.enabled", md0 + ".diskSize"}},
		},
		// spec.storageClass: a DNS subdomain (a StorageClass name).
		"StorageClass253": {
			reason: "253 characters is a DNS subdomain's most.",
			args:   args{spec: `{storageClass: ` + rep("s", 253) + `}`},
		},
		"StorageClass254": {
			reason: "254 characters is one too many.",
			args:   args{spec: `{storageClass: ` + rep("s", 254) + `}`},
			want:   want{paths: []string{"spec.storageClass"}},
		},
		"StorageClassNotDNS": {
			reason: "Upper case and underscores are no DNS subdomain.",
			args:   args{spec: `{storageClass: Fast_SSD}`},
			want:   want{paths: []string{"spec.storageClass"}, msg: "Fast_SSD"},
		},
		// spec.version: v1.31..v1.35, the Cozystack chart's version enum.
		"VersionOldest": {args: args{spec: `{version: v1.31}`}, reason: "v1.31 is the oldest supported minor."},
		"VersionDropped": {
			reason: "v1.30 left the chart's supported minors.",
			args:   args{spec: `{version: v1.30}`},
			want:   want{paths: []string{"spec.version"}, msg: "v1.30"},
		},
		"VersionNewest": {args: args{spec: `{version: v1.35}`}, reason: "v1.35 is the newest supported minor."},
		"VersionTooOld": {
			reason: "v1.29 is below the table.",
			args:   args{spec: `{version: v1.29}`},
			want:   want{paths: []string{"spec.version"}, msg: "v1.29"},
		},
		"VersionTooNew": {
			reason: "v1.36 is above the table.",
			args:   args{spec: `{version: v1.36}`},
			want:   want{paths: []string{"spec.version"}, msg: "v1.36"},
		},
		"VersionNotMinor": {
			reason: "A patch version is not a minor.",
			args:   args{spec: `{version: v1.35.6}`},
			want:   want{paths: []string{"spec.version"}},
		},
		// spec.nodeGroups: names DNS labels of at most 16. Past 50 groups
		// (the XRD's maxProperties) is the workers input's to refuse:
		// benchmarks raise it.
		"FiftyNodeGroups": {
			reason: "50 node groups is the XRD's most.",
			args:   args{spec: groups(50)},
		},
		"NodeGroupName16": {
			reason: "A 16-character name keeps every derived name a DNS label.",
			args:   args{spec: `{nodeGroups: {abcdefghijklmnop: {}}}`},
		},
		"NodeGroupName17": {
			reason: "A 17-character name is refused, naming the group.",
			args:   args{spec: `{nodeGroups: {abcdefghijklmnopq: {}}}`},
			want:   want{paths: []string{"spec.nodeGroups"}, msg: "abcdefghijklmnopq"},
		},
		"NodeGroupNameNotDNS": {
			reason: "A name with upper case and an underscore is refused, naming the group.",
			args:   args{spec: `{nodeGroups: {ok: {}, MD_0: {}}}`},
			want:   want{paths: []string{"spec.nodeGroups"}, msg: "MD_0"},
		},
		// Replicas: 0..5000, minReplicas <= maxReplicas.
		"MaxReplicas5000": {
			reason: "5000 nodes is Kubernetes' largest cluster.",
			args:   args{spec: ng(`minReplicas: 5000, maxReplicas: 5000`)},
		},
		"MaxReplicas5001": {
			reason: "5001 is past it.",
			args:   args{spec: ng(`maxReplicas: 5001`)},
			want:   want{paths: []string{md0 + ".maxReplicas"}, msg: "5000"},
		},
		"MinReplicasNegative": {
			reason: "Replicas are never negative.",
			args:   args{spec: ng(`minReplicas: -1`)},
			want:   want{paths: []string{md0 + ".minReplicas"}},
		},
		"MinEqualsMax": {
			reason: "minReplicas may equal maxReplicas.",
			args:   args{spec: ng(`minReplicas: 3, maxReplicas: 3`)},
		},
		"MinAboveMax": {
			reason: "minReplicas above maxReplicas is refused, saying maxReplicas.",
			args:   args{spec: ng(`minReplicas: 4, maxReplicas: 3`)},
			want:   want{paths: []string{md0 + ".minReplicas"}, msg: "minReplicas must be less than or equal to maxReplicas"},
		},
		"EphemeralStorage": {
			reason: "The field's pre-v1.4 name points at diskSize.",
			args:   args{spec: ng(`ephemeralStorage: 20Gi`)},
			want:   want{paths: []string{md0 + ".ephemeralStorage"}, msg: "renamed to diskSize"},
		},
		// diskSize: positive, at most 64Ti.
		"DiskSize64Ti":    {args: args{spec: ng(`diskSize: 64Ti`)}, reason: "64Ti is the most."},
		"DiskSizeOneByte": {args: args{spec: ng(`diskSize: 1`)}, reason: "Any positive size is accepted."},
		"DiskSize65537Gi": {
			reason: "65537Gi is 64Ti and 1Gi.",
			args:   args{spec: ng(`diskSize: 65537Gi`)},
			want:   want{paths: []string{md0 + ".diskSize"}, msg: "at most 64Ti"},
		},
		"DiskSizeNegative": {
			reason: "A negative disk is refused at admission, not only by the functions.",
			args:   args{spec: ng(`diskSize: -20Gi`)},
			want:   want{paths: []string{md0 + ".diskSize"}, msg: "must be greater than zero"},
		},
		"DiskSizeZero": {
			reason: "Zero is not a disk.",
			args:   args{spec: ng(`diskSize: "0"`)},
			want:   want{paths: []string{md0 + ".diskSize"}, msg: "must be greater than zero"},
		},
		"DiskSizeNotQuantity": {
			reason: "Words are no quantity.",
			args:   args{spec: ng(`diskSize: lots`)},
			want:   want{paths: []string{md0 + ".diskSize"}},
		},
		// resources: both or neither; cpu in cores, whole for a VM, at most
		// 256; memory at most 4Ti; both positive.
		"Resources256And4Ti":  {args: args{spec: ng(`resources: {cpu: 256, memory: 4Ti}`)}, reason: "256 cores and 4Ti are a node's most."},
		"ResourcesMillicores": {args: args{spec: ng(`resources: {cpu: 4000m, memory: 1e9}`)}, reason: "4000m is 4 whole cores."},
		"CPUAlone": {
			reason: "cpu without memory.",
			args:   args{spec: ng(`resources: {cpu: 2}`)},
			want:   want{paths: []string{md0 + ".resources.memory"}, msg: "set together or not at all"},
		},
		"MemoryAlone": {
			reason: "memory without cpu.",
			args:   args{spec: ng(`resources: {memory: 4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.cpu"}, msg: "set together or not at all"},
		},
		"CPU256001m": {
			reason: "256001m is past 256 cores.",
			args:   args{spec: ng(`resources: {cpu: 256001m, memory: 4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.cpu"}, msg: "at most 256"},
		},
		"CPUFractional": {
			reason: "A VM gets whole cores.",
			args:   args{spec: ng(`resources: {cpu: 1500m, memory: 4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.cpu"}, msg: "whole number of cores"},
		},
		"CPUExponent": {
			reason: "CPU is written in cores or millicores.",
			args:   args{spec: ng(`resources: {cpu: "4e0", memory: 4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.cpu"}, msg: "decimal cores"},
		},
		"CPUZero": {
			reason: "Zero cores is no VM.",
			args:   args{spec: ng(`resources: {cpu: "0", memory: 4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.cpu"}, msg: "must be greater than zero"},
		},
		"Memory4097Gi": {
			reason: "4097Gi is past 4Ti.",
			args:   args{spec: ng(`resources: {cpu: 4, memory: 4097Gi}`)},
			want:   want{paths: []string{md0 + ".resources.memory"}, msg: "at most 4Ti"},
		},
		"MemoryNegative": {
			reason: "Negative memory.",
			args:   args{spec: ng(`resources: {cpu: 2, memory: -4Gi}`)},
			want:   want{paths: []string{md0 + ".resources.memory"}, msg: "must be greater than zero"},
		},
		// instanceType: a DNS subdomain when it sizes the VM.
		"InstanceTypeNotDNS": {
			reason: "An instance type is an object name.",
			args:   args{spec: ng(`instanceType: U1 Large`)},
			want:   want{paths: []string{md0 + ".instanceType"}},
		},
		"InstanceTypeUnused": {
			reason: "With cpu and memory the instance type is not used.",
			args:   args{spec: ng(`instanceType: U1 Large, resources: {cpu: 2, memory: 4Gi}`)},
		},
		"InstanceTypeNone": {args: args{spec: ng(`instanceType: ""`)}, reason: "An empty instance type means none."},
		"NodeStorageClassEmpty": {
			reason: "An explicit empty storageClass is the chart's own test input: the cluster's storageClass applies.",
			args:   args{spec: ng(`storageClass: ""`)},
		},
		"NodeStorageClassNotDNS": {
			reason: "A node group's storageClass is a StorageClass name.",
			args:   args{spec: ng(`storageClass: Fast_SSD`)},
			want:   want{paths: []string{md0 + ".storageClass"}},
		},
		// roles: at most 16, each a label name part of at most 63.
		"Roles16": {args: args{spec: ng(`roles: [` + list("r", 16) + `]`)}, reason: "16 roles is the most."},
		"Roles17": {
			reason: "17 roles is one too many.",
			args:   args{spec: ng(`roles: [` + list("r", 17) + `]`)},
			want:   want{paths: []string{md0 + ".roles"}, msg: "17"},
		},
		"Role63": {args: args{spec: ng(`roles: [` + rep("r", 63) + `]`)}, reason: "A label name part has at most 63 characters."},
		"Role64": {
			reason: "64 is one too many.",
			args:   args{spec: ng(`roles: [` + rep("r", 64) + `]`)},
			want:   want{paths: []string{md0 + ".roles[0]"}},
		},
		"RoleUpperCase": {
			reason: "Roles are lower case.",
			args:   args{spec: ng(`roles: [ok, Ingress]`)},
			want:   want{paths: []string{md0 + ".roles[1]"}},
		},
		// gpus: at most 16, names 1..253 characters.
		"GPUs16": {args: args{spec: ng(`gpus: [` + list("{name: g}", 16) + `]`)}, reason: "16 GPUs is the most."},
		"GPUs17": {
			reason: "17 GPUs is one too many.",
			args:   args{spec: ng(`gpus: [` + list("{name: g}", 17) + `]`)},
			want:   want{paths: []string{md0 + ".gpus"}, msg: "17"},
		},
		"GPUName253": {args: args{spec: ng(`gpus: [{name: ` + rep("g", 253) + `}]`)}, reason: "253 characters is the most."},
		"GPUName254": {
			reason: "254 is one too many.",
			args:   args{spec: ng(`gpus: [{name: ` + rep("g", 254) + `}]`)},
			want:   want{paths: []string{md0 + ".gpus[0].name"}},
		},
		"GPUNameEmpty": {
			reason: "A GPU needs a device name.",
			args:   args{spec: ng(`gpus: [{name: ""}]`)},
			want:   want{paths: []string{md0 + ".gpus[0].name"}},
		},
		// kubelet: reservations positive and at most a node's; eviction
		// thresholds in the same units, hard below soft.
		"KubeletMost": {args: args{spec: kubelet(`systemReservedCpu: 256, kubeReservedMemory: 4Ti`)}, reason: "256 cores and 4Ti are a node's most."},
		"KubeletNumbers": {
			reason: "Bare JSON numbers are quantities.",
			args:   args{spec: kubelet(`systemReservedMemory: 500000000, kubeReservedCpu: 1, evictionHardMemory: 200000000, evictionSoftMemory: 1Gi`)},
		},
		"KubeletCPU257": {
			reason: "257 cores is past a node's most.",
			args:   args{spec: kubelet(`kubeReservedCpu: 257`)},
			want:   want{paths: []string{md0 + ".kubelet.kubeReservedCpu"}, msg: "at most 256"},
		},
		"KubeletMemory4097Gi": {
			reason: "4097Gi is past 4Ti.",
			args:   args{spec: kubelet(`systemReservedMemory: 4097Gi`)},
			want:   want{paths: []string{md0 + ".kubelet.systemReservedMemory"}, msg: "at most 4Ti"},
		},
		"KubeletCPUZero": {
			reason: "A reservation of zero is no reservation.",
			args:   args{spec: kubelet(`systemReservedCpu: "0"`)},
			want:   want{paths: []string{md0 + ".kubelet.systemReservedCpu"}, msg: "must be greater than zero"},
		},
		"KubeletCPUMicro": {
			reason: "CPU is written in cores or millicores.",
			args:   args{spec: kubelet(`kubeReservedCpu: 100u`)},
			want:   want{paths: []string{md0 + ".kubelet.kubeReservedCpu"}},
		},
		"EvictionPercentages": {args: args{spec: kubelet(`evictionHardMemory: 99.5%, evictionSoftMemory: 100%`)}, reason: "100% is the largest percentage; 99.5% is below it."},
		"EvictionAbsolute":    {args: args{spec: kubelet(`evictionHardMemory: 200Mi, evictionSoftMemory: 1Gi`)}, reason: "Absolute thresholds, hard below soft."},
		"EvictionMixedUnits": {
			reason: "A percentage and an absolute quantity cannot be compared.",
			args:   args{spec: kubelet(`evictionHardMemory: 7%, evictionSoftMemory: 1Gi`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "must both be percentages or both absolute quantities"},
		},
		"EvictionHardEqualsSoft": {
			reason: "Hard must be strictly below soft.",
			args:   args{spec: kubelet(`evictionHardMemory: 10%, evictionSoftMemory: 10%`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "strictly below the soft one"},
		},
		"EvictionHardAboveSoftDefault": {
			reason: "The soft threshold defaults to 10%.",
			args:   args{spec: kubelet(`evictionHardMemory: 10.5%`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "strictly below the soft one"},
		},
		"EvictionHardAboveSoftAbsolute": {
			reason: "500Mi is above 200Mi.",
			args:   args{spec: kubelet(`evictionHardMemory: 500Mi, evictionSoftMemory: 200Mi`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "strictly below the soft one"},
		},
		"EvictionPercent101": {
			reason: "A percentage is at most 100.",
			args:   args{spec: kubelet(`evictionHardMemory: 7%, evictionSoftMemory: 101%`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionSoftMemory"}, msg: "(0, 100]"},
		},
		"EvictionPercentZero": {
			reason: "A percentage is above 0.",
			args:   args{spec: kubelet(`evictionHardMemory: 0%`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "(0, 100]"},
		},
		"EvictionNegative": {
			reason: "An absolute threshold is positive.",
			args:   args{spec: kubelet(`evictionHardMemory: -1Gi, evictionSoftMemory: 1Gi`)},
			want:   want{paths: []string{md0 + ".kubelet.evictionHardMemory"}, msg: "must be greater than zero"},
		},
		// addons: dependencies, hosts, valuesOverride.
		"HAMiWithGPUOperator": {args: args{spec: `{addons: {hami: {enabled: true}, gpuOperator: {enabled: true}}}`}, reason: "HAMi on the GPU operator."},
		"HAMiAlone": {
			reason: "HAMi needs the GPU operator.",
			args:   args{spec: `{addons: {hami: {enabled: true}}}`},
			want:   want{paths: []string{"spec.addons.hami.enabled"}, msg: "hami requires addons.gpuOperator.enabled: true"},
		},
		"OuroborosWithIngress": {args: args{spec: `{addons: {ouroboros: {enabled: true}, ingressNginx: {enabled: true}}}`}, reason: "ouroboros beside ingress-nginx."},
		"OuroborosAlone": {
			reason: "ouroboros fixes the tenant's ingress-nginx, which must be on.",
			args:   args{spec: `{addons: {ouroboros: {enabled: true}}}`},
			want:   want{paths: []string{"spec.addons.ouroboros.enabled"}, msg: "ouroboros requires addons.ingressNginx.enabled: true"},
		},
		"ExposeMethodUnknown": {
			reason: "Proxied or LoadBalancer.",
			args:   args{spec: `{addons: {ingressNginx: {exposeMethod: NodePort}}}`},
			want:   want{paths: []string{"spec.addons.ingressNginx.exposeMethod"}, msg: "NodePort"},
		},
		"Hosts32": {args: args{spec: `{addons: {ingressNginx: {hosts: [` + list("a.example.com", 32) + `]}}}`}, reason: "32 hosts is the most."},
		"Hosts33": {
			reason: "33 hosts is one too many.",
			args:   args{spec: `{addons: {ingressNginx: {hosts: [` + list("a.example.com", 33) + `]}}}`},
			want:   want{paths: []string{"spec.addons.ingressNginx.hosts"}, msg: "33"},
		},
		"HostNotDNS": {
			reason: "A host is a lower-case DNS name.",
			args:   args{spec: `{addons: {ingressNginx: {hosts: [a.example.com, A_B.example.com]}}}`},
			want:   want{paths: []string{"spec.addons.ingressNginx.hosts[1]"}},
		},
		"ValuesOverride64Keys": {args: args{spec: `{addons: {cilium: {valuesOverride: {` + keys(64) + `}}}}`}, reason: "64 top-level keys is the most."},
		"ValuesOverride65Keys": {
			reason: "65 is one too many.",
			args:   args{spec: `{addons: {velero: {valuesOverride: {` + keys(65) + `}}}}`},
			want:   want{paths: []string{"spec.addons.velero.valuesOverride"}, msg: "65"},
		},
		"ValuesOverrideNotObject": {
			reason: "Helm values are an object.",
			args:   args{spec: `{addons: {coredns: {valuesOverride: [1]}}}`},
			want:   want{paths: []string{"spec.addons.coredns.valuesOverride"}},
		},
		// controlPlane: replicas 1..7, components at most 32 cores, 256Gi.
		"ControlPlaneReplicas1": {args: args{spec: `{controlPlane: {replicas: 1}}`}, reason: "One replica is the least."},
		"ControlPlaneReplicas7": {args: args{spec: `{controlPlane: {replicas: 7}}`}, reason: "Seven replicas is the most."},
		"ControlPlaneReplicas0": {
			reason: "A control plane runs.",
			args:   args{spec: `{controlPlane: {replicas: 0}}`},
			want:   want{paths: []string{"spec.controlPlane.replicas"}},
		},
		"ControlPlaneReplicas8": {
			reason: "Eight is past seven.",
			args:   args{spec: `{controlPlane: {replicas: 8}}`},
			want:   want{paths: []string{"spec.controlPlane.replicas"}},
		},
		"Component32And256Gi": {args: args{spec: `{controlPlane: {apiServer: {resources: {cpu: 32, memory: 256Gi}}}}`}, reason: "The largest preset's size."},
		"ComponentCPU33": {
			reason: "33 cores is past the largest preset.",
			args:   args{spec: `{controlPlane: {scheduler: {resources: {cpu: 33}}}}`},
			want:   want{paths: []string{"spec.controlPlane.scheduler.resources.cpu"}, msg: "at most 32"},
		},
		"ComponentMemory257Gi": {
			reason: "257Gi is past the largest preset.",
			args:   args{spec: `{controlPlane: {konnectivity: {server: {resources: {memory: 257Gi}}}}}`},
			want:   want{paths: []string{"spec.controlPlane.konnectivity.server.resources.memory"}, msg: "at most 256Gi"},
		},
		"ComponentMemoryZero": {
			reason: "A component needs memory.",
			args:   args{spec: `{controlPlane: {controllerManager: {resources: {memory: "0"}}}}`},
			want:   want{paths: []string{"spec.controlPlane.controllerManager.resources.memory"}, msg: "must be greater than zero"},
		},
		// Names of the cluster.
		"Namespace63": {args: args{spec: `{namespace: ` + rep("n", 63) + `}`}, reason: "A namespace is a DNS label."},
		"Namespace64": {
			reason: "64 characters is one too many.",
			args:   args{spec: `{namespace: ` + rep("n", 64) + `}`},
			want:   want{paths: []string{"spec.namespace"}},
		},
		"HostNotDNSName": {
			reason: "The cluster's host is a DNS name.",
			args:   args{spec: `{host: Api.Example.com}`},
			want:   want{paths: []string{"spec.host"}},
		},
		"Image512": {args: args{spec: `{images: {waitForKubeconfig: ` + rep("i", 512) + `}}`}, reason: "512 characters is the most."},
		"Image513": {
			reason: "513 is one too many.",
			args:   args{spec: `{images: {waitForKubeconfig: ` + rep("i", 513) + `}}`},
			want:   want{paths: []string{"spec.images.waitForKubeconfig"}},
		},
		// Control plane
		"ExtraArgs64": {
			reason: "64 flags is the most; --requestheader-uid-headers is upstream's example of a flag a tenant sets.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--requestheader-uid-headers=X-Remote-Uid, ` + list("--v=2", 1) + `, ` + strings.Join(flags(62), ", ") + `]}}}`},
		},
		"ExtraArgs65": {
			reason: "65 flags is one too many.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [` + strings.Join(flags(65), ", ") + `]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs"}},
		},
		"ExtraArg1024": {
			reason: "A flag of 1024 characters is the most.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--feature-gates=` + rep("a", 1024-len("--feature-gates=")) + `]}}}`},
		},
		"ExtraArg1025": {
			reason: "1025 characters is one too many.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--feature-gates=` + rep("a", 1025-len("--feature-gates=")) + `]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]"}},
		},
		"ExtraArgNotAFlag": {
			reason: "A flag starts with -- and a lower-case name.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: ["-v=2"]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]"}},
		},
		"ExtraArgBareFlag": {
			reason: "A flag without a value is a flag.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--profiling]}}}`},
		},
		"ExtraArgEtcdPrefix": {
			reason: "--etcd-prefix would read another tenant's keys in a shared DataStore.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--v=2, --etcd-prefix=/other]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[1]"}, msg: "--etcd-prefix is set by the platform"},
		},
		"ExtraArgsReserved": {
			reason: "Each flag Kamaji sets is refused, named by its index.",
			args: args{spec: `{controlPlane: {apiServer: {extraArgs: [--service-cluster-ip-range=10.0.0.0/8, --secure-port=1, --tls-cert-file=/x, ` +
				`--anonymous-auth=false, --authorization-mode=AlwaysAllow, --authentication-token-webhook-config-file=/w]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]", "spec.controlPlane.apiServer.extraArgs[1]", "spec.controlPlane.apiServer.extraArgs[2]",
				"spec.controlPlane.apiServer.extraArgs[3]", "spec.controlPlane.apiServer.extraArgs[4]", "spec.controlPlane.apiServer.extraArgs[5]"}},
		},
		"ExtraArgRepeated": {
			reason: "Kamaji keys flags by name: a second --v would silently win.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--v=2, --v=4]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs"}, msg: "--v"},
		},
		"ExtraArgVerbosity": {
			reason: "--v is a level from 0 to 4: 5 and up are trace levels, and from 6 the API server logs request resources, headers and bodies (Kubernetes logging conventions); a bare --v has no level.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--v=5, --v=10, --v, --v=04, --v=4]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]", "spec.controlPlane.apiServer.extraArgs[1]", "spec.controlPlane.apiServer.extraArgs[2]",
				"spec.controlPlane.apiServer.extraArgs[3]", "spec.controlPlane.apiServer.extraArgs"}, msg: "--v must be a level from 0 to 4"},
		},
		"ExtraArgVerbosityZeroToFour": {
			reason: "Levels 0 to 4 pass, and --vmodule, --log-* and --logging-format are refused: they set the volume and format of logs the management cluster collects.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--v=0, --vmodule=httplog=10, --log-flush-frequency=1s, --logging-format=json]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraArgs[1]", "spec.controlPlane.apiServer.extraArgs[2]", "spec.controlPlane.apiServer.extraArgs[3]"},
				msg: "--vmodule is set by the platform"},
		},
		"ExtraArgsSharedResources": {
			reason: "The audit log and policy, --event-ttl, the watch cache and the logs handler spend what tenants share; their neighbours --audit-webhook-* (already refused) aside, --enable-aggregator-routing and --default-not-ready-toleration-seconds pass.",
			args: args{spec: `{controlPlane: {apiServer: {extraArgs: [--audit-log-path=/var/log/audit.log, --audit-policy-file=/p, --event-ttl=720h, --watch-cache=false, ` +
				`--watch-cache-sizes=pods#0, --default-watch-cache-size=0, --enable-logs-handler, --enable-aggregator-routing=true, --default-not-ready-toleration-seconds=60]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]", "spec.controlPlane.apiServer.extraArgs[1]", "spec.controlPlane.apiServer.extraArgs[2]",
				"spec.controlPlane.apiServer.extraArgs[3]", "spec.controlPlane.apiServer.extraArgs[4]", "spec.controlPlane.apiServer.extraArgs[5]",
				"spec.controlPlane.apiServer.extraArgs[6]"}, msg: "--event-ttl is set by the platform, calls out from the management network or spends what tenants share"},
		},
		"ExtraArgNonASCII1024": {
			reason: "The bound counts characters as the schema's maxLength does: 1024 characters of 2 bytes each pass.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: ["--feature-gates=` + rep("é", 1024-len("--feature-gates=")) + `"]}}}`},
		},
		"OIDCFlagsWithoutMode": {
			reason: "--oidc-* is refused with oidc.mode None too: the issuer would be fetched from the management network, unchecked; OIDC goes only through spec.oidc.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--oidc-issuer-url=https://id.example.com, --oidc-client-id=k, --requestheader-uid-headers=X-Remote-Uid]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]", "spec.controlPlane.apiServer.extraArgs[1]"},
				msg: "--oidc-issuer-url cannot be set in extraArgs: configure OIDC with spec.oidc"},
		},
		"AuthenticationConfigFlagWithoutMode": {
			reason: "A tenant's own --authentication-config (a file from extraVolumes) is refused with oidc.mode None; --authentication-token-webhook-* stays refused as reserved.",
			args:   args{spec: `{controlPlane: {apiServer: {extraArgs: [--authentication-config=/srv/authn/config.yaml]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]"}, msg: "--authentication-config cannot be set in extraArgs"},
		},
		"OIDCFlagsWithMode": {
			reason: "With a mode the platform sets --authentication-config, which kube-apiserver refuses beside --oidc-*.",
			args:   args{spec: `{oidc: {mode: System}, controlPlane: {apiServer: {extraArgs: [--oidc-issuer-url=https://id.example.com]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]"}, msg: "--oidc-issuer-url cannot be set in extraArgs"},
		},
		"AuthenticationConfigFlagWithMode": {
			reason: "The platform sets --authentication-config when oidc.mode is not None.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {secretRef: {name: authn}}}, controlPlane: {apiServer: {extraArgs: [--authentication-config=/x]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraArgs[0]"}, msg: "--authentication-config cannot be set"},
		},
		"ExtraVolumesAndMounts": {
			reason: "A ConfigMap and a Secret volume, each mounted off the control plane's paths.",
			args: args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: audit, configMap: {name: audit-policy}}, {name: tokens, secret: {secretName: tokens, optional: true}}], ` +
				`extraVolumeMounts: [{name: audit, mountPath: /etc/tenant/audit, readOnly: true}, {name: tokens, mountPath: /srv/tokens}]}}}`},
		},
		"ExtraVolumes16": {
			reason: "16 volumes is the most.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [` + strings.Join(volumes(16), ", ") + `]}}}`},
		},
		"ExtraVolumes17": {
			reason: "17 volumes is one too many.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [` + strings.Join(volumes(17), ", ") + `]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes"}},
		},
		"ExtraVolumeNoSource": {
			reason: "A hostPath is pruned by the schema; what is left has no source.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: host}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes[0]"}, msg: "exactly one source"},
		},
		"ExtraVolumeTwoSources": {
			reason: "A volume has one source.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, configMap: {name: a}, secret: {secretName: b}}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes[0]"}, msg: "exactly one source"},
		},
		"ExtraVolumeReservedName": {
			reason: "Kamaji's own volume names would clash in the pod.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: etc-kubernetes-pki, secret: {secretName: mine}}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes[0].name"}, msg: "a volume of the control plane itself"},
		},
		"ExtraVolumeTalosNames": {
			reason: "tenantkube's own volumes (the Talos signer's CA and serving certificate) would clash in the pod Kamaji builds.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: talos-ca, secret: {secretName: mine}}, {name: talos-tls-cert, configMap: {name: mine}}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes[0].name", "spec.controlPlane.apiServer.extraVolumes[1].name"}, msg: "talos-tls-cert"},
		},
		"ExtraVolumeBadSecretName": {
			reason: "A Secret name is a DNS subdomain.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: Bad_Name}}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes[0].secret.secretName"}},
		},
		"ExtraVolumeRepeated": {
			reason: "Volume names are unique.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}, {name: v, configMap: {name: b}}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumes"}, msg: "unique"},
		},
		"ExtraVolumeMountUndeclared": {
			reason: "A mount names a declared volume.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumeMounts: [{name: nowhere, mountPath: /srv/x}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts"}, msg: "must be a volume of extraVolumes"},
		},
		"ExtraVolumeMountRelative": {
			reason: "A mount path is absolute.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}], extraVolumeMounts: [{name: v, mountPath: srv/x}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts[0].mountPath"}},
		},
		"ExtraVolumeMountDotDot": {
			reason: "A mount path does not climb.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}], extraVolumeMounts: [{name: v, mountPath: /srv/../etc/kubernetes}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts[0].mountPath"}, msg: ".. segments"},
		},
		"ExtraVolumeMountReserved": {
			reason: "Under, on and above Kamaji's paths are refused; a sibling is not.",
			args: args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}], extraVolumeMounts: [` +
				`{name: v, mountPath: /etc/kubernetes/pki/x}, {name: v, mountPath: /etc/ssl/certs}, {name: v, mountPath: /etc}, {name: v, mountPath: /etc/kubernetes-extra}]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts[0].mountPath", "spec.controlPlane.apiServer.extraVolumeMounts[1].mountPath",
				"spec.controlPlane.apiServer.extraVolumeMounts[2].mountPath"}, msg: "on or above a path the control plane uses"},
		},
		"ExtraVolumeMountPathRepeated": {
			reason: "Two mounts on one path.",
			args: args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}, {name: w, secret: {secretName: b}}], ` +
				`extraVolumeMounts: [{name: v, mountPath: /srv/x}, {name: w, mountPath: /srv/x}]}}}`},
			want: want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts"}, msg: "unique"},
		},
		"ExtraVolumeMountPath256": {
			reason: "A mount path of 256 characters is the most.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}], extraVolumeMounts: [{name: v, mountPath: /` + rep("p", 255) + `}]}}}`},
		},
		"ExtraVolumeMountPath257": {
			reason: "257 characters is one too many.",
			args:   args{spec: `{controlPlane: {apiServer: {extraVolumes: [{name: v, secret: {secretName: a}}], extraVolumeMounts: [{name: v, mountPath: /` + rep("p", 256) + `}]}}}`},
			want:   want{paths: []string{"spec.controlPlane.apiServer.extraVolumeMounts[0].mountPath"}},
		},
		"OIDCModeUnknown": {
			reason: "Three modes.",
			args:   args{spec: `{oidc: {mode: Keycloak}}`},
			want:   want{paths: []string{"spec.oidc.mode"}},
		},
		"OIDCSystem": {args: args{spec: `{oidc: {mode: System}}`}, reason: "System needs nothing from the tenant."},
		"OIDCCustomConfigInline": {
			reason: "An inline configuration alone.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {config: "apiVersion: apiserver.config.k8s.io/v1beta1"}}}`},
		},
		"OIDCCustomConfigNeither": {
			reason: "CustomConfig needs a configuration.",
			args:   args{spec: `{oidc: {mode: CustomConfig}}`},
			want:   want{paths: []string{"spec.oidc.customConfig"}, msg: "exactly one of customConfig.config"},
		},
		"OIDCCustomConfigBoth": {
			reason: "config and secretRef.name are mutually exclusive.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {config: x, secretRef: {name: authn}}}}`},
			want:   want{paths: []string{"spec.oidc.customConfig"}, msg: "exactly one of customConfig.config"},
		},
		"OIDCCustomConfigIgnoredWithNone": {
			reason: "With mode None the custom configuration is not used (upstream's default values hold both empty).",
			args:   args{spec: `{oidc: {mode: None, customConfig: {config: x, secretRef: {name: authn}}}}`},
		},
		"OIDCConfig32KiB": {
			reason: "32 KiB is the most.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {config: ` + rep("c", 32768) + `}}}`},
		},
		"OIDCConfigPast32KiB": {
			reason: "One byte more is refused.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {config: ` + rep("c", 32769) + `}}}`},
			want:   want{paths: []string{"spec.oidc.customConfig.config"}},
		},
		"OIDCSecretRefNotDNS": {
			reason: "A Secret name is a DNS subdomain.",
			args:   args{spec: `{oidc: {mode: CustomConfig, customConfig: {secretRef: {name: Authn_Config}}}}`},
			want:   want{paths: []string{"spec.oidc.customConfig.secretRef.name"}},
		},
		"OIDCUsers64": {
			reason: "64 users is the most.",
			args:   args{spec: `{oidc: {mode: System, users: [` + strings.Join(users(64), ", ") + `]}}`},
		},
		"OIDCUsers65": {
			reason: "65 users is one too many.",
			args:   args{spec: `{oidc: {mode: System, users: [` + strings.Join(users(65), ", ") + `]}}`},
			want:   want{paths: []string{"spec.oidc.users"}},
		},
		"OIDCUserBadEmail": {
			reason: "An email has a local part, an @ and a DNS domain; no colon (system: names).",
			args:   args{spec: `{oidc: {users: [{email: "system:admin", role: admin}, {email: jane@example.com, role: view}]}}`},
			want:   want{paths: []string{"spec.oidc.users[0].email"}},
		},
		"OIDCUserBadRole": {
			reason: "Two roles.",
			args:   args{spec: `{oidc: {users: [{email: jane@example.com, role: edit}]}}`},
			want:   want{paths: []string{"spec.oidc.users[0].role"}},
		},
		"OIDCUserRepeated": {
			reason: "One binding per email.",
			args:   args{spec: `{oidc: {users: [{email: jane@example.com, role: view}, {email: jane@example.com, role: admin}]}}`},
			want:   want{paths: []string{"spec.oidc.users"}, msg: "each email at most once"},
		},
		// Node health. Durations: whole h, m, s in that order
		// (a subset of time.ParseDuration and CEL's duration()); node
		// startup 30s (CAPI's least) .. 24h, the others 1s .. 24h.
		// maxUnhealthy: 0..5000 machines or 0%..100%.
		"HealthCheckChart": {
			reason: "The chart's values written out, in Go's canonical form for one.",
			args:   args{spec: `{nodeHealthCheck: {maxUnhealthy: 50%, nodeStartupTimeout: 20m0s, readyUnknownTimeout: 5m, readyFalseTimeout: 10m}, maxNodeProvisionTime: 30m}`},
		},
		"HealthCheckEdges": {
			reason: "30s and 24h are the node startup timeout's edges, 1s and 24h the others', 0% and 100% a percentage's, 5000 an integer's.",
			args:   args{spec: `{nodeHealthCheck: {maxUnhealthy: "5000", nodeStartupTimeout: 30s, readyUnknownTimeout: 1s, readyFalseTimeout: 24h}, maxNodeProvisionTime: 23h59m60s, nodeGroups: {a: {maxUnhealthy: 0%, nodeStartupTimeout: 24h}, b: {maxUnhealthy: 100%}, c: {maxUnhealthy: "0"}}}`},
		},
		"HealthCheckEmptyMeansDefault": {
			reason: "An empty value is the default (the cluster's, in a group): Go cannot tell it from an absent one.",
			args:   args{spec: `{nodeHealthCheck: {maxUnhealthy: "", nodeStartupTimeout: ""}, maxNodeProvisionTime: "", nodeGroups: {md0: {maxUnhealthy: "", nodeStartupTimeout: ""}}}`},
		},
		"NodeStartupTimeout29s": {
			reason: "CAPI's webhook refuses a node startup timeout below 30s.",
			args:   args{spec: `{nodeHealthCheck: {nodeStartupTimeout: 29s}, nodeGroups: {md0: {nodeStartupTimeout: 29s}}}`},
			want:   want{paths: []string{md0 + ".nodeStartupTimeout", "spec.nodeHealthCheck.nodeStartupTimeout"}, msg: "must be at least 30s and at most 24h"},
		},
		"GroupNodeStartupTimeout24h1s": {
			reason: "One second past 24h.",
			args:   args{spec: ng(`nodeStartupTimeout: 24h1s`)},
			want:   want{paths: []string{md0 + ".nodeStartupTimeout"}, msg: "must be at least 30s and at most 24h"},
		},
		"TimeoutsZero": {
			reason: "A zero Ready timeout remediates the moment the condition flips (0h0m0s is zero too); a zero provision time gives up on every new machine.",
			args:   args{spec: `{nodeHealthCheck: {readyUnknownTimeout: 0s, readyFalseTimeout: 0h0m0s}, maxNodeProvisionTime: 0m}`},
			want:   want{paths: []string{"spec.maxNodeProvisionTime", "spec.nodeHealthCheck.readyFalseTimeout", "spec.nodeHealthCheck.readyUnknownTimeout"}, msg: "must be at least 1s and at most 24h"},
		},
		"DurationForms": {
			reason: "A negative, a fraction, milliseconds, a bare number, units out of order, upper case: cluster-autoscaler or CAPI would read them otherwise or not at all.",
			args:   args{spec: `{nodeHealthCheck: {nodeStartupTimeout: -20m, readyUnknownTimeout: 1.5m, readyFalseTimeout: 300000ms}, maxNodeProvisionTime: "1800", nodeGroups: {a: {nodeStartupTimeout: 30s20m}, b: {nodeStartupTimeout: 20M}}}`},
			want: want{paths: []string{"spec.maxNodeProvisionTime", "spec.nodeGroups[a].nodeStartupTimeout", "spec.nodeGroups[b].nodeStartupTimeout",
				"spec.nodeHealthCheck.nodeStartupTimeout", "spec.nodeHealthCheck.readyFalseTimeout", "spec.nodeHealthCheck.readyUnknownTimeout"},
				msg: "must be whole hours, minutes and seconds in that order"},
		},
		"BackupIntervalBounds": {
			reason: "spec.backup.interval from 1h to 168h; the platform narrows it further (the function's check).",
			args:   args{spec: `{backup: {interval: 1h}}`},
		},
		"BackupInterval168h": {
			reason: "A week, the longest.",
			args:   args{spec: `{backup: {interval: 168h}}`},
		},
		"BackupInterval59m": {
			reason: "A minute under an hour.",
			args:   args{spec: `{backup: {interval: 59m}}`},
			want:   want{paths: []string{"spec.backup.interval"}, msg: "must be at least 1h and at most 168h"},
		},
		"BackupInterval168h1s": {
			reason: "A second past a week.",
			args:   args{spec: `{backup: {interval: 168h0m1s}}`},
			want:   want{paths: []string{"spec.backup.interval"}, msg: "must be at least 1h and at most 168h"},
		},
		"BackupIntervalForm": {
			reason: "Days are not a unit of the duration form.",
			args:   args{spec: `{backup: {interval: 1d}}`},
			want:   want{paths: []string{"spec.backup.interval"}, msg: "must be whole hours, minutes and seconds in that order"},
		},
		"Restore": {
			reason: "A backup name and a namespace, both DNS labels.",
			args:   args{spec: `{restore: {backup: demo-backup-20261202183044-c62685, namespace: tenant-demo}}`},
		},
		"RestoreBadNames": {
			reason: "Upper case and dots are no DNS label.",
			args:   args{spec: `{restore: {backup: Demo.backup, namespace: tenant.demo, cluster: De.mo}}`},
			want:   want{paths: []string{"spec.restore.backup", "spec.restore.namespace", "spec.restore.cluster"}},
		},
		"RestoreTenantBackup": {
			reason: "A Tenant's backup name and the TenantCluster it restores.",
			args:   args{spec: `{restore: {backup: "20261203045905-e8f851", cluster: demo}}`},
		},
		"RestoreCluster33": {
			reason: "A cluster name has at most 32 characters.",
			args:   args{spec: `{restore: {backup: "20261203045905-e8f851", cluster: ` + strings.Repeat("c", 33) + `}}`},
			want:   want{paths: []string{"spec.restore.cluster"}},
		},
		"MaxNodeProvisionTime24h1s": {
			reason: "One second past 24h.",
			args:   args{spec: `{maxNodeProvisionTime: 24h0m1s}`},
			want:   want{paths: []string{"spec.maxNodeProvisionTime"}, msg: "24h0m1s"},
		},
		"MaxNodeProvisionTimeDigits": {
			reason: "At most five digits a unit, so nothing overflows time.ParseDuration.",
			args:   args{spec: `{maxNodeProvisionTime: 000001h}`},
			want:   want{paths: []string{"spec.maxNodeProvisionTime"}},
		},
		"MaxUnhealthy101Percent": {
			reason: "Past 100% (CAPI's webhook accepts it).",
			args:   args{spec: `{nodeHealthCheck: {maxUnhealthy: 101%}}`},
			want:   want{paths: []string{"spec.nodeHealthCheck.maxUnhealthy"}, msg: "101%"},
		},
		"MaxUnhealthy5001": {
			reason: "One past the most machines of a group.",
			args:   args{spec: ng(`maxUnhealthy: "5001"`)},
			want:   want{paths: []string{md0 + ".maxUnhealthy"}, msg: "must be a whole number of machines from 0 to 5000"},
		},
		"MaxUnhealthyForms": {
			reason: "A negative (CAPI's webhook accepts it), a fraction, a leading zero, a sign, a space.",
			args:   args{spec: `{nodeHealthCheck: {maxUnhealthy: "-1"}, nodeGroups: {a: {maxUnhealthy: 12.5%}, b: {maxUnhealthy: 050%}, c: {maxUnhealthy: +5%}, d: {maxUnhealthy: "50 %"}}}`},
			want: want{paths: []string{"spec.nodeGroups[a].maxUnhealthy", "spec.nodeGroups[b].maxUnhealthy", "spec.nodeGroups[c].maxUnhealthy",
				"spec.nodeGroups[d].maxUnhealthy", "spec.nodeHealthCheck.maxUnhealthy"}, msg: "such as 50%"},
		},
		// VM
		// logSerialConsole, podCpuLimit/podCpuRequest (the seed chart's rules),
		// antiAffinity.
		"LogSerialConsole": {args: args{spec: ng("logSerialConsole: true")}, reason: "A bool."},
		"PodCPULimitWithInstanceType": {
			reason: "KubeVirt refuses domain.resources.limits.cpu beside an instancetype (u1.medium by default).",
			args:   args{spec: ng("podCpuLimit: 2")},
			want:   want{paths: []string{md0 + ".podCpuLimit"}, msg: "cannot be combined with instanceType sizing (instanceType is u1.medium)"},
		},
		"PodCPURequestWithInstanceType": {
			reason: "The same for domain.resources.requests.cpu.",
			args:   args{spec: ng("instanceType: u1.large, podCpuRequest: 500m")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "cannot be combined with instanceType sizing (instanceType is u1.large)"},
		},
		"PodCPUWithResources":       {args: args{spec: ng("resources: {cpu: 2, memory: 4Gi}, podCpuLimit: 3")}, reason: "resources drop the instancetype: the chart's own test values."},
		"PodCPUWithoutInstanceType": {args: args{spec: ng("instanceType: '', podCpuRequest: 500m")}, reason: "No instancetype at all."},
		"PodCPULimit256":            {args: args{spec: ng("instanceType: '', podCpuLimit: 256")}, reason: "A node's most cores."},
		"PodCPULimit257": {
			reason: "One core past it.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: 257")},
			want:   want{paths: []string{md0 + ".podCpuLimit"}, msg: "podCpuLimit must be at most 256"},
		},
		"PodCPURequest257": {
			reason: "The request's bound too.",
			args:   args{spec: ng("instanceType: '', podCpuRequest: 257")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "podCpuRequest must be at most 256"},
		},
		"PodCPURequestNegative": {
			reason: "A negative CPU is refused (it is no CPU form).",
			args:   args{spec: ng("instanceType: '', podCpuRequest: -1")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "podCpuRequest must be whole millicores"},
		},
		"PodCPULimitFractionalMillicores": {
			reason: "1.5m is not whole millicores.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: 1.5m")},
			want:   want{paths: []string{md0 + ".podCpuLimit"}, msg: "podCpuLimit must be whole millicores"},
		},
		"PodCPULimitZero": {
			reason: "A zero CPU limit is refused: a pod without a CPU ceiling escapes a limits.cpu quota's purpose.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: 0")},
			want:   want{paths: []string{md0 + ".podCpuLimit"}, msg: "podCpuLimit must be greater than zero"},
		},
		"PodCPUZeroPair": {
			reason: "Zero request and limit: refused, each at its own path.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: 0, podCpuRequest: 0")},
			want:   want{paths: []string{md0 + ".podCpuLimit", md0 + ".podCpuRequest"}, msg: "must be greater than zero"},
		},
		"PodCPURequestZero": {
			reason: "A zero request reserves nothing and counts nothing against requests.cpu.",
			args:   args{spec: ng("instanceType: '', podCpuRequest: '0'")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "podCpuRequest must be greater than zero"},
		},
		"PodCPURequestZeroWithLimit": {
			reason: "Zero beside a limit is refused too.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: 2, podCpuRequest: 0")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "podCpuRequest must be greater than zero"},
		},
		"PodCPUZeroSpellings": {
			reason: "Every spelling that parses to zero: 0m, 0.0, .0, 000.",
			args: args{spec: `{nodeGroups: {a: {instanceType: '', podCpuLimit: 0m}, b: {instanceType: '', podCpuRequest: "0.0"}, ` +
				`c: {instanceType: '', podCpuRequest: ".0"}, d: {instanceType: '', podCpuLimit: "000"}}}`},
			want: want{paths: []string{"spec.nodeGroups[a].podCpuLimit", "spec.nodeGroups[b].podCpuRequest", "spec.nodeGroups[c].podCpuRequest",
				"spec.nodeGroups[d].podCpuLimit"}, msg: "must be greater than zero"},
		},
		"PodCPURequestOneMillicore": {args: args{spec: ng("instanceType: '', podCpuRequest: 1m")}, reason: "Admission takes 1m; the floor from the vCPUs and the platform's ratio is the workers function's."},
		"PodCPURequestEqualsLimit":  {args: args{spec: ng("instanceType: '', podCpuLimit: '1.5', podCpuRequest: 1500m")}, reason: "Compared as quantities: 1500m is 1.5."},
		"PodCPURequestAboveLimit": {
			reason: "1501m is past 1.5.",
			args:   args{spec: ng("instanceType: '', podCpuLimit: '1.5', podCpuRequest: 1501m")},
			want:   want{paths: []string{md0 + ".podCpuRequest"}, msg: "podCpuRequest must be at most podCpuLimit (1.5)"},
		},
		// os and spec.talos: the worker OS, the Talos release against the
		// support matrix (Talos v1.13: Kubernetes v1.31 to v1.36), the
		// schematic and the registry mirrors.
		"OSTalos":  {args: args{spec: ng("os: Talos")}, reason: "One of Ubuntu, Talos."},
		"OSUbuntu": {args: args{spec: ng("os: Ubuntu")}, reason: "One of Ubuntu, Talos."},
		"OSUnknown": {
			reason: "Windows is no worker OS.",
			args:   args{spec: ng("os: Windows")},
			want:   want{paths: []string{md0 + ".os"}, msg: "Windows"},
		},
		"TalosDefaults": {args: args{spec: `{version: v1.31, talos: {}}`}, reason: "Talos v1.13.6 runs Kubernetes v1.31."},
		"TalosOutsideMatrix": {
			reason: "Talos v1.12 is not in the chart's support matrix: both versions are named.",
			args:   args{spec: `{version: v1.35, talos: {version: v1.12.4}}`},
			want:   want{paths: []string{"spec.talos.version"}, msg: "Talos v1.12.4 does not support Kubernetes v1.35"},
		},
		"TalosVersionNotRelease": {
			reason: "A Talos release is vX.Y.Z.",
			args:   args{spec: `{talos: {version: "1.13"}}`},
			want:   want{paths: []string{"spec.talos.version"}, msg: "1.13"},
		},
		"TalosSchematicNotHex": {
			reason: "A schematic ID is 64 lower-case hex digits.",
			args:   args{spec: `{talos: {schematicID: ` + rep("A", 64) + `}}`},
			want:   want{paths: []string{"spec.talos.schematicID"}},
		},
		"TalosSixteenMirrors": {
			reason: "16 mirrored hosts is the most.",
			args:   args{spec: `{talos: {registryMirrors: {` + mirrors(16) + `}}}`},
		},
		"TalosSeventeenMirrors": {
			reason: "17 mirrored hosts is one too many.",
			args:   args{spec: `{talos: {registryMirrors: {` + mirrors(17) + `}}}`},
			want:   want{paths: []string{"spec.talos.registryMirrors"}},
		},
		"TalosMirrorHost": {
			reason: "A mirror key is a registry host.",
			args:   args{spec: `{talos: {registryMirrors: {"Docker_IO": {endpoints: ["https://m.example.com"]}}}}`},
			want:   want{paths: []string{"spec.talos.registryMirrors"}, msg: "Docker_IO"},
		},
		"TalosMirrorEndpointScheme": {
			reason: "A mirror endpoint is an http(s) URL.",
			args:   args{spec: `{talos: {registryMirrors: {"docker.io": {endpoints: ["ftp://m.example.com"]}}}}`},
			want:   want{paths: []string{"spec.talos.registryMirrors[docker.io].endpoints[0]"}},
		},
		"TalosMirrorNineEndpoints": {
			reason: "8 endpoints per host is the most.",
			args:   args{spec: `{talos: {registryMirrors: {"docker.io": {endpoints: [` + list(`"https://m.example.com"`, 9) + `]}}}}`},
			want:   want{paths: []string{"spec.talos.registryMirrors[docker.io].endpoints"}},
		},
		"AntiAffinityHard": {args: args{spec: ng("antiAffinity: Hard")}, reason: "One of Soft, Hard, None."},
		"AntiAffinityOther": {
			reason: "Not one of them.",
			args:   args{spec: ng("antiAffinity: Preferred")},
			want:   want{paths: []string{md0 + ".antiAffinity"}, msg: "Soft"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			admission := xrd.admit(t, c.args.spec, "")
			functions := clusterValidate(t, c.args.spec)

			want := normalizedPaths(c.want.paths)
			if d := cmp.Diff(want, fieldPaths(admission)); d != "" {
				t.Errorf("%s\nXRD admission: fields (-want +got):\n%s\n%v", c.reason, d, admission.ToAggregate())
			}
			if d := cmp.Diff(want, fieldPaths(functions)); d != "" {
				t.Errorf("%s\nspec.Validate(): fields (-want +got):\n%s\n%v", c.reason, d, functions.ToAggregate())
			}
			if c.want.msg == "" {
				return
			}
			for who, errs := range map[string]field.ErrorList{"XRD admission": admission, "spec.Validate()": functions} {
				if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), c.want.msg) {
					t.Errorf("%s\n%s: message %v does not contain %q", c.reason, who, agg, c.want.msg)
				}
			}
		})
	}
}

// mapKey is a map key in a field path: the API server's OpenAPI validator
// writes spec.nodeGroups.md0, field.Path spec.nodeGroups[md0].
var mapKey = regexp.MustCompile(`\[([^\]0-9][^\]]*)\]`)

// normalizedPaths is the sorted set of paths, map keys written as fields.
func normalizedPaths(paths []string) []string {
	set := map[string]bool{}
	for _, p := range paths {
		set[mapKey.ReplaceAllString(p, ".$1")] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// fieldPaths is normalizedPaths of the fields errs name.
func fieldPaths(errs field.ErrorList) []string {
	paths := make([]string, len(errs))
	for i, e := range errs {
		paths[i] = e.Field
	}
	return normalizedPaths(paths)
}

// TestXRDVersionsMatchGo: the XRD's enum of spec.version is the list
// spec.Validate accepts.
func TestXRDVersionsMatchGo(t *testing.T) {
	var enum []string
	for _, v := range xrdRootSchema(t).Properties["spec"].Properties["version"].Enum {
		var s string
		if err := json.Unmarshal(v.Raw, &s); err != nil {
			t.Fatal(err)
		}
		enum = append(enum, s)
	}
	if d := cmp.Diff(v1alpha1.Versions, enum); d != "" {
		t.Errorf("v1alpha1.Versions (-) vs the XRD's enum (+):\n%s", d)
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// sized returns the sizing of a node with cpu cores and mem memory ("" =
// unknown).
func sized(cpu, mem string) Sizing {
	var s Sizing
	if cpu != "" {
		q := resource.MustParse(cpu)
		s.CPU = &q
	}
	if mem != "" {
		q := resource.MustParse(mem)
		s.Memory = &q
	}
	return s
}

func TestComputeReservations(t *testing.T) {
	type want struct {
		sysMem, kubeMem, sysCPU, kubeCPU, hard, soft, allocMem, allocCPU string
	}
	cases := map[string]struct {
		k    v1alpha1.Kubelet
		s    Sizing
		want want
	}{
		// u1.large, the seed's formula by hand: 8Gi − 2×409Mi − 7% of 8Gi = 6800.56Mi → 6800Mi; 2000m − 2×100m.
		"u1.large": {s: sized("2", "8Gi"), want: want{"409Mi", "409Mi", "100m", "100m", "7%", "10%", "6800Mi", "1800m"}},
		// 5% of 4096Mi = 204 → clamped up to 256; 5% of 1000m = 50.
		"u1.medium clamps to the minimum": {s: sized("1", "4Gi"), want: want{"256Mi", "256Mi", "50m", "50m", "7%", "10%", "3297Mi", "900m"}},
		// 5% of 32768Mi = 1638 → clamped to 1024; 5% of 8000m = 400.
		"u1.2xlarge clamps memory to 1Gi": {s: sized("8", "32Gi"), want: want{"1024Mi", "1024Mi", "400m", "400m", "7%", "10%", "28426Mi", "7200m"}},
		// 5% of 32000m = 1600 → clamped to 500.
		"u1.8xlarge clamps cpu to 500m": {s: sized("32", "128Gi"), want: want{"1024Mi", "1024Mi", "500m", "500m", "7%", "10%", "119848Mi", "31000m"}},
		// 5% of 20Gi = 1024 exactly.
		"20Gi is exactly 1Gi": {s: sized("10", "20Gi"), want: want{"1024Mi", "1024Mi", "500m", "500m", "7%", "10%", "16998Mi", "9000m"}},
		// 5% of 5Gi = 256 exactly; 5120 − 512 − 358.4 = 4249.6 → 4249Mi.
		"5Gi is exactly 256Mi": {s: sized("1", "5Gi"), want: want{"256Mi", "256Mi", "50m", "50m", "7%", "10%", "4249Mi", "900m"}},
		// 5% of 6Gi = 307.2 → 307 (rounded down); 6144 − 614 − 430.08 = 5099.92 → 5099Mi.
		"6Gi rounds down": {s: sized("3", "6Gi"), want: want{"307Mi", "307Mi", "150m", "150m", "7%", "10%", "5099Mi", "2700m"}},
		"unknown size falls back to the minimum, no capacity": {s: Sizing{}, want: want{"256Mi", "256Mi", "50m", "50m", "7%", "10%", "", ""}},
		// The seed's override example.
		"seed override example": {
			k: v1alpha1.Kubelet{SystemReservedMemory: "256Mi", KubeReservedMemory: "256Mi", EvictionHardMemory: "500Mi", EvictionSoftMemory: "1Gi"},
			s: sized("2", "8Gi"), want: want{"256Mi", "256Mi", "100m", "100m", "500Mi", "1Gi", "7180Mi", "1800m"}},
		// Decimal exponents and fractional cores: 1e9 B → 953MiB → 5% = 47 → 256Mi;
		// 1e9 − 2×256Mi − 7e7 = 393129088 B = 374.9Mi → 374Mi; 0.5 cores → 25m → 50m.
		"1e9 bytes and 0.5 cores": {s: sized("0.5", "1e9"), want: want{"256Mi", "256Mi", "50m", "50m", "7%", "10%", "374Mi", "400m"}},
		// User values pass through as written; 500e6 B memory reservations.
		"user values as written": {
			k: v1alpha1.Kubelet{SystemReservedMemory: "500e6", KubeReservedMemory: "0.5Gi", SystemReservedCPU: "0.25", KubeReservedCPU: "150m"},
			s: sized("2", "8Gi"),
			// 8589934592 − 5e8 − 536870912 − 601295421.44 = 6951768258.56 B = 6629.7Mi
			want: want{"500e6", "0.5Gi", "0.25", "150m", "7%", "10%", "6629Mi", "1600m"}},
		// CPU allocatable is rounded up: 2000 − 100 − 0.5 = 1899.5m → 1900m.
		"cpu rounds up": {k: v1alpha1.Kubelet{SystemReservedCPU: "0.0005"}, s: sized("2", "8Gi"),
			want: want{"409Mi", "409Mi", "0.0005", "100m", "7%", "10%", "6800Mi", "1900m"}},
		"absolute thresholds": {k: v1alpha1.Kubelet{EvictionHardMemory: "200Mi", EvictionSoftMemory: "1e9"}, s: sized("2", "8Gi"),
			want: want{"409Mi", "409Mi", "100m", "100m", "200Mi", "1e9", "7174Mi", "1800m"}},
		"100% soft is allowed": {k: v1alpha1.Kubelet{EvictionHardMemory: "7.5%", EvictionSoftMemory: "100%"}, s: sized("2", "8Gi"),
			want: want{"409Mi", "409Mi", "100m", "100m", "7.5%", "100%", "6759Mi", "1800m"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := computeReservations(NodeGroupPath("md0"), c.k, c.s)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got := want{r.SystemMemory, r.KubeMemory, r.SystemCPU, r.KubeCPU, r.EvictionHard, r.EvictionSoft, r.AllocatableMemory, r.AllocatableCPU}
			if d := cmp.Diff(c.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestComputeReservationsRejects(t *testing.T) {
	const p = "spec.nodeGroups[md0].kubelet."
	cases := map[string]struct {
		k v1alpha1.Kubelet
		s Sizing
		// every string must appear in the error
		want []string
	}{
		"memory not a quantity":       {k: v1alpha1.Kubelet{SystemReservedMemory: "lots"}, s: sized("2", "8Gi"), want: []string{p + "systemReservedMemory", `"lots"`}},
		"reservations exceed memory":  {k: v1alpha1.Kubelet{SystemReservedMemory: "4Gi", KubeReservedMemory: "4Gi"}, s: sized("2", "8Gi"), want: []string{"spec.nodeGroups[md0].kubelet", "systemReservedMemory=4Gi", "below the node's memory"}},
		"hard eviction tips over":     {k: v1alpha1.Kubelet{SystemReservedMemory: "3Gi", KubeReservedMemory: "3Gi", EvictionHardMemory: "2Gi", EvictionSoftMemory: "3Gi"}, s: sized("2", "8Gi"), want: []string{"evictionHardMemory=2Gi", "below the node's memory (8Gi)"}},
		"defaults exceed a tiny node": {s: sized("1", "512Mi"), want: []string{"systemReservedMemory=256Mi", "below the node's memory (512Mi)"}},
		"reservations exceed cpu":     {k: v1alpha1.Kubelet{SystemReservedCPU: "1", KubeReservedCPU: "1000m"}, s: sized("2", "8Gi"), want: []string{"systemReservedCpu=1", "below the node's CPU (2)"}},
		"memory override without size": {k: v1alpha1.Kubelet{SystemReservedMemory: "256Mi"}, s: sized("2", ""),
			want: []string{p + "systemReservedMemory", "effective memory"}},
		"cpu override without size": {k: v1alpha1.Kubelet{KubeReservedCPU: "100m"}, s: sized("", "8Gi"),
			want: []string{p + "kubeReservedCpu", "effective CPU"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := computeReservations(NodeGroupPath("md0"), c.k, c.s)
			if err == nil {
				t.Fatal("accepted, want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err.Error(), w)
				}
			}
		})
	}
}

func TestKubeletExtraArgs(t *testing.T) {
	r := reservations{SystemMemory: "409Mi", KubeMemory: "409Mi", SystemCPU: "100m", KubeCPU: "100m", EvictionHard: "7%", EvictionSoft: "10%"}
	want := [][2]string{
		{"system-reserved", "memory=409Mi,cpu=100m"},
		{"kube-reserved", "memory=409Mi,cpu=100m"},
		{"eviction-hard", "memory.available<7%,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%"},
		{"eviction-soft", "memory.available<10%,nodefs.available<15%,imagefs.available<20%"},
		{"eviction-soft-grace-period", "memory.available=1m30s,nodefs.available=1m30s,imagefs.available=1m30s"},
		{"eviction-minimum-reclaim", "memory.available=256Mi"},
		{"enforce-node-allocatable", "pods"},
	}
	if d := cmp.Diff(want, r.KubeletExtraArgs()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

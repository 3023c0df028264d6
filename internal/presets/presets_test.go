package presets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPresets(t *testing.T) {
	cases := map[string][2]string{
		"c1.medium": {"2", "2Gi"}, "t1.micro": {"500m", "256Mi"}, "t1.nano": {"250m", "128Mi"},
		"m1.4xlarge": {"32", "256Gi"}, "s1.large": {"4", "8Gi"}, "medium": {"1", "1Gi"}, "2xlarge": {"8", "8Gi"},
	}
	for name, want := range cases {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]string{p.CPU.String(), p.Memory.String()}; got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	if _, err := Lookup("x9.huge"); err == nil {
		t.Error("unknown preset accepted")
	}
	if n := len(Names()); n != 47 {
		t.Errorf("%d presets, want 47 (5 series × 8 sizes + 7 aliases)", n)
	}
}

func TestContainerResources(t *testing.T) {
	p, _ := Lookup("c1.medium")
	r := ContainerResources(p.CPU, p.Memory, EphemeralStorage, 10)
	got := map[string]string{}
	for k, v := range r.Limits {
		got["limits."+string(k)] = v.String()
	}
	for k, v := range r.Requests {
		got["requests."+string(k)] = v.String()
	}
	want := map[string]string{
		"limits.cpu": "2", "limits.memory": "2Gi", "limits.ephemeral-storage": "2Gi",
		"requests.cpu": "200m", "requests.memory": "2Gi", "requests.ephemeral-storage": "53687091",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("c1.medium resources (-want +got):\n%s", d)
	}
}

// TestQuantityRatWholeNumbers holds Rat's and FloorMiB's int64
// shortcuts for whole quantities to the decimal arithmetic.

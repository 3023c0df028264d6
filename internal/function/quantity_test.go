package function

import (
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFloorMiB(t *testing.T) {
	cases := map[string]int64{"8Gi": 8192, "1e9": 953, "500e6": 476, "1Gi": 1024, "1.5Gi": 1536, "1048575": 0, "0": 0, "409.9Mi": 409}
	for in, want := range cases {
		if got := FloorMiB(resource.MustParse(in)); got != want {
			t.Errorf("FloorMiB(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestMillicores(t *testing.T) {
	cases := map[string]int64{"0.5": 500, "100m": 100, "2": 2000, "1.0001": 1001}
	for in, want := range cases {
		if got := Millicores(resource.MustParse(in)); got != want {
			t.Errorf("Millicores(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestDivideWholeBytes: the seed chart's ephemeral-storage request is
// int(limit / 40) bytes; 2Gi = 2147483648 bytes, /40 = 53687091.2.
func TestDivideWholeBytes(t *testing.T) {
	cases := []struct {
		in   string
		div  int64
		want string
	}{
		{"2Gi", 40, "53687091"},
		{"1Gi", 2, "536870912"},
		{"7", 2, "3"},
		{"1", 3, "0"},
		{"1e9", 40, "25M"},
		{"1.5", 1, "1"},
	}
	for _, c := range cases {
		got := DivideWholeBytes(resource.MustParse(c.in), c.div)
		if got.String() != c.want {
			t.Errorf("DivideWholeBytes(%s, %d) = %s, want %s", c.in, c.div, got.String(), c.want)
		}
	}
}

func TestPresets(t *testing.T) {
	cases := map[string][2]string{
		"c1.medium": {"2", "2Gi"}, "t1.micro": {"500m", "256Mi"}, "t1.nano": {"250m", "128Mi"},
		"m1.4xlarge": {"32", "256Gi"}, "s1.large": {"4", "8Gi"}, "medium": {"1", "1Gi"}, "2xlarge": {"8", "8Gi"},
	}
	for name, want := range cases {
		p, err := LookupPreset(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]string{p.CPU.String(), p.Memory.String()}; got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	if _, err := LookupPreset("x9.huge"); err == nil {
		t.Error("unknown preset accepted")
	}
	if n := len(PresetNames()); n != 47 {
		t.Errorf("%d presets, want 47 (5 series × 8 sizes + 7 aliases)", n)
	}
}

func TestContainerResources(t *testing.T) {
	p, _ := LookupPreset("c1.medium")
	r := ContainerResources(p.CPU, p.Memory, PresetEphemeralStorage, 10)
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

// TestQuantityRatWholeNumbers holds QuantityRat's and FloorMiB's int64
// shortcuts for whole quantities to the decimal arithmetic.
func TestQuantityRatWholeNumbers(t *testing.T) {
	for _, in := range []string{"0", "1", "-7", "8Gi", "1e9", "500e6", "1048575", "9223372036854775807", "1.5Gi", "100m", "1.5", "1e30", "-1.5Gi", "-2Gi"} {
		q := resource.MustParse(in)
		want := decimalRat(q)
		if got := QuantityRat(q); got.Cmp(want) != 0 {
			t.Errorf("QuantityRat(%s) = %s, want %s", in, got, want)
		}
		floor := FloorRat(new(big.Rat).Quo(want, big.NewRat(MiB, 1)))
		if got := FloorMiB(q); got != floor {
			t.Errorf("FloorMiB(%s) = %d, want %d", in, got, floor)
		}
	}
}

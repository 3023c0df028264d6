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

func TestDivideBytes(t *testing.T) {
	cases := []struct {
		in   string
		div  int64
		want string
	}{
		{"2Gi", 40, "53687091200m"}, // 51.2Mi
		{"1Gi", 2, "512Mi"},
		{"7", 2, "3500m"},
		{"1", 3, "334m"}, // rounded up, never down
		{"1e9", 40, "25e6"},
	}
	for _, c := range cases {
		got := DivideBytes(resource.MustParse(c.in), c.div)
		if got.String() != c.want {
			t.Errorf("DivideBytes(%s, %d) = %s, want %s", c.in, c.div, got.String(), c.want)
		}
	}
	if got, want := DivideBytes(resource.MustParse("2Gi"), 40), resource.MustParse("51.2Mi"); got.Cmp(want) != 0 {
		t.Errorf("2Gi/40 = %s, not equal to 51.2Mi", got.String())
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
		"requests.cpu": "200m", "requests.memory": "2Gi", "requests.ephemeral-storage": "53687091200m",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("c1.medium resources (-want +got):\n%s", d)
	}
}

// TestDivideBytesMatchesExact holds DivideBytes's int64 path to the exact
// big.Rat arithmetic it replaces for whole byte counts.
func TestDivideBytesMatchesExact(t *testing.T) {
	exact := func(q resource.Quantity, divisor int64) resource.Quantity {
		r := QuantityRat(q)
		r.Quo(r, big.NewRat(divisor, 1))
		milli := new(big.Rat).Mul(r, big.NewRat(1000, 1))
		n := new(big.Int).Div(milli.Num(), milli.Denom())
		if !milli.IsInt() {
			n.Add(n, big.NewInt(1))
		}
		if n.IsInt64() && n.Int64()%1000 == 0 {
			return *resource.NewQuantity(n.Int64()/1000, q.Format)
		}
		return *resource.NewMilliQuantity(n.Int64(), resource.DecimalSI)
	}
	for _, in := range []string{"0", "1", "7", "999", "1000", "2Gi", "1Gi", "51.2Mi", "1e9", "25e6", "3Ti", "1.5Gi", "9e15", "9223372036854775", "9223372036854776", "1.5", "100m"} {
		q := resource.MustParse(in)
		for _, d := range []int64{1, 2, 3, 7, 40, 1000, 1024, 1 << 40} {
			got, want := DivideBytes(q, d), exact(q, d)
			if got.String() != want.String() || got.Format != want.Format || got.Cmp(want) != 0 {
				t.Errorf("DivideBytes(%s, %d) = %s (%s), want %s (%s)", in, d, got.String(), got.Format, want.String(), want.Format)
			}
		}
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

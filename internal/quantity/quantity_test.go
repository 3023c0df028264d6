package quantity

import (
	"math/big"
	"testing"

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

func TestQuantityRatWholeNumbers(t *testing.T) {
	for _, in := range []string{"0", "1", "-7", "8Gi", "1e9", "500e6", "1048575", "9223372036854775807", "1.5Gi", "100m", "1.5", "1e30", "-1.5Gi", "-2Gi"} {
		q := resource.MustParse(in)
		want := decimalRat(q)
		if got := Rat(q); got.Cmp(want) != 0 {
			t.Errorf("Rat(%s) = %s, want %s", in, got, want)
		}
		floor := FloorRat(new(big.Rat).Quo(want, big.NewRat(MiB, 1)))
		if got := FloorMiB(q); got != floor {
			t.Errorf("FloorMiB(%s) = %d, want %d", in, got, floor)
		}
	}
}

// Package quantity is the arithmetic on Kubernetes quantities the functions
// share: exact rationals of resource.Quantity, MiB and millicore floors,
// division of bytes and CPU into whole units, and parsing with bounds that
// names the field and the value.
package quantity

import (
	"math/big"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// MiB is one mebibyte in bytes.
const MiB = 1 << 20

// FloorMiB returns q in whole MiB, rounded down (q is a memory quantity in
// bytes, e.g. 8Gi → 8192, 1e9 → 953).
func FloorMiB(q resource.Quantity) int64 {
	if v, ok := q.AsInt64(); ok && v >= 0 {
		return v / MiB
	}
	r := Rat(q)
	return FloorRat(r.Quo(r, big.NewRat(MiB, 1)))
}

// Rat returns q's exact value as a rational number.
func Rat(q resource.Quantity) *big.Rat {
	if v, ok := q.AsInt64(); ok {
		return new(big.Rat).SetInt64(v) // a whole number: no decimal scaling
	}
	return decimalRat(q)
}

// decimalRat is Rat of any quantity, from its decimal form.
func decimalRat(q resource.Quantity) *big.Rat {
	d := q.AsDec()
	r := new(big.Rat).SetInt(d.UnscaledBig())
	pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(int(d.Scale())))), nil))
	if d.Scale() >= 0 {
		return r.Quo(r, pow)
	}
	return r.Mul(r, pow)
}

// Millicores returns a CPU quantity in millicores, rounded up (0.5 → 500,
// "100m" → 100, 2 → 2000), as resource.Quantity.MilliValue does.
func Millicores(q resource.Quantity) int64 { return q.MilliValue() }

// FormatMiB writes a whole number of MiB as a quantity string ("409Mi").
func FormatMiB(n int64) string { return strconv.FormatInt(n, 10) + "Mi" }

// FormatMillicores writes a whole number of millicores as a quantity string
// ("1800m").
func FormatMillicores(n int64) string { return strconv.FormatInt(n, 10) + "m" }

// DivideWholeBytes returns q/divisor (q a byte quantity, divisor > 0) as a
// whole number of bytes, the fraction dropped, as the seed chart's
// resource helper writes an ephemeral-storage request: 2Gi/40 = 53687091.
// The quotient must fit an int64 (any real size does). It panics if divisor
// is not positive (a programming error).
func DivideWholeBytes(q resource.Quantity, divisor int64) resource.Quantity {
	if divisor <= 0 {
		panic("DivideWholeBytes: divisor must be positive")
	}
	if v, ok := q.AsInt64(); ok {
		return *resource.NewQuantity(v/divisor, resource.DecimalSI)
	}
	r := Rat(q)
	n := new(big.Int).Quo(r.Num(), new(big.Int).Mul(r.Denom(), big.NewInt(divisor)))
	return *resource.NewQuantity(n.Int64(), resource.DecimalSI)
}

// DivideMillicores returns the CPU quantity q/divisor rounded up to a whole
// millicore (2/10 → "200m", 250m/10 → "25m"). It panics if divisor is not
// positive (a programming error).
func DivideMillicores(q resource.Quantity, divisor int64) resource.Quantity {
	if divisor <= 0 {
		panic("DivideMillicores: divisor must be positive")
	}
	m := q.MilliValue()
	out := m / divisor
	if m%divisor != 0 {
		out++
	}
	return *resource.NewMilliQuantity(out, resource.DecimalSI)
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// ParsePositiveQuantity parses a quantity written at path ("500m", "2",
// "1Gi", "1e9"), by the rules of the tenant API (v1alpha1.ParsePositive):
// it returns a *field.Error naming path and the text when the text is too
// long or its exponent too large, is not a Kubernetes quantity, or is not
// greater than zero.
func ParsePositiveQuantity(path *field.Path, text string) (resource.Quantity, error) {
	q, err := v1alpha1.ParsePositive(path, text)
	if err != nil {
		return q, err
	}
	return q, nil
}

// ParseBoundedQuantity is ParsePositiveQuantity, also refusing a value
// above max (a quantity text such as "256" or "4Ti").
func ParseBoundedQuantity(path *field.Path, text, max string) (resource.Quantity, error) {
	q, err := v1alpha1.ParseBounded(path, text, max)
	if err != nil {
		return q, err
	}
	return q, nil
}

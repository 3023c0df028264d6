package function

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MiB is one mebibyte in bytes.
const MiB = 1 << 20

// FloorMiB returns q in whole MiB, rounded down (q is a memory quantity in
// bytes, e.g. 8Gi → 8192, 1e9 → 953).
func FloorMiB(q resource.Quantity) int64 {
	if v, ok := q.AsInt64(); ok && v >= 0 {
		return v / MiB
	}
	r := QuantityRat(q)
	return FloorRat(r.Quo(r, big.NewRat(MiB, 1)))
}

// QuantityRat returns q's exact value as a rational number.
func QuantityRat(q resource.Quantity) *big.Rat {
	if v, ok := q.AsInt64(); ok {
		return new(big.Rat).SetInt64(v) // a whole number: no decimal scaling
	}
	return decimalRat(q)
}

// decimalRat is QuantityRat of any quantity, from its decimal form.
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
	r := QuantityRat(q)
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

// ParsePositiveQuantity parses a quantity the user wrote at path ("500m",
// "2", "1Gi", "1e9"). It returns a *field.Error naming path and the text
// when the text is out of range (see QuantityInRange), is not a well-formed
// Kubernetes quantity, or is not greater than zero.
func ParsePositiveQuantity(path *field.Path, text string) (resource.Quantity, error) {
	if !QuantityInRange(text) {
		return resource.Quantity{}, field.Invalid(path, text, fmt.Sprintf("out of range: at most %d characters and a decimal exponent of at most %d", MaxQuantityLength, MaxQuantityExponent))
	}
	v, err := resource.ParseQuantity(text)
	if err != nil {
		return resource.Quantity{}, field.Invalid(path, text, "must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e9")
	}
	if v.Sign() <= 0 {
		return resource.Quantity{}, field.Invalid(path, text, "must be greater than zero")
	}
	return v, nil
}

// Bounds on user-written quantity text. A quantity such as "1e10000000"
// parses, but exact arithmetic on it takes seconds to minutes (10^scale as a
// big integer); no real node or component size needs more than this.
const (
	MaxQuantityLength   = 64
	MaxQuantityExponent = 30
)

// QuantityInRange reports whether a quantity's text is at most
// MaxQuantityLength characters and its decimal exponent (after e or E, if
// any) is within ±MaxQuantityExponent, so arithmetic on it stays cheap.
func QuantityInRange(s string) bool {
	if len(s) > MaxQuantityLength {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 || i == len(s)-1 {
		return true // no exponent, or the SI suffix E (exa)
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil {
		return true // not an exponent: ParseQuantity decides
	}
	return exp >= -MaxQuantityExponent && exp <= MaxQuantityExponent
}

// ParseBoundedQuantity is ParsePositiveQuantity, also refusing a value
// above max (a quantity text such as "256" or "4Ti"; the XRD's bound).
func ParseBoundedQuantity(path *field.Path, text, max string) (resource.Quantity, error) {
	v, err := ParsePositiveQuantity(path, text)
	if err != nil {
		return v, err
	}
	if v.Cmp(resource.MustParse(max)) > 0 {
		return resource.Quantity{}, field.Invalid(path, text, "must be at most "+max)
	}
	return v, nil
}

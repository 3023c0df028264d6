package quantity

import (
	"math/big"
)

// FloorRat returns the largest integer not above r.
func FloorRat(r *big.Rat) int64 {
	n := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floors for a positive denominator
	return n.Int64()
}

// CeilRat returns the smallest integer not below r.
func CeilRat(r *big.Rat) int64 {
	n := new(big.Int).Div(r.Num(), r.Denom())
	if !r.IsInt() {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64()
}

package function

import (
	"encoding/hex"

	"github.com/tenantkube/tenantkube/internal/function/wire"
)

// CanonicalHash returns the SHA-256, as lower-case hex, of v's canonical
// JSON: encoding/json's output for v with every null member of every object
// dropped and object keys sorted (the value encoding/json decodes that
// output into, encoded again). It returns an error when v does not marshal.
func CanonicalHash(v any) (string, error) {
	var sum string
	err := wire.WithJSON(v, func(raw []byte) error {
		s, err := wire.CanonicalSHA256(raw)
		if err != nil {
			return err
		}
		sum = hex.EncodeToString(s[:])
		return nil
	})
	return sum, err
}

// JSON returns json.Marshal(v): object keys sorted, so the same value always
// gives the same bytes.
func JSON(v any) ([]byte, error) { return wire.MarshalJSON(v) }

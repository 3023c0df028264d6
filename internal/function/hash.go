package function

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// CanonicalHash returns the SHA-256, as lower-case hex, of v's canonical
// JSON: encoding/json's output for v with every null member of every object
// dropped and object keys sorted (the value encoding/json decodes that
// output into, encoded again). It returns an error when v does not marshal.
func CanonicalHash(v any) (string, error) {
	var decoded any
	if err := jsonRoundTrip(v, &decoded); err != nil {
		return "", err
	}
	dropNulls(decoded)
	raw, err := json.Marshal(decoded)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// JSON returns json.Marshal(v): object keys sorted, so the same value always
// gives the same bytes.
func JSON(v any) ([]byte, error) { return json.Marshal(v) }

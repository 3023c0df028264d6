package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantity is a Kubernetes quantity exactly as the user wrote it: a string
// such as "500m", "1Gi", "0.5", "1e9", or a bare JSON number such as 4 or
// 1e9 (the seed chart's values accept both). It is kept verbatim so values
// the user supplies are passed through as written; Parse turns it into a
// resource.Quantity for arithmetic.
//
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:Pattern=`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
type Quantity string

// UnmarshalJSON accepts a JSON string or a JSON number and stores its text.
// It returns an error for any other JSON value (object, array, bool).
func (q *Quantity) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = Quantity(s)
	case bytes.Equal(b, []byte("null")):
		*q = ""
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*q = Quantity(b)
	default:
		return fmt.Errorf("quantity must be a string or a number, not %s", b)
	}
	return nil
}

// IsSet reports whether the quantity was given (non-empty).
func (q Quantity) IsSet() bool { return q != "" }

// Parse returns the quantity as a resource.Quantity. It returns an error
// when the text is not a well-formed Kubernetes quantity.
func (q Quantity) Parse() (resource.Quantity, error) {
	return resource.ParseQuantity(string(q))
}

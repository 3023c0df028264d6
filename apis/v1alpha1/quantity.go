package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"

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
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
type Quantity string

// UnmarshalJSON accepts a JSON string or a JSON number and stores its text.
// It returns an error for any other JSON value (object, array, bool).
func (q *Quantity) UnmarshalJSON(b []byte) error {
	s, err := stringOrNumber(b)
	*q = Quantity(s)
	return err
}

// stringOrNumber returns the text of a JSON string or number ("" for null).
// For any other JSON value (object, array, bool) it returns a
// *json.UnmarshalTypeError, which encoding/json completes with the field's
// path.
func stringOrNumber(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && plainASCII(b[1:len(b)-1]):
		// A string of printable ASCII without escapes (any quantity) is
		// its own text: what json.Unmarshal gives, without its scan.
		return string(b[1 : len(b)-1]), nil
	case len(b) > 0 && b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	case bytes.Equal(b, []byte("null")):
		return "", nil
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		return string(b), nil
	}
	return "", &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[string]()}
}

// plainASCII reports whether b is all printable ASCII other than '"' and
// '\\': JSON string content that decodes to itself.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// jsonKind names the kind of a JSON value ("object", "array", "bool").
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "value"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return "value"
}

// Threshold is a kubelet memory eviction threshold as the user wrote it: a
// percentage of the node's memory ("7%") or an absolute quantity ("500Mi",
// 1e9), a string or a bare JSON number.
//
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?%|(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$`
type Threshold string

// UnmarshalJSON accepts a JSON string or a JSON number and stores its text.
// It returns an error for any other JSON value (object, array, bool).
func (t *Threshold) UnmarshalJSON(b []byte) error {
	s, err := stringOrNumber(b)
	*t = Threshold(s)
	return err
}

// IsSet reports whether the quantity was given (non-empty).
func (q Quantity) IsSet() bool { return q != "" }

// Parse returns the quantity as a resource.Quantity. It returns an error
// when the text is not a well-formed Kubernetes quantity.
func (q Quantity) Parse() (resource.Quantity, error) {
	return resource.ParseQuantity(string(q))
}

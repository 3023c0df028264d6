package wire

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// MarshalJSON returns json.Marshal(v): for a JSON-like value (see
// appendJSON) the same bytes written without reflection, else what
// json.Marshal returns.
func MarshalJSON(v any) ([]byte, error) {
	if b, ok := appendJSON(nil, v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// appendJSON appends the JSON encoding of v, a JSON-like value as found in
// unstructured objects, structpb.AsMap and JSON decoded with UseNumber
// (nil, bool, string, float64, int64, int, json.Number, map[string]any,
// []any), to b: the same bytes encoding/json writes (keys sorted, numbers
// and strings formatted the same way). It reports false for any other
// type, a NaN or infinite number or an invalid json.Number, so the caller
// can fall back to encoding/json. It avoids encoding/json's reflection and
// reflect-based key sorting (MarshalJSON, DecodeSpec, StructInto).
func appendJSON(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return appendJSONString(b, x), true
	case float64:
		return appendJSONFloat(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case json.Number:
		if x == "" {
			return append(b, '0'), true // as encoding/json writes it
		}
		if !validJSONNumber(string(x)) {
			return b, false // encoding/json's error
		}
		return append(b, x...), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSON(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	default:
		return b, false
	}
}

// validJSONNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(s string) bool {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i + 1)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(s)
}

// appendJSONFloat formats f as encoding/json does for a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendJSONString quotes s as a JSON string exactly as encoding/json
// does (with its default HTML escaping): ", \\ and the control characters
// escaped (\\b, \\f, \\n, \\r and \\t short), <, > and & as \\u003c, \\u003e
// and \\u0026, U+2028 and U+2029 as \\u2028 and \\u2029, and each byte of
// invalid UTF-8 as \\ufffd.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		// At most utf8.UTFMax bytes converted: no allocation for []byte.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendValueJSON appends the JSON encoding of v to b: the bytes appendJSON
// writes for v.AsInterface(), without building that map[string]any first.
// Like AsInterface it writes a NaN or infinite number as the string "NaN",
// "Infinity" or "-Infinity", and a nil value as null.
func appendValueJSON(b []byte, v *structpb.Value) []byte {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		if k != nil {
			f := k.NumberValue
			switch {
			case math.IsNaN(f):
				return append(b, `"NaN"`...)
			case math.IsInf(f, 1):
				return append(b, `"Infinity"`...)
			case math.IsInf(f, -1):
				return append(b, `"-Infinity"`...)
			}
			b, _ = appendJSONFloat(b, f)
			return b
		}
	case *structpb.Value_StringValue:
		if k != nil {
			return appendJSONString(b, k.StringValue)
		}
	case *structpb.Value_BoolValue:
		if k != nil {
			return strconv.AppendBool(b, k.BoolValue)
		}
	case *structpb.Value_StructValue:
		if k != nil {
			return appendStructJSON(b, k.StructValue, nil)
		}
	case *structpb.Value_ListValue:
		if k != nil {
			b = append(b, '[')
			for i, e := range k.ListValue.GetValues() {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendValueJSON(b, e)
			}
			return append(b, ']')
		}
	}
	return append(b, "null"...)
}

// appendStructJSON appends the JSON encoding of s to b as appendValueJSON
// does (a nil s is {}, as AsMap makes it), with only the members whose key
// keep accepts (every member when keep is nil).
func appendStructJSON(b []byte, s *structpb.Struct, keep func(key string) bool) []byte {
	f := s.GetFields()
	keys := make([]string, 0, len(f))
	for k := range f {
		if keep == nil || keep(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendValueJSON(b, f[k])
	}
	return append(b, '}')
}

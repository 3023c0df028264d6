package function

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// jsonToStruct parses raw, one JSON object as encoding/json writes it,
// straight into a structpb.Struct, without protojson's reflection and
// without an intermediate map[string]any. It gives exactly what
// protojson.Unmarshal followed by pruneNulls gives: numbers are float64,
// and a null member of an object is dropped wherever pruneNulls would drop
// it (in objects reached through objects and through one list level; a
// list nested directly in a list keeps its objects as they are). It returns
// an error for anything that is not a well-formed JSON object.
func jsonToStruct(raw []byte) (*structpb.Struct, error) {
	p := &jsonParser{buf: raw}
	p.space()
	if p.pos >= len(p.buf) || p.buf[p.pos] != '{' {
		return nil, p.errorf("want a JSON object")
	}
	s, err := p.object(true)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.buf) {
		return nil, p.errorf("trailing data")
	}
	return s, nil
}

type jsonParser struct {
	buf []byte
	pos int
}

// maxJSONDepth bounds nesting as protojson does.
const maxJSONDepth = 10000

var errJSONDepth = errors.New("exceeded max recursion depth")

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses any JSON value; prune says whether null members of objects
// inside it are dropped.
func (p *jsonParser) value(prune bool, depth int) (*structpb.Value, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	p.space()
	if p.pos >= len(p.buf) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == '{':
		s, err := p.object(prune)
		if err != nil {
			return nil, err
		}
		return &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: s}}, nil
	case c == '[':
		return p.list(prune, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &structpb.Value{Kind: &structpb.Value_StringValue{StringValue: s}}, nil
	case c == 't':
		return p.literal("true", &structpb.Value{Kind: &structpb.Value_BoolValue{BoolValue: true}})
	case c == 'f':
		return p.literal("false", &structpb.Value{Kind: &structpb.Value_BoolValue{BoolValue: false}})
	case c == 'n':
		return p.literal("null", &structpb.Value{Kind: &structpb.Value_NullValue{}})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *jsonParser) object(prune bool) (*structpb.Struct, error) {
	return p.objectAt(prune, 0)
}

func (p *jsonParser) objectAt(prune bool, depth int) (*structpb.Struct, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	p.pos++ // '{'
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	p.space()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		return s, nil
	}
	for {
		p.space()
		if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
			return nil, p.errorf("want an object key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := s.Fields[k]; dup {
			return nil, p.errorf("duplicate field %q", k)
		}
		p.space()
		if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
			return nil, p.errorf("want ':'")
		}
		p.pos++
		var v *structpb.Value
		p.space()
		if p.pos < len(p.buf) && p.buf[p.pos] == '{' {
			var c *structpb.Struct
			if c, err = p.objectAt(prune, depth+1); err == nil {
				v = &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: c}}
			}
		} else {
			v, err = p.value(prune, depth+1)
		}
		if err != nil {
			return nil, err
		}
		if _, null := v.Kind.(*structpb.Value_NullValue); !(null && prune) {
			s.Fields[k] = v
		}
		p.space()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unterminated object")
		}
		switch p.buf[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return s, nil
		default:
			return nil, p.errorf("want ',' or '}'")
		}
	}
}

// list parses a JSON array. Its objects keep prune; a list nested in it
// does not prune (pruneNulls does not descend into nested lists).
func (p *jsonParser) list(prune bool, depth int) (*structpb.Value, error) {
	p.pos++ // '['
	l := &structpb.ListValue{}
	p.space()
	if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
		p.pos++
		return &structpb.Value{Kind: &structpb.Value_ListValue{ListValue: l}}, nil
	}
	for {
		p.space()
		var v *structpb.Value
		var err error
		if p.pos < len(p.buf) && p.buf[p.pos] == '{' {
			var c *structpb.Struct
			if c, err = p.objectAt(prune, depth+1); err == nil {
				v = &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: c}}
			}
		} else {
			v, err = p.value(false, depth+1)
		}
		if err != nil {
			return nil, err
		}
		l.Values = append(l.Values, v)
		p.space()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unterminated array")
		}
		switch p.buf[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return &structpb.Value{Kind: &structpb.Value_ListValue{ListValue: l}}, nil
		default:
			return nil, p.errorf("want ',' or ']'")
		}
	}
}

func (p *jsonParser) literal(word string, v *structpb.Value) (*structpb.Value, error) {
	if len(p.buf)-p.pos < len(word) || string(p.buf[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("invalid literal")
	}
	p.pos += len(word)
	return v, nil
}

// number parses a JSON number as float64, as protojson does for a
// google.protobuf.Value.
func (p *jsonParser) number() (*structpb.Value, error) {
	start := p.pos
	if p.buf[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.buf) && p.buf[p.pos] >= '0' && p.buf[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if digits() == 0 || (p.buf[intStart] == '0' && p.pos-intStart > 1) {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.buf) && p.buf[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.pos < len(p.buf) && (p.buf[p.pos] == 'e' || p.buf[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.buf) && (p.buf[p.pos] == '+' || p.buf[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.buf[start:p.pos]), 64)
	if err != nil {
		return nil, p.errorf("invalid number %s", p.buf[start:p.pos])
	}
	return &structpb.Value{Kind: &structpb.Value_NumberValue{NumberValue: f}}, nil
}

// str parses a JSON string. Strings without escapes (almost all) are one
// allocation.
func (p *jsonParser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	for p.pos < len(p.buf) {
		c := p.buf[p.pos]
		switch {
		case c == '"':
			s := p.buf[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			return string(s), nil
		case c == '\\':
			return p.strEscaped(start)
		case c < 0x20:
			return "", p.errorf("control character in string")
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) strEscaped(start int) (string, error) {
	out := append(make([]byte, 0, p.pos-start+16), p.buf[start:p.pos]...)
	for p.pos < len(p.buf) {
		c := p.buf[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(out) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.buf) {
			return "", p.errorf("unterminated string")
		}
		p.pos += 2
		switch e := p.buf[p.pos-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.pos+1 < len(p.buf) && p.buf[p.pos] == '\\' && p.buf[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					var ok2 bool
					if r2, ok2 = p.hex4(); !ok2 {
						return "", p.errorf("invalid \\u escape")
					}
					if utf16.DecodeRune(r, r2) == utf8.RuneError {
						p.pos, r2 = save, -1
					}
				}
				if r2 < 0 {
					return "", p.errorf("invalid surrogate in \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.errorf("invalid escape \\%c", e)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.buf)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.buf[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

package wire

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
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
//
// It allocates little per value: strings without escapes are substrings of
// one copy of raw, each value is allocated together with its kind wrapper,
// and each map and list is allocated once at its final size.
func jsonToStruct(raw []byte) (*structpb.Struct, error) {
	s, _, err := jsonToStructMember(raw, "", "")
	return s, err
}

// jsonToStructMember is jsonToStruct that also returns the JSON text of the
// value of raw's top-level member key (nil when there is none, or key is
// ""), a slice of raw, and leaves raw's top-level member drop (none when
// "") out of the Struct: checked as JSON, not built.
func jsonToStructMember(raw []byte, key, drop string) (*structpb.Struct, []byte, error) {
	p := jsonParsers.Get().(*jsonParser)
	defer p.release()
	p.buf, p.memberKey, p.dropKey = raw, key, drop
	s, err := p.parse()
	return s, p.member, err
}

// jsonToValue parses raw, one JSON value, into a structpb.Value with
// nothing dropped: what structpb.NewValue makes of raw decoded into an any
// by encoding/json.
func jsonToValue(raw []byte) (*structpb.Value, error) {
	p := jsonParsers.Get().(*jsonParser)
	defer p.release()
	p.buf = raw
	p.text = string(raw)
	v, err := p.value(false, 0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.buf) {
		return nil, p.errorf("trailing data")
	}
	return v, nil
}

// jsonParsers are parsers reused for their stack.
var jsonParsers = sync.Pool{New: func() any { return new(jsonParser) }}

// release returns p to jsonParsers, emptied (its stack keeps its capacity
// but no values).
func (p *jsonParser) release() {
	stack := p.stack[:cap(p.stack)]
	clear(stack)
	*p = jsonParser{stack: stack[:0], scratch: p.scratch[:0]}
	jsonParsers.Put(p)
}

func (p *jsonParser) parse() (*structpb.Struct, error) {
	p.space()
	if p.pos >= len(p.buf) || p.buf[p.pos] != '{' {
		return nil, p.errorf("want a JSON object")
	}
	p.text = string(p.buf)
	s := &structpb.Struct{}
	if err := p.object(s, true, 0); err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.buf) {
		return nil, p.errorf("trailing data")
	}
	return s, nil
}

// jsonParser is the state of one jsonToStruct (or jsonToStructMember) call.
type jsonParser struct {
	buf  []byte
	text string // buf as a string: unescaped strings are substrings of it
	pos  int

	// stack holds the members of the objects and the items of the lists
	// being parsed, innermost last, until each is complete and allocated
	// at its final size.
	stack []member

	// memberKey names a top-level member whose JSON text parse records in
	// member.
	memberKey string
	member    []byte

	// dropKey names a top-level member parse leaves out of the Struct
	// without building it; dropped records that it was seen.
	dropKey string
	dropped bool

	// scratch is where strEscaped decodes a string.
	scratch []byte
}

// member is an object member (or, with no key, a list item) being parsed.
type member struct {
	key string
	val *structpb.Value
}

// The nodes allocate a structpb.Value together with its kind wrapper (and,
// for objects and lists, the message it wraps): one allocation instead of
// two or three. (Allocating nodes in blocks of many was measured slower:
// it costs more GC work than the allocations it saves.)
type (
	stringNode struct {
		v structpb.Value
		k structpb.Value_StringValue
	}
	numberNode struct {
		v structpb.Value
		k structpb.Value_NumberValue
	}
	boolNode struct {
		v structpb.Value
		k structpb.Value_BoolValue
	}
	structNode struct {
		v structpb.Value
		k structpb.Value_StructValue
		s structpb.Struct
	}
	listNode struct {
		v structpb.Value
		k structpb.Value_ListValue
		l structpb.ListValue
	}
)

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
		n := new(structNode)
		if err := p.object(&n.s, prune, depth); err != nil {
			return nil, err
		}
		n.k.StructValue = &n.s
		n.v.Kind = &n.k
		return &n.v, nil
	case c == '[':
		n := new(listNode)
		if err := p.list(&n.l, prune, depth); err != nil {
			return nil, err
		}
		n.k.ListValue = &n.l
		n.v.Kind = &n.k
		return &n.v, nil
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n := new(stringNode)
		n.k.StringValue = s
		n.v.Kind = &n.k
		return &n.v, nil
	case c == 't' || c == 'f':
		b := c == 't'
		word := "false"
		if b {
			word = "true"
		}
		if err := p.literal(word); err != nil {
			return nil, err
		}
		n := new(boolNode)
		n.k.BoolValue = b
		n.v.Kind = &n.k
		return &n.v, nil
	case c == 'n':
		if err := p.literal("null"); err != nil {
			return nil, err
		}
		return &structpb.Value{Kind: &structpb.Value_NullValue{}}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := p.number()
		if err != nil {
			return nil, err
		}
		n := new(numberNode)
		n.k.NumberValue = f
		n.v.Kind = &n.k
		return &n.v, nil
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

// object parses a JSON object into s; prune drops its null members (and
// those of the objects inside it, as value says).
func (p *jsonParser) object(s *structpb.Struct, prune bool, depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	p.pos++ // '{'
	base := len(p.stack)
	nulls := 0 // members pruned: the map is sized without them
	p.space()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		s.Fields = map[string]*structpb.Value{}
		return nil
	}
	for more := true; more; {
		k, err := p.objectKey()
		if err != nil {
			return err
		}
		start := p.pos
		if depth == 0 && p.dropKey != "" && k == p.dropKey {
			if p.dropped {
				return p.errorf("duplicate field %q", k)
			}
			p.dropped = true
			if err := p.skip(depth + 1); err != nil {
				return err
			}
		} else {
			v, err := p.value(prune, depth+1)
			if err != nil {
				return err
			}
			if depth == 0 && p.memberKey != "" && k == p.memberKey {
				p.member = p.buf[start:p.pos]
			}
			p.stack = append(p.stack, member{key: k, val: v})
			if _, null := v.Kind.(*structpb.Value_NullValue); null && prune {
				nulls++
			}
		}
		if more, err = p.more('}', "object"); err != nil {
			return err
		}
	}
	members := p.stack[base:]
	s.Fields = make(map[string]*structpb.Value, len(members)-nulls)
	kept, dup := 0, false
	for _, m := range members {
		// A key repeating an earlier member that was kept is an error, as
		// in protojson; a pruned null member is never kept. Repeats among
		// kept members show in the map's size.
		if _, null := m.val.Kind.(*structpb.Value_NullValue); null && prune {
			_, earlier := s.Fields[m.key]
			dup = dup || earlier
			continue
		}
		s.Fields[m.key] = m.val
		kept++
	}
	if dup || len(s.Fields) < kept {
		return p.duplicate(members, prune)
	}
	p.stack = p.stack[:base]
	return nil
}

// objectKey parses an object member's key and the ':' after it, and the
// space up to its value.
func (p *jsonParser) objectKey() (string, error) {
	p.space()
	if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
		return "", p.errorf("want an object key")
	}
	k, err := p.str()
	if err != nil {
		return "", err
	}
	p.space()
	if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
		return "", p.errorf("want ':'")
	}
	p.pos++
	p.space()
	return k, nil
}

// more parses what follows an object member or list item: ',' (more
// follows: true) or the closing end ('}' or ']'; false), of an object or
// an array as kind says.
func (p *jsonParser) more(end byte, kind string) (bool, error) {
	p.space()
	switch {
	case p.pos >= len(p.buf):
		return false, p.errorf("unterminated %s", kind)
	case p.buf[p.pos] == ',':
		p.pos++
		return true, nil
	case p.buf[p.pos] == end:
		p.pos++
		return false, nil
	}
	return false, p.errorf("want ',' or '%c'", end)
}

// skip parses the JSON value at p.pos, with the checks value makes but
// without building it (and without looking for repeated keys inside it).
func (p *jsonParser) skip(depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	p.space()
	if p.pos >= len(p.buf) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == '{' || c == '[':
		end, kind := byte('}'), "object"
		if c == '[' {
			end, kind = ']', "array"
		}
		p.pos++
		p.space()
		if p.pos < len(p.buf) && p.buf[p.pos] == end {
			p.pos++
			return nil
		}
		for more := true; more; {
			if c == '{' {
				if _, err := p.objectKey(); err != nil {
					return err
				}
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			var err error
			if more, err = p.more(end, kind); err != nil {
				return err
			}
		}
		return nil
	case c == '"':
		_, err := p.str()
		return err
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := p.number()
		return err
	default:
		return p.errorf("unexpected character %q", c)
	}
}

// duplicate returns the error for the first key of members that repeats an
// earlier member that was kept.
func (p *jsonParser) duplicate(members []member, prune bool) error {
	kept := make(map[string]bool, len(members))
	for _, m := range members {
		if kept[m.key] {
			return p.errorf("duplicate field %q", m.key)
		}
		if _, null := m.val.Kind.(*structpb.Value_NullValue); !(null && prune) {
			kept[m.key] = true
		}
	}
	return p.errorf("duplicate field")
}

// list parses a JSON array into l. Its objects keep prune; a list nested in
// it does not prune (pruneNulls does not descend into nested lists).
func (p *jsonParser) list(l *structpb.ListValue, prune bool, depth int) error {
	p.pos++ // '['
	base := len(p.stack)
	p.space()
	if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
		p.pos++
		return nil
	}
	for more := true; more; {
		p.space()
		itemPrune := prune && p.pos < len(p.buf) && p.buf[p.pos] == '{'
		v, err := p.value(itemPrune, depth+1)
		if err != nil {
			return err
		}
		p.stack = append(p.stack, member{val: v})
		if more, err = p.more(']', "array"); err != nil {
			return err
		}
	}
	items := p.stack[base:]
	l.Values = make([]*structpb.Value, len(items))
	for i, m := range items {
		l.Values[i] = m.val
	}
	p.stack = p.stack[:base]
	return nil
}

func (p *jsonParser) literal(word string) error {
	if len(p.buf)-p.pos < len(word) || string(p.buf[p.pos:p.pos+len(word)]) != word {
		return p.errorf("invalid literal")
	}
	p.pos += len(word)
	return nil
}

// number parses a JSON number as float64, as protojson does for a
// google.protobuf.Value.
func (p *jsonParser) number() (float64, error) {
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
		return 0, p.errorf("invalid number")
	}
	if p.pos < len(p.buf) && p.buf[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return 0, p.errorf("invalid number")
		}
	}
	if p.pos < len(p.buf) && (p.buf[p.pos] == 'e' || p.buf[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.buf) && (p.buf[p.pos] == '+' || p.buf[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return 0, p.errorf("invalid number")
		}
	}
	if digits := p.buf[intStart:p.pos]; len(digits) <= 15 && isDigits(digits) {
		// An integer of up to 15 digits is exact as a float64: the value
		// ParseFloat gives (-0 included), without its general parsing.
		var n int64
		for _, d := range digits {
			n = n*10 + int64(d-'0')
		}
		f := float64(n)
		if intStart > start { // '-'
			f = -f
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(p.text[start:p.pos], 64)
	if err != nil {
		return 0, p.errorf("invalid number %s", p.buf[start:p.pos])
	}
	return f, nil
}

// isDigits reports whether b is all ASCII digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// str parses a JSON string. A string without escapes (almost all) is a
// substring of p.text, without an allocation of its own.
func (p *jsonParser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	ascii := true // utf8.Valid is needed only past ASCII
	buf := p.buf
	for i := p.pos; i < len(buf); i++ {
		c := buf[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c >= utf8.RuneSelf {
				ascii = false
			}
			continue
		}
		p.pos = i
		switch {
		case c == '"':
			p.pos++
			if !ascii && !utf8.Valid(buf[start:i]) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			return p.text[start:i], nil
		case c == '\\':
			return p.strEscaped(start)
		default:
			return "", p.errorf("control character in string")
		}
	}
	p.pos = len(buf)
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) strEscaped(start int) (string, error) {
	// Decoded into the parser's scratch buffer: one allocation, the string.
	out := append(p.scratch[:0], p.buf[start:p.pos]...)
	defer func() { p.scratch = out[:0] }()
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
		e := p.buf[p.pos-1]
		if d, ok := simpleEscape(e); ok {
			out = append(out, d)
			continue
		}
		if e != 'u' {
			return "", p.errorf("invalid escape \\%c", e)
		}
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
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	r := hex4(p.buf[p.pos:])
	if r < 0 {
		return 0, false
	}
	p.pos += 4
	return r, true
}

// simpleEscape returns the byte a two-character JSON escape \e stands
// for (\", \\, \/, \b, \f, \n, \r, \t), and false for any other e
// (\u, which the caller decodes, or an invalid escape). Both JSON scanners
// (jsonParser and canonicalizer) decode escapes through it.
func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// hex4 returns the value of the four hex digits b starts with, or -1 when
// it does not start with four hex digits.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return -1
		}
	}
	return r
}

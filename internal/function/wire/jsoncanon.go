package wire

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendCanonicalJSON appends to dst the canonical form of raw, one JSON
// value (typically encoding/json's output for a typed object): exactly the
// bytes encoding/json.Marshal writes for the value encoding/json.Unmarshal
// decodes raw into (an any), after deleting every null member of every
// object at any depth (null list items stay). So object keys are sorted,
// a repeated key keeps its last value, numbers are re-formatted as
// float64, and strings are re-escaped as encoding/json escapes them. It
// works on the bytes directly, without building the map[string]any. It
// returns an error when raw is not valid JSON, or when a number does not
// fit a float64, as encoding/json.Unmarshal does.
func AppendCanonicalJSON(dst, raw []byte) ([]byte, error) {
	c := &canonicalizer{in: raw, out: dst}
	if err := c.run(); err != nil {
		return dst, err
	}
	return c.out, nil
}

// CanonicalSHA256 returns the SHA-256 of raw's canonical form (see
// AppendCanonicalJSON), or the error AppendCanonicalJSON returns. Its
// working buffers are reused across calls.
func CanonicalSHA256(raw []byte) ([sha256.Size]byte, error) {
	c := canonicalizers.Get().(*canonicalizer)
	defer func() {
		if cap(c.out)+cap(c.tmp) <= maxPooledJSON {
			clear(c.members[:cap(c.members)]) // keys point into the input
			*c = canonicalizer{out: c.out[:0], tmp: c.tmp[:0], members: c.members[:0], scratch: c.scratch[:0]}
			canonicalizers.Put(c)
		}
	}()
	c.in = raw
	if err := c.run(); err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(c.out), nil
}

// canonicalizers are the canonicalizers CanonicalSHA256 reuses.
var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

// run canonicalizes c.in, one JSON value, into c.out.
func (c *canonicalizer) run() error {
	c.space()
	if _, err := c.value(0); err != nil {
		return err
	}
	c.space()
	if c.pos != len(c.in) {
		return c.errorf("trailing data")
	}
	return nil
}

// canonicalizer is the state of one AppendCanonicalJSON call.
type canonicalizer struct {
	in  []byte
	pos int
	out []byte

	// members holds the members of the objects being canonicalized,
	// innermost last; tmp is scratch space for reordering them, and
	// scratch for decoding a string value.
	members []canonMember
	tmp     []byte
	scratch []byte
}

// canonMember is one member of an object: its decoded key, and where its
// canonical `"key":value` is in out (start == end for a null member, which
// is not written).
type canonMember struct {
	key        []byte
	start, end int
}

func (c *canonicalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", c.pos, fmt.Sprintf(format, args...))
}

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value canonicalizes the JSON value at c.pos into c.out and reports
// whether it was null.
func (c *canonicalizer) value(depth int) (null bool, err error) {
	if depth > maxJSONDepth {
		return false, errJSONDepth
	}
	if c.pos >= len(c.in) {
		return false, c.errorf("unexpected end of input")
	}
	switch b := c.in[c.pos]; {
	case b == '{':
		return false, c.object(depth)
	case b == '[':
		return false, c.list(depth)
	case b == '"':
		start := c.pos
		s, plain, err := c.str(c.scratch[:0])
		if err != nil {
			return false, err
		}
		c.appendString(s, plain, c.in[start:c.pos])
		if !plain {
			c.scratch = s[:0]
		}
		return false, nil
	case b == 't':
		return false, c.literal("true")
	case b == 'f':
		return false, c.literal("false")
	case b == 'n':
		return true, c.literal("null")
	case b == '-' || (b >= '0' && b <= '9'):
		return false, c.number()
	default:
		return false, c.errorf("unexpected character %q", b)
	}
}

func (c *canonicalizer) literal(word string) error {
	if len(c.in)-c.pos < len(word) || string(c.in[c.pos:c.pos+len(word)]) != word {
		return c.errorf("invalid literal")
	}
	c.pos += len(word)
	c.out = append(c.out, word...)
	return nil
}

// object canonicalizes a JSON object: its members, nulls left out, in key
// order, each key once with its last value.
func (c *canonicalizer) object(depth int) error {
	c.pos++ // '{'
	c.out = append(c.out, '{')
	body := len(c.out)
	base := len(c.members)
	inOrder := true // keys strictly ascending so far
	written := 0
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return nil
	}
	for {
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.errorf("want an object key")
		}
		keyStart := c.pos
		key, plain, err := c.str(nil) // a key is kept: never in scratch
		if err != nil {
			return err
		}
		tok := c.in[keyStart:c.pos]
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.errorf("want ':'")
		}
		c.pos++
		c.space()
		mark := len(c.out)
		if written > 0 {
			c.out = append(c.out, ',')
		}
		start := len(c.out)
		c.appendString(key, plain, tok)
		c.out = append(c.out, ':')
		null, err := c.value(depth + 1)
		if err != nil {
			return err
		}
		m := canonMember{key: key, start: start, end: len(c.out)}
		if null {
			c.out = c.out[:mark]
			m.end = m.start
		} else {
			written++
		}
		if n := len(c.members); n > base && bytes.Compare(c.members[n-1].key, key) >= 0 {
			inOrder = false
		}
		c.members = append(c.members, m)
		c.space()
		if c.pos >= len(c.in) {
			return c.errorf("unterminated object")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			continue
		case '}':
			c.pos++
		default:
			return c.errorf("want ',' or '}'")
		}
		break
	}
	if !inOrder {
		c.reorder(body, c.members[base:])
	}
	c.members = c.members[:base]
	c.out = append(c.out, '}')
	return nil
}

// reorder rewrites the members written from out[body:] in key order, each
// key once with its last value (dropped when that value is null).
func (c *canonicalizer) reorder(body int, members []canonMember) {
	c.tmp = append(c.tmp[:0], c.out[body:]...)
	slices.SortStableFunc(members, func(a, b canonMember) int { return bytes.Compare(a.key, b.key) })
	c.out = c.out[:body]
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue // a later member of the same key wins
		}
		if m.start == m.end {
			continue // null
		}
		if len(c.out) > body {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.tmp[m.start-body:m.end-body]...)
	}
}

// list canonicalizes a JSON array: its items in order, nulls kept.
func (c *canonicalizer) list(depth int) error {
	c.pos++ // '['
	c.out = append(c.out, '[')
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.space()
		if _, err := c.value(depth + 1); err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.in) {
			return c.errorf("unterminated array")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
			continue
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.errorf("want ',' or ']'")
		}
	}
}

// number canonicalizes a JSON number as encoding/json re-encodes the
// float64 it decodes to. An integer of up to 15 digits is its own canonical
// form (a float64 holds it exactly, and encoding/json writes it without
// exponent or fraction).
func (c *canonicalizer) number() error {
	start := c.pos
	if c.in[c.pos] == '-' {
		c.pos++
	}
	intStart := c.pos
	c.digits()
	intDigits := c.pos - intStart
	if intDigits == 0 || (c.in[intStart] == '0' && intDigits > 1) {
		return c.errorf("invalid number")
	}
	simple := true
	if c.pos < len(c.in) && c.in[c.pos] == '.' {
		c.pos++
		simple = false
		if c.digits() == 0 {
			return c.errorf("invalid number")
		}
	}
	if c.pos < len(c.in) && (c.in[c.pos] == 'e' || c.in[c.pos] == 'E') {
		c.pos++
		simple = false
		if c.pos < len(c.in) && (c.in[c.pos] == '+' || c.in[c.pos] == '-') {
			c.pos++
		}
		if c.digits() == 0 {
			return c.errorf("invalid number")
		}
	}
	tok := c.in[start:c.pos]
	if simple && intDigits <= 15 {
		c.out = append(c.out, tok...)
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return fmt.Errorf("cannot decode number %s into a float64: %w", tok, err)
	}
	out, ok := appendJSONFloat(c.out, f)
	if !ok {
		return fmt.Errorf("cannot encode number %s", tok)
	}
	c.out = out
	return nil
}

func (c *canonicalizer) digits() int {
	n := 0
	for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
		c.pos++
		n++
	}
	return n
}

// str decodes the JSON string at c.pos as encoding/json does: escapes
// resolved, invalid UTF-8 and unpaired surrogates replaced by U+FFFD. A
// string without escapes or invalid UTF-8 is returned as a slice of the
// input, without a copy; any other is decoded appended to dst. plain
// reports that the string's JSON text is already what encoding/json writes
// for it (nothing it escapes).
func (c *canonicalizer) str(dst []byte) (s []byte, plain bool, err error) {
	c.pos++ // '"'
	start := c.pos
	plain = true
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		switch {
		case b == '"':
			c.pos++
			return c.in[start : c.pos-1], plain, nil
		case b == '\\':
			s, err := c.strSlow(start, dst)
			return s, false, err
		case b < 0x20:
			return nil, false, c.errorf("control character in string")
		case b < utf8.RuneSelf:
			if b == '<' || b == '>' || b == '&' {
				plain = false
			}
			c.pos++
		default:
			r, size := utf8.DecodeRune(c.in[c.pos:])
			if r == utf8.RuneError && size == 1 {
				s, err := c.strSlow(start, dst)
				return s, false, err
			}
			if r == '\u2028' || r == '\u2029' {
				plain = false
			}
			c.pos += size
		}
	}
	return nil, false, c.errorf("unterminated string")
}

// appendString writes the decoded string s as encoding/json does: when
// plain, that is tok, the JSON text the string had in the input.
func (c *canonicalizer) appendString(s []byte, plain bool, tok []byte) {
	if plain {
		c.out = append(c.out, tok...)
		return
	}
	c.out = appendJSONString(c.out, s)
}

// strSlow decodes a string with escapes or invalid UTF-8 appended to dst;
// c.pos is the first byte str could not take as it is.
func (c *canonicalizer) strSlow(start int, dst []byte) ([]byte, error) {
	out := append(dst, c.in[start:c.pos]...)
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		switch {
		case b == '"':
			c.pos++
			return out, nil
		case b < 0x20:
			return nil, c.errorf("control character in string")
		case b < utf8.RuneSelf && b != '\\':
			out = append(out, b)
			c.pos++
			continue
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(c.in[c.pos:])
			out = utf8.AppendRune(out, r) // RuneError for invalid UTF-8
			c.pos += size
			continue
		}
		if c.pos+1 >= len(c.in) {
			return nil, c.errorf("unterminated string")
		}
		c.pos += 2
		e := c.in[c.pos-1]
		if d, ok := simpleEscape(e); ok {
			out = append(out, d)
			continue
		}
		if e != 'u' {
			return nil, c.errorf("invalid escape \\%c", e)
		}
		r := hex4(c.in[c.pos:])
		if r < 0 {
			return nil, c.errorf("invalid \\u escape")
		}
		c.pos += 4
		if utf16.IsSurrogate(r) {
			// A valid pair is one rune; anything else is U+FFFD, and
			// a second escape that does not pair stands on its own.
			next := rune(-1)
			if c.pos+1 < len(c.in) && c.in[c.pos] == '\\' && c.in[c.pos+1] == 'u' {
				next = hex4(c.in[c.pos+2:])
			}
			if r = utf16.DecodeRune(r, next); r != unicode.ReplacementChar {
				c.pos += 6
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return nil, c.errorf("unterminated string")
}

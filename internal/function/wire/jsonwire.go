package wire

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// structWriter writes a JSON object, as encoding/json writes it, straight
// into the protobuf wire form of the google.protobuf.Struct that
// jsonToStructMember would build from it: the same map entries (in the
// JSON's order rather than Go's map order), the same values, the same
// errors, but no structpb tree in between. A function's desired objects go
// to Crossplane this way (EncodeObject): building the tree and encoding it
// cost more than the function's own work. FuzzStructWriter holds the two
// equal.
//
// It reuses jsonParser's lexing (space, literal, number, str, skip);
// strings are only ever appended to the output, never kept, so the text
// they are cut from is raw itself, not a copy.
type structWriter struct {
	jsonParser
	out []byte

	// keys holds the keys of the members of the objects being written,
	// innermost last, with whether each was kept (a null member pruned is
	// not): a key repeating an earlier kept member of the same object is an
	// error, as in jsonToStructMember.
	keys []writtenKey
}

type writtenKey struct {
	key  string
	kept bool
}

var structWriters = sync.Pool{New: func() any { return new(structWriter) }}

func (w *structWriter) release() {
	keys := w.keys[:cap(w.keys)]
	clear(keys) // no key is kept alive by the pool
	*w = structWriter{jsonParser: jsonParser{scratch: w.scratch[:0]}, keys: keys[:0], out: w.out[:0]}
	if cap(w.out) <= maxPooledJSON {
		structWriters.Put(w)
	}
}

// Length prefixes of nested messages are written before their content is
// known: two bytes are reserved (a length below 16 KiB, nearly all of
// them) and the content moved only when the length needs one byte (it is
// then under 128 bytes: a short move) or more than two.
const reservedLength = 2

// open appends tag and room for a length, and returns where the content
// starts.
func (w *structWriter) open(tag byte) int {
	w.out = append(w.out, tag, 0, 0)
	return len(w.out)
}

// close writes the length of the content that started at start (as open
// returned), moving the content when the length takes other than
// reservedLength bytes.
func (w *structWriter) close(start int) {
	n := len(w.out) - start
	size := protowire.SizeVarint(uint64(n))
	at := start - reservedLength
	if size != reservedLength {
		if size > reservedLength {
			w.out = slices.Grow(w.out, size-reservedLength)[:len(w.out)+size-reservedLength]
		}
		copy(w.out[at+size:], w.out[start:start+n])
		w.out = w.out[:at+size+n]
	}
	protowire.AppendVarint(w.out[at:at], uint64(n))
}

// appendStringField appends a length-delimited field with the one-byte tag.
func (w *structWriter) appendStringField(tag byte, s string) {
	w.out = append(w.out, tag)
	w.out = protowire.AppendVarint(w.out, uint64(len(s)))
	w.out = append(w.out, s...)
}

// writeTop writes the Struct of the JSON object w.buf: its content (the
// map entries), without a tag or length of its own.
func (w *structWriter) writeTop() error {
	if len(w.buf) > 0 {
		// Strings are appended to w.out and dropped: they may be cut
		// from the bytes themselves.
		w.text = unsafe.String(&w.buf[0], len(w.buf))
	}
	w.space()
	if w.pos >= len(w.buf) || w.buf[w.pos] != '{' {
		return w.errorf("want a JSON object")
	}
	if err := w.object(true, 0); err != nil {
		return err
	}
	w.space()
	if w.pos != len(w.buf) {
		return w.errorf("trailing data")
	}
	return nil
}

// value writes one JSON value as the content of a google.protobuf.Value
// (its one field) and reports whether it was null; prune as in
// jsonParser.value.
func (w *structWriter) value(prune bool, depth int) (null bool, err error) {
	if depth > maxJSONDepth {
		return false, errJSONDepth
	}
	w.space()
	if w.pos >= len(w.buf) {
		return false, w.errorf("unexpected end of input")
	}
	switch c := w.buf[w.pos]; {
	case c == '{':
		start := w.open(tagStructValue)
		if err := w.object(prune, depth); err != nil {
			return false, err
		}
		w.close(start)
	case c == '[':
		start := w.open(tagListValue)
		if err := w.list(prune, depth); err != nil {
			return false, err
		}
		w.close(start)
	case c == '"':
		s, err := w.str()
		if err != nil {
			return false, err
		}
		w.appendStringField(tagStringValue, s)
	case c == 't' || c == 'f':
		word, b := "false", byte(0)
		if c == 't' {
			word, b = "true", 1
		}
		if err := w.literal(word); err != nil {
			return false, err
		}
		w.out = append(w.out, tagBoolValue, b)
	case c == 'n':
		if err := w.literal("null"); err != nil {
			return false, err
		}
		w.out = append(w.out, tagNullValue, 0)
		return true, nil
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := w.number()
		if err != nil {
			return false, err
		}
		w.out = append(w.out, tagNumberValue)
		w.out = binary.LittleEndian.AppendUint64(w.out, math.Float64bits(f))
	default:
		return false, w.errorf("unexpected character %q", c)
	}
	return false, nil
}

// object writes the JSON object at w.pos as the map entries of a Struct;
// prune drops its null members, as jsonParser.object does.
func (w *structWriter) object(prune bool, depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	w.pos++ // '{'
	base := len(w.keys)
	defer func() { w.keys = w.keys[:base] }()
	w.space()
	if w.pos < len(w.buf) && w.buf[w.pos] == '}' {
		w.pos++
		return nil
	}
	for more := true; more; {
		k, err := w.objectKey()
		if err != nil {
			return err
		}
		switch {
		case depth == 0 && w.dropKey != "" && k == w.dropKey:
			if w.dropped {
				return w.errorf("duplicate field %q", k)
			}
			w.dropped = true
			if err := w.skip(depth + 1); err != nil {
				return err
			}
		default:
			entry := w.open(tagStructEntry)
			w.appendStringField(tagEntryKey, k)
			value := w.open(tagEntryValue)
			null, err := w.value(prune, depth+1)
			if err != nil {
				return err
			}
			kept := !(null && prune)
			if kept {
				w.close(value)
				w.close(entry)
			} else {
				w.out = w.out[:entry-1-reservedLength]
			}
			w.keys = append(w.keys, writtenKey{key: k, kept: kept})
		}
		if more, err = w.more('}', "object"); err != nil {
			return err
		}
	}
	return w.checkKeys(w.keys[base:])
}

// checkKeys returns the error for the first member of an object whose key
// repeats an earlier member that was kept.
func (w *structWriter) checkKeys(keys []writtenKey) error {
	if len(keys) <= 16 {
		for j := 1; j < len(keys); j++ {
			for _, earlier := range keys[:j] {
				if earlier.kept && earlier.key == keys[j].key {
					return w.errorf("duplicate field %q", keys[j].key)
				}
			}
		}
		return nil
	}
	kept := make(map[string]bool, len(keys))
	for _, k := range keys {
		if kept[k.key] {
			return w.errorf("duplicate field %q", k.key)
		}
		if k.kept {
			kept[k.key] = true
		}
	}
	return nil
}

// list writes the JSON array at w.pos as the values of a ListValue; prune
// as in jsonParser.list.
func (w *structWriter) list(prune bool, depth int) error {
	w.pos++ // '['
	w.space()
	if w.pos < len(w.buf) && w.buf[w.pos] == ']' {
		w.pos++
		return nil
	}
	for more := true; more; {
		w.space()
		itemPrune := prune && w.pos < len(w.buf) && w.buf[w.pos] == '{'
		item := w.open(tagStructEntry)
		if _, err := w.value(itemPrune, depth+1); err != nil {
			return err
		}
		w.close(item)
		var err error
		if more, err = w.more(']', "array"); err != nil {
			return err
		}
	}
	return nil
}

// structRecord is the wire form of a Resource's field 1 (its object): the
// tag, the length and the Struct, as a Resource's unknown fields hold an
// object kept encoded (see encodedobjects.go).
func structRecord(content []byte) []byte {
	out := make([]byte, 0, 1+protowire.SizeVarint(uint64(len(content)))+len(content))
	out = append(out, tagResourceObject)
	out = protowire.AppendVarint(out, uint64(len(content)))
	return append(out, content...)
}

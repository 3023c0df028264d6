package wire

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
)

// DecodeStruct decodes a Kubernetes object as a request carries it into
// out (a pointer to a typed object) through JSON written straight from the
// structpb, without its metadata.managedFields. It returns the decoding
// error.
func DecodeStruct(s *structpb.Struct, out any) error {
	fields := s.GetFields()
	buf := decodeBuffers.Get().(*[]byte)
	defer putDecodeBuffer(buf)
	raw := append((*buf)[:0], '{')
	for i, k := range slices.Sorted(maps.Keys(fields)) {
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = append(appendJSONString(raw, k), ':')
		if k == "metadata" {
			raw = appendStructJSON(raw, fields[k].GetStructValue(), func(k string) bool { return k != "managedFields" })
			continue
		}
		raw = appendValueJSON(raw, fields[k])
	}
	raw = append(raw, '}')
	*buf = raw
	return json.Unmarshal(raw, out)
}

// DecodeStructWhere decodes s into out through JSON written straight from
// the structpb, with only the top-level members keep accepts. It returns
// the decoding error.
func DecodeStructWhere(s *structpb.Struct, keep func(key string) bool, out any) error {
	buf := decodeBuffers.Get().(*[]byte)
	defer putDecodeBuffer(buf)
	*buf = appendStructJSON((*buf)[:0], s, keep)
	return json.Unmarshal(*buf, out)
}

// AppendJSON appends the JSON encoding of v, a JSON-like value (maps,
// slices, strings, float64, int64, bool, nil), to b without reflection; ok
// is false for any other value (b is then to be discarded).
func AppendJSON(b []byte, v any) ([]byte, bool) { return appendJSON(b, v) }

// decodeBuffers hold the JSON a Struct is written to before json.Unmarshal
// decodes it into a typed object: json.Unmarshal keeps nothing of its input
// (an UnmarshalJSON method must copy what it keeps, says json.Unmarshaler),
// so the buffer is reused once the decode returns.
var decodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// putDecodeBuffer returns buf to decodeBuffers, unless it grew past
// maxPooledJSON.
func putDecodeBuffer(buf *[]byte) {
	if cap(*buf) <= maxPooledJSON {
		decodeBuffers.Put(buf)
	}
}

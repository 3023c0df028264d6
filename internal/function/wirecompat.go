package function

import (
	"crypto/sha256"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tenantkube/tenantkube/internal/function/wire"
)

// The wire package's API as it was in package function, for the code that
// still calls it here until the functions read through Request and write
// through Write (issue 17); each goes with its last caller outside wire.

// StructCodec is wire.StructCodec.
//
// Deprecated: use wire.StructCodec.
type StructCodec = wire.StructCodec

// UnmarshalRequest is wire.UnmarshalRequest.
//
// Deprecated: use wire.UnmarshalRequest.
func UnmarshalRequest(b []byte, req *fnv1.RunFunctionRequest) error {
	return wire.UnmarshalRequest(b, req)
}

// UnmarshalMessage is wire.UnmarshalMessage.
//
// Deprecated: use wire.UnmarshalMessage.
func UnmarshalMessage(b []byte, m protoreflect.Message) error { return wire.UnmarshalMessage(b, m) }

// AppendMessage is wire.AppendMessage.
//
// Deprecated: use wire.AppendMessage.
func AppendMessage(b []byte, m protoreflect.Message) ([]byte, error) {
	return wire.AppendMessage(b, m)
}

// DecodeKeptObjects is wire.DecodeKeptObjects.
//
// Deprecated: use wire.DecodeKeptObjects.
func DecodeKeptObjects(state *fnv1.State) { wire.DecodeKeptObjects(state) }

// CanonicalSHA256 is wire.CanonicalSHA256.
//
// Deprecated: use wire.CanonicalSHA256.
func CanonicalSHA256(raw []byte) ([sha256.Size]byte, error) { return wire.CanonicalSHA256(raw) }

// MarshalJSON is wire.MarshalJSON.
//
// Deprecated: use wire.MarshalJSON.
func MarshalJSON(v any) ([]byte, error) { return wire.MarshalJSON(v) }

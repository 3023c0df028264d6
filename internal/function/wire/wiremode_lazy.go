//go:build !simplewire

package wire

// simpleWire selects the simple wire implementation behind Request and
// Write (build tag simplewire, for the codec comparison of
// docs/performance.md only):
// requests fully decoded, desired objects built as structpb, responses
// encoded by protobuf-go. Off: the lazy codec (objects kept encoded).
const simpleWire = false

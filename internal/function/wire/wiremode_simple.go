//go:build simplewire

package wire

// simpleWire: see wiremode_lazy.go.
const simpleWire = true

//go:build simplewire

package function

// simpleWire: see wiremode_lazy.go.
const simpleWire = true

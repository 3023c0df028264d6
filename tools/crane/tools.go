//go:build tools

// Package tools pins go-containerregistry's crane for the live end-to-end
// test (test/e2e): `crane registry serve` is the loopback OCI registry from
// which Crossplane installs the Function packages built by `make xpkg`.
package tools

import (
	_ "github.com/google/go-containerregistry/cmd/crane"
)

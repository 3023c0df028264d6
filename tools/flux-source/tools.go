//go:build tools

// Package tools pins Flux source-controller v1.9.1 for the live end-to-end
// test: the Makefile builds bin/source-controller from this module.
package tools

import (
	_ "github.com/fluxcd/source-controller"
)

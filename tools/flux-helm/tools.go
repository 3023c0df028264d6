//go:build tools

// Package tools pins Flux helm-controller v1.4.3 for the live end-to-end
// test: the Makefile builds bin/helm-controller from this module. v1.6 needs
// a Helm fork the module proxy does not serve.
package tools

import (
	_ "github.com/fluxcd/helm-controller"
)

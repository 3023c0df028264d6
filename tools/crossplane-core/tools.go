//go:build tools

// Package tools pins Crossplane core v2.4.0, whose `crossplane internal
// render` is the composition engine `crossplane composition render
// --crossplane-binary` runs. The Makefile builds bin/crossplane-core from
// this module; it is kept apart from the CLI's module so each resolves its
// own dependency set.
package tools

import (
	_ "github.com/crossplane/crossplane/apis/v2"
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)

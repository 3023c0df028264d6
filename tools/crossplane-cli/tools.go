//go:build tools

// Package tools pins the crossplane CLI v2.5.0 (`crossplane composition
// render`, `crossplane xpkg build`). The Makefile builds bin/crossplane from
// this module; it is kept out of the root module so the CLI's dependency set
// never moves the versions the functions build against.
package tools

import _ "github.com/crossplane/cli/v2/cmd/crossplane"

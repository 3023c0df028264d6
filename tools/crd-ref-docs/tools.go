//go:build tools

// Package tools pins crd-ref-docs, which writes docs/api-reference.md from
// the Go types in apis/v1alpha1. The Makefile builds bin/crd-ref-docs from
// this module; it is kept out of the root module so the generator's
// dependency set never moves the versions the functions build against.
package tools

import _ "github.com/elastic/crd-ref-docs"

//go:build tools

// Package tools pins the Cluster API KubeVirt provider v0.11.2 for the live
// end-to-end test: the Makefile builds bin/capk-manager from this module. It
// pins its own Cluster API (v1.11) and KubeVirt API, so it has a module of
// its own.
package tools

import (
	_ "sigs.k8s.io/cluster-api-provider-kubevirt"
)

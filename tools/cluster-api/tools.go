//go:build tools

// Package tools pins Cluster API v1.13.6 for the live end-to-end test
// (test/e2e): the Makefile builds bin/capi-manager (the core manager, module
// root) and bin/capi-kubeadm-bootstrap (bootstrap/kubeadm) from this module.
package tools

import (
	_ "sigs.k8s.io/cluster-api"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
)

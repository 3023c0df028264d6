//go:build tools

// Package tools pins Kubernetes v1.36.3 for the live end-to-end test
// (test/e2e): the Makefile builds bin/kube-apiserver,
// bin/kube-controller-manager and bin/kubectl from this module. k8s.io/kubernetes is not
// meant to be imported, so every staging module is replaced by its published
// v0.36.3 release.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

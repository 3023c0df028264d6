//go:build tools

// Package tools pins the upstream API modules the functions build on, so
// `go mod tidy` keeps one consistent version set while code is added.
package tools

import (
	_ "github.com/fluxcd/helm-controller/api/v2"
	_ "github.com/fluxcd/source-controller/api/v1"
	_ "github.com/google/go-cmp/cmp"
	_ "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	_ "kubevirt.io/api/instancetype/v1beta1"
	_ "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"
	_ "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	_ "sigs.k8s.io/cluster-api/api/core/v1beta2"
	_ "sigs.k8s.io/yaml"
)

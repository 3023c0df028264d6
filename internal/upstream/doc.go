// Package upstream is the parent of minimal, hand-written Go types for the
// upstream Kubernetes APIs whose Go modules cannot be resolved from the Go
// module proxy together with this module's dependency set (Kamaji,
// Ænix etcd-operator) or would change it (cert-manager v1.21.1 requires a
// newer k8s.io/utils than the rest of the module pins).
//
// Each subpackage holds exactly the fields tenantkube emits or reads, with
// JSON names and types taken from the CRDs in ../shared/crds, and is proven
// against those CRDs by tests that use package internal/schema: a fully
// populated instance of every kind validates with zero errors and zero
// pruned fields.
package upstream

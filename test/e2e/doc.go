// Package e2e is tenantkube's live end-to-end test: it starts real
// etcd, kube-apiserver, kube-controller-manager (garbage collector and
// namespace controller) and Crossplane core (package runtime External, Usage
// webhook served on loopback) as processes on 127.0.0.1, pushes the four
// packages `make xpkg` built to a loopback registry (`crane registry serve`),
// installs what a platform team installs (an ImageConfig pointing the
// packages' canonical prefix at that registry, the Configuration, whose
// Function dependencies Crossplane's package manager resolves, and the
// platform settings EnvironmentConfig), plays only the package runtime by
// pointing each FunctionRevision at the function process serving mTLS, and
// drives KubernetesCluster claims through their lifecycle, and
// TenantClusters of a tenant holding only namespace-scoped RBAC (an
// impersonated user) with the Tenant of their namespace.
//
// Crossplane core runs as a real installation runs it: under
// the ServiceAccount crossplane-system/crossplane with the ClusterRoles its
// Helm chart v2.4 installs (crossplane, aggregating
// crossplane:system:aggregate-to-crossplane and every ClusterRole labelled
// rbac.crossplane.io/aggregate-to-crossplane, filled by
// kube-controller-manager's clusterrole-aggregation controller) plus
// deploy/crossplane-rbac.yaml, through a token of that ServiceAccount —
// never system:masters. Played: the RBAC manager's ClusterRole for each XRD
// of the package (crossplane:composite:<xrd>:aggregate-to-crossplane, the
// composite and claim kinds), because `crossplane rbac start` binds its
// metrics on :8080 with no flag to move it. The test's own client is an administrator: it
// plays the platform team. In TestControllers the upstream controllers run
// the same way, each under a ServiceAccount bound to its own module's
// ClusterRole (controller_rbac_test.go). Also played: the control-plane
// Deployment Kamaji builds from a KamajiControlPlane, created with a dry
// run (kamaji_deployment_test.go; provider v0.20.0
// controllers/kamajicontrolplane_controller_tcp.go:31-281, Kamaji e51909fa
// internal/builders/controlplane/deployment.go:78-101 and
// konnectivity_server.go:270-276).
//
// TestEtcdPeers needs no kube-apiserver: as root it builds a network of its
// own (etcdpeers_test.go), a bridge and network namespaces on
// 10.213.0.0/24, one per etcd member, one for CoreDNS (bin/coredns,
// serving the zones the test writes and NXDOMAIN for any other name) and
// one for a worker VM, whose resolv.conf holds the nameserver alone, as
// KubeVirt's DHCP gives it (each namespace's resolv.conf through
// /etc/netns/<netns>). There three etcd members form with the certificates
// the control-plane function composes, and every name the functions hand
// to a worker VM or a tenant pod, rendered through the real engine for the
// default cluster domain and for another, resolves from the VM's
// namespace with the Go and glibc resolvers, while the partial names
// (N.NS.svc, and N.NS.svc.cluster.local under another domain) do not
// (nodedns_test.go).
//
// The test files carry the build tag e2e; `make e2e` builds the components
// into ./bin and runs them. Every process runs in its own process group and
// is stopped by PID when the test ends, fails, times out or is interrupted;
// component logs are kept in _output/e2e/logs.
//
// Knobs (environment): E2E_RUN (make: a go test -run pattern), E2E_BIN (a
// directory with the binaries instead of ./bin), TENANTKUBE_SHARED (the
// shared material instead of ../shared).
package e2e

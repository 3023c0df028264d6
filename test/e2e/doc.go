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
// never system:masters. The RBAC manager's ClusterRoles are played (Played
// components, below). The test's own client is an administrator: it
// plays the platform team. In TestControllers the upstream controllers run
// the same way, each under a ServiceAccount bound to its own module's
// ClusterRole (controller_rbac_test.go).
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
// Played components: what cannot run here is played by the test, each
// behaviour as the pinned upstream source implements it (repository,
// version, file:lines); the play sites cite the same lines.
//
// Kamaji (github.com/clastix/kamaji e51909fa; its module does not resolve
// on the module proxy) and its Cluster API control-plane provider
// (github.com/clastix/cluster-api-control-plane-provider-kamaji v0.20.0),
// playKamaji (tenant_api_test.go), ownKamajiSecrets and the tenant-down
// status (deletion_down_test.go), releasesFollowControlPlane and
// deleteDeadTenant (scenarios_test.go):
//   - Kamaji e51909fa controllers/resources.go:211-226 and
//     internal/resources/kubeconfig.go:70-83, 226-243: the admin kubeconfig
//     Secret <name>-admin-kubeconfig with keys admin.conf and
//     super-admin.conf, and admin.svc and super-admin.svc whose server is
//     <name>.<namespace>.svc:<port> (line 234);
//   - Kamaji e51909fa internal/resources/kubeconfig.go:174-180,
//     internal/utilities/utilities.go:21-27, internal/constants/labels.go:7-12:
//     its labels kamaji.clastix.io/project: kamaji, kamaji.clastix.io/name,
//     kamaji.clastix.io/component: admin-kubeconfig and
//     kamaji.clastix.io/certificate_lifecycle_controller: kubeconfig;
//   - Kamaji e51909fa internal/resources/ca_certificate.go:55-68, 82-84,
//     146-160: the CA Secret <name>-ca with keys ca.crt, ca.key, tls.crt and
//     tls.key, labelled kamaji.clastix.io/component: ca; provider v0.20.0
//     controllers/kamajicontrolplane_controller_resources.go:78-83 leaves it
//     as Kamaji wrote it;
//   - provider v0.20.0 controllers/kamajicontrolplane_controller.go:205-209
//     and controllers/kamajicontrolplane_controller_cluster_patch.go:58-80:
//     the KamajiControlPlane's spec.controlPlaneEndpoint;
//   - provider v0.20.0 controllers/kamajicontrolplane_controller.go:236-240
//     and controllers/kamajicontrolplane_controller_cluster_patch.go:124-125,
//     169-198: the KubevirtCluster's spec.controlPlaneEndpoint and
//     status.ready true;
//   - provider v0.20.0 controllers/kamajicontrolplane_controller.go:294-319
//     (status replicas, readyReplicas, availableReplicas, upToDateReplicas,
//     selector, version, then initialization.controlPlaneInitialized),
//     controllers/kamajicontrolplane_controller_tcp.go:84-88 (the version
//     gets a "v"), Kamaji e51909fa
//     internal/resources/k8s_deployment_resource.go:111-117 (the selector
//     kamaji.clastix.io/name=<name>), provider v0.20.0
//     api/v1alpha2/kamajicontrolplane_types.go:308-311
//     (externalManagedControlPlane, default true);
//   - provider v0.20.0 controllers/kamajicontrolplane_controller_resources.go:130-176:
//     the Secret <cluster>-kubeconfig, type cluster.x-k8s.io/secret, key
//     value (admin.conf), labelled cluster.x-k8s.io/cluster-name and
//     kamaji.clastix.io/component: capi, secret: kubeconfig, cluster, tcp;
//   - provider v0.20.0 controllers/kamajicontrolplane_controller.go:341-344
//     with Kamaji e51909fa internal/resources/k8s_deployment_resource.go:85-102,
//     158-160: status.ready, true once the TenantControlPlane is Ready and
//     false when none of its pods is ready (the tenant API server down);
//   - provider v0.20.0 controllers/kamajicontrolplane_controller_resources.go:176,
//     controllers/kamajicontrolplane_controller_tcp.go:268, Kamaji e51909fa
//     internal/resources/kubeconfig.go:183 and ca_certificate.go:160: the
//     Secrets' controller owner references (the KamajiControlPlane stands
//     for the TenantControlPlane, which no Kamaji creates here);
//   - scale to zero and back (playSleep, playWake in hibernation_test.go):
//     provider v0.20.0 controllers/kamajicontrolplane_controller_tcp.go:80-81
//     copies spec.replicas to the TenantControlPlane; Kamaji e51909fa
//     internal/resources/k8s_deployment_resource.go:85-88 reports a
//     TenantControlPlane with zero replicas Sleeping (its Deployment, the
//     tenant API server, at zero; etcd and the PKI Secrets untouched), and
//     provider v0.20.0 controllers/kamajicontrolplane_controller.go:294-300,
//     341-344 copies the replicas and sets status.ready false (true again
//     once Ready);
//   - Kamaji e51909fa internal/builders/controlplane/deployment.go:766:
//     --etcd-prefix=/<dataStoreSchema> (backup_test.go);
//   - the control-plane Deployment Kamaji builds from a KamajiControlPlane,
//     created with a dry run (kamaji_deployment_test.go): provider v0.20.0
//     controllers/kamajicontrolplane_controller_tcp.go:31-281, Kamaji
//     e51909fa internal/builders/controlplane/deployment.go:78-101 and
//     konnectivity_server.go:270-276, finer lines at each field there.
//
// The KMS v2 plugin of TestBackupRestore's key rotation (kmsWrite in
// kms_test.go) is the test's own, served with k8s.io/kms v0.36.4
// pkg/service (grpc_service.go:42-73, a gRPC server on a unix socket);
// the hostPath mount of the socket's directory into the API server pod
// (the render golden encryption-kms) is played by a directory of the
// test's, the golden's endpoint replaced by its socket path.
//
// The rotation's rewrite Job and the move's Job (the Jobs
// N-encryption-rewrite-G and N-encryption-move-<id> the control-plane
// function composes, functions/control-plane/encryptionrewrite.go;
// TestBackupRestore's key rotation, playRewriteJob in rotation_test.go):
// no kubelet runs a pod here, so each one container is played as that pod
// would run it, from the Job of the render golden encryption-rewrite
// (encryption-move): the
// container sets no command, so its args go to the image's entrypoint
// (registry.k8s.io/kubectl, kubernetes/kubernetes 109cf682
// build/server-image/kubectl/Dockerfile:34, ENTRYPOINT ["/bin/kubectl"]),
// here bin/kubectl (Kubernetes v1.36.3, tools/kubernetes; the image is
// tagged with the cluster's patch, v1.35.6 in the golden, whose
// pkg/cmd/annotate/annotate.go is the same file in k8s.io/kubectl v0.35.1
// and v0.36.3: a merge patch per object, lines 361-377); its env as the
// spec sets it, KUBECONFIG pointing into the mount of its Secret volume
// (N-admin-kubeconfig, item super-admin.svc), here a directory holding
// that item as playKamaji writes it. The pod's security context, resources
// and back-off are not played; the run must succeed, as the function waits
// for a succeeded pod (encryptionrewrite.go, rewritten).
//
// Cozystack etcd-operator (github.com/cozystack/etcd-operator v0.5.4),
// backup_test.go, etcdpeers_test.go:
//   - internal/agent/snapshot.go:121-148, 180-195: the snapshot, clientv3's
//     Snapshot stream written to a file;
//   - internal/agent/restore.go:139-150: the restore, etcdutl's
//     snapshot.Restore with the hash check skipped;
//   - controllers/etcdmember_controller.go:705-766,
//     controllers/helpers.go:136-145, controllers/etcdcluster_controller.go:1818:
//     a member's etcd flags, peer and client URLs, and the headless
//     Service publishing not-ready addresses.
//
// Ænix etcd-operator (github.com/aenix-io/etcd-operator v0.4.2),
// etcdpeers_test.go: internal/controller/factory/statefulset.go:267-317
// (a member's etcd flags), 161-205 and 271-297 (the trusted CAs), svc.go:34-48
// (the Service names).
//
// cert-manager (github.com/cert-manager/cert-manager v1.21.1; its
// controller's module does not resolve), issueCertificates and
// certificateTemplate (certmanager_test.go, also etcdpeers_test.go):
//   - pkg/util/pki/certificatetemplate.go:55-61, 309-322,
//     pkg/api/util/duration.go:29-36, pkg/apis/certmanager/v1/const.go:26:
//     valid from now for spec.duration, 90 days when unset;
//   - pkg/util/pki/csr.go:89-114, pkg/apis/certmanager/v1/types.go:315-322:
//     key usages (cert sign for a CA; digital signature and key
//     encipherment when none are given);
//   - pkg/controller/certificaterequests/selfsigned/selfsigned.go:206-221 and
//     pkg/controller/certificaterequests/ca/ca.go:120-133: ca.crt, the
//     certificate itself or the CA Issuer's certificate;
//   - pkg/util/pki/generate.go:127-135, 166-172: the ECDSA key as an
//     EC PRIVATE KEY block;
//   - pkg/controller/certificates/issuing/internal/secret.go:143-222,
//     issuing_controller.go:458-461 and
//     internal/controller/certificates/secrets.go:63-77: the Secret, type
//     kubernetes.io/tls, keys tls.crt, tls.key, ca.crt, secretTemplate's
//     labels and annotations, the label controller.cert-manager.io/fao and
//     the cert-manager.io annotations (certificate-name, issuer-name,
//     issuer-kind, issuer-group, common-name, alt-names, ip-sans,
//     uri-sans).
//
// KubeVirt (kubevirt.io/api v1.9.0 in go.mod; github.com/kubevirt/kubevirt
// v1.9.0): virt-controller does not run and nothing of it is played:
// VirtualMachine and VirtualMachineInstance are open CRDs
// (controllers_test.go), so the status virt-controller writes
// (pkg/virt-controller/watch/vm/vm.go:2457-2473, status.ready from the
// VirtualMachineInstance's Ready condition) is never written and no
// Machine gets a Node.
//
// Crossplane (github.com/crossplane/crossplane v2.4.0, read from its Go
// module source: the snapshot's newest tag is v2.4.0-rc.0, whose roles.go
// is the same):
//   - internal/controller/rbac/definition/roles.go:63-92, 158-176: the RBAC
//     manager's ClusterRole crossplane:composite:<xrd>:aggregate-to-crossplane
//     (xrdSystemRoles, isolation_test.go); the RBAC manager does not run
//     here because cmd/crossplane/rbac/rbac.go:77-86 sets no metrics
//     address (controller-runtime's default, :8080);
//   - the package runtime (registerRevision, install_test.go):
//     internal/controller/pkg/runtime/runtime_function.go:70, 91 (status
//     tlsServerSecretName, the Function's name with -tls-server: apis/v2
//     v2.4.0 pkg/v1/interfaces.go:1034, 1189-1191; status.endpoint) and
//     reconciler.go:433-437 with apis/v2 v2.4.0 pkg/v1/conditions.go:177-195
//     (RuntimeHealthy HealthyPackageRevision, RuntimeActive ActiveRuntime).
//
// Others, in TestE2E (scenarios_test.go): Cluster API v1.13.6
// (tools/cluster-api/go.mod)
// internal/controllers/machinedeployment/machinedeployment_rollout_planner.go:217-316,
// the MachineSet of a rollout (scaleAndInstanceType); in
// tenantCreatedObjects, Flux helm-controller v1.4.3
// api/v2/helmrelease_types.go:1366-1368 (a HelmChart named
// <namespace>-<release>), Ænix etcd-operator v0.4.2
// internal/controller/factory/pvc.go:41-47 and statefulset.go:74-80,
// 103-104 with Kubernetes v1.36.3
// pkg/controller/statefulset/stateful_set_utils.go:117-120 (a member's
// claim data-<etcdcluster>-<ordinal>), cert-manager v1.21.1
// pkg/controller/certificates/issuing/internal/secret.go:167-170, 215-222
// (a Certificate's Secret with secretTemplate's labels).
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

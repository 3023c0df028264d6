package test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/internal/render"
)

const pipelineTestdata = "testdata/control-plane"

// renderClock is the functions' clock in the render tests: the backup
// schedule of testdata/control-plane is worked out for it.
var renderClock = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// TestPipelineRender renders XRs through the real Crossplane engine and the
// whole Composition (control-plane → workers → addons), as `make render`
// does, and compares the output with golden files: the example
// XR, the example XR with the observed state of examples/observed (status
// and conditions of a ready control plane, a half-ready node group and a
// failed HelmRelease), every control-plane field set, a shared DataStore, and each bad input
// whose Fatal result must name the field. Every rendered object is validated
// against the upstream CRDs, and the example renders byte-identically twice.
func TestPipelineRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	validator := sharedValidator(t)
	example := func(p string) string { return filepath.Join(root, "examples", p) }

	cases := pipelineCases(root)
	renderOnce := func(t *testing.T, xr string, required []string, observed string, admitted bool) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{
			Root: root, XR: xr, Required: required, Observed: observed, BinDir: binDir, Stderr: &bytes.Buffer{},
			SkipXRValidation: admitted, Clock: renderClock,
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderOnce(t, c.xr, c.required, c.observed, c.admitted)
			var got []byte
			if c.fatal != nil {
				var ce *render.CrossplaneError
				if !errors.As(err, &ce) {
					t.Fatalf("want a Fatal render error, got err=%v", err)
				}
				msg := render.Message(ce.Stderr)
				for _, w := range c.fatal {
					if !strings.Contains(msg, w) {
						t.Errorf("Fatal message does not name %s:\n%s", w, msg)
					}
				}
				if strings.Contains(ce.Stderr, "panic") {
					t.Errorf("a function panicked:\n%s", ce.Stderr)
				}
				got = []byte(msg + "\n")
			} else {
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if err := validator.ValidateYAMLStream(out); err != nil {
					t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
				}
				for _, w := range c.contains {
					if !bytes.Contains(out, []byte(w)) {
						t.Errorf("output does not hold %q", w)
					}
				}
				got = out
			}
			compareGolden(t, filepath.Join(pipelineTestdata, c.name+".golden.yaml"), got)
		})
	}
	t.Run("deterministic", func(t *testing.T) {
		a, errA := renderOnce(t, example("xr.yaml"), []string{example("instancetypes.yaml")}, "", false)
		b, errB := renderOnce(t, example("xr.yaml"), []string{example("instancetypes.yaml")}, "", false)
		if errA != nil || errB != nil {
			t.Fatalf("render: %v / %v", errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("the same input rendered differently:\n%s", lineDiff(string(a), string(b)))
		}
	})
}

// pipelineCase is one render of TestPipelineRender, run again through the
// namespaced API by TestNamespacedRender/scopes.
type pipelineCase struct {
	name, xr, observed string
	required           []string
	// fatal: substrings of the Fatal message; nil when the render succeeds.
	fatal []string
	// admitted: the XR skips the XRD's schema check, as an object
	// admitted before a rule existed reaches the functions; the
	// functions' own re-checks answer.
	admitted bool
	// contains: lines the output must hold, worked out by hand.
	contains []string
	// namespacedFatal: substrings of the Fatal the TenantCluster twin gets
	// (TestNamespacedRender) where only a claim may do what the case does.
	namespacedFatal []string
}

// cozystackAPIsFatal is the Fatal message of a cluster on a platform as
// Cozystack runs it (test/testdata/control-plane/platform-cozystack-apis.yaml).
var cozystackAPIsFatal = []string{"step control-plane",
	"cluster.x-k8s.io/v1beta2 Cluster, MachineDeployment, MachineHealthCheck, MachineSet, Machine (Cluster API v1.11.0); " +
		"bootstrap.cluster.x-k8s.io/v1beta2 KubeadmConfigTemplate (Cluster API v1.11.0); " +
		"controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane (Cluster API control-plane provider Kamaji v0.20.0).",
}

// pipelineCases are the renders of TestPipelineRender; root is the
// repository.
func pipelineCases(root string) []pipelineCase {
	example := func(p string) string { return filepath.Join(root, "examples", p) }
	data := func(p string) string { return filepath.Join(root, "test", pipelineTestdata, p) }
	settings := data("platform-settings.yaml")
	cozystack := data("platform-etcd-cozystack.yaml")
	return []pipelineCase{
		{name: "example", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml")}},
		{name: "example-observed", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml")}, observed: example("observed")},
		// The cluster's class fast-ssd, a remote class of the platform: the
		// csi release's tenant StorageClasses and the CSI driver's
		// enforcement list both platform classes.
		{name: "all-fields", xr: data("xr-all-fields.yaml"), required: []string{example("instancetypes.yaml"), data("platform-storage-classes.yaml")}, contains: []string{
			"    storageClasses:\n      fast-ssd:\n        default: true\n        infraStorageClass: fast-ssd\n      kubevirt:\n        default: false\n        infraStorageClass: fast-ssd\n      replicated:\n        default: false\n        infraStorageClass: replicated\n",
			"        - name: INFRA_STORAGE_CLASS_ENFORCEMENT\n          value: |\n            allowAll: false\n            allowDefault: true\n            allowList:\n            - replicated\n            - fast-ssd\n",
		}},
		{name: "name-clash", xr: data("xr-name-clash.yaml"), required: []string{example("instancetypes.yaml")}},
		{name: "seed-parity", xr: data("xr-seed-parity.yaml"), required: []string{example("instancetypes.yaml")}},
		// A shared DataStore and a base domain set in the EnvironmentConfig,
		// not in the Composition.
		{name: "shared-datastore", xr: data("xr-shared-datastore.yaml"), required: []string{example("instancetypes.yaml"), data("platform-shared-datastore.yaml")}},
		// One serviceCIDR for the Cluster and CoreDNS (its 10th address);
		// CPU requests of the control plane = limits / 4 (500m → 125m); etcd
		// quota 95% of 8Gi = 8160437862 bytes; host under the base domain.
		{name: "platform-settings", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), settings}, contains: []string{
			"\n      - 10.200.0.0/16\n", "clusterIP: 10.200.0.10\n", "hostname: demo.tenant-demo.k8s.corp.test:443\n", "cpu: 125m\n",
			`quota-backend-bytes: "8160437862"`, "image: registry.corp.test/mirror/cluster-autoscaler:v1.35.1\n", "version: 1.18.5\n",
		}},
		// The etcd-operator.cozystack.io/v1alpha2 operator: 5 members of
		// 8Gi, quota 95% of 8Gi = 8160437862 bytes as a number, etcd
		// 3.6.11; the DataStore dials its client Service <cluster>-client;
		// the certificates name its headless Service <cluster>.
		{name: "etcd-cozystack", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), cozystack}, contains: []string{
			"apiVersion: etcd-operator.cozystack.io/v1alpha2\n", "    quotaBackendBytes: 8160437862\n", "  version: 3.6.11\n", "  replicas: 5\n",
			"    size: 8Gi\n", "  - demo-etcd-client.tenant-demo.svc:2379\n", "  - '*.demo-etcd.tenant-demo.svc'\n",
			"        name: demo-etcd-server-tls\n", "        name: demo-etcd-client-tls\n", "        name: demo-etcd-peer-tls\n",
		}},
		// Its Available condition is the EtcdCluster's readiness.
		{name: "etcd-cozystack-observed", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), cozystack}, observed: data("observed-etcd-cozystack")},
		// A setting naming the other operator than the running etcd's is
		// refused, either way.
		{name: "fatal-etcd-moved", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), cozystack}, observed: example("observed"),
			fatal: []string{"step control-plane", "EnvironmentConfig(tenantkube).data.etcd.operator", `"etcd-operator.cozystack.io/v1alpha2"`, "cluster tenant-demo/demo",
				"EtcdCluster tenant-demo/demo-etcd", "on the etcd.aenix.io/v1alpha1 operator"}},
		{name: "fatal-etcd-moved-back", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml")}, observed: data("observed-etcd-cozystack"),
			fatal: []string{"step control-plane", "input.etcd.operator", `"etcd.aenix.io/v1alpha1"`, "cluster tenant-demo/demo", "on the etcd-operator.cozystack.io/v1alpha2 operator"}},
		// Backups: the 24h slot of tenant-demo/demo began 2026-12-02
		// 18:30:44 (sha256("tenant-demo/demo") starts 0x5e3740528f0aca54,
		// 66644 s = 18h30m44s modulo a day); its backup, observed Complete
		// at 18:31:05, is 17h28m old at 12:00 (truncated to the minute):
		// no new one, the EtcdSnapshot re-composed under its observed name,
		// its PKI kept, both with the Namespace's ownerReference.
		{name: "etcd-backup-observed", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-etcd-backup.yaml"), data("backup-keys.yaml"), data("backup-credentials.yaml"), data("tenant-namespace.yaml")},
			observed: data("observed-etcd-backup"), contains: []string{
				"name: demo-backup-20261202183044-c62685\n", "      key: tenantkube/tenant-demo\n", "time: \"2026-12-02T18:31:05Z\"\n",
				"age: 17h28m\n", "type: BackupCurrent\n", "reason: BackupSucceeded\n",
				"  - apiVersion: v1\n    kind: Namespace\n    name: tenant-demo\n    uid: 3f1e9c2a-6b7d-4c05-8e1a-92d4b6f0c7e5\n",
			}},
		// A restore: the EtcdCluster reads the exact key
		// <keyPrefix>/<NS>/<backup>.db; demo2-ca, demo2-sa-certificate and
		// demo2-front-proxy-ca-certificate hold demo's PKI decrypted; no
		// KamajiControlPlane until they are observed. Nothing of demo is
		// observed: its bundle is all the restore reads.
		{name: "etcd-restore", xr: data("xr-restore.yaml"), required: []string{example("instancetypes.yaml"), data("platform-etcd-backup.yaml"), data("backup-keys.yaml"), data("backup-credentials.yaml"), data("backup-bundle.yaml"), data("tenant-namespace.yaml")},
			contains: []string{
				"        key: tenantkube/tenant-demo/demo-backup-20261202183044-c62685.db\n", "  name: demo2-ca\n", "  name: demo2-sa-certificate\n",
				"  name: demo2-front-proxy-ca-certificate\n", "reason: RestoringPKI\n",
			},
			// A TenantCluster's etcd is its Tenant's: no backups to restore.
			namespacedFatal: []string{"step control-plane", "spec.restore.backup", `"demo-backup-20261202183044-c62685"`, "a TenantCluster's etcd is its namespace's"}},
		// A claim restoring the TenantCluster demo of the Tenant's backup:
		// the Tenant's snapshot file, demo's PKI (demo-pki.yaml's
		// placeholders; "demo cluster CA key" is ZGVtbyBjbHVzdGVyIENBIGtleQ==)
		// under demo2's names.
		{name: "etcd-restore-tenant", xr: data("xr-restore-tenant.yaml"), required: []string{example("instancetypes.yaml"), data("platform-etcd-backup.yaml"), data("backup-keys.yaml"), data("backup-credentials.yaml"), data("tenant-backup-bundle.yaml"), data("tenant-namespace.yaml")},
			contains: []string{
				"        key: tenantkube/tenant-demo/20261203045905-e8f851.db\n", "  name: demo2-ca\n", "  ca.key: ZGVtbyBjbHVzdGVyIENBIGtleQ==\n",
				"  name: demo2-front-proxy-ca-certificate\n", "reason: RestoringPKI\n",
			},
			namespacedFatal: []string{"step control-plane", "spec.restore.backup", `"20261203045905-e8f851"`, "a TenantCluster's etcd is its namespace's"}},
		// Secrets encrypted at rest: a new cluster's API server reads the
		// EncryptionConfiguration of its Secret demo-encryption-config
		// (generation 1, secretbox), its pods carry the configuration's
		// digest; the root key itself is nowhere in the output.
		{name: "encryption", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption.yaml"), data("encryption-root-key.yaml")},
			contains: []string{
				"  - --encryption-provider-config=/etc/kubernetes/encryption/encryption-configuration.yaml\n", "  name: demo-encryption-config\n",
				"        secretName: demo-encryption-config\n", "type: SecretsEncrypted\n", "reason: Encrypted\n", "tenantkube.io/encryption-config: ",
			}},
		// Phase 2 of a rotation from key generation 1 to 2, every pod of
		// Kamaji's Deployment on its configuration: the rewrite Job
		// re-annotates every Secret with the cluster's admin kubeconfig.
		{name: "encryption-rewrite", xr: data("xr-encryption-rewrite.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption.yaml"), data("encryption-root-key.yaml"), data("encryption-rewrite-deployment.yaml")},
			observed: data("observed-encryption-rewrite"), contains: []string{
				"kind: Job\n", "  name: demo-encryption-rewrite-2\n", "        - encryption.tenantkube.io/key-generation=2\n", "    phase: Rewriting\n",
				"reason: RotatingKey\n", "        tenantkube.io/encryption-config: d0d71aac6cd4d919\n",
			}},
		// Phase 1 of the same rotation: generation 1 alone runs on every
		// pod (the Secret of the golden "encryption"), keyGeneration 2
		// adds generation 2 for reads; the pods keep the digest of the
		// observed configuration until the Secret holds the new one.
		{name: "encryption-read-key", xr: data("xr-encryption-rewrite.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption.yaml"), data("encryption-root-key.yaml")},
			observed: data("observed-encryption-read-key"), contains: []string{
				"  name: demo-encryption-config\n", "    phase: AddingReadKey\n", "reason: RotatingKey\n",
				"        tenantkube.io/encryption-config: 9c85ae48a0a6fd15\n",
			}},
		// Phase 3: every pod of Kamaji's Deployment on phase 2's
		// configuration and the rewrite Job reports a succeeded pod;
		// generation 1 is dropped and the Job leaves the desired state.
		{name: "encryption-rotated", xr: data("xr-encryption-rewrite.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption.yaml"), data("encryption-root-key.yaml"), data("encryption-rewrite-deployment.yaml")},
			observed: data("observed-encryption-rotated"), contains: []string{
				"  name: demo-encryption-config\n", "    phase: Stable\n", "reason: Encrypted\n",
				"        tenantkube.io/encryption-config: d0d71aac6cd4d919\n",
			}},
		// A KMS v2 plugin (settings encryption.kms): a new cluster's
		// generation 1 writes with it (provider platform-kms-generation-1,
		// apiVersion v2, timeout kube-apiserver's default 3s), identity
		// last; the API server pod mounts the socket's directory from the
		// node (hostPath, type Directory) at the same path.
		{name: "encryption-kms", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption-kms.yaml"), data("encryption-root-key.yaml")},
			contains: []string{
				"    - mountPath: /var/run/tenantkube-kms\n      name: encryption-kms-0\n", "        path: /var/run/tenantkube-kms\n        type: Directory\n",
				"reason: Encrypted\n",
			}},
		// The same plugin set for a cluster on secretbox generation 1
		// (observed-encryption-read-key): switching to it is a rotation;
		// phase 1 adds generation 2 on the plugin for reads, generation 1
		// still writes.
		{name: "encryption-kms-read-key", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption-kms.yaml"), data("encryption-root-key.yaml")},
			observed: data("observed-encryption-read-key"), contains: []string{
				"    phase: AddingReadKey\n", "reason: RotatingKey\n", "    targetGeneration: 2\n", "        path: /var/run/tenantkube-kms\n",
			}},
		// configmaps added to encryption.resources on a cluster at
		// generation 1 (observed-encryption-read-key, every pod on it):
		// the configuration lists them at once, identity after the key so
		// that ConfigMaps stored in clear stay readable, and records them
		// for the move; its Job waits for the rollout.
		{name: "encryption-added", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption-configmaps.yaml"), data("encryption-root-key.yaml"), data("encryption-rewrite-deployment.yaml")},
			observed: data("observed-encryption-read-key"), contains: []string{
				"reason: RewritingResources\n", "    resources:\n    - secrets\n    - configmaps\n    rewrite:\n    - configmaps\n",
			}},
		// configmaps removed from encryption.resources: the configuration
		// keeps an entry for them that writes in clear and reads with
		// generation 1; every pod of Kamaji's Deployment on it, the move's
		// Job writes them again (its name and annotation value the move's
		// id, 8 hex digits of SHA-256("secrets\x00configmaps")).
		{name: "encryption-move", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-encryption.yaml"), data("encryption-root-key.yaml"), data("encryption-move-deployment.yaml")},
			observed: data("observed-encryption-move"), contains: []string{
				"kind: Job\n", "  name: demo-encryption-move-303f8b1e\n", "        - configmaps\n", "        - encryption.tenantkube.io/move=303f8b1e\n",
				"reason: RewritingResources\n", "    rewrite:\n    - configmaps\n", "        tenantkube.io/encryption-config: feda0f881dce54b8\n",
			}},
		{name: "fatal-restore-namespace", xr: data("xr-fatal-restore-namespace.yaml"), required: []string{example("instancetypes.yaml"), data("platform-etcd-backup.yaml"), data("backup-keys.yaml")},
			fatal: []string{"step control-plane", "spec.restore.namespace", `"tenant-other"`, `namespace "tenant-demo"`}},
		{name: "fatal-platform-cidr", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-fatal-cidr.yaml")},
			fatal: []string{"step control-plane", "EnvironmentConfig(tenantkube).data.podCIDR", `"10.243.0.0/33"`}},
		// A platform as Cozystack runs it (Cluster API v1.10.1, Kamaji
		// control-plane provider v0.19.0): one Fatal naming what it lacks and
		// the release first serving it (Cluster API v1.11.0 and the
		// provider's v0.20.0 CRDs serve v1beta2 and v1alpha2, their earlier
		// releases do not).
		// A running cluster (observed) and a new one, whose TenantCluster
		// twin TestNamespacedRender renders too.
		{name: "fatal-platform-apis", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-cozystack-apis.yaml")}, observed: example("observed"),
			fatal: cozystackAPIsFatal},
		{name: "fatal-platform-apis-new", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-cozystack-apis.yaml")},
			fatal: cozystackAPIsFatal},
		{name: "fatal-platform-unknown", xr: example("xr.yaml"), required: []string{example("instancetypes.yaml"), data("platform-fatal-unknown.yaml")},
			fatal: []string{"EnvironmentConfig(tenantkube).data.baseDomian", "unknown setting", "did you mean baseDomain?"}},
		{name: "fatal-version", xr: data("xr-fatal-version.yaml"), fatal: []string{"spec.version", `"v1.29"`}, admitted: true},
		{name: "fatal-preset", xr: data("xr-fatal-preset.yaml"), fatal: []string{"spec.controlPlane.apiServer.resourcesPreset", `"x9.huge"`}, admitted: true},
		{name: "fatal-namespace", xr: data("xr-fatal-namespace.yaml"), fatal: []string{"spec.namespace", `"tenant-other"`}},
		// A claim in tenant-attacker bound the XR whose objects live in
		// tenant-demo: nothing is composed or removed.
		{name: "fatal-moved", xr: data("xr-fatal-moved.yaml"), required: []string{example("instancetypes.yaml")}, observed: example("observed"),
			fatal: []string{"step control-plane", "metadata.labels[crossplane.io/claim-namespace]", `"tenant-attacker"`, `namespace "tenant-demo"`}},
		{name: "fatal-quantity", xr: data("xr-fatal-quantity.yaml"), fatal: []string{"spec.controlPlane.scheduler.resources.cpu", `"abc"`}, admitted: true},
		{name: "fatal-host", xr: data("xr-fatal-host.yaml"), fatal: []string{"spec.host", `"demo.tenant-other.tenants.example.com"`}},
		{name: "fatal-image", xr: data("xr-fatal-image.yaml"), required: []string{example("instancetypes.yaml")}, fatal: []string{"spec.images.waitForKubeconfig", `"attacker.example/evil:latest"`}},
		{name: "fatal-replicas", xr: data("xr-fatal-replicas.yaml"), required: []string{example("instancetypes.yaml")}, fatal: []string{"step workers", "spec.nodeGroups[md0].maxReplicas", "101", "at most 100"}},
		// Control plane. Flags sorted by name with the platform's
		// --authentication-config among them; volumes sorted by name, mounts
		// by path; the audience is <NS>.<N>; system: user names refused.
		{name: "api-server-oidc", xr: data("xr-api-server-oidc.yaml"), required: []string{example("instancetypes.yaml"), data("platform-oidc.yaml")}, contains: []string{
			"- --authentication-config=/etc/kubernetes/authentication-config/config.yaml\n", "- --goaway-chance=0.001\n", "- --v=2\n",
			"url: https://id.corp.test/realms/platform\n", "- tenant-oidc.oidc\n", "claim: email\n",
			"mountPath: /etc/kubernetes/authentication-config\n", "name: oidc-oidc-authn-config\n",
			"- expression: '!user.username.startsWith(''system:'')'\n",
		}},
		// The claim gate of the platform's tenant groups, and the OIDC
		// kubeconfig Secret once Kamaji's admin kubeconfig holds the CA.
		{name: "oidc-gate", xr: data("xr-api-server-oidc.yaml"), required: []string{example("instancetypes.yaml"), data("platform-oidc-gate.yaml"), data("admin-kubeconfig-oidc.yaml")}, contains: []string{
			`- expression: has(claims.groups) && type(claims.groups) == list && dyn(claims.groups).exists(g,`,
			`g in ["tenant:tenant-oidc:view", "tenant:tenant-oidc:use", "tenant:tenant-oidc:admin",`, `"tenant:tenant-oidc:super-admin"])` + "\n",
			"name: oidc-oidc-kubeconfig\n",
		}},
		{name: "oidc-custom", xr: data("xr-oidc-custom.yaml"), required: []string{example("instancetypes.yaml")}, contains: []string{"name: byo-oidc-authn-config\n", "url: https://example.com\n"}},
		{name: "fatal-oidc-secret", xr: data("xr-fatal-oidc-secret.yaml"), required: []string{example("instancetypes.yaml")}, fatal: []string{"spec.oidc.customConfig.secretRef.name", `"my-authn-config"`, "inline"}},
		{name: "fatal-oidc-system", xr: data("xr-fatal-oidc-system.yaml"), required: []string{example("instancetypes.yaml")}, fatal: []string{"spec.oidc.mode", `"System"`, "oidc.issuerURL"}},
		{name: "fatal-oidc-config", xr: data("xr-fatal-oidc-config.yaml"), required: []string{example("instancetypes.yaml")}, fatal: []string{"spec.oidc.customConfig.config", "jwt[0].issuer.url", "https"}},
	}
}

package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/render"
)

const tenantTestdata = "testdata/tenant"

// ageArmor is an armored age file as a YAML string holds it.
var ageArmor = regexp.MustCompile(`-----BEGIN AGE ENCRYPTED FILE-----[^"]*-----END AGE ENCRYPTED FILE-----(\\n)?`)

// backupIdentity is the age identity of the Secret in keys (YAML documents:
// a ConfigMap and the Secret etcd-backup-identity, key identity).
func backupIdentity(t *testing.T, keys []byte) *age.X25519Identity {
	t.Helper()
	for _, doc := range bytes.Split(keys, []byte("\n---\n")) {
		var s struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(doc, &s); err != nil {
			t.Fatal(err)
		}
		if s.Kind != "Secret" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(s.Data["identity"])
		if err != nil {
			t.Fatal(err)
		}
		id, err := age.ParseX25519Identity(strings.TrimSpace(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	t.Fatal("no identity Secret")
	return nil
}

// tenantEtcd is the base name of a Tenant's etcd (docs/architecture.md,
// Names), written here by hand.
const tenantEtcd = "tenantkubenamespaceetcdofthetenant"

// TestTenantRender renders the Tenant through the real
// Crossplane engine and its own Composition and XRD
// (package/composition-tenant.yaml, package/xrd-tenant.yaml, picked by the
// XR's kind as `make render` does) and compares with golden files: the
// example serving the TenantCluster demo of examples/xr-namespaced.yaml,
// the example serving a second TenantCluster (the Tenant reads no
// TenantCluster: each is served through its KamajiControlPlane on the
// Tenant's DataStore, controlled by the TenantCluster), and a name that
// is no namespace (Fatal). It checks values worked out by hand, that
// examples/tenant-datastore.yaml is the DataStore the Tenant composes, and
// that the CSI ClusterRoleBinding is the one the claim of the same cluster
// composes (test/testdata/workers/default.golden.yaml).
func TestTenantRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	// examples/functions.yaml names all three functions.
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	validator := sharedValidator(t)
	example := func(p string) string { return filepath.Join(root, "examples", p) }
	data := func(p string) string { return filepath.Join(root, "test", tenantTestdata, p) }
	renderXR := func(xr string, required []string, observed string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{Root: root, XR: xr, Required: required, Observed: observed, BinDir: binDir, Stderr: &bytes.Buffer{}, Clock: renderClock})
	}

	// 4Gi = 4294967296 bytes; 95% is 4080218931.2, rounded down.
	exampleLines := []string{
		"  - " + tenantEtcd + ".tenant-demo.svc:2379\n",
		"          name: " + tenantEtcd + "-ca\n",
		"          name: " + tenantEtcd + "-client-tls\n",
		"    quota-backend-bytes: \"4080218931\"\n",
		"  replicas: 3\n",
		"  name: tenantkube:kcsi-controller:tenant-demo.demo\n",
		"  dataStoreName: tenantkube.tenant.tenant-demo\n",
		"  clusters: 1\n",
		// The Tenant itself is in use by the cluster's control plane.
		"  name: " + tenantEtcd + "-tenant-used-by-demo\n",
		"    kind: Tenant\n",
	}
	cases := []struct {
		name, xr string
		required []string
		observed string // observed composed resources
		fatal    []string
		contains []string
	}{
		{name: "example", xr: example("tenant.yaml"), required: []string{data("controlplanes.yaml")}, contains: exampleLines},
		{name: "two-clusters", xr: example("tenant.yaml"), required: []string{data("controlplanes.yaml"), data("controlplane-second.yaml")}, contains: []string{
			"  name: tenantkube:kcsi-controller:tenant-demo.demo\n", "  name: tenantkube:kcsi-controller:tenant-demo.second\n",
			"  name: " + tenantEtcd + "-used-by-second\n", "  name: " + tenantEtcd + "-datastore-used-by-second\n",
			"  name: " + tenantEtcd + "-tenant-used-by-second\n", "  clusters: 2\n",
		}},
		// The Tenant's etcd on the etcd-operator.cozystack.io/v1alpha2
		// operator: its client Service <base>-client, its headless <base>.
		{name: "etcd-cozystack", xr: example("tenant.yaml"), required: []string{data("controlplanes.yaml"), filepath.Join(root, "test", pipelineTestdata, "platform-etcd-cozystack.yaml")}, contains: []string{
			"apiVersion: etcd-operator.cozystack.io/v1alpha2\n", "  - " + tenantEtcd + "-client.tenant-demo.svc:2379\n", "  - '*." + tenantEtcd + ".tenant-demo.svc'\n",
			"    quotaBackendBytes: 4080218931\n", "  version: 3.6.11\n",
		}},
		// Backups of the Tenant's etcd: the 24h slot of
		// tenant-demo/tenantkubenamespaceetcdofthetenant began 2026-12-03
		// 04:59:05 (the first 8 bytes of its SHA-256, 0xa433d5226e8d1899,
		// are 17945 s = 4h59m05s modulo a day); demo, the one cluster
		// served, has its PKI carried; its KamajiControlPlane, created at
		// 10:00, is 2h old, so the first backup is awaited, not overdue
		// (twice the interval, 48h). The name ends in e8f851, the
		// digest of the UID render gives the Tenant
		// (fc30b6c7-7f2d-5832-be29-81fc691c862f, `printf <uid> | sha256sum`),
		// whose first 12, e8f85153369b, are in demo's PKI object's name.
		{name: "etcd-backup", xr: example("tenant.yaml"), required: []string{data("controlplanes.yaml"), data("demo-pki.yaml"),
			filepath.Join(root, "test", pipelineTestdata, "platform-etcd-backup.yaml"), filepath.Join(root, "test", pipelineTestdata, "backup-keys.yaml"), filepath.Join(root, "test", pipelineTestdata, "backup-credentials.yaml"), filepath.Join(root, "test", pipelineTestdata, "tenant-namespace.yaml")}, contains: []string{
			"kind: EtcdSnapshot\n", "  name: 20261203045905-e8f851\n", "    name: " + tenantEtcd + "\n", "      key: tenantkube/tenant-demo\n",
			"  name: tenant-demo.20261203045905-e8f851\n", "  clusters:\n    demo:\n      clusterPKI: tenant-demo.demo-pki-e8f85153369b-cff91bfdc0\n      dataStoreSchema: ",
			"type: BackupCurrent\n", "reason: AwaitingFirstBackup\n",
		}},
		// The spread of namespaced clusters: demo asks for a slot at
		// the render's clock (12:00). A first request waits until its
		// record settles (Waiting since 12:00); one waiting since 11:59
		// is admitted (Rolling since 12:00); with the three slots taken
		// by others' records it goes on waiting, WaitingForRollSlot.
		{name: "roll-first-request", xr: example("tenant.yaml"), required: []string{data("controlplane-requesting.yaml")}, contains: []string{
			"    tenantkube.io/roll: Waiting\n", "    tenantkube.io/waiting-since: \"2026-12-03T12:00:00Z\"\n", "    tenantkube.io/roll-reason: WaitingForRollSlot\n",
		}},
		{name: "roll-admitted", xr: example("tenant.yaml"), required: []string{data("controlplane-requesting.yaml")}, observed: data("roll-waited.yaml"), contains: []string{
			"    tenantkube.io/roll: Rolling\n", "    tenantkube.io/roll-since: \"2026-12-03T12:00:00Z\"\n",
		}},
		{name: "roll-waiting", xr: example("tenant.yaml"), required: []string{data("controlplane-requesting.yaml"), data("roll-records-full.yaml")}, observed: data("roll-waited.yaml"), contains: []string{
			"    tenantkube.io/roll: Waiting\n", "    tenantkube.io/roll-reason: WaitingForRollSlot\n", "    tenantkube.io/waiting-since: \"2026-12-03T11:59:00Z\"\n",
		}},
		{name: "fatal-name", xr: data("tenant-bad-name.yaml"), fatal: []string{"step control-plane", "metadata.name", `"tenant.demo"`}},
		// A platform as Cozystack runs it: the Tenant reads
		// KamajiControlPlanes v1alpha2, first served by the Kamaji
		// control-plane provider v0.20.0; it composes no Cluster API kind.
		{name: "fatal-platform-apis", xr: example("tenant.yaml"), required: []string{data("controlplanes.yaml"), filepath.Join(root, "test", pipelineTestdata, "platform-cozystack-apis.yaml")},
			fatal: []string{"step control-plane", "no APIService <version>.<group>): controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane (Cluster API control-plane provider Kamaji v0.20.0)."}},
	}
	outputs := map[string][]byte{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderXR(c.xr, c.required, c.observed)
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
				outputs[c.name] = out
			}
			// age encryption is randomised: the golden holds a placeholder
			// (the etcd-backup-pki case decrypts the real one).
			compareGolden(t, filepath.Join(tenantTestdata, c.name+".golden.yaml"), ageArmor.ReplaceAll(got, []byte("<age encrypted>")))
		})
	}

	t.Run("etcd-backup-pki", func(t *testing.T) {
		out := outputs["etcd-backup"]
		if out == nil {
			t.Fatal("the etcd-backup case did not render")
		}
		// The PKI object of demo: cff91bfdc0 is the first 10 hex digits of
		// the SHA-256 of demo-pki.yaml's values as JSON (Python's
		// json.dumps, sorted keys, no spaces, values base64).
		obj := renderedObjects(t, out)["EnvironmentConfig/tenant-demo.demo-pki-e8f85153369b-cff91bfdc0"]
		if obj == nil {
			t.Fatal("no PKI object tenant-demo.demo-pki-e8f85153369b-cff91bfdc0 rendered")
		}
		keys, err := os.ReadFile(filepath.Join(root, "test", pipelineTestdata, "backup-keys.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		id := backupIdentity(t, keys)
		armored, _ := obj["data"].(map[string]any)["pki"].(string)
		rd, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), id)
		if err != nil {
			t.Fatalf("the platform's identity does not open the PKI object: %v", err)
		}
		plain, err := io.ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		var pki map[string]map[string][]byte
		if err := json.Unmarshal(plain, &pki); err != nil {
			t.Fatal(err)
		}
		// demo-pki.yaml's values, decoded by hand.
		for role, kv := range map[string][2]string{"ca": {"ca.key", "demo cluster CA key"}, "sa-certificate": {"sa.key", "demo service-account private key"},
			"front-proxy-ca-certificate": {"front-proxy-ca.key", "demo front-proxy CA key"}} {
			if got := string(pki[role][kv[0]]); got != kv[1] {
				t.Errorf("PKI object %s[%s] = %q, want %q", role, kv[0], got, kv[1])
			}
		}
		if len(pki) != 3 {
			t.Errorf("the PKI object carries %d Secrets, want 3", len(pki))
		}
	})

	t.Run("example-datastore", func(t *testing.T) {
		out := outputs["example"]
		if out == nil {
			t.Fatal("the example did not render (see the example case)")
		}
		composed := renderedObjects(t, out)["DataStore/tenantkube.tenant.tenant-demo"]
		raw, err := os.ReadFile(example("tenant-datastore.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ex := map[string]any{}
		if err := yaml.Unmarshal(raw, &ex); err != nil {
			t.Fatal(err)
		}
		if composed == nil {
			t.Fatal("the Tenant composes no DataStore tenantkube.tenant.tenant-demo")
		}
		if d := cmp.Diff(ex["spec"], composed["spec"]); d != "" {
			t.Errorf("examples/tenant-datastore.yaml is not the DataStore the Tenant composes (-example +composed):\n%s", d)
		}
	})

	t.Run("binding-as-the-claims", func(t *testing.T) {
		// The same ClusterRoleBinding as a claim of the name composes but
		// for where the ServiceAccount is.
		out := outputs["example"]
		if out == nil {
			t.Fatal("the example did not render (see the example case)")
		}
		raw, err := os.ReadFile(filepath.Join(root, "test", "testdata", "workers", "default.golden.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		const key = "ClusterRoleBinding/tenantkube:kcsi-controller:tenant-demo.demo"
		claim, tenant := renderedObjects(t, raw)[key], renderedObjects(t, out)[key]
		if claim == nil || tenant == nil {
			t.Fatalf("%s: composed by the claim %v, by the Tenant %v", key, claim != nil, tenant != nil)
		}
		for _, o := range []map[string]any{claim, tenant} {
			delete(o["metadata"].(map[string]any), "annotations") // the composed-resource names differ
		}
		// The claim's CSI controller runs in its management namespace, a
		// TenantCluster's in NS: only the subject's namespace differs.
		sub := claim["subjects"].([]any)[0].(map[string]any)
		if got, want := sub["namespace"], fntest.ManagementNamespace("tenant-demo", "demo"); got != want {
			t.Errorf("the claim's CSI binding names a ServiceAccount of %v, want the management namespace %s", got, want)
		}
		sub["namespace"] = "tenant-demo"
		if d := cmp.Diff(claim, tenant); d != "" {
			t.Errorf("the Tenant's CSI binding differs from the claim's (-claim +Tenant):\n%s", d)
		}
	})
}

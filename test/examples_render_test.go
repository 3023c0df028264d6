package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/preview"
	"github.com/tenantkube/tenantkube/internal/render"
)

// exampleCommand is the `make -s render XR=... REQUIRED="..."` command
// the header comment of an example file gives, backslash continuations
// joined.
var exampleCommand = regexp.MustCompile(`make -s render XR=(\S+)(?: REQUIRED=(?:"([^"]*)"|(\S+)))?`)

// exampleInputs reads the render command from file's comment: the XR and
// the required paths, relative to root.
func exampleInputs(t *testing.T, root, file string) (xr string, required []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var comment strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		if s, ok := strings.CutSuffix(l, `\`); ok {
			comment.WriteString(strings.TrimSpace(s) + " ")
			continue
		}
		comment.WriteString(l + "\n")
	}
	m := exampleCommand.FindStringSubmatch(comment.String())
	if m == nil {
		t.Fatalf("%s: no `make -s render XR=...` command in its comment", file)
	}
	if m[1] != file {
		t.Fatalf("%s: its command renders %s", file, m[1])
	}
	for _, r := range strings.Fields(m[2] + " " + m[3]) {
		required = append(required, filepath.Join(root, r))
	}
	return filepath.Join(root, m[1]), required
}

// object is the rendered object of kind and name, or nil.
func object(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// condition is the reason and message of the XR's condition typ.
func condition(t *testing.T, xr *unstructured.Unstructured, typ string) (reason, message string) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(xr.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return r, msg
		}
	}
	t.Fatalf("the XR has no condition %s", typ)
	return "", ""
}

// TestExamplesRender renders each example of a feature that needs inputs
// beyond the instance types (examples/talos, backup, restore, oidc) with
// the command its comment gives, through the real Crossplane engine, and
// checks values the tenant and platform guides document.
func TestExamplesRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	validator := sharedValidator(t)
	renderFile := func(t *testing.T, xr string, required []string) ([]*unstructured.Unstructured, []byte, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := render.Render(ctx, render.Options{Root: root, XR: xr, Required: required, BinDir: binDir, Stderr: &bytes.Buffer{}, Clock: renderClock})
		if err != nil {
			return nil, nil, err
		}
		if err := validator.ValidateYAMLStream(out); err != nil {
			t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
		}
		objs, err := preview.ReadYAML(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) == 0 || objs[0].GetKind() != "XKubernetesCluster" {
			t.Fatalf("the render does not start with the XR:\n%s", out)
		}
		return objs, out, nil
	}
	mustRender := func(t *testing.T, file string) ([]*unstructured.Unstructured, []byte) {
		t.Helper()
		xr, required := exampleInputs(t, root, file)
		objs, out, err := renderFile(t, xr, required)
		if err != nil {
			var ce *render.CrossplaneError
			if errors.As(err, &ce) {
				err = errors.New(render.Message(ce.Stderr))
			}
			t.Fatalf("%s: %v", file, err)
		}
		return objs, out
	}
	contains := func(t *testing.T, out []byte, want ...string) {
		t.Helper()
		for _, w := range want {
			if !bytes.Contains(out, []byte(w)) {
				t.Errorf("output does not hold %q", w)
			}
		}
	}

	// docs/tenant-guide.md, "Worker OS": TalosConfigTemplate N-G, the
	// disk image <imageFactoryURL>/image/<schematicID>/<version>/openstack-amd64.raw.xz
	// and installer <installerRepository>/<schematicID>:<version> at the
	// defaults (factory.talos.dev, the Cozystack chart's vanilla schematic),
	// the endpoint https://N.NS.svc.cluster.local:6443, the mirror under
	// Talos' machine.registries.mirrors; the Ubuntu group stays kubeadm.
	t.Run("talos", func(t *testing.T) {
		objs, out := mustRender(t, "examples/talos/claim.yaml")
		const schematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
		tct := object(objs, "TalosConfigTemplate", "demo-md0")
		if tct == nil {
			t.Fatal("no TalosConfigTemplate demo-md0")
		}
		contains(t, out,
			"url: https://factory.talos.dev/image/"+schematic+"/v1.13.6/openstack-amd64.raw.xz\n",
			"image: factory.talos.dev/installer/"+schematic+":v1.13.6\n",
			"endpoint: https://demo.tenant-demo.svc.cluster.local:6443\n",
			"- https://mirror.example.net/docker.io\n")
		if object(objs, "KubeadmConfigTemplate", "demo-legacy") == nil {
			t.Error("no KubeadmConfigTemplate demo-legacy for the Ubuntu group")
		}
		md := object(objs, "MachineDeployment", "demo-md0")
		if kind, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "kind"); kind != "TalosConfigTemplate" {
			t.Errorf("MachineDeployment demo-md0 bootstraps from a %q, want TalosConfigTemplate", kind)
		}
		// Without the CA Secrets the Talos group waits.
		objs, _, err := renderFile(t, filepath.Join(root, "examples/talos/claim.yaml"), []string{filepath.Join(root, "examples/instancetypes.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := condition(t, objs[0], "WorkersReady"); r != "WaitingForTalosPKI" {
			t.Errorf("WorkersReady reason %q without the Talos PKI, want WaitingForTalosPKI", r)
		}
	})

	// docs/tenant-guide.md, "Backups and restore": status.backup.interval
	// is the asked 6h; the etcd is the operator the backups need
	// (docs/platform-guide.md, "Backups"). The credentials Secret without
	// its tenantkube.io/backup-credentials-for label: BackupCurrent False,
	// BackupCredentialsNotScoped, naming the Secret.
	t.Run("backup", func(t *testing.T) {
		objs, _ := mustRender(t, "examples/backup/claim.yaml")
		if iv, _, _ := unstructured.NestedString(objs[0].Object, "status", "backup", "interval"); iv != "6h" {
			t.Errorf("status.backup.interval %q, want 6h", iv)
		}
		etcd := object(objs, "EtcdCluster", "demo-etcd")
		if etcd == nil || etcd.GetAPIVersion() != "etcd-operator.cozystack.io/v1alpha2" {
			t.Errorf("no etcd-operator.cozystack.io/v1alpha2 EtcdCluster demo-etcd: %v", etcd)
		}

		dir := t.TempDir()
		entries, err := os.ReadDir(filepath.Join(root, "examples/backup"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(root, "examples/backup", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == "s3-credentials.yaml" {
				unlabelled := bytes.Replace(raw, []byte("  labels:\n    tenantkube.io/backup-credentials-for: tenant-demo\n"), nil, 1)
				if bytes.Equal(unlabelled, raw) {
					t.Fatal("examples/backup/s3-credentials.yaml carries no tenantkube.io/backup-credentials-for label")
				}
				raw = unlabelled
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		objs, _, err = renderFile(t, filepath.Join(root, "examples/backup/claim.yaml"), []string{filepath.Join(root, "examples/instancetypes.yaml"), dir})
		if err != nil {
			t.Fatal(err)
		}
		r, msg := condition(t, objs[0], "BackupCurrent")
		if r != "BackupCredentialsNotScoped" || !strings.Contains(msg, "tenant-demo/etcd-backup-s3") || !strings.Contains(msg, "tenantkube.io/backup-credentials-for: tenant-demo") {
			t.Errorf("BackupCurrent without the label: %s: %s", r, msg)
		}
	})

	// A restore (docs/tenant-guide.md, "Backups and restore";
	// docs/platform-guide.md): the etcd starts from the S3 key
	// <keyPrefix>/<NS>/<backup>.db, the restored cluster's CA Secret
	// demo2-ca holds the backup's CA key (the bundle's placeholder,
	// base64-encoded by hand here), and ControlPlaneReady is False,
	// RestoringPKI.
	t.Run("restore", func(t *testing.T) {
		objs, out := mustRender(t, "examples/restore/claim.yaml")
		contains(t, out, "key: tenantkube/tenant-demo/demo-20261202183044-c62685.db\n")
		ca := object(objs, "Secret", "demo2-ca")
		if ca == nil {
			t.Fatal("no Secret demo2-ca")
		}
		want := base64.StdEncoding.EncodeToString([]byte("placeholder: demo's cluster CA key"))
		if got, _, _ := unstructured.NestedString(ca.Object, "data", "ca.key"); got != want {
			t.Errorf("demo2-ca ca.key %q, want %q", got, want)
		}
		if r, _ := condition(t, objs[0], "ControlPlaneReady"); r != "RestoringPKI" {
			t.Errorf("ControlPlaneReady reason %q, want RestoringPKI", r)
		}
	})

	// docs/tenant-guide.md, "API server flags, volumes and OIDC": System
	// trusts the platform's issuer for the audience <namespace>.<name>
	// with the email claim, through --authentication-config and the file
	// at /etc/kubernetes/authentication-config/config.yaml of ConfigMap
	// <name>-oidc-authn-config; users admin and view bound to cluster-admin
	// and view by the release <name>-oidc-users.
	t.Run("oidc", func(t *testing.T) {
		objs, out := mustRender(t, "examples/oidc/claim.yaml")
		cm := object(objs, "ConfigMap", "demo-oidc-authn-config")
		if cm == nil {
			t.Fatal("no ConfigMap demo-oidc-authn-config")
		}
		cfg, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
		for _, w := range []string{"kind: AuthenticationConfiguration\n", "url: https://id.example.net/realms/platform\n", "- tenant-demo.demo\n", "claim: email\n"} {
			if !strings.Contains(cfg, w) {
				t.Errorf("config.yaml does not hold %q:\n%s", w, cfg)
			}
		}
		contains(t, out, "- --authentication-config=/etc/kubernetes/authentication-config/config.yaml\n",
			"mountPath: /etc/kubernetes/authentication-config\n")
		hr := object(objs, "HelmRelease", "demo-oidc-users")
		if hr == nil {
			t.Fatal("no HelmRelease demo-oidc-users")
		}
		bindings, _, _ := unstructured.NestedSlice(hr.Object, "spec", "values", "bindings")
		got := map[string]any{}
		for _, b := range bindings {
			m, _ := b.(map[string]any)
			got[m["user"].(string)] = m["clusterRole"]
		}
		if got["jane@example.com"] != "cluster-admin" || got["joe@example.com"] != "view" || len(got) != 2 {
			t.Errorf("oidc-users bindings %v, want jane@example.com cluster-admin, joe@example.com view", got)
		}

		objs, _ = mustRender(t, "examples/oidc/claim-custom.yaml")
		cm = object(objs, "ConfigMap", "byo-oidc-authn-config")
		if cm == nil {
			t.Fatal("no ConfigMap byo-oidc-authn-config")
		}
		cfg, _, _ = unstructured.NestedString(cm.Object, "data", "config.yaml")
		if !strings.Contains(cfg, "url: https://login.example.com\n") {
			t.Errorf("byo's config.yaml does not name its issuer:\n%s", cfg)
		}
	})
}

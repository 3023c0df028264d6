package main

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// The Tenant tenant-demo's 24h slot, worked out by hand: the first 8
// bytes of sha256("tenant-demo/tenantkubenamespaceetcdofthetenant") are
// 0xa433d5226e8d1899, 17945 modulo 86400 (4h59m05s), so at 2026-12-03
// 12:00 UTC its slot began 04:59:05. tenantUID's digest is 24ff68
// (`printf <uid> | sha256sum`).
const (
	tenantSlot   = "20261203045905"
	tenantUID    = "7a0c3e51-2b64-4d8f-a913-5c0e8b2f6d47"
	tenantDigest = "24ff68"
	// tenantBackup is the Tenant's backup of that slot.
	tenantBackup = tenantSlot + "-" + tenantDigest
)

// Schemas of the TenantClusters a and b in the Tenant's etcd, as their
// KamajiControlPlanes name them.
const (
	schemaA = "t0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	schemaB = "t0bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// tenantBackupCall is the Tenant tenant-demo on a platform taking backups
// (backupInput), serving TenantClusters a and b, with the PKI Secrets of
// the clusters in withPKI.
func tenantBackupCall(key *age.X25519Identity, withPKI ...string) tenantCall {
	kcp := func(n, schema string) string {
		return "{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: " + n +
			", namespace: tenant-demo}, spec: {dataStoreName: " + tenantDS + ", dataStoreSchema: " + schema + "}}"
	}
	req := map[string][]string{
		requiredTenantClusters:        {tenantCluster("tenant-demo", "a"), tenantCluster("tenant-demo", "b")},
		requiredTenantClaims:          nil,
		requiredTenantControlPlanes:   {kcp("a", schemaA), kcp("b", schemaB)},
		requiredBackupRecipient:       {`{apiVersion: v1, kind: ConfigMap, metadata: {name: etcd-backup-recipient, namespace: tenantkube-system}, data: {recipient: ` + key.Recipient().String() + `}}`},
		function.RequirementNamespace: {tenantNamespace},
	}
	for _, n := range withPKI {
		for _, role := range restoredPKI {
			req[requiredBackupSourcePrefix+n+"."+role.Role] = []string{secretYAML(n+"-"+role.Role, map[string]string{"key": n + " " + role.Role})}
		}
	}
	return tenantCall{name: "tenant-demo", spec: `{}`, input: backupInput, uid: tenantUID, created: "2026-12-03T10:00:00Z", required: req}
}

func planTenantAt(t *testing.T, c tenantCall, now time.Time) *function.Plan {
	t.Helper()
	r := function.NewRequest(c.request(t))
	spec := &tkv1alpha1.TenantSpec{}
	if err := r.CompositeSpec(spec); err != nil {
		t.Fatal(err)
	}
	p, errs := planTenant(c.name, spec, inputOf(t, c.input), r, now)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return p
}

// A Tenant backs up the namespace's etcd: one EtcdSnapshot of its
// EtcdCluster per slot and a bundle carrying, for each TenantCluster whose
// PKI has arrived, its three restored Secrets and its etcd account.
func TestTenantBackup(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p := planTenantAt(t, tenantBackupCall(key, "a"), backupNow)
	snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+tenantSlot)
	if snap.Name != tenantBackup || snap.Namespace != "tenant-demo" || snap.Spec.ClusterRef.Name != tenantEtcdBase {
		t.Errorf("EtcdSnapshot %s/%s of %s, want tenant-demo/%s of %s", snap.Namespace, snap.Name, snap.Spec.ClusterRef.Name, tenantBackup, tenantEtcdBase)
	}
	if s3 := snap.Spec.Destination.S3; s3 == nil || s3.Key != "tenantkube/tenant-demo" {
		t.Errorf("destination %+v", snap.Spec.Destination)
	}
	if got := snap.Labels[function.LabelNamespace]; got != "tenant-demo" {
		t.Errorf("EtcdSnapshot labels %v", snap.Labels)
	}
	if len(snap.OwnerReferences) != 1 || snap.OwnerReferences[0].Kind != "Namespace" || string(snap.OwnerReferences[0].UID) != tenantDemoUID {
		t.Errorf("EtcdSnapshot owners %v, want the Namespace tenant-demo", snap.OwnerReferences)
	}
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+tenantSlot)
	if env.Name != "tenant-demo."+tenantBackup {
		t.Errorf("bundle %s, want tenant-demo.%s", env.Name, tenantBackup)
	}
	var clusters map[string]map[string]string
	if err := json.Unmarshal(env.Data["clusters"].Raw, &clusters); err != nil {
		t.Fatal(err)
	}
	// b's PKI has not arrived: the backup carries a alone.
	if want := map[string]map[string]string{"a": {"dataStoreSchema": schemaA, "dataStoreUsername": schemaA}}; !cmp.Equal(clusters, want) {
		t.Errorf("bundle clusters %v, want %v", clusters, want)
	}
	var armored string
	_ = json.Unmarshal(env.Data["pki"].Raw, &armored)
	if strings.Contains(armored, "a ca") {
		t.Fatal("the bundle holds a's CA in clear")
	}
	var pki map[string]map[string]map[string][]byte
	if err := openBundle(armored, key, &pki); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"ca", "sa-certificate", "front-proxy-ca-certificate"} {
		if got := string(pki["a"][role]["key"]); got != "a "+role {
			t.Errorf("bundle a[%s] = %q, want %q", role, got, "a "+role)
		}
	}
	if len(pki) != 1 || len(pki["a"]) != 3 {
		t.Errorf("bundle PKI holds %d clusters, a %d Secrets; want 1 and 3", len(pki), len(pki["a"]))
	}
	if got := p.Status["backup"].(map[string]any)["interval"]; got != "24h0m0s" {
		t.Errorf("status.backup.interval %v", got)
	}
}

// Without a cluster's PKI a backup restores nothing: none is taken, and
// the Tenant reports that none has succeeded yet.
func TestTenantBackupWaitsForAClusterPKI(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p := planTenantAt(t, tenantBackupCall(key), backupNow)
	if got := composedWithPrefix(p, namePrefixBackup); len(got) != 0 {
		t.Errorf("backups composed without any cluster's PKI: %v", got)
	}
	var reason string
	for _, c := range p.Conditions {
		if c.Type == tkv1alpha1.ConditionBackupCurrent {
			reason = c.Reason
		}
	}
	if reason != tkv1alpha1.ReasonAwaitingFirstBackup {
		t.Errorf("BackupCurrent reason %q, want %s", reason, tkv1alpha1.ReasonAwaitingFirstBackup)
	}
	// Each served cluster's three Secrets are asked for.
	for _, n := range []string{"a", "b"} {
		for _, role := range restoredPKI {
			if sel := p.Requirements[requiredBackupSourcePrefix+n+"."+role.Role]; sel.GetMatchName() != n+"-"+role.Role || sel.GetNamespace() != "tenant-demo" {
				t.Errorf("requirement of %s's %s: %v", n, role.Role, sel)
			}
		}
	}
}

// What a backup carries is read only while one is to be written: with the
// slot's backup and its bundle observed, no PKI Secret and no recipient is
// asked for; with the bundle missing they are.
func TestBackupRequiresPKIOnlyWhenDue(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	snapshot := snapshotYAML(slot24h, "Complete", "2026-12-02T18:31:00Z")
	bundle := `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + slot24h + `-` + digestDemo + `}, data: {pki: x}}`
	for name, tc := range map[string]struct {
		observed map[string]string
		want     bool
	}{
		"Taken":         {map[string]string{"backup-" + slot24h: snapshot, "backup-pki-" + slot24h: bundle}, false},
		"BundleMissing": {map[string]string{"backup-" + slot24h: snapshot}, true},
		"Due":           {nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: tc.observed, Required: backupRequired(key)}, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{requiredBackupSourcePrefix + "ca", requiredBackupSourcePrefix + "etcd-peer-ca", requiredBackupRecipient} {
				if _, got := p.Requirements[k]; got != tc.want {
					t.Errorf("requirement %s asked: %v, want %v", k, got, tc.want)
				}
			}
		})
	}
}

// A backup's name fits the Job etcd-operator v0.5.4 runs for it,
// "<name>-snapshot", whose name Kubernetes copies into a label value (at
// most 63 characters), for every cluster name up to the longest; a
// Tenant's backup names never equal a cluster's.
func TestBackupNameFitsTheSnapshotJob(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	ts := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	tenant := backupName("", "ffffff", ts)
	for range 2000 {
		n := make([]byte, 1+rng.IntN(function.MaxClusterNameLength))
		for i := range n {
			n[i] = alphabet[rng.IntN(len(alphabet)-1)] // no '-' at the ends
			if i > 0 && i < len(n)-1 && rng.IntN(5) == 0 {
				n[i] = '-'
			}
		}
		name := backupName(string(n), "ffffff", ts)
		for _, s := range []string{name, tenant} {
			if msgs := validation.IsValidLabelValue(s + "-snapshot"); len(msgs) > 0 {
				t.Fatalf("the snapshot Job of backup %q: %v", s, msgs)
			}
			if !backupNamePattern.MatchString(s) {
				t.Fatalf("backup %q does not match the restore's pattern", s)
			}
		}
		if name == tenant {
			t.Fatalf("cluster %s's backup is named as the Tenant's: %s", n, name)
		}
	}
	if got := backupName(strings.Repeat("a", function.MaxClusterNameLength), "ffffff", ts); len(got) != 54 {
		t.Errorf("the longest cluster's backup name has %d characters, want 32+1+14+1+6 = 54", len(got))
	}
}

// A claim restores one TenantCluster of a Tenant's backup: the Tenant's
// snapshot file, that cluster's PKI and its etcd account.
func TestRestoreATenantBackup(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p := planTenantAt(t, tenantBackupCall(key, "a", "b"), backupNow)
	envJSON, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+tenantSlot))
	identity := `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-identity, namespace: tenantkube-system}, data: {identity: ` +
		base64.StdEncoding.EncodeToString([]byte(key.String())) + `}}`
	req := map[string][]string{requiredRestoreBundle: {string(envJSON)}, requiredRestoreIdentity: {identity}}
	restore := func(extra string) fntest.Call {
		return fntest.Call{Name: "demo2", Spec: `{restore: {backup: "` + tenantBackup + `"` + extra + `}}`, Required: req}
	}

	t.Run("NamesTheCluster", func(t *testing.T) {
		p, err := planBackupsAt(t, restore(", cluster: b"), backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		etcd := composedObject[etcdv1alpha2.EtcdCluster](t, p, nameEtcdCluster)
		if src := etcd.Spec.Bootstrap.Restore.Source.S3; src == nil || src.Key != "tenantkube/tenant-demo/"+tenantBackup+".db" {
			t.Errorf("bootstrap.restore.source %+v", etcd.Spec.Bootstrap.Restore.Source)
		}
		for _, role := range restoredPKI {
			s := composedObject[corev1.Secret](t, p, namePrefixRestoredPKI+role.Role)
			if want := "demo2-" + role.Role; s.Name != want || string(s.Data["key"]) != "b "+role.Role {
				t.Errorf("restored %s as %s: %q, want %s holding b's", role.Role, s.Name, s.Data["key"], want)
			}
		}
		obs := map[string]string{}
		for _, role := range restoredPKI {
			obs[namePrefixRestoredPKI+role.Role] = secretYAML("demo2-"+role.Role, map[string]string{"k": "v"})
		}
		c := restore(", cluster: b")
		c.Observed = obs
		p, err = planBackupsAt(t, c, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
		if kcp.Spec.DataStoreSchema != schemaB || kcp.Spec.DataStoreUsername != schemaB {
			t.Errorf("dataStoreSchema %v, dataStoreUsername %v, want b's %s", kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername, schemaB)
		}
	})
	for name, tc := range map[string]struct{ extra, want string }{
		"ClusterRequired": {"", `spec.restore.cluster: Required value: backup ` + tenantBackup + ` is the namespace's etcd: name the TenantCluster it restores, one of a, b`},
		"NoSuchCluster":   {", cluster: c", `spec.restore.cluster: Not found: "c: backup`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := planBackupsAt(t, restore(tc.extra), backupInput, backupNow)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("ClusterOfAClusterBackup", func(t *testing.T) {
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		own, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h))
		backup := "demo-" + slot24h + "-" + digestDemo
		c := fntest.Call{Name: "demo2", Spec: `{restore: {backup: ` + backup + `, cluster: other}}`, Required: map[string][]string{requiredRestoreBundle: {string(own)}, requiredRestoreIdentity: {identity}}}
		_, err = planBackupsAt(t, c, backupInput, backupNow)
		if want := `spec.restore.cluster: Invalid value: "other": backup ` + backup + ` is cluster demo's alone`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	})
}

// A TenantCluster restores nothing: its etcd is shared with the
// namespace's other TenantClusters. The Fatal says where to restore.
func TestTenantClusterRestoreIsRefused(t *testing.T) {
	c := fntest.Call{Name: "demo2", Namespaced: true, Spec: `{restore: {backup: "` + tenantBackup + `", cluster: a}}`}
	_, err := planBackupsAt(t, c, backupInput, backupNow)
	if want := "spec.restore.backup: Invalid value: \"" + tenantBackup + "\": a TenantCluster's etcd is its namespace's"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// A TenantCluster's spec.backup.interval changes nothing: the warning says
// whose backups cover it, or that none are taken.
func TestTenantClusterBackupIntervalIgnored(t *testing.T) {
	for input, want := range map[string]string{
		backupInput: "its Tenant backs up at the platform's interval",
		`{}`:        "the platform takes no backups of this cluster",
	} {
		p, err := planBackupsAt(t, fntest.Call{Namespaced: true, Spec: `{backup: {interval: 6h}}`}, input, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Message, want) {
			t.Errorf("warnings %v, want one saying %q", p.Warnings, want)
		}
	}
}

package main

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
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

// tenantKCP is the KamajiControlPlane of the TenantCluster n in
// tenant-demo on the Tenant's DataStore with dataStoreSchema schema,
// created at created.
func tenantKCP(n, schema, created string) string {
	return "{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: " + n +
		", namespace: tenant-demo, creationTimestamp: \"" + created + "\", ownerReferences: [" + controllerRef(tkv1alpha1.GroupVersion.String(), tkv1alpha1.NamespacedKind, n, true) +
		"]}, spec: {dataStoreName: " + tenantDS + ", dataStoreSchema: " + schema + "}}"
}

// tenantBackupCall is the Tenant tenant-demo on a platform taking backups
// (backupInput), serving TenantClusters a and b (their KamajiControlPlanes
// created with the Tenant), with the PKI Secrets of the clusters in
// withPKI.
func tenantBackupCall(key *age.X25519Identity, withPKI ...string) tenantCall {
	const created = "2026-12-03T10:00:00Z"
	req := map[string][]string{
		requiredTenantControlPlanes:      {tenantKCP("a", schemaA, created), tenantKCP("b", schemaB, created)},
		backup.RequiredBackupRecipient:   {`{apiVersion: v1, kind: ConfigMap, metadata: {name: etcd-backup-recipient, namespace: tenantkube-system}, data: {recipient: ` + key.Recipient().String() + `}}`},
		function.RequirementNamespace:    {tenantNamespace},
		backup.RequiredBackupCredentials: {scopedCredentials},
		backup.RequiredNamespaceBackups:  nil,
	}
	for _, n := range withPKI {
		for _, role := range backup.ControlPlanePKI {
			req[backup.RequiredBackupSourcePrefix+n+"."+role.Role] = []string{secretYAML(n+"-"+role.Role, map[string]string{"key": n + " " + role.Role})}
		}
	}
	return tenantCall{name: "tenant-demo", spec: `{}`, input: backupInput, uid: tenantUID, created: created, required: req}
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
	obj := composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "a"))
	// b's PKI has not arrived: the backup carries a alone.
	if want := map[string]map[string]string{"a": {"dataStoreSchema": schemaA, "dataStoreUsername": schemaA, "clusterPKI": obj.Name}}; !cmp.Equal(clusters, want) {
		t.Errorf("bundle clusters %v, want %v", clusters, want)
	}
	if got := composedWithPrefix(p, backup.NamePrefixBackupClusterPKI); len(got) != 1 {
		t.Errorf("PKI objects %v, want a's alone", got)
	}
	if !strings.HasPrefix(obj.Name, "tenant-demo.a-pki-"+uidTenant12+"-") || obj.Labels[function.LabelCluster] != "a" {
		t.Errorf("a's PKI object %s labelled %v", obj.Name, obj.Labels)
	}
	var armored string
	_ = json.Unmarshal(obj.Data["pki"].Raw, &armored)
	if strings.Contains(armored, "a ca") {
		t.Fatal("the PKI object holds a's CA in clear")
	}
	var pki map[string]map[string][]byte
	if err := backup.OpenBundle(armored, key, &pki); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"ca", "sa-certificate", "front-proxy-ca-certificate"} {
		if got := string(pki[role]["key"]); got != "a "+role {
			t.Errorf("PKI object %s[key] = %q, want %q", role, got, "a "+role)
		}
	}
	if len(pki) != 3 {
		t.Errorf("PKI object holds %d Secrets, want 3", len(pki))
	}
	if got := p.Status["backup"].(map[string]any)["interval"]; got != "24h" { // as backupInput writes it
		t.Errorf("status.backup.interval %v", got)
	}
}

// Without a cluster's PKI a backup restores nothing: none is taken, and
// the Tenant reports that none has succeeded yet.
func TestTenantBackupWaitsForAClusterPKI(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p := planTenantAt(t, tenantBackupCall(key), backupNow)
	if got := composedWithPrefix(p, backup.NamePrefixBackup); len(got) != 0 {
		t.Errorf("backups composed without any cluster's PKI: %v", got)
	}
	if c, _ := planCondition(p, tkv1alpha1.ConditionBackupCurrent); c.Reason != tkv1alpha1.ReasonAwaitingFirstBackup {
		t.Errorf("BackupCurrent reason %q, want %s", c.Reason, tkv1alpha1.ReasonAwaitingFirstBackup)
	}
	// Each served cluster's three Secrets are asked for.
	for _, n := range []string{"a", "b"} {
		for _, role := range backup.ControlPlanePKI {
			if sel := p.Requirements[backup.RequiredBackupSourcePrefix+n+"."+role.Role]; sel.GetMatchName() != n+"-"+role.Role || sel.GetNamespace() != "tenant-demo" {
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
			for _, k := range []string{backup.RequiredBackupSourcePrefix + "ca", backup.RequiredBackupSourcePrefix + "etcd-peer-ca", backup.RequiredBackupRecipient} {
				if _, got := p.Requirements[k]; got != tc.want {
					t.Errorf("requirement %s asked: %v, want %v", k, got, tc.want)
				}
			}
		})
	}
}

// A claim restores one TenantCluster of a Tenant's backup: the Tenant's
// snapshot file, that cluster's PKI and its etcd account.
func TestRestoreATenantBackup(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p := planTenantAt(t, tenantBackupCall(key, "a", "b"), backupNow)
	envJSON, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+tenantSlot))
	pkiB, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "b")))
	identity := `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-identity, namespace: tenantkube-system}, data: {identity: ` +
		base64.StdEncoding.EncodeToString([]byte(key.String())) + `}}`
	req := map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: {string(pkiB)}, backup.RequiredRestoreIdentity: {identity}}
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
		for _, role := range backup.ControlPlanePKI {
			s := composedObject[corev1.Secret](t, p, backup.NamePrefixRestoredPKI+role.Role)
			if want := "demo2-" + role.Role; s.Name != want || string(s.Data["key"]) != "b "+role.Role {
				t.Errorf("restored %s as %s: %q, want %s holding b's", role.Role, s.Name, s.Data["key"], want)
			}
		}
		obs := map[string]string{}
		for _, role := range backup.ControlPlanePKI {
			obs[backup.NamePrefixRestoredPKI+role.Role] = secretYAML("demo2-"+role.Role, map[string]string{"k": "v"})
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
	t.Run("IncompleteBundle", func(t *testing.T) {
		// A bundle naming no etcd account for the cluster would restore a
		// control plane serving none of the backup's data.
		broken := strings.Replace(string(envJSON), `"dataStoreSchema":"`+schemaB+`",`, ``, 1)
		if broken == string(envJSON) {
			t.Fatal("the bundle holds no b dataStoreSchema to remove")
		}
		c := fntest.Call{Name: "demo2", Spec: `{restore: {backup: "` + tenantBackup + `", cluster: b}}`, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {broken}}}
		if _, err := planBackupsAt(t, c, backupInput, backupNow); err == nil || !strings.Contains(err.Error(), "names no cluster, etcd account or PKI") {
			t.Errorf("got %v, want a Fatal saying the backup cannot be restored", err)
		}
	})
	t.Run("ClusterOfAClusterBackup", func(t *testing.T) {
		// A cluster's backup restores with restore.cluster empty or naming
		// that cluster, and no other.
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		own, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h))
		taken := "demo-" + slot24h + "-" + digestDemo
		for cluster, want := range map[string]string{
			"demo":  "",
			"other": `spec.restore.cluster: Invalid value: "other": backup ` + taken + ` is cluster demo's alone`,
		} {
			c := fntest.Call{Name: "demo2", Spec: `{restore: {backup: ` + taken + `, cluster: ` + cluster + `}}`, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(own)}}}
			_, err := planBackupsAt(t, c, backupInput, backupNow)
			if (want == "" && err != nil) || (want != "" && (err == nil || !strings.Contains(err.Error(), want))) {
				t.Errorf("restore.cluster %s: got %v, want %q", cluster, err, want)
			}
		}
	})
}

// A TenantCluster restores nothing: its etcd is shared with the
// namespace's other TenantClusters. The Fatal says where to restore, or,
// on a platform without backups, that there are none.
func TestTenantClusterRestoreIsRefused(t *testing.T) {
	c := fntest.Call{Name: "demo2", Namespaced: true, Spec: `{restore: {backup: "` + tenantBackup + `", cluster: a}}`}
	for input, want := range map[string]string{
		backupInput:    "spec.restore.backup: Invalid value: \"" + tenantBackup + "\": a TenantCluster's etcd is its namespace's",
		cozystackInput: "spec.restore.backup: Invalid value: \"" + tenantBackup + "\": this platform takes no backups",
	} {
		_, err := planBackupsAt(t, c, input, backupNow)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// The Tenant never drops a backup because something has not arrived in
// this call: with its backups observed, and in turn no lists, no
// Namespace, no recipient and no PKI, every snapshot, bundle and PKI
// object stays desired, the objects with their Namespace reference.
func TestTenantBackupsKeptWhileRequirementsArrive(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	first := planTenantAt(t, tenantBackupCall(key, "a"), backupNow)
	observed := map[string]string{}
	for _, c := range first.Composed {
		if strings.HasPrefix(c.Name, backup.NamePrefixBackup) {
			y, err := json.Marshal(c.Object)
			if err != nil {
				t.Fatal(err)
			}
			observed[c.Name] = string(y)
		}
	}
	if len(observed) != 3 {
		t.Fatalf("the first backup composed %d objects, want a snapshot, a bundle and a PKI object", len(observed))
	}
	// The next slot: a backup is due.
	later := backupNow.Add(24 * time.Hour)
	for name, drop := range map[string][]string{
		"NoLists":     {requiredTenantControlPlanes},
		"NoNamespace": {function.RequirementNamespace},
		"NoRecipient": {backup.RequiredBackupRecipient},
		"NoPKI":       {backup.RequiredBackupSourcePrefix + "a.ca"},
	} {
		t.Run(name, func(t *testing.T) {
			c := tenantBackupCall(key, "a")
			c.observed = observed
			for _, k := range drop {
				delete(c.required, k)
			}
			p := planTenantAt(t, c, later)
			desired := map[string]bool{}
			for _, d := range p.Composed {
				desired[d.Name] = true
				if snap, ok := d.Object.(*etcdv1alpha2.EtcdSnapshot); ok && observed[d.Name] != "" && len(snap.OwnerReferences) != 1 {
					t.Errorf("%s composed with owners %v, want the Namespace's kept", d.Name, snap.OwnerReferences)
				}
			}
			for _, k := range p.Kept {
				desired[k.Name] = true
			}
			for k := range observed {
				if !desired[k] {
					t.Errorf("observed %s left the desired state", k)
				}
			}
		})
	}
}

// A Tenant serving no TenantCluster has nothing to back up: BackupCurrent
// is True (NothingToBackUp), never an alert. With clusters, the first
// backup is due from the creation of the oldest one's
// KamajiControlPlane, not the Tenant's.
func TestTenantBackupCurrent(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	condition := func(p *function.Plan) (bool, string) {
		c, found := planCondition(p, tkv1alpha1.ConditionBackupCurrent)
		if !found {
			t.Fatal("no BackupCurrent condition")
		}
		return c.True, c.Reason
	}
	idle := tenantBackupCall(key)
	idle.created = "2026-11-01T00:00:00Z"
	idle.required[requiredTenantControlPlanes] = nil
	if ok, reason := condition(planTenantAt(t, idle, backupNow)); !ok || reason != tkv1alpha1.ReasonNothingToBackUp {
		t.Errorf("a Tenant serving no cluster: BackupCurrent %v %s, want True %s", ok, reason, tkv1alpha1.ReasonNothingToBackUp)
	}
	for name, tc := range map[string]struct {
		created string
		ok      bool
		reason  string
	}{
		// backupNow is 2026-12-03T12:00Z; twice the 24h interval is 48h.
		"ClusterYoung":  {"2026-12-02T00:00:00Z", true, tkv1alpha1.ReasonAwaitingFirstBackup},
		"ClusterTooOld": {"2026-12-01T11:59:00Z", false, tkv1alpha1.ReasonBackupOverdue},
	} {
		t.Run(name, func(t *testing.T) {
			c := tenantBackupCall(key) // no PKI: no backup is taken
			c.created = "2026-11-01T00:00:00Z"
			c.required[requiredTenantControlPlanes] = []string{tenantKCP("a", schemaA, tc.created), tenantKCP("b", schemaB, "2026-12-03T11:00:00Z")}
			if ok, reason := condition(planTenantAt(t, c, backupNow)); ok != tc.ok || reason != tc.reason {
				t.Errorf("BackupCurrent %v %s, want %v %s", ok, reason, tc.ok, tc.reason)
			}
		})
	}
}

// Only the current slot's backup gets a missing bundle: an older snapshot
// without one stays so, since the clusters and PKI of now are not those
// of its slot.
func TestBackupBundleOnlyForTheCurrentSlot(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	// The current slot's snapshot without its bundle gets one; a backup of
	// the current slot is taken beside an older snapshot without one, which
	// gets none.
	for name, tc := range map[string]struct {
		slot string
		want bool
	}{
		"CurrentSlot": {slot24h, true},
		"OlderSlot":   {"20261201183044", false},
	} {
		t.Run(name, func(t *testing.T) {
			obs := map[string]string{"backup-" + tc.slot: snapshotYAML(tc.slot, "Complete", "2026-12-01T18:31:00Z")}
			p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			composed := map[string]bool{}
			for _, c := range p.Composed {
				composed[c.Name] = true
			}
			if composed["backup-pki-"+tc.slot] != tc.want || !composed["backup-pki-"+slot24h] {
				t.Errorf("bundles composed: slot %s %v (want %v), current slot %v (want true)", tc.slot, composed["backup-pki-"+tc.slot], tc.want, composed["backup-pki-"+slot24h])
			}
		})
	}
}

// A PKI Secret larger than backup.MaxPKISecretBytes (a tenant may write any
// Secret of its namespace) is not carried: no backup of that cluster,
// BackupCurrent False naming the Secret; the Tenant's other clusters are
// backed up.
func TestBackupRefusesAnOversizedPKISecret(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	big := strings.Repeat("x", backup.MaxPKISecretBytes)
	c := tenantBackupCall(key, "a", "b")
	c.required[backup.RequiredBackupSourcePrefix+"b.ca"] = []string{secretYAML("b-ca", map[string]string{"ca.key": big})}
	p := planTenantAt(t, c, backupNow)
	if got := composedWithPrefix(p, backup.NamePrefixBackupClusterPKI); len(got) != 1 || !strings.HasPrefix(got[0], backup.NamePrefixBackupClusterPKI+"a-") {
		t.Errorf("PKI objects %v, want a's alone", got)
	}
	if cond, found := planCondition(p, tkv1alpha1.ConditionBackupCurrent); !found {
		t.Error("no BackupCurrent condition")
	} else if cond.True || cond.Reason != tkv1alpha1.ReasonPKISecretTooLarge || !strings.Contains(cond.Message, "Secret tenant-demo/b-ca holds 16390 bytes") {
		t.Errorf("BackupCurrent %v %s %q, want False %s naming tenant-demo/b-ca and its 16390 bytes (6 of key, 16384 of value)", cond.True, cond.Reason, cond.Message, tkv1alpha1.ReasonPKISecretTooLarge)
	}
	// At the bound it is carried.
	c.required[backup.RequiredBackupSourcePrefix+"b.ca"] = []string{secretYAML("b-ca", map[string]string{"ca.key": big[:backup.MaxPKISecretBytes-len("ca.key")]})}
	if got := composedWithPrefix(planTenantAt(t, c, backupNow), backup.NamePrefixBackupClusterPKI); len(got) != 2 {
		t.Errorf("PKI objects %v, want a's and b's", got)
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

// A cluster's backups share its PKI object; the function keeps the ones
// retained bundles name, writes one again where the current slot's bundle
// names it and it is gone (the same PKI, the same name), and lets go of
// one no bundle names.
func TestBackupPKIObjectsFollowTheBundles(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	first, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	pkiKey := pkiObjectKey(t, first, "demo")
	observed := map[string]string{}
	for _, c := range first.Composed {
		if strings.HasPrefix(c.Name, backup.NamePrefixBackup) {
			y, _ := json.Marshal(c.Object)
			observed[c.Name] = string(y)
		}
	}
	run := func(obs map[string]string) *function.Plan {
		t.Helper()
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	kept := func(p *function.Plan, name string) bool {
		return slices.ContainsFunc(p.Kept, func(k function.Kept) bool { return k.Name == name })
	}

	t.Run("Kept", func(t *testing.T) {
		p := run(observed)
		if !kept(p, pkiKey) || len(composedWithPrefix(p, backup.NamePrefixBackupClusterPKI)) != 0 {
			t.Errorf("the observed PKI object: kept %v, composed %v; want kept, as written", kept(p, pkiKey), composedWithPrefix(p, backup.NamePrefixBackupClusterPKI))
		}
		if _, asked := p.Requirements[backup.RequiredBackupSourcePrefix+"ca"]; asked {
			t.Error("the PKI Secrets asked for with the current slot's backup complete")
		}
	})
	t.Run("WrittenAgain", func(t *testing.T) {
		obs := maps.Clone(observed)
		delete(obs, pkiKey)
		p := run(obs)
		want := composedObject[xpextv1beta1.EnvironmentConfig](t, first, pkiKey).Name
		if got := composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiKey).Name; got != want {
			t.Errorf("PKI object written again as %s, want %s", got, want)
		}
	})
	t.Run("NotNamed", func(t *testing.T) {
		obs := maps.Clone(observed)
		orphan := backup.NamePrefixBackupClusterPKI + "demo-0000000000"
		obs[orphan] = `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-pki-` + uidDemo12 + `-0000000000}, data: {pki: x}}`
		p := run(obs)
		if kept(p, orphan) || slices.Contains(composedWithPrefix(p, orphan), orphan) {
			t.Errorf("a PKI object no bundle names stayed desired")
		}
		if !kept(p, pkiKey) {
			t.Errorf("the named PKI object left the desired state")
		}
	})
	for name, slot := range map[string]string{"UnreadableBundle": slot24h, "UnreadableOlderBundle": "20261201183044"} {
		t.Run(name, func(t *testing.T) {
			obs := maps.Clone(observed)
			obs["backup-"+slot] = snapshotYAML(slot, "Complete", "2026-12-01T18:31:00Z")
			bundle := backup.NamePrefixBackupPKI + slot
			obs[bundle] = `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + slot + `-` + digestDemo + `}, data: {clusters: [not, a, map]}}`
			_, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
			if err == nil || !strings.Contains(err.Error(), "observed."+bundle) {
				t.Errorf("got %v, want an error naming observed.%s (its PKI objects would otherwise be let go)", err, bundle)
			}
		})
	}
}

// Once restored — the restored PKI Secrets and the control plane observed
// — a cluster no longer reads its backup, which retention may have
// deleted since.
func TestRestoreDoneReadsNoBackup(t *testing.T) {
	obs := map[string]string{nameKamajiControlPlane: `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: demo2, namespace: tenant-demo}, spec: {dataStoreName: tenant-demo.demo2, dataStoreSchema: ` + demoSchema + `, dataStoreUsername: ` + demoSchema + `}}`}
	for _, role := range backup.ControlPlanePKI {
		obs[backup.NamePrefixRestoredPKI+role.Role] = secretYAML("demo2-"+role.Role, map[string]string{"k": "v"})
	}
	c := fntest.Call{Name: "demo2", Spec: `{restore: {backup: demo-` + slot24h + `-` + digestDemo + `}}`, Observed: obs, Required: map[string][]string{backup.RequiredRestoreBundle: nil}}
	p, err := planBackupsAt(t, c, backupInput, backupNow)
	if err != nil {
		t.Fatalf("a restored cluster whose backup is gone: %v", err)
	}
	if _, asked := p.Requirements[backup.RequiredRestoreBundle]; asked {
		t.Error("the backup is still asked for")
	}
	if kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane); kcp.Spec.DataStoreSchema != demoSchema {
		t.Errorf("dataStoreSchema %v, want the observed %s", kcp.Spec.DataStoreSchema, demoSchema)
	}
}

// A TenantCluster shows its namespace's backups as its Tenant reports
// them (tenants read no Tenant): status.backup, whose last backup is what
// a claim's restore.backup names, and BackupCurrent; nothing before the
// Tenant reports backups.
func TestTenantClusterShowsTheTenantsBackups(t *testing.T) {
	tenant := `{apiVersion: tenantkube.io/v1alpha1, kind: Tenant, metadata: {name: tenant-demo}, status: {
  backup: {interval: 24h0m0s, retained: 2, lastSuccessful: {name: "` + tenantBackup + `", time: "2026-12-03T04:59:30Z", age: 7h0m0s}},
  conditions: [{type: BackupCurrent, status: "False", reason: BackupOverdue, message: "the last successful backup is old"}, {type: DataStoreReady, status: "True", reason: Available}]}}`
	c := fntest.Call{Namespaced: true, Spec: `{}`, Required: map[string][]string{requiredTenantXR: {tenant}}}
	p, err := planBackupsAt(t, c, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if sel := p.Requirements[requiredTenantXR]; sel.GetKind() != "Tenant" || sel.GetMatchName() != "tenant-demo" {
		t.Errorf("Tenant asked for as %v", sel)
	}
	want := map[string]any{"interval": "24h0m0s", "retained": int64(2), "lastSuccessful": map[string]any{"name": tenantBackup, "time": "2026-12-03T04:59:30Z", "age": "7h0m0s"}}
	if d := cmp.Diff(want, p.Status["backup"]); d != "" {
		t.Errorf("status.backup (-want +got):\n%s", d)
	}
	if cond, found := planCondition(p, tkv1alpha1.ConditionBackupCurrent); !found {
		t.Error("no BackupCurrent condition")
	} else if cond.True || cond.Reason != tkv1alpha1.ReasonBackupOverdue || cond.Message != "the namespace's etcd (Tenant tenant-demo): the last successful backup is old" {
		t.Errorf("BackupCurrent %v %s %q", cond.True, cond.Reason, cond.Message)
	}
	// A reason outside BackupCurrent's is not carried over.
	c.Required[requiredTenantXR] = []string{strings.Replace(tenant, "reason: BackupOverdue", "reason: Anything", 1)}
	p, err = planBackupsAt(t, c, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if cond, found := planCondition(p, tkv1alpha1.ConditionBackupCurrent); found {
		t.Errorf("BackupCurrent with reason %q carried over", cond.Reason)
	}
	// Before the Tenant reports backups.
	c.Required[requiredTenantXR] = nil
	if p, err = planBackupsAt(t, c, backupInput, backupNow); err != nil || p.Status["backup"] != nil {
		t.Errorf("without the Tenant: status.backup %v, err %v", p.Status["backup"], err)
	}
}

// A restored cluster keeps its etcd's bootstrap as observed (the
// EtcdCluster CRD refuses a change of spec.bootstrap) and is not refused
// once the platform moves its backups elsewhere or stops taking them.
func TestRestoredClusterOutlivesBackupSettings(t *testing.T) {
	key := "tenantkube/tenant-demo/demo-" + slot24h + "-" + digestDemo + ".db"
	obs := map[string]string{
		nameKamajiControlPlane: `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: demo2, namespace: tenant-demo}, spec: {dataStoreName: tenant-demo.demo2, dataStoreSchema: ` + demoSchema + `, dataStoreUsername: ` + demoSchema + `}}`,
		nameEtcdCluster: `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: demo2-etcd, namespace: tenant-demo}, spec: {replicas: 3,
  bootstrap: {restore: {source: {s3: {endpoint: "https://s3.corp.test", bucket: etcd-backups, key: "` + key + `", forcePathStyle: true, credentialsSecretRef: {name: etcd-backup-s3}}}}}}}`,
	}
	for _, role := range backup.ControlPlanePKI {
		obs[backup.NamePrefixRestoredPKI+role.Role] = secretYAML("demo2-"+role.Role, map[string]string{"k": "v"})
	}
	c := fntest.Call{Name: "demo2", Spec: `{restore: {backup: demo-` + slot24h + `-` + digestDemo + `}}`, Observed: obs}
	for name, input := range map[string]string{
		"moved":   movedBackupInput,
		"stopped": `{etcd: {operator: etcd-operator.cozystack.io/v1alpha2}}`,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := planBackupsAt(t, c, input, backupNow)
			if err != nil {
				t.Fatalf("a restored cluster after the platform's backups %s: %v", name, err)
			}
			e := composedObject[etcdv1alpha2.EtcdCluster](t, p, nameEtcdCluster)
			if e.Spec.Bootstrap == nil || e.Spec.Bootstrap.Restore == nil || e.Spec.Bootstrap.Restore.Source.S3 == nil {
				t.Fatalf("bootstrap %+v, want the observed one", e.Spec.Bootstrap)
			}
			if s3 := e.Spec.Bootstrap.Restore.Source.S3; s3.Key != key || s3.Bucket != "etcd-backups" {
				t.Errorf("bootstrap from %s/%s, want the observed etcd-backups/%s", s3.Bucket, s3.Key, key)
			}
		})
	}
}

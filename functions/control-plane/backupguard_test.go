package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// backupObjects are p's backup objects (composed and kept) as the next
// call observes them: composed ones as written, kept ones as observed.
func backupObjects(t *testing.T, p *function.Plan, observed map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range p.Composed {
		if strings.HasPrefix(c.Name, backup.NamePrefixBackup) {
			y, err := json.Marshal(c.Object)
			if err != nil {
				t.Fatal(err)
			}
			out[c.Name] = string(y)
		}
	}
	for _, k := range p.Kept {
		if strings.HasPrefix(k.Name, backup.NamePrefixBackup) {
			out[k.Name] = observed[k.Name]
		}
	}
	return out
}

// desiredNames are the names p composes or keeps.
func desiredNames(p *function.Plan) map[string]bool {
	out := map[string]bool{}
	for _, c := range p.Composed {
		out[c.Name] = true
	}
	for _, k := range p.Kept {
		out[k.Name] = true
	}
	return out
}

// credentialCases are the credentials Secrets a backup is refused with,
// and what BackupCurrent's message then names.
var credentialCases = map[string]struct {
	secrets []string
	says    []string
}{
	"Missing":        {nil, []string{"Secret tenant-demo/etcd-backup-s3", `credentialsSecretName "etcd-backup-s3"`, "does not exist", "tenantkube/tenant-demo/", "tenantkube.io/backup-credentials-for: tenant-demo"}},
	"Unmarked":       {[]string{credentialsSecretYAML("")}, []string{"Secret tenant-demo/etcd-backup-s3", "has no label tenantkube.io/backup-credentials-for: tenant-demo", "tenantkube/tenant-demo/"}},
	"OtherLabels":    {[]string{credentialsSecretYAML(`{tenantkube.io/namespace: tenant-demo}`)}, []string{"Secret tenant-demo/etcd-backup-s3", "has no label tenantkube.io/backup-credentials-for: tenant-demo"}},
	"OtherNamespace": {[]string{credentialsSecretYAML(`{tenantkube.io/backup-credentials-for: tenant-other}`)}, []string{"Secret tenant-demo/etcd-backup-s3", `"tenant-other", not "tenant-demo"`}},
	"EmptyMark":      {[]string{credentialsSecretYAML(`{tenantkube.io/backup-credentials-for: ""}`)}, []string{"Secret tenant-demo/etcd-backup-s3", `"", not "tenant-demo"`}},
}

// A claim's backup is taken only with the namespace's credentials Secret
// marked by the platform as scoped to the namespace: a missing, unmarked
// or another namespace's Secret is BackupCurrent=False
// (BackupCredentialsNotScoped) naming the Secret and what is missing, no
// new EtcdSnapshot, and every backup taken before stays in the desired
// state.
func TestBackupCredentialsMustBeScoped(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	earlier := backupNow.Add(-24 * time.Hour)
	first, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, earlier)
	if err != nil {
		t.Fatal(err)
	}
	observed := backupObjects(t, first, nil)
	if len(observed) != 3 {
		t.Fatalf("the first backup composed %v, want a snapshot, a bundle and a PKI object", observed)
	}
	want := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: "etcd-backup-s3"}, Namespace: proto.String("tenant-demo")}
	if diff := cmp.Diff(want, first.Requirements[backup.RequiredBackupCredentials], protocmp.Transform()); diff != "" {
		t.Errorf("credentials requirement (-want +got):\n%s", diff)
	}
	for name, tc := range credentialCases {
		t.Run(name, func(t *testing.T) {
			req := backupRequired(key)
			req[backup.RequiredBackupCredentials] = tc.secrets
			for _, obs := range []map[string]string{nil, observed} {
				p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: req}, backupInput, backupNow)
				if err != nil {
					t.Fatal(err)
				}
				desired := desiredNames(p)
				if desired["backup-"+slot24h] {
					t.Errorf("observed %d backup objects: backup of the current slot composed with credentials %v", len(obs), tc.secrets)
				}
				for k := range obs {
					if !desired[k] {
						t.Errorf("observed %s left the desired state", k)
					}
				}
				c, _ := planCondition(p, tkv1alpha1.ConditionBackupCurrent)
				if c.True || c.Reason != tkv1alpha1.ReasonBackupCredentialsNotScoped {
					t.Errorf("BackupCurrent %v %s, want False %s", c.True, c.Reason, tkv1alpha1.ReasonBackupCredentialsNotScoped)
				}
				for _, s := range tc.says {
					if !strings.Contains(c.Message, s) {
						t.Errorf("BackupCurrent message %q does not say %q", c.Message, s)
					}
				}
			}
		})
	}
	t.Run("Scoped", func(t *testing.T) {
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: observed, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if !desiredNames(p)["backup-"+slot24h] {
			t.Error("no backup of the current slot with the namespace's marked credentials")
		}
		if c, _ := planCondition(p, tkv1alpha1.ConditionBackupCurrent); c.Reason == tkv1alpha1.ReasonBackupCredentialsNotScoped {
			t.Errorf("BackupCurrent %s: %s", c.Reason, c.Message)
		}
	})
	t.Run("NotArrived", func(t *testing.T) {
		// Crossplane calls again with the Secret: nothing is decided yet.
		req := backupRequired(key)
		delete(req, backup.RequiredBackupCredentials)
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: observed, Required: req}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if desiredNames(p)["backup-"+slot24h] {
			t.Error("a backup composed before the credentials Secret arrived")
		}
		for k := range observed {
			if !desiredNames(p)[k] {
				t.Errorf("observed %s left the desired state", k)
			}
		}
	})
	t.Run("PVC", func(t *testing.T) {
		// No credentials: nothing to check, nothing required.
		pvc := strings.Replace(backupInput, `s3: {endpoint: "https://s3.corp.test", bucket: etcd-backups, keyPrefix: "tenantkube/", credentialsSecretName: etcd-backup-s3, forcePathStyle: true}`, `pvc: {claimName: etcd-backups}`, 1)
		req := backupRequired(key)
		delete(req, backup.RequiredBackupCredentials)
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: req}, pvc, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Requirements[backup.RequiredBackupCredentials]; ok || !desiredNames(p)["backup-"+slot24h] {
			t.Errorf("PVC backups: credentials required %v, backup composed %v", ok, desiredNames(p)["backup-"+slot24h])
		}
	})
}

// A Tenant's backups need the same: its namespace's credentials marked
// as its own; a TenantCluster shows the Tenant's refusal.
func TestTenantBackupCredentialsMustBeScoped(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	first := planTenantAt(t, tenantBackupCall(key, "a"), backupNow.Add(-24*time.Hour))
	observed := backupObjects(t, first, nil)
	if len(observed) != 3 {
		t.Fatalf("the first backup composed %v, want a snapshot, a bundle and a PKI object", observed)
	}
	for name, tc := range credentialCases {
		t.Run(name, func(t *testing.T) {
			c := tenantBackupCall(key, "a")
			c.observed = observed
			c.required[backup.RequiredBackupCredentials] = tc.secrets
			p := planTenantAt(t, c, backupNow)
			desired := desiredNames(p)
			if desired["backup-"+tenantSlot] {
				t.Errorf("backup of the current slot composed with credentials %v", tc.secrets)
			}
			for k := range observed {
				if !desired[k] {
					t.Errorf("observed %s left the desired state", k)
				}
			}
			cond, _ := planCondition(p, tkv1alpha1.ConditionBackupCurrent)
			if cond.True || cond.Reason != tkv1alpha1.ReasonBackupCredentialsNotScoped || !strings.Contains(cond.Message, "Secret tenant-demo/etcd-backup-s3") {
				t.Errorf("BackupCurrent %v %s %q", cond.True, cond.Reason, cond.Message)
			}
			if !slices.Contains(backupReasons, cond.Reason) {
				t.Errorf("a TenantCluster does not show reason %s", cond.Reason)
			}
		})
	}
}

// clusterBackupRequired is backupRequired for cluster n of tenant-demo,
// with the namespace's EtcdSnapshots snaps.
func clusterBackupRequired(key *age.X25519Identity, n string, snaps []string) map[string][]string {
	req := backupRequired(key)
	for _, role := range backupPKI {
		name := role.Secret(function.Identity{Namespace: "tenant-demo", Name: n})
		req[backup.RequiredBackupSourcePrefix+role.Role] = []string{secretYAML(name, map[string]string{"key": name})}
	}
	req[backup.RequiredNamespaceBackups] = snaps
	return req
}

// namespaceSnapshot is an EtcdSnapshot of tenant-demo as the namespace's
// list holds it: controlled by the XR of UID controller, or by none (its
// XR gone: the garbage collector removed the reference).
func namespaceSnapshot(name, controller string) string {
	owners := `{apiVersion: v1, kind: Namespace, name: tenant-demo, uid: ` + tenantDemoUID + `}`
	if controller != "" {
		owners += `, {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: x, uid: ` + controller + `, controller: true}`
	}
	return `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdSnapshot, metadata: {name: ` + name + `, namespace: tenant-demo,
  labels: {app.kubernetes.io/managed-by: tenantkube}, ownerReferences: [` + owners + `]}}`
}

// A namespace's backups of deleted clusters are bounded: a cluster with
// no backup yet takes none while the namespace holds
// maxDeletedClusterBackups of them (TooManyDeletedClusterBackups), the
// namespace's EtcdSnapshots being required for that first backup only. A
// generated loop creating and deleting a cluster demo (each time a new
// XR, living a varying number of slots) beside a cluster keep that lives
// throughout: the deleted ones' backups never exceed the bound plus one
// cluster's retained backups, and keep takes its backup every slot and
// always holds its retention.
func TestDeletedClusterBackupsBounded(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	const maxGone, retention = 5, 3
	input := strings.Replace(backupInput, "retention: 3", fmt.Sprintf("retention: %d, maxDeletedClusterBackups: %d", retention, maxGone), 1)
	// world: the namespace's EtcdSnapshots, by name, to their
	// controller's UID ("" once their XR is gone).
	world := map[string]string{}
	snaps := func() []string {
		var out []string
		for _, n := range slices.Sorted(mapKeys(world)) {
			out = append(out, namespaceSnapshot(n, world[n]))
		}
		return out
	}
	gone := func() int {
		n := 0
		for _, c := range world {
			if c == "" {
				n++
			}
		}
		return n
	}
	// reconcile plans cluster n of XR uid at now and applies the result
	// to world as Crossplane would; it returns the next call's observed
	// backup objects.
	reconcile := func(n, uid string, observed map[string]string, now time.Time) (*function.Plan, map[string]string) {
		t.Helper()
		p, err := planBackupsAt(t, fntest.Call{Name: n, UID: uid, Spec: `{}`, Observed: observed, Required: clusterBackupRequired(key, n, snaps())}, input, now)
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range world {
			if c == uid {
				delete(world, name)
			}
		}
		for _, c := range p.Composed {
			if s, ok := c.Object.(*etcdv1alpha2.EtcdSnapshot); ok {
				world[s.Name] = uid
			}
		}
		return p, backupObjects(t, p, observed)
	}
	keepUID := "00000000-0000-4000-8000-00000000keep"
	var keepObserved map[string]string
	now := backupNow
	refusedSeen, keepSlots := false, 0
	for i := range 40 {
		uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		var observed map[string]string
		for slot := range 1 + (i*7)%5 {
			var p *function.Plan
			p, observed = reconcile("demo", uid, observed, now)
			c, _ := planCondition(p, tkv1alpha1.ConditionBackupCurrent)
			if c.Reason == tkv1alpha1.ReasonTooManyDeletedClusterBackups {
				refusedSeen = true
				if gone() < maxGone || !strings.Contains(c.Message, "etcd.backup.maxDeletedClusterBackups (5)") {
					t.Fatalf("iteration %d slot %d: refused with %d backups of deleted clusters: %s", i, slot, gone(), c.Message)
				}
			}
			var kp *function.Plan
			kp, keepObserved = reconcile("keep", keepUID, keepObserved, now)
			// keep, which has backups, is never refused and never loses
			// one to the bound: its slot's backup, its retention kept.
			ks := composedWithPrefix(kp, "backup-2")
			if c, _ := planCondition(kp, tkv1alpha1.ConditionBackupCurrent); c.Reason == tkv1alpha1.ReasonTooManyDeletedClusterBackups {
				t.Fatalf("iteration %d: keep refused: %s", i, c.Message)
			}
			if want := "backup-" + backup.SlotStart(function.Identity{Namespace: "tenant-demo", Name: "keep"}, 24*time.Hour, now).Format(backup.TimeLayout); !slices.Contains(ks, want) {
				t.Fatalf("iteration %d: keep's backups %v lack %s", i, ks, want)
			}
			keepSlots++
			if len(ks) != min(keepSlots, retention) {
				t.Fatalf("iteration %d: keep holds %d backups after %d slots, want %d", i, len(ks), keepSlots, min(keepSlots, retention))
			}
			now = now.Add(24 * time.Hour)
		}
		// demo is deleted: its backups stay, without a controller.
		for name, c := range world {
			if c == uid {
				world[name] = ""
			}
		}
		if bound := maxGone - 1 + retention + 1; gone() > bound {
			t.Fatalf("iteration %d: %d backups of deleted clusters, more than %d", i, gone(), bound)
		}
	}
	if !refusedSeen {
		t.Error("the loop never reached the bound")
	}
	// The list is asked for only before a schedule's first backup.
	p, _ := reconcile("keep", keepUID, keepObserved, now)
	if _, ok := p.Requirements[backup.RequiredNamespaceBackups]; ok {
		t.Error("a cluster with backups asks for its namespace's EtcdSnapshots")
	}
}

// mapKeys are m's keys.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The dedicated etcd is the default: without dataStoreName a claim and a
// TenantCluster get no DataStoreShared, the claim its own EtcdCluster and
// DataStore; the package's input and the example settings name no shared
// DataStore. With one, DataStoreShared says the etcd is shared with other
// tenants' clusters.
func TestDataStoreShared(t *testing.T) {
	in := inputOf(t, `{}`)
	if in.DataStoreName != "" {
		t.Fatalf("defaulted input names DataStore %q", in.DataStoreName)
	}
	p, errs := planOf(t, fntest.Call{Spec: `{}`}, `{}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, ok := planCondition(p, tkv1alpha1.ConditionDataStoreShared); ok {
		t.Error("DataStoreShared on a cluster with its dedicated etcd")
	}
	if !desiredNames(p)[nameEtcdCluster] || !desiredNames(p)[nameDataStore] {
		t.Error("the default input composes no dedicated etcd")
	}
	if ds := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane).Spec.DataStoreName; ds != "tenant-demo.demo" {
		t.Errorf("the default control plane uses DataStore %q, want its own tenant-demo.demo", ds)
	}
	for _, f := range []string{"../../package/composition.yaml", "../../examples/platform-settings.yaml"} {
		b, err := os.ReadFile(filepath.Clean(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "dataStoreName:") {
				t.Errorf("%s sets %s", f, l)
			}
		}
	}
	for name, c := range map[string]fntest.Call{"Claim": {Spec: `{}`}, "TenantCluster": {Namespaced: true, Spec: `{}`}} {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, c, `{dataStoreName: shared-etcd}`)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			got, ok := planCondition(p, tkv1alpha1.ConditionDataStoreShared)
			if !ok || !got.True || got.Reason != tkv1alpha1.ReasonSharedDataStore {
				t.Fatalf("DataStoreShared %+v", got)
			}
			for _, s := range []string{"shared Kamaji DataStore shared-etcd", "other tenants", "read-only", "trust each other"} {
				if !strings.Contains(got.Message, s) {
					t.Errorf("DataStoreShared message %q does not say %q", got.Message, s)
				}
			}
		})
	}
}

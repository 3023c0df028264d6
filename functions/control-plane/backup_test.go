package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// Slots of tenant-demo/demo worked out by hand: the first 8 bytes of
// sha256("tenant-demo/demo") are 0x5e3740528f0aca54
// (`printf tenant-demo/demo | sha256sum`), which is 66644 modulo 86400
// (18h30m44s) and 1844 modulo 21600 (30m44s). So at 2026-12-03 12:00 UTC
// the 24h slot began 2026-12-02 18:30:44 and the 6h slot 06:30:44.
var (
	backupNow  = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	slot24h    = "20261202183044"
	slot6h     = "20261203063044"
	prevSlot6h = "20261203003044"
)

// Incarnation digests of backup names: the first six hex characters of
// the SHA-256 of the XR's UID (`printf <uid> | sha256sum`): fntest.XRUID
// 5d6f2a7e-3b1c-4e8a-9f04-c2b7d1e0a913 gives bd279f..., laterUID (an XR
// of a claim demo created again) 8e74b7....
const (
	digestDemo = "bd279f"
	// uidDemo12 and uidTenant12: 12 hex characters of the same digests,
	// the incarnation in a PKI object's name.
	uidDemo12   = "bd279ff89f6a"
	uidTenant12 = "24ff681e0eba"
	laterUID    = "0e8c41b2-9d57-4a36-b1f8-7c2e5a90d4f1"
	digestLater = "8e74b7"
	// tenantDemoUID is the UID of the Namespace object tenant-demo.
	tenantDemoUID = "3f1e9c2a-6b7d-4c05-8e1a-92d4b6f0c7e5"
)

// tenantNamespace is the Namespace object tenant-demo as Crossplane
// sends it for function.RequirementNamespace.
const tenantNamespace = `{apiVersion: v1, kind: Namespace, metadata: {name: tenant-demo, uid: ` + tenantDemoUID + `}}`

// backupInput is a platform with S3 backups every 24h (tenants down to
// 6h), keeping 3.
const backupInput = `{etcd: {operator: etcd-operator.cozystack.io/v1alpha2, backup: {
  s3: {endpoint: "https://s3.corp.test", bucket: etcd-backups, keyPrefix: "tenantkube/", credentialsSecretName: etcd-backup-s3, forcePathStyle: true},
  interval: 24h, minInterval: 6h, retention: 3, pkiNamespace: tenantkube-system, recipientConfigMap: etcd-backup-recipient, identitySecret: etcd-backup-identity}}}`

// movedBackupInput is backupInput after the platform moved its backups
// to another bucket and key prefix.
var movedBackupInput = strings.Replace(strings.Replace(backupInput, `keyPrefix: "tenantkube/"`, `keyPrefix: "moved/"`, 1), "bucket: etcd-backups", "bucket: other", 1)

// backupPKIData is the data of the five PKI Secrets of demo, by Secret name.
var backupPKIData = map[string]map[string]string{
	"demo-ca":                         {"ca.crt": "cluster CA cert", "ca.key": "cluster CA key"},
	"demo-sa-certificate":             {"sa.pub": "sa public", "sa.key": "sa private"},
	"demo-front-proxy-ca-certificate": {"front-proxy-ca.crt": "fp cert", "front-proxy-ca.key": "fp key"},
	"demo-etcd-ca":                    {"tls.crt": "etcd client CA", "tls.key": "etcd client CA key"},
	"demo-etcd-peer-ca":               {"tls.crt": "etcd peer CA", "tls.key": "etcd peer CA key"},
}

// secretYAML is Secret name of tenant-demo with data.
func secretYAML(name string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{apiVersion: v1, kind: Secret, metadata: {name: %s, namespace: tenant-demo}, data: {", name)
	for k, v := range data {
		fmt.Fprintf(&b, "%q: %s, ", k, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return b.String() + "}}"
}

// credentialsSecretYAML is the S3 credentials Secret etcd-backup-s3 of
// tenant-demo with labels (YAML map, "" for none).
func credentialsSecretYAML(labels string) string {
	l := ""
	if labels != "" {
		l = ", labels: " + labels
	}
	return `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-s3, namespace: tenant-demo` + l + `},
  data: {AWS_ACCESS_KEY_ID: a2V5, AWS_SECRET_ACCESS_KEY: c2VjcmV0}}`
}

// scopedCredentials is the credentials Secret of tenant-demo as the
// platform marks it: scoped to tenant-demo.
var scopedCredentials = credentialsSecretYAML(`{tenantkube.io/backup-credentials-for: tenant-demo}`)

// backupRequired are the required resources of a backup: demo's PKI
// Secrets, the recipient ConfigMap holding key's public key, the
// tenant's Namespace, its credentials Secret marked as its own and its
// EtcdSnapshots (none).
func backupRequired(key *age.X25519Identity) map[string][]string {
	req := map[string][]string{
		backup.RequiredBackupRecipient:   {`{apiVersion: v1, kind: ConfigMap, metadata: {name: etcd-backup-recipient, namespace: tenantkube-system}, data: {recipient: ` + key.Recipient().String() + `}}`},
		function.RequirementNamespace:    {tenantNamespace},
		backup.RequiredBackupCredentials: {scopedCredentials},
		backup.RequiredNamespaceBackups:  nil,
	}
	for role, name := range map[string]string{"ca": "demo-ca", "sa-certificate": "demo-sa-certificate",
		"front-proxy-ca-certificate": "demo-front-proxy-ca-certificate", "etcd-ca": "demo-etcd-ca", "etcd-peer-ca": "demo-etcd-peer-ca"} {
		req[backup.RequiredBackupSourcePrefix+role] = []string{secretYAML(name, backupPKIData[name])}
	}
	return req
}

// snapshotYAML is an observed EtcdSnapshot of demo's slot ts in phase,
// created at created, owned by the Namespace tenant-demo.
func snapshotYAML(ts, phase, created string) string {
	return `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdSnapshot, metadata: {name: demo-` + ts + `-` + digestDemo + `, namespace: tenant-demo, creationTimestamp: "` + created + `",
    ownerReferences: [{apiVersion: v1, kind: Namespace, name: tenant-demo, uid: ` + tenantDemoUID + `}]},
  spec: {clusterRef: {name: demo-etcd}, destination: {s3: {endpoint: "https://s3.corp.test", bucket: etcd-backups, key: tenantkube/tenant-demo, credentialsSecretRef: {name: etcd-backup-s3}}}},
  status: {phase: ` + phase + `}}`
}

// inputOf is the defaulted input y.
func inputOf(t *testing.T, y string) *cpinput.ControlPlaneInput {
	t.Helper()
	in := &cpinput.ControlPlaneInput{}
	if err := yaml.UnmarshalStrict([]byte(y), in); err != nil {
		t.Fatalf("bad test input: %v", err)
	}
	in.Default()
	return in
}

func planBackupsAt(t *testing.T, c fntest.Call, input string, now time.Time) (*function.Plan, error) {
	t.Helper()
	r, tenant := c.Read(t)
	in := inputOf(t, input)
	p, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, now)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return p, nil
}

// planCondition is the condition of type typ p sets (the last, as the
// XR gets it); false when p sets none.
func planCondition(p *function.Plan, typ string) (function.Condition, bool) {
	for i := len(p.Conditions) - 1; i >= 0; i-- {
		if p.Conditions[i].Type == typ {
			return p.Conditions[i], true
		}
	}
	return function.Condition{}, false
}

func composedWithPrefix(p *function.Plan, prefix string) []string {
	var out []string
	for _, c := range p.Composed {
		if strings.HasPrefix(c.Name, prefix) {
			out = append(out, c.Name)
		}
	}
	return out
}

func TestBackupSnapshotAndBundle(t *testing.T) {
	key, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	c := fntest.Call{Spec: `{}`, Required: backupRequired(key)}
	p, err := planBackupsAt(t, c, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	pkiKey := pkiObjectKey(t, p, "demo")
	if got, want := composedWithPrefix(p, backup.NamePrefixBackup), []string{"backup-" + slot24h, "backup-pki-" + slot24h, pkiKey}; !cmp.Equal(got, want) {
		t.Errorf("backups composed: %v, want %v", got, want)
	}
	snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+slot24h)
	if snap.Name != "demo-"+slot24h+"-"+digestDemo || snap.Namespace != "tenant-demo" || snap.Spec.ClusterRef.Name != "demo-etcd" {
		t.Errorf("EtcdSnapshot %s/%s of %s", snap.Namespace, snap.Name, snap.Spec.ClusterRef.Name)
	}
	// The operator appends /<name>.db to the key prefix: each namespace's
	// backups under its own prefix.
	s3 := snap.Spec.Destination.S3
	if s3 == nil || s3.Key != "tenantkube/tenant-demo" || s3.Bucket != "etcd-backups" || s3.CredentialsSecretRef.Name != "etcd-backup-s3" || !s3.ForcePathStyle {
		t.Errorf("destination %+v", snap.Spec.Destination)
	}
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	if env.Name != "tenant-demo.demo-"+slot24h+"-"+digestDemo || env.Namespace != "" {
		t.Errorf("bundle %q in %q, want cluster-scoped tenant-demo.demo-%s-%s", env.Name, env.Namespace, slot24h, digestDemo)
	}
	str := func(env *xpextv1beta1.EnvironmentConfig, k string) string {
		var s string
		_ = json.Unmarshal(env.Data[k].Raw, &s)
		return s
	}
	obj := composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiKey)
	if str(env, "namespace") != "tenant-demo" || str(env, "cluster") != "demo" || str(env, "dataStoreSchema") != demoSchema || str(env, "backup") != snap.Name || str(env, "clusterPKI") != obj.Name {
		t.Errorf("bundle data %v", env.Data)
	}
	if _, inline := env.Data["pki"]; inline {
		t.Error("the bundle holds the PKI itself, not its PKI object's name")
	}
	// The PKI object: <NS>.<N>-pki-<incarnation>-<10 hex digits of its content>.
	if !regexp.MustCompile(`^tenant-demo\.demo-pki-`+uidDemo12+`-[0-9a-f]{10}$`).MatchString(obj.Name) || str(obj, "namespace") != "tenant-demo" || str(obj, "cluster") != "demo" {
		t.Errorf("PKI object %s: %v", obj.Name, obj.Data)
	}
	if len(obj.OwnerReferences) != 1 || string(obj.OwnerReferences[0].UID) != tenantDemoUID {
		t.Errorf("PKI object owners %v, want the Namespace tenant-demo", obj.OwnerReferences)
	}
	if strings.Contains(string(obj.Data["pki"].Raw), "cluster CA key") {
		t.Fatal("the PKI object holds the CA key in clear")
	}
	other, _ := age.GenerateX25519Identity()
	var pki map[string]map[string][]byte
	if err := backup.OpenBundle(str(obj, "pki"), other, &pki); err == nil {
		t.Error("another identity decrypted the PKI object")
	}
	if err := backup.OpenBundle(str(obj, "pki"), key, &pki); err != nil {
		t.Fatal(err)
	}
	for role, name := range map[string]string{"ca": "demo-ca", "sa-certificate": "demo-sa-certificate",
		"front-proxy-ca-certificate": "demo-front-proxy-ca-certificate", "etcd-ca": "demo-etcd-ca", "etcd-peer-ca": "demo-etcd-peer-ca"} {
		for k, v := range backupPKIData[name] {
			if got := string(pki[role][k]); got != v {
				t.Errorf("PKI object %s[%s] = %q, want %q", role, k, got, v)
			}
		}
	}
}

// The same PKI is the same PKI object: a cluster's backups name one as
// long as its PKI does not change, and a changed PKI is another.
func TestBackupPKIObjectIsNamedByItsContent(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	name := func(req map[string][]string) string {
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: req}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		return composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "demo")).Name
	}
	first, again := name(backupRequired(key)), name(backupRequired(key))
	if first != again {
		t.Errorf("the same PKI named %s and %s", first, again)
	}
	req := backupRequired(key)
	req[backup.RequiredBackupSourcePrefix+"ca"] = []string{secretYAML("demo-ca", map[string]string{"ca.crt": "a rotated CA", "ca.key": "its key"})}
	if rotated := name(req); rotated == first {
		t.Errorf("a changed CA kept the PKI object name %s", first)
	}
}

// pkiObjectKey is the composed-resource name of cluster n's one PKI
// object in p.
func pkiObjectKey(t *testing.T, p *function.Plan, n string) string {
	t.Helper()
	keys := composedWithPrefix(p, backup.NamePrefixBackupClusterPKI+n+"-")
	if len(keys) != 1 {
		t.Fatalf("PKI objects of %s composed: %v, want one", n, keys)
	}
	return keys[0]
}

func TestBackupSchedule(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	bundle := func(ts string) string {
		return `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + ts + `-` + digestDemo + `}, data: {pki: x}}`
	}
	for name, tc := range map[string]struct {
		reason   string
		spec     string
		observed map[string]string
		noPKI    bool
		want     []string
	}{
		"SameSlotObserved": {
			reason:   "A backup of the current slot exists: nothing new.",
			observed: map[string]string{"backup-" + slot24h: snapshotYAML(slot24h, "Complete", "2026-12-02T18:31:00Z")},
			want:     []string{"backup-" + slot24h},
		},
		"Retention": {
			reason: "Three kept: the current slot's and the two newest observed; the oldest leaves the desired state.",
			observed: map[string]string{
				"backup-20261129183044": snapshotYAML("20261129183044", "Complete", "2026-11-29T18:31:00Z"),
				"backup-20261130183044": snapshotYAML("20261130183044", "Complete", "2026-11-30T18:31:00Z"),
				"backup-20261201183044": snapshotYAML("20261201183044", "Complete", "2026-12-01T18:31:00Z"),
			},
			want: []string{"backup-20261130183044", "backup-20261201183044", "backup-" + slot24h},
		},
		"TenantInterval": {
			reason:   "A tenant's 6h: the 6h slot, after the previous 6h slot's backup.",
			spec:     `{backup: {interval: 6h}}`,
			observed: map[string]string{"backup-" + prevSlot6h: snapshotYAML(prevSlot6h, "Complete", "2026-12-03T00:31:00Z")},
			want:     []string{"backup-" + prevSlot6h, "backup-" + slot6h},
		},
		"PKINotArrived": {
			reason:   "Without the PKI a backup would not restore the cluster: none is taken; those observed stay.",
			observed: map[string]string{"backup-20261201183044": snapshotYAML("20261201183044", "Complete", "2026-12-01T18:31:00Z")},
			noPKI:    true,
			want:     []string{"backup-20261201183044"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			obs := map[string]string{}
			for k, v := range tc.observed {
				obs[k] = v
				obs[backup.NamePrefixBackupPKI+strings.TrimPrefix(k, backup.NamePrefixBackup)] = bundle(strings.TrimPrefix(k, backup.NamePrefixBackup))
			}
			req := backupRequired(key)
			if tc.noPKI {
				delete(req, backup.RequiredBackupSourcePrefix+"sa-certificate")
			}
			spec := tc.spec
			if spec == "" {
				spec = "{}"
			}
			p, err := planBackupsAt(t, fntest.Call{Spec: spec, Observed: obs, Required: req}, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range composedWithPrefix(p, backup.NamePrefixBackup) {
				if !strings.HasPrefix(n, backup.NamePrefixBackupPKI) && !strings.HasPrefix(n, backup.NamePrefixBackupClusterPKI) {
					got = append(got, n)
				}
			}
			sort.Strings(got)
			if !cmp.Equal(got, tc.want) {
				t.Errorf("%s\nEtcdSnapshots: %v, want %v", tc.reason, got, tc.want)
			}
			// Observed bundles are kept as written, never encrypted again.
			for k := range tc.observed {
				bn := backup.NamePrefixBackupPKI + strings.TrimPrefix(k, backup.NamePrefixBackup)
				kept := false
				for _, kp := range p.Kept {
					kept = kept || kp.Name == bn
				}
				if kept != contains(tc.want, k) {
					t.Errorf("bundle %s kept: %v", bn, kept)
				}
			}
		})
	}
}

// Snapshots failing retention slots in a row (an S3 outage, credentials
// deleted) do not take the last restorable backup with them: with
// retention 2, the two newest (Failed) are kept and so is the newest
// Complete one, 20261129, with its bundle and the PKI object only its
// bundle names (the PKI was rotated since: the Failed ones name
// another). 20261130, Failed and not among the newest two, leaves, and
// so does 20261128, Complete but older.
func TestRetentionKeepsTheNewestCompleteBackup(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	const (
		pkiA = "tenant-demo.demo-pki-" + uidDemo12 + "-aaaaaaaaaa"
		pkiB = "tenant-demo.demo-pki-" + uidDemo12 + "-bbbbbbbbbb"
	)
	bundle := func(ts, pki string) string {
		return `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + ts + `-` + digestDemo + `},
  data: {namespace: tenant-demo, cluster: demo, backup: demo-` + ts + `-` + digestDemo + `, dataStoreSchema: x, dataStoreUsername: x, clusterPKI: "` + pki + `"}}`
	}
	pkiObject := func(name string) string {
		return `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: "` + name + `"}, data: {namespace: tenant-demo, cluster: demo, pki: x}}`
	}
	obs := map[string]string{
		"backup-20261128183044":             snapshotYAML("20261128183044", "Complete", "2026-11-28T18:31:00Z"),
		"backup-pki-20261128183044":         bundle("20261128183044", pkiA),
		"backup-20261129183044":             snapshotYAML("20261129183044", "Complete", "2026-11-29T18:31:00Z"),
		"backup-pki-20261129183044":         bundle("20261129183044", pkiA),
		"backup-20261130183044":             snapshotYAML("20261130183044", "Failed", "2026-11-30T18:31:00Z"),
		"backup-pki-20261130183044":         bundle("20261130183044", pkiB),
		"backup-20261201183044":             snapshotYAML("20261201183044", "Failed", "2026-12-01T18:31:00Z"),
		"backup-pki-20261201183044":         bundle("20261201183044", pkiB),
		"backup-" + slot24h:                 snapshotYAML(slot24h, "Failed", "2026-12-02T18:31:00Z"),
		"backup-pki-" + slot24h:             bundle(slot24h, pkiB),
		"backup-clusterpki-demo-aaaaaaaaaa": pkiObject(pkiA),
		"backup-clusterpki-demo-bbbbbbbbbb": pkiObject(pkiB),
	}
	input := strings.Replace(backupInput, "retention: 3", "retention: 2", 1)
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, input, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, k := range p.Kept {
		if strings.HasPrefix(k.Name, backup.NamePrefixBackup) {
			kept = append(kept, k.Name)
		}
	}
	sort.Strings(kept)
	// Newest first.
	if got, want := composedWithPrefix(p, "backup-2026"), []string{"backup-" + slot24h, "backup-20261201183044", "backup-20261129183044"}; !cmp.Equal(got, want) {
		t.Errorf("EtcdSnapshots %v, want %v", got, want)
	}
	want := []string{"backup-clusterpki-demo-aaaaaaaaaa", "backup-clusterpki-demo-bbbbbbbbbb", "backup-pki-20261129183044", "backup-pki-20261201183044", "backup-pki-" + slot24h}
	if !cmp.Equal(kept, want) {
		t.Errorf("bundles and PKI objects kept %v, want %v", kept, want)
	}
	st := p.Status["backup"].(map[string]any)
	last, _ := st["lastSuccessful"].(map[string]any)
	// 2026-11-29T18:31 to 2026-12-03T12:00 is 96h less 6h31m.
	if last["name"] != "demo-20261129183044-"+digestDemo || last["age"] != "89h29m" || st["retained"] != int64(3) {
		t.Errorf("status.backup %v", st)
	}

	// None Complete: the newest two only.
	obs["backup-20261128183044"] = snapshotYAML("20261128183044", "Failed", "2026-11-28T18:31:00Z")
	obs["backup-20261129183044"] = snapshotYAML("20261129183044", "Failed", "2026-11-29T18:31:00Z")
	p, err = planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, input, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := composedWithPrefix(p, "backup-2026"), []string{"backup-" + slot24h, "backup-20261201183044"}; !cmp.Equal(got, want) {
		t.Errorf("without a Complete backup: EtcdSnapshots %v, want %v", got, want)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestBackupStatus(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	for name, tc := range map[string]struct {
		created, phase string
		wantTrue       bool
		wantReason     string
		wantAge        string
	}{
		// 2026-12-02 18:31 to 12-03 12:00 is 17h29m.
		"Recent": {"2026-12-02T18:31:00Z", "Complete", true, tkv1alpha1.ReasonBackupSucceeded, "17h29m"},
		// 48h exactly is still within twice the interval; a minute more is not.
		"TwiceInterval": {"2026-12-01T12:00:00Z", "Complete", true, tkv1alpha1.ReasonBackupSucceeded, "48h"},
		"Overdue":       {"2026-12-01T11:59:00Z", "Complete", false, tkv1alpha1.ReasonBackupOverdue, "48h1m"},
	} {
		t.Run(name, func(t *testing.T) {
			ts := "20261201183044"
			obs := map[string]string{"backup-" + ts: snapshotYAML(ts, tc.phase, tc.created)}
			p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			last, _ := p.Status["backup"].(map[string]any)["lastSuccessful"].(map[string]any)
			if last["name"] != "demo-"+ts+"-"+digestDemo || last["age"] != tc.wantAge || last["time"] != tc.created {
				t.Errorf("status.backup.lastSuccessful = %v", last)
			}
			if c, found := planCondition(p, tkv1alpha1.ConditionBackupCurrent); !found {
				t.Error("no BackupCurrent condition")
			} else if c.True != tc.wantTrue || c.Reason != tc.wantReason {
				t.Errorf("BackupCurrent %v %s (%s), want %v %s", c.True, c.Reason, c.Message, tc.wantTrue, tc.wantReason)
			}
		})
	}
	t.Run("FailedIsNotSuccessful", func(t *testing.T) {
		obs := map[string]string{"backup-" + slot24h: snapshotYAML(slot24h, "Failed", "2026-12-02T18:31:00Z")}
		p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Status["backup"].(map[string]any)["lastSuccessful"]; ok {
			t.Error("a Failed snapshot reported as the last successful backup")
		}
	})
}

func TestBackupBounds(t *testing.T) {
	for _, tc := range []struct{ spec, input, want string }{
		// The platform allows 6h..24h: 5h and 25h are refused, naming the value.
		{`{backup: {interval: 5h}}`, backupInput, `spec.backup.interval: Invalid value: "5h": must be at least 6h and at most 24h`},
		{`{backup: {interval: 25h}}`, backupInput, `spec.backup.interval: Invalid value: "25h": must be at least 6h and at most 24h`},
		{`{}`, strings.Replace(backupInput, "etcd-operator.cozystack.io/v1alpha2", "etcd.aenix.io/v1alpha1", 1), "input.etcd.backup"},
		{`{}`, strings.Replace(backupInput, "interval: 24h,", "interval: 24h, pvc: {claimName: etcd-backups},", 1), `input.etcd.backup.pvc: Invalid value: "etcd-backups": set either s3 or pvc`},
		{`{}`, strings.Replace(backupInput, "recipientConfigMap: etcd-backup-recipient, ", "", 1), "input.etcd.backup.recipientConfigMap: Required value"},
		{`{}`, strings.Replace(backupInput, "retention: 3", "retention: 101", 1), `input.etcd.backup.retention: Invalid value: 101: must be from 1 to 100`},
		{`{}`, strings.Replace(backupInput, "minInterval: 6h", "minInterval: 30h", 1), `input.etcd.backup.interval: Invalid value: "24h": must be at least 30h and at most 168h`},
	} {
		c := fntest.Call{Spec: tc.spec}
		r, tenant := c.Read(t)
		in := inputOf(t, tc.input)
		var msg string
		if err := validateInput(in); err != nil {
			msg = err.Error()
		} else if _, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, backupNow); len(errs) > 0 {
			msg = errs.ToAggregate().Error()
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("spec %s: error %q, want it to hold %q", tc.spec, msg, tc.want)
		}
	}
}

// TestRestore plays a restore into a new cluster demo2 of backup
// demo-<slot24h>-<digest>, step by step as Crossplane calls the function.
func TestRestore(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	// The bundle demo's backup wrote, as backup.PlanCluster composes it.
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	envJSON, _ := json.Marshal(env)
	pkiJSON, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "demo")))
	identity := `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-identity, namespace: tenantkube-system}, data: {identity: ` +
		base64.StdEncoding.EncodeToString([]byte(key.String())) + `}}`
	taken := "demo-" + slot24h + "-" + digestDemo
	spec := `{restore: {backup: ` + taken + `}}`

	t.Run("OtherNamespace", func(t *testing.T) {
		_, err := planBackupsAt(t, fntest.Call{Name: "demo2", Spec: `{restore: {backup: ` + taken + `, namespace: tenant-other}}`}, backupInput, backupNow)
		if err == nil || !strings.Contains(err.Error(), "spec.restore.namespace") || !strings.Contains(err.Error(), `"tenant-other"`) {
			t.Errorf("restoring another namespace's backup: %v", err)
		}
	})
	t.Run("NotABackupName", func(t *testing.T) {
		// The slot alone names no backup: the incarnation digest is part of it.
		_, err := planBackupsAt(t, fntest.Call{Name: "demo2", Spec: `{restore: {backup: demo-` + slot24h + `}}`}, backupInput, backupNow)
		if err == nil || !strings.Contains(err.Error(), "spec.restore.backup") || !strings.Contains(err.Error(), `"demo-`+slot24h+`"`) {
			t.Errorf("restoring a name without its digest: %v", err)
		}
	})
	t.Run("NoSuchBackup", func(t *testing.T) {
		// The record of the backup asked for is not found: the namespace's
		// backups are asked for, and the one that exists is listed.
		const missing = "demo-20200101000000-abcdef"
		call := fntest.Call{Name: "demo2", Spec: `{restore: {backup: ` + missing + `}}`, Required: map[string][]string{backup.RequiredRestoreBundle: nil}}
		p, err := planBackupsAt(t, call, backupInput, backupNow)
		if err != nil {
			t.Fatalf("before the namespace's backups are fetched: %v", err)
		}
		sel := p.Requirements[backup.RequiredRestoreBackups]
		if d := cmp.Diff(map[string]string{"tenantkube.io/namespace": "tenant-demo"}, sel.GetMatchLabels().GetLabels()); d != "" || sel.GetKind() != "EnvironmentConfig" {
			t.Errorf("the namespace's backups are not asked for by their namespace label: %v (-want +got):\n%s", sel, d)
		}
		call.Required[backup.RequiredRestoreBackups] = []string{string(envJSON)}
		_, err = planBackupsAt(t, call, backupInput, backupNow)
		want := `spec.restore.backup: Not found: "` + missing + `": no backup record EnvironmentConfig tenant-demo.` + missing + `; namespace tenant-demo has backups ` + taken
		if err == nil || err.Error() != want {
			t.Errorf("restoring a missing backup:\n got %v\nwant %s", err, want)
		}
		call.Required[backup.RequiredRestoreBackups] = nil
		_, err = planBackupsAt(t, call, backupInput, backupNow)
		if err == nil || !strings.HasSuffix(err.Error(), "; namespace tenant-demo has no backups") {
			t.Errorf("restoring in a namespace without backups: %v", err)
		}
	})
	t.Run("NotARestorePlatform", func(t *testing.T) {
		_, err := planBackupsAt(t, fntest.Call{Name: "demo2", Spec: spec}, `{}`, backupNow)
		if err == nil || !strings.Contains(err.Error(), "spec.restore.backup") {
			t.Errorf("restoring without backups: %v", err)
		}
	})
	t.Run("WaitsForTheBackup", func(t *testing.T) {
		p, err := planBackupsAt(t, fntest.Call{Name: "demo2", Spec: spec}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{nameEtcdCluster, nameKamajiControlPlane} {
			for _, c := range p.Composed {
				if c.Name == n {
					t.Errorf("%s composed before the backup was read", n)
				}
			}
		}
	})
	t.Run("WaitsForThePKIObject", func(t *testing.T) {
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		p, err := planBackupsAt(t, c, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		var pkiName string
		_ = json.Unmarshal(env.Data["clusterPKI"].Raw, &pkiName)
		if sel := p.Requirements[backup.RequiredRestorePKIObject]; sel.GetMatchName() != pkiName || pkiName == "" {
			t.Errorf("PKI object asked for: %v, want %s", sel, pkiName)
		}
		if got := composedWithPrefix(p, backup.NamePrefixRestoredPKI); len(got) != 0 {
			t.Errorf("restored PKI composed before its PKI object arrived: %v", got)
		}
	})
	for name, tc := range map[string]struct {
		pki  []string
		want string
	}{
		"PKIObjectGone":               {nil, "its PKI object tenant-demo.demo-pki-" + uidDemo12 + "-"},
		"PKIObjectOfAnotherCluster":   {[]string{strings.Replace(string(pkiJSON), `"cluster":"demo"`, `"cluster":"other"`, 1)}, "is cluster tenant-demo/other's, not tenant-demo/demo's"},
		"PKIObjectOfAnotherNamespace": {[]string{strings.Replace(string(pkiJSON), `"namespace":"tenant-demo"`, `"namespace":"tenant-other"`, 1)}, "is cluster tenant-other/demo's, not tenant-demo/demo's"},
	} {
		t.Run(name, func(t *testing.T) {
			c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: tc.pki, backup.RequiredRestoreIdentity: {identity}}}
			_, err := planBackupsAt(t, c, backupInput, backupNow)
			if err == nil || !strings.Contains(err.Error(), "spec.restore.backup") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want spec.restore.backup ... %s", err, tc.want)
			}
		})
	}
	t.Run("PKIFirst", func(t *testing.T) {
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		p, err := planBackupsAt(t, c, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		etcd := composedObject[etcdv1alpha2.EtcdCluster](t, p, nameEtcdCluster)
		src := etcd.Spec.Bootstrap.Restore.Source.S3
		// The exact key the operator wrote: <prefix>/<NS>/<backup>.db.
		if src == nil || src.Key != "tenantkube/tenant-demo/"+taken+".db" || src.CredentialsSecretRef.Name != "etcd-backup-s3" {
			t.Errorf("bootstrap.restore.source %+v", etcd.Spec.Bootstrap.Restore.Source)
		}
		for role, want := range map[string]string{"ca": "demo-ca", "sa-certificate": "demo-sa-certificate", "front-proxy-ca-certificate": "demo-front-proxy-ca-certificate"} {
			s := composedObject[corev1.Secret](t, p, backup.NamePrefixRestoredPKI+role)
			if s.Name != "demo2-"+strings.TrimPrefix(want, "demo-") || s.Namespace != "tenant-demo" {
				t.Errorf("restored %s as %s/%s", role, s.Namespace, s.Name)
			}
			for k, v := range backupPKIData[want] {
				if string(s.Data[k]) != v {
					t.Errorf("restored %s[%s] = %q, want %q", s.Name, k, s.Data[k], v)
				}
			}
		}
		for _, c := range p.Composed {
			if c.Name == nameKamajiControlPlane {
				t.Error("KamajiControlPlane composed before the restored PKI is observed")
			}
		}
		if c, _ := planCondition(p, tkv1alpha1.ConditionControlPlaneReady); c.Reason != tkv1alpha1.ReasonRestoringPKI {
			t.Errorf("ControlPlaneReady reason %q, want %s", c.Reason, tkv1alpha1.ReasonRestoringPKI)
		}
	})
	t.Run("AnEarlierNamespaceOfItsName", func(t *testing.T) {
		// The namespace was deleted and created again: the garbage
		// collector has not yet deleted the earlier one's bundle.
		again := strings.Replace(tenantNamespace, tenantDemoUID, "6b1f0a52-0000-4000-8000-000000000002", 1)
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {again}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		_, err := planBackupsAt(t, c, backupInput, backupNow)
		if err == nil || !strings.Contains(err.Error(), "spec.restore.backup") || !strings.Contains(err.Error(), "an earlier namespace tenant-demo's (UID "+tenantDemoUID+")") {
			t.Errorf("restoring an earlier namespace's backup: %v", err)
		}
	})
	t.Run("AnEarlierNamespaceAfterGarbageCollection", func(t *testing.T) {
		// The earlier namespace's bundle lost its Namespace reference
		// (its XR outlived the namespace); the UID in its data remains.
		stripped := env.DeepCopy()
		stripped.OwnerReferences = nil
		strippedJSON, _ := json.Marshal(stripped)
		again := strings.Replace(tenantNamespace, tenantDemoUID, "6b1f0a52-0000-4000-8000-000000000002", 1)
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {again}, backup.RequiredRestoreBundle: {string(strippedJSON)}, backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		_, err := planBackupsAt(t, c, backupInput, backupNow)
		if err == nil || !strings.Contains(err.Error(), "an earlier namespace tenant-demo's (UID "+tenantDemoUID+")") {
			t.Errorf("restoring an earlier namespace's backup without its Namespace reference: %v", err)
		}
	})
	t.Run("WaitsForTheNamespace", func(t *testing.T) {
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		p, err := planBackupsAt(t, c, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if got := composedWithPrefix(p, nameEtcdCluster); len(got) != 0 {
			t.Errorf("composed before the Namespace arrived: %v", got)
		}
	})
	t.Run("FromWhereItWasWritten", func(t *testing.T) {
		// The bundle records the snapshot's file: a restore after the
		// platform moved its backups still reads it there.
		c := fntest.Call{Name: "demo2", Spec: spec, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}, backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}}
		p, err := planBackupsAt(t, c, movedBackupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		src := composedObject[etcdv1alpha2.EtcdCluster](t, p, nameEtcdCluster).Spec.Bootstrap.Restore.Source.S3
		if src == nil || src.Bucket != "etcd-backups" || src.Key != "tenantkube/tenant-demo/"+taken+".db" || src.Endpoint != "https://s3.corp.test" {
			t.Errorf("bootstrap.restore.source.s3 %+v, want etcd-backups/tenantkube/tenant-demo/%s.db at https://s3.corp.test", src, taken)
		}
	})
	t.Run("ThenTheControlPlane", func(t *testing.T) {
		obs := map[string]string{}
		for _, role := range backup.ControlPlanePKI {
			obs[backup.NamePrefixRestoredPKI+role.Role] = secretYAML(role.Secret(function.Identity{Namespace: "tenant-demo", Name: "demo2"}), map[string]string{"k": "v"})
		}
		// No identity any more: the restored Secrets are kept as observed.
		c := fntest.Call{Name: "demo2", Spec: spec, Observed: obs, Required: map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}}}
		p, err := planBackupsAt(t, c, strings.Replace(backupInput, ", identitySecret: etcd-backup-identity", "", 1), backupNow)
		if err != nil {
			t.Fatal(err)
		}
		kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
		// The backup's data lives under demo's account, not demo2's.
		if kcp.Spec.DataStoreSchema != demoSchema || kcp.Spec.DataStoreUsername != demoSchema {
			t.Errorf("dataStoreSchema %v, dataStoreUsername %v, want %s", kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername, demoSchema)
		}
		if len(p.Kept) < len(backup.ControlPlanePKI) {
			t.Errorf("restored PKI kept: %v", p.Kept)
		}
	})
}

// A restored cluster whose spec.restore is gone (admission refuses that
// update; the function does not rely on it) keeps its restored PKI
// Secrets as observed: dropped from the desired state, Crossplane would
// delete demo2-ca, demo2-sa-certificate and
// demo2-front-proxy-ca-certificate, and Kamaji would issue a new CA. A
// cluster never restored composes none.
func TestRestoredPKIOutlivesSpecRestore(t *testing.T) {
	restoredData := map[string]map[string]string{
		"ca":                         {"ca.crt": "cluster CA cert", "ca.key": "cluster CA key"},
		"sa-certificate":             {"sa.pub": "sa public", "sa.key": "sa private"},
		"front-proxy-ca-certificate": {"front-proxy-ca.crt": "fp cert", "front-proxy-ca.key": "fp key"},
	}
	obs := map[string]string{}
	for role, data := range restoredData {
		obs[backup.NamePrefixRestoredPKI+role] = secretYAML("demo2-"+role, data)
	}
	const key = "tenantkube/tenant-demo/demo-20261202183044-bd279f.db"
	obs[nameEtcdCluster] = `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: demo2-etcd, namespace: tenant-demo}, spec: {replicas: 3,
  bootstrap: {restore: {source: {s3: {endpoint: "https://s3.corp.test", bucket: etcd-backups, key: "` + key + `", credentialsSecretRef: {name: etcd-backup-s3}}}}}}}`
	rsp := fntest.Call{Name: "demo2", Spec: `{}`, Input: backupInput, Observed: obs}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	// The etcd keeps the bootstrap it started from (the operator's CRD
	// refuses a change).
	if got := fntest.Get(fntest.DesiredObject(t, rsp, nameEtcdCluster), "spec", "bootstrap", "restore", "source", "s3", "key"); got != key {
		t.Errorf("EtcdCluster bootstrap key %v, want the observed %s", got, key)
	}
	for role, data := range restoredData {
		name := backup.NamePrefixRestoredPKI + role
		got := fntest.DesiredObject(t, rsp, name)
		if n := fntest.Get(got, "metadata", "name"); n != "demo2-"+role {
			t.Errorf("%s: Secret %v, want demo2-%s", name, n, role)
		}
		for k, v := range data {
			if b := fntest.Get(got, "data", k); b != base64.StdEncoding.EncodeToString([]byte(v)) {
				t.Errorf("%s: data[%s] = %v, want the observed %q", name, k, b, v)
			}
		}
		if r := rsp.GetDesired().GetResources()[name].GetReady(); r != fnv1.Ready_READY_TRUE {
			t.Errorf("%s: ready %v, want READY_TRUE", name, r)
		}
	}

	rsp = fntest.Call{Name: "demo2", Spec: `{}`, Input: backupInput}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	for _, n := range fntest.DesiredNames(rsp) {
		if strings.HasPrefix(n, backup.NamePrefixRestoredPKI) {
			t.Errorf("a cluster never restored composes %s", n)
		}
	}
}

// The pipeline runs again when the next slot starts, nothing watched
// changing then: at 2026-12-03T12:00:00Z the 24h slot began
// 2026-12-02T18:30:44Z, so the next one is 6h30m44s away; the 6h slot began
// 06:30:44, the next 30m44s away.
func TestBackupRunsAgainAtTheNextSlot(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	for spec, want := range map[string]time.Duration{
		"{}":                       6*time.Hour + 30*time.Minute + 44*time.Second,
		"{backup: {interval: 6h}}": 30*time.Minute + 44*time.Second,
	} {
		p, err := planBackupsAt(t, fntest.Call{Spec: spec, Required: backupRequired(key)}, backupInput, backupNow)
		if err != nil {
			t.Fatal(err)
		}
		if p.RunAgainAfter != want {
			t.Errorf("spec %s: RunAgainAfter %s, want %s", spec, p.RunAgainAfter, want)
		}
	}
	p, err := planBackupsAt(t, fntest.Call{Spec: "{}"}, "", backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if p.RunAgainAfter != 0 {
		t.Errorf("without backups: RunAgainAfter %s, want 0 (the platform's poll interval)", p.RunAgainAfter)
	}
}

// Every backup object has, besides the controller reference Crossplane
// adds, a reference to the tenant's Namespace: apiVersion v1, kind
// Namespace, name NS, the Namespace's UID, not a controller. Kubernetes'
// garbage collector keeps an object while any owner exists
// (https://kubernetes.io/docs/concepts/architecture/garbage-collection/#owners-dependents),
// so the backups outlive the XR and go with the namespace.
func TestBackupOwnedByTheNamespace(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "tenant-demo", UID: tenantDemoUID}}
	snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+slot24h)
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	for what, got := range map[string][]metav1.OwnerReference{"EtcdSnapshot": snap.OwnerReferences, "EnvironmentConfig": env.OwnerReferences} {
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s ownerReferences (-want +got):\n%s", what, d)
		}
	}
}

// Until the Namespace has arrived no new backup is composed (it would have
// no owner but the XR, and go with the cluster), and the observed ones stay
// in the desired state with the Namespace reference they were observed
// with: the first call of a reconcile, before Crossplane sends required
// resources, and a Namespace Crossplane answered with nothing.
func TestBackupWaitsForTheNamespace(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	prev := "20261201183044"
	obs := map[string]string{
		"backup-" + prev:     snapshotYAML(prev, "Complete", "2026-12-01T18:31:00Z"),
		"backup-pki-" + prev: `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + prev + `-` + digestDemo + `}, data: {pki: x}}`,
	}
	for name, ns := range map[string][]string{"NotAsked": nil, "None": {}} {
		t.Run(name, func(t *testing.T) {
			req := backupRequired(key)
			delete(req, function.RequirementNamespace)
			if ns != nil {
				req[function.RequirementNamespace] = ns
			}
			p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: obs, Required: req}, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := composedWithPrefix(p, backup.NamePrefixBackup), []string{"backup-" + prev}; !cmp.Equal(got, want) {
				t.Errorf("composed %v, want %v (no backup of slot %s before the Namespace arrives)", got, want, slot24h)
			}
			snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+prev)
			want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "tenant-demo", UID: tenantDemoUID}}
			if d := cmp.Diff(want, snap.OwnerReferences); d != "" {
				t.Errorf("observed EtcdSnapshot's ownerReferences (-want +got):\n%s", d)
			}
			kept := false
			for _, k := range p.Kept {
				kept = kept || k.Name == "backup-pki-"+prev
			}
			if !kept {
				t.Errorf("observed bundle not kept: %v", p.Kept)
			}
		})
	}
}

// A claim demo created again after demo was deleted gets an XR with a
// new UID. In the slot of a retained backup of the earlier demo its own
// backup must have another name: Crossplane would otherwise apply it over
// the retained objects, taking them over and writing the new cluster's PKI
// into the old backup's bundle.
func TestBackupNamesOfAClusterCreatedAgain(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p, err := planBackupsAt(t, fntest.Call{UID: laterUID, Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+slot24h)
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	if want := "demo-" + slot24h + "-" + digestLater; snap.Name != want {
		t.Errorf("EtcdSnapshot %s, want %s (the earlier demo's is -%s)", snap.Name, want, digestDemo)
	}
	if want := "tenant-demo.demo-" + slot24h + "-" + digestLater; env.Name != want {
		t.Errorf("EnvironmentConfig %s, want %s", env.Name, want)
	}
	// Without a UID there is nothing to tell incarnations apart.
	c := fntest.Call{Spec: `{}`, Required: backupRequired(key)}
	req := c.Request(t)
	delete(req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue().GetFields(), "uid")
	r := function.NewRequest(req)
	tenant, err := r.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	_, errs := plan(tenant, inputOf(t, backupInput), function.HostPolicy{TenantHost: tenantHost}, r, backupNow)
	if msg := errs.ToAggregate(); msg == nil || !strings.Contains(msg.Error(), "metadata.uid: Required value") {
		t.Errorf("XR without a UID: %v", msg)
	}
}

// Disaster recovery: demo is gone (nothing of it observed, its bundle
// retained with only the Namespace as owner) and a new claim demo restores
// its backup; the new cluster's own backups do not reuse the name.
func TestRestoreAfterTheClusterIsGone(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	// As the garbage collector leaves it: the XR's reference removed.
	if len(env.OwnerReferences) != 1 || env.OwnerReferences[0].Kind != "Namespace" {
		t.Fatalf("bundle owners %v", env.OwnerReferences)
	}
	envJSON, _ := json.Marshal(env)
	pkiJSON, _ := json.Marshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "demo")))
	identity := `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-identity, namespace: tenantkube-system}, data: {identity: ` +
		base64.StdEncoding.EncodeToString([]byte(key.String())) + `}}`
	taken := "demo-" + slot24h + "-" + digestDemo
	req := backupRequired(key)
	req[backup.RequiredRestoreBundle] = []string{string(envJSON)}
	req[backup.RequiredRestorePKIObject] = []string{string(pkiJSON)}
	req[backup.RequiredRestoreIdentity] = []string{identity}
	c := fntest.Call{UID: laterUID, Spec: `{restore: {backup: ` + taken + `}}`, Required: req}
	p, err = planBackupsAt(t, c, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	etcd := composedObject[etcdv1alpha2.EtcdCluster](t, p, nameEtcdCluster)
	if src := etcd.Spec.Bootstrap.Restore.Source.S3; src == nil || src.Key != "tenantkube/tenant-demo/"+taken+".db" {
		t.Errorf("bootstrap.restore.source %+v", etcd.Spec.Bootstrap.Restore.Source)
	}
	ca := composedObject[corev1.Secret](t, p, backup.NamePrefixRestoredPKI+"ca")
	if ca.Name != "demo-ca" || string(ca.Data["ca.key"]) != "cluster CA key" {
		t.Errorf("restored CA %s: %q", ca.Name, ca.Data["ca.key"])
	}
	// In the same slot as the backup it restores, the new demo's own
	// backup is another object.
	own := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+slot24h)
	ownEnv := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	if want := "demo-" + slot24h + "-" + digestLater; own.Name != want || ownEnv.Name != "tenant-demo."+want {
		t.Errorf("the new demo's backup %s (%s), want %s", own.Name, ownEnv.Name, want)
	}
}

// An observed backup keeps the name it was created with (here one of the
// form "<N>-backup-<time>-<digest>"): the composed EtcdSnapshot and
// status.backup name the object as observed.
func TestBackupObservedName(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	want := "demo-backup-" + slot24h + "-" + digestDemo
	obs := map[string]string{"backup-" + slot24h: strings.Replace(snapshotYAML(slot24h, "Complete", "2026-12-02T18:31:00Z"), "name: demo-"+slot24h+"-"+digestDemo, "name: "+want, 1)}
	p, err := planBackupsAt(t, fntest.Call{UID: laterUID, Spec: `{}`, Observed: obs, Required: backupRequired(key)}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if snap := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, "backup-"+slot24h); snap.Name != want {
		t.Errorf("EtcdSnapshot %s, want %s as observed", snap.Name, want)
	}
	if last, _ := p.Status["backup"].(map[string]any)["lastSuccessful"].(map[string]any); last["name"] != want {
		t.Errorf("status.backup.lastSuccessful %v, want name %s", last, want)
	}
}

// A tenant's interval edits do not snapshot the etcd again: every
// interval has its own slots (demo's 6h0m1s slot holding backupNow starts
// 06:53:25, worked out with Python from backup.SlotStart's formula), and a slot's
// backup is taken only when it starts at least minInterval (6h) after the
// newest backup's.
func TestBackupsAtLeastMinIntervalApart(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	for name, tc := range map[string]struct {
		newest string
		want   []string
	}{
		// 06:30:44 to 06:53:25: 22m41s.
		"TooSoon": {"20261203063044", []string{"backup-20261203063044"}},
		// 2026-12-02T18:30:44 to 06:53:25: 12h22m41s.
		"Spaced": {slot24h, []string{"backup-" + slot24h, "backup-20261203065325"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fntest.Call{Spec: `{backup: {interval: 6h0m1s}}`, Required: backupRequired(key),
				Observed: map[string]string{"backup-" + tc.newest: snapshotYAML(tc.newest, "Complete", "2026-12-02T00:00:00Z")}}
			p, err := planBackupsAt(t, c, backupInput, backupNow)
			if err != nil {
				t.Fatal(err)
			}
			var got []string // the EtcdSnapshots: backup-<slot>
			for _, n := range composedWithPrefix(p, backup.NamePrefixBackup) {
				if _, err := time.Parse(backup.TimeLayout, strings.TrimPrefix(n, backup.NamePrefixBackup)); err == nil {
					got = append(got, n)
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("EtcdSnapshots (-want +got):\n%s", d)
			}
		})
	}
}

// A backup taken before the platform moved its backups keeps the
// destination it was written to (an EtcdSnapshot's spec is immutable);
// the next one goes to the new place.
func TestBackupKeepsItsDestination(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	c := fntest.Call{Spec: `{}`, Required: backupRequired(key),
		Observed: map[string]string{"backup-20261201183044": snapshotYAML("20261201183044", "Complete", "2026-12-01T18:31:00Z")}}
	p, err := planBackupsAt(t, c, movedBackupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"backup-20261201183044": "etcd-backups/tenantkube/tenant-demo", "backup-" + slot24h: "other/moved/tenant-demo"} {
		s3 := composedObject[etcdv1alpha2.EtcdSnapshot](t, p, name).Spec.Destination.S3
		if s3 == nil || s3.Bucket+"/"+s3.Key != want {
			t.Errorf("%s destination %+v, want %s", name, s3, want)
		}
	}
}

// With the platform's backups off, the backups taken stay (a claim's and
// a Tenant's): snapshot, bundle and PKI object kept as observed.
func TestBackupsOffKeepsTheBackups(t *testing.T) {
	objs := map[string]string{
		"backup-" + slot24h:                 snapshotYAML(slot24h, "Complete", "2026-12-02T18:31:00Z"),
		"backup-pki-" + slot24h:             `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-` + slot24h + `-` + digestDemo + `}, data: {namespace: tenant-demo}}`,
		"backup-clusterpki-demo-0123456789": `{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenant-demo.demo-pki-x}, data: {namespace: tenant-demo}}`,
	}
	want := []string{"backup-" + slot24h, "backup-clusterpki-demo-0123456789", "backup-pki-" + slot24h}
	keptNames := func(p *function.Plan) []string {
		var out []string
		for _, k := range p.Kept {
			if strings.HasPrefix(k.Name, backup.NamePrefixBackup) {
				out = append(out, k.Name)
			}
		}
		return out
	}
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Observed: objs}, `{etcd: {operator: etcd-operator.cozystack.io/v1alpha2}}`, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, keptNames(p)); d != "" {
		t.Errorf("a claim's backups kept (-want +got):\n%s", d)
	}
	rsp, err := fntest.Run(fn, tenantCall{name: "tenant-demo", input: `{etcd: {operator: etcd-operator.cozystack.io/v1alpha2}}`, observed: objs,
		required: map[string][]string{requiredTenantControlPlanes: {}}}.request(t))
	if err != nil {
		t.Fatal(err)
	}
	fntest.NoFatal(t, rsp)
	for _, n := range want {
		if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
			t.Errorf("the Tenant's %s left the desired state", n)
		}
	}
}

// A current slot's bundle written again after the platform moved its
// backups records where its snapshot was written, not the new place.
func TestBundleRecordsTheSnapshotsDestination(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	c := fntest.Call{Spec: `{}`, Required: backupRequired(key),
		Observed: map[string]string{"backup-" + slot24h: snapshotYAML(slot24h, "Complete", "2026-12-02T18:31:00Z")}}
	p, err := planBackupsAt(t, c, movedBackupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	var src etcdv1alpha2.SnapshotLocation
	if err := json.Unmarshal(composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h).Data["source"].Raw, &src); err != nil {
		t.Fatal(err)
	}
	if want := "etcd-backups/tenantkube/tenant-demo/demo-" + slot24h + "-" + digestDemo + ".db"; src.S3 == nil || src.S3.Bucket+"/"+src.S3.Key != want {
		t.Errorf("bundle source %+v, want %s", src.S3, want)
	}
}

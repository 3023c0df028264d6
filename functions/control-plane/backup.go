package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
)

// Composed-resource names of the backups: namePrefixBackup + T is the
// EtcdSnapshot of the slot starting at T (backupTimeLayout, UTC),
// namePrefixBackupPKI + T the EnvironmentConfig holding its encrypted PKI.
const (
	namePrefixBackup    = "backup-"
	namePrefixBackupPKI = "backup-pki-"
	// backupTimeLayout is a slot's start in a backup's name: UTC
	// YYYYMMDDhhmmss.
	backupTimeLayout = "20060102150405"
	// backupDigestLength is the length of a backup name's incarnation
	// digest, in hex characters.
	backupDigestLength = 6
)

// Required-resources keys of the backups.
const (
	requiredBackupRecipient = "backup-recipient"
	// requiredBackupSourcePrefix + role: each PKI Secret a backup carries.
	requiredBackupSourcePrefix = "backup-pki-source-"
)

// Keys of the platform's age key objects.
const (
	recipientKey = "recipient"
	identityKey  = "identity"
)

// backupNamePattern is a backup's name:
// <N>-backup-<backupTimeLayout>-<incarnation digest>.
var backupNamePattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)-backup-([0-9]{14})-([0-9a-f]{6})$`)

// pkiRole is one Secret a backup carries: Role is its key in the bundle,
// Secret its name for cluster id.
type pkiRole struct {
	Role   string
	Secret func(id function.Identity) string
}

// backupPKI are the Secrets a restore needs besides the data: Kamaji's
// cluster CA, service-account key pair and front-proxy CA (the names
// Kamaji gives them) and the etcd client and peer CAs (etcd.go). The
// first three make a restored cluster the same cluster to its clients
// (restoredPKI).
var backupPKI = []pkiRole{
	{"ca", func(id function.Identity) string { return id.Prefixed("ca") }},
	{"sa-certificate", func(id function.Identity) string { return id.Prefixed("sa-certificate") }},
	{"front-proxy-ca-certificate", func(id function.Identity) string { return id.Prefixed("front-proxy-ca-certificate") }},
	{"etcd-ca", func(id function.Identity) string { return namesOfEtcd(id, cpinput.EtcdOperatorCozystack).ClientCA }},
	{"etcd-peer-ca", func(id function.Identity) string { return namesOfEtcd(id, cpinput.EtcdOperatorCozystack).PeerCA }},
}

// backupName is the name of cluster id's backup of the slot starting at
// t: "<N>-backup-<UTC YYYYMMDDhhmmss>-<incarnation>" (at most
// 32+8+14+1+6 = 61 characters), incarnation the XR's incarnationDigest.
// Backups outlive their XR (backupOwner), so a cluster created again under
// the same name may reach a slot an earlier one's retained backup has:
// the digest keeps their names apart, and so Crossplane never applies the
// new cluster's backup over the retained one.
func backupName(id function.Identity, incarnation string, t time.Time) string {
	return id.Prefixed("backup-" + t.UTC().Format(backupTimeLayout) + "-" + incarnation)
}

// incarnationDigest is the first backupDigestLength hex characters of the
// SHA-256 of the XR's metadata.uid: each XR of a claim has a UID of its
// own.
func incarnationDigest(uid string) string {
	sum := sha256.Sum256([]byte(uid))
	return hex.EncodeToString(sum[:])[:backupDigestLength]
}

// backupOwner is the ownerReference every backup object carries besides
// Crossplane's controller reference to the XR: the tenant's Namespace
// object (cluster-scoped, so it may own both the namespaced EtcdSnapshot
// and the cluster-scoped EnvironmentConfig). Kubernetes' garbage collector
// deletes an object only once all its owners are gone: deleting the
// cluster leaves its backups, deleting the namespace removes them. nil
// until the Namespace has arrived (function.RequirementNamespace).
func backupOwner(r *function.Request, id function.Identity) (*metav1.OwnerReference, error) {
	nss, _, err := function.Required[corev1.Namespace](r, function.RequirementNamespace)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		if ns.Name == id.Namespace && ns.UID != "" {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}, nil
		}
	}
	return nil, nil
}

// observedBackupOwner is the Namespace ownerReference observed on
// composed resource name (nil for none): what an observed backup keeps
// while the Namespace has not arrived.
func observedBackupOwner(r *function.Request, id function.Identity, name string) (*metav1.OwnerReference, error) {
	obj, _, err := function.Observed[metav1.PartialObjectMetadata](r, name)
	if err != nil || obj == nil {
		return nil, err
	}
	for _, ref := range obj.OwnerReferences {
		if ref.APIVersion == "v1" && ref.Kind == "Namespace" && ref.Name == id.Namespace && ref.UID != "" {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: id.Namespace, UID: ref.UID}, nil
		}
	}
	return nil, nil
}

// backupBundleName is the cluster-scoped name of the EnvironmentConfig
// holding backup b's PKI in namespace ns: "<NS>.<b>", injective as
// "<NS>.<N>" is.
func backupBundleName(ns, b string) string { return ns + "." + b }

// backupInterval is the cluster's interval: spec.backup.interval within
// the platform's [minInterval, interval], or the platform's interval.
func backupInterval(spec *tkv1alpha1.KubernetesClusterSpec, b *cpinput.EtcdBackup) (time.Duration, *field.Error) {
	hi := b.Interval
	if spec.Backup.Interval == "" {
		return hi.Parse(field.NewPath("input", "etcd", "backup", "interval"), b.MinInterval, hi)
	}
	return spec.Backup.Interval.Parse(field.NewPath("spec", "backup", "interval"), b.MinInterval, hi)
}

// slotStart is the start of the backup slot holding now: slots are
// interval long and offset from the Unix epoch by a per-cluster amount
// (the SHA-256 of "<NS>/<N>" modulo the interval, in whole seconds), so
// the platform's clusters do not all snapshot at once. The slot, and so
// everything composed from it, changes only at a slot boundary.
func slotStart(id function.Identity, interval time.Duration, now time.Time) time.Time {
	sum := sha256.Sum256([]byte(id.Namespace + "/" + id.Name))
	step := int64(interval / time.Second)
	off := int64(binary.BigEndian.Uint64(sum[:8]) % uint64(step)) //nolint:gosec // step ≥ 3600
	t := now.Unix() - off
	start := t - ((t%step)+step)%step + off
	return time.Unix(start, 0).UTC()
}

// observedBackups are the slot starts of the observed EtcdSnapshots,
// newest first.
func observedBackups(r *function.Request) []time.Time {
	var out []time.Time
	for name := range r.ObservedNames() {
		rest, ok := strings.CutPrefix(name, namePrefixBackup)
		if !ok || len(rest) != len(backupTimeLayout) {
			continue
		}
		t, err := time.Parse(backupTimeLayout, rest)
		if err != nil {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return b.Compare(a) })
	return out
}

// backupPlan is what planBackups composes besides the objects: the status
// and condition.
type backupPlan struct {
	Status    map[string]any
	Current   bool
	Reason    string
	Message   string
	Interval  time.Duration
	Retained  int
	LastName  string
	LastTime  time.Time
	LastFound bool
}

// planBackups adds to p the cluster's EtcdSnapshots and their encrypted
// PKI (docs/architecture.md, Backups): the observed ones, the newest
// retention of them kept, and one for the slot holding now when no
// observed backup is of that slot or later and the PKI to carry and the
// tenant's Namespace (backupOwner) have arrived. It requires the PKI
// Secrets and the recipient; it sets status.backup and the BackupCurrent
// condition.
func planBackups(p *function.Plan, r *function.Request, t *function.Cluster, in *cpinput.ControlPlaneInput, schema, username string, now time.Time) *field.Error {
	b := &in.Etcd.Backup
	interval, ferr := backupInterval(t.Spec, b)
	if ferr != nil {
		return ferr
	}
	id := t.ID
	for _, role := range backupPKI {
		p.Require(requiredBackupSourcePrefix+role.Role, secretSelector(role.Secret(id), id.Namespace))
	}
	p.Require(requiredBackupRecipient, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "ConfigMap",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: b.RecipientConfigMap},
		Namespace: proto.String(b.PKINamespace),
	})
	pki, err := backupSources(r, id)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", requiredBackupSourcePrefix), err)
	}
	recipient, ferr := backupRecipient(r, b)
	if ferr != nil {
		return ferr
	}
	uid := r.CompositeString("metadata", "uid")
	if uid == "" {
		return field.Required(field.NewPath("metadata", "uid"), "backup names carry a digest of the XR's UID, which Crossplane's XRs always have")
	}
	incarnation := incarnationDigest(uid)
	owner, err := backupOwner(r, id)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", function.RequirementNamespace), err)
	}
	// A new backup object needs all it depends on: the PKI it carries, the
	// key it is encrypted to and the Namespace that owns it.
	canCreate := pki != nil && recipient != nil && owner != nil

	slot := slotStart(id, interval, now)
	// Nothing watched changes when the next slot starts: Crossplane is
	// asked to run the pipeline again then.
	p.RunAgainAfter = slot.Add(interval).Sub(now)
	backups := observedBackups(r)
	if (len(backups) == 0 || backups[0].Before(slot)) && canCreate {
		backups = append([]time.Time{slot}, backups...)
	}
	if len(backups) > int(b.Retention) {
		// Older ones leave the desired state: Crossplane deletes them.
		backups = backups[:b.Retention]
	}
	for _, ts := range backups {
		suffix := ts.Format(backupTimeLayout)
		snapshot := namePrefixBackup + suffix
		name := backupObjectName(r, id, incarnation, snapshot, ts)
		snapOwner := owner
		if snapOwner == nil {
			// Kept as observed until the Namespace arrives: an apply
			// without the reference would remove it.
			if snapOwner, err = observedBackupOwner(r, id, snapshot); err != nil {
				return field.InternalError(field.NewPath("observed", snapshot), err)
			}
		}
		p.Add(snapshot, buildEtcdSnapshot(id, b, name, snapOwner), function.ReadyAlways)
		bundle := namePrefixBackupPKI + suffix
		switch {
		case r.ObservedExists(bundle):
			// Encryption is randomised: what was written stays (with
			// its Namespace reference, function.Kept).
			p.Kept = append(p.Kept, function.Kept{Name: bundle, Ready: fnv1.Ready_READY_TRUE})
		case canCreate:
			env, err := buildBackupBundle(id, name, schema, username, pki, recipient, owner)
			if err != nil {
				return field.InternalError(field.NewPath("input", "etcd", "backup", "recipientConfigMap"), err)
			}
			p.Add(bundle, env, function.ReadyAlways)
		}
	}

	bp := backupStatus(r, id, incarnation, interval, backups, now)
	p.Status["backup"] = bp.Status
	p.SetCondition(tkv1alpha1.ConditionBackupCurrent, bp.Current, bp.Reason, bp.Message)
	return nil
}

// backupStatus reads the newest successful backup (phase Complete) of
// backups and says whether it is current: at most twice the interval old,
// or, before the first, the cluster (its XR) younger than that.
func backupStatus(r *function.Request, id function.Identity, incarnation string, interval time.Duration, backups []time.Time, now time.Time) backupPlan {
	bp := backupPlan{Interval: interval, Retained: len(backups)}
	for _, ts := range backups {
		name := namePrefixBackup + ts.Format(backupTimeLayout)
		if r.ObservedString(name, "status", "phase") != etcdv1alpha2.SnapshotPhaseComplete {
			continue
		}
		bp.LastName, bp.LastTime, bp.LastFound = backupObjectName(r, id, incarnation, name, ts), ts, true
		if c, err := time.Parse(time.RFC3339, r.ObservedString(name, "metadata", "creationTimestamp")); err == nil {
			bp.LastTime = c.UTC()
		}
		break
	}
	status := map[string]any{"interval": interval.String(), "retained": int64(bp.Retained)}
	limit := 2 * interval
	switch {
	case bp.LastFound:
		age := now.Sub(bp.LastTime).Truncate(time.Minute)
		status["lastSuccessful"] = map[string]any{
			"name": bp.LastName, "time": bp.LastTime.Format(time.RFC3339), "age": age.String(),
		}
		bp.Current = age <= limit
		bp.Reason, bp.Message = tkv1alpha1.ReasonBackupSucceeded, fmt.Sprintf("the last successful backup, %s, is %s old (interval %s)", bp.LastName, age, interval)
		if !bp.Current {
			bp.Reason, bp.Message = tkv1alpha1.ReasonBackupOverdue, fmt.Sprintf("the last successful backup, %s, is %s old: more than twice the interval %s", bp.LastName, age, interval)
		}
	default:
		created, err := time.Parse(time.RFC3339, r.CompositeString("metadata", "creationTimestamp"))
		bp.Current = err != nil || now.Sub(created) <= limit
		bp.Reason, bp.Message = tkv1alpha1.ReasonAwaitingFirstBackup, fmt.Sprintf("no backup has succeeded yet (interval %s)", interval)
		if !bp.Current {
			bp.Reason, bp.Message = tkv1alpha1.ReasonBackupOverdue, fmt.Sprintf("no backup has succeeded in the cluster's first %s: more than twice the interval %s", now.Sub(created).Truncate(time.Minute), interval)
		}
	}
	bp.Status = status
	return bp
}

// backupObjectName is the name of the backup of slot ts, composed as
// snapshot: the observed EtcdSnapshot's, or backupName for a new one.
func backupObjectName(r *function.Request, id function.Identity, incarnation, snapshot string, ts time.Time) string {
	if n := r.ObservedString(snapshot, "metadata", "name"); n != "" {
		return n
	}
	return backupName(id, incarnation, ts)
}

// ownerRefs is owner as a list (none for nil).
func ownerRefs(owner *metav1.OwnerReference) []metav1.OwnerReference {
	if owner == nil {
		return nil
	}
	return []metav1.OwnerReference{*owner}
}

// buildEtcdSnapshot is the EtcdSnapshot name of cluster id's etcd, to the
// platform's destination: S3 under <keyPrefix>/<NS>/, or the namespace's
// PVC under subPath; the operator stores it as <name>.db there. owner is
// its Namespace reference.
func buildEtcdSnapshot(id function.Identity, b *cpinput.EtcdBackup, name string, owner *metav1.OwnerReference) *etcdv1alpha2.EtcdSnapshot {
	return &etcdv1alpha2.EtcdSnapshot{
		TypeMeta:   metav1.TypeMeta{APIVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdSnapshotKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: id.Labels(), OwnerReferences: ownerRefs(owner)},
		Spec: etcdv1alpha2.EtcdSnapshotSpec{
			ClusterRef:  corev1.LocalObjectReference{Name: namesOfEtcd(id, cpinput.EtcdOperatorCozystack).Cluster},
			Destination: backupLocation(b, id.Namespace, ""),
		},
	}
}

// backupLocation is the destination of namespace ns's snapshots (file
// "") or the exact location of its snapshot file (a restore source): the
// S3 key prefix <keyPrefix>/<ns> (key <keyPrefix>/<ns>/<file>), or the
// PVC subPath (<subPath>/<file>).
func backupLocation(b *cpinput.EtcdBackup, ns, file string) etcdv1alpha2.SnapshotLocation {
	if b.S3 != nil {
		key := ns
		if pre := strings.Trim(b.S3.KeyPrefix, "/"); pre != "" {
			key = pre + "/" + ns
		}
		if file != "" {
			key += "/" + file
		}
		return etcdv1alpha2.SnapshotLocation{S3: &etcdv1alpha2.S3SnapshotLocation{
			Endpoint: b.S3.Endpoint, Bucket: b.S3.Bucket, Key: key, Region: b.S3.Region, ForcePathStyle: b.S3.ForcePathStyle,
			CredentialsSecretRef: corev1.LocalObjectReference{Name: b.S3.CredentialsSecretName},
		}}
	}
	sub := strings.Trim(b.PVC.SubPath, "/")
	if file != "" {
		sub = strings.TrimPrefix(path.Join(sub, file), "/")
	}
	return etcdv1alpha2.SnapshotLocation{PVC: &etcdv1alpha2.PVCSnapshotLocation{ClaimName: b.PVC.ClaimName, SubPath: sub}}
}

// secretSelector selects Secret name in ns.
func secretSelector(name, ns string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: name},
		Namespace: proto.String(ns),
	}
}

// backupSources are the data of the PKI Secrets a backup carries, by
// role, once every one has arrived (nil before).
func backupSources(r *function.Request, id function.Identity) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	for _, role := range backupPKI {
		secrets, _, err := function.Required[corev1.Secret](r, requiredBackupSourcePrefix+role.Role)
		if err != nil {
			return nil, fmt.Errorf("cannot decode Secret %s/%s: %w", id.Namespace, role.Secret(id), err)
		}
		if len(secrets) != 1 || len(secrets[0].Data) == 0 {
			return nil, nil
		}
		out[role.Role] = secrets[0].Data
	}
	return out, nil
}

// backupRecipient is the platform's age recipient once its ConfigMap
// arrived (nil before); a ConfigMap without a valid recipient is an error
// naming the setting.
func backupRecipient(r *function.Request, b *cpinput.EtcdBackup) (age.Recipient, *field.Error) {
	path := field.NewPath("input", "etcd", "backup", "recipientConfigMap")
	cms, arrived, err := function.Required[corev1.ConfigMap](r, requiredBackupRecipient)
	if err != nil {
		return nil, field.InternalError(path, err)
	}
	if !arrived {
		return nil, nil
	}
	if len(cms) != 1 {
		return nil, field.Invalid(path, b.RecipientConfigMap, fmt.Sprintf("no ConfigMap %s/%s: backups need the age public key they encrypt the PKI to", b.PKINamespace, b.RecipientConfigMap))
	}
	rcp, err := age.ParseX25519Recipient(strings.TrimSpace(cms[0].Data[recipientKey]))
	if err != nil {
		return nil, field.Invalid(path, b.RecipientConfigMap, fmt.Sprintf("key %q of ConfigMap %s/%s is no age X25519 recipient (age1...): %v", recipientKey, b.PKINamespace, b.RecipientConfigMap, err))
	}
	return rcp, nil
}

// Data keys of a backup's EnvironmentConfig.
const (
	bundleNamespace = "namespace"
	bundleCluster   = "cluster"
	bundleBackup    = "backup"
	bundleSchema    = "dataStoreSchema"
	bundleUsername  = "dataStoreUsername"
	bundlePKI       = "pki"
)

// buildBackupBundle is the cluster-scoped EnvironmentConfig "<NS>.<b>"
// holding backup b's PKI, the JSON of {role: Secret data}, encrypted to
// the platform's recipient (age, armored), and where the control plane's
// data lives in etcd. Tenants cannot read EnvironmentConfigs, and only the
// platform's identity decrypts it. owner is its Namespace reference.
func buildBackupBundle(id function.Identity, b, schema, username string, pki map[string]map[string][]byte, to age.Recipient, owner *metav1.OwnerReference) (*xpextv1beta1.EnvironmentConfig, error) {
	plain, err := json.Marshal(pki)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, to)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(plain); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	str := func(s string) extv1.JSON { v, _ := json.Marshal(s); return extv1.JSON{Raw: v} }
	return &xpextv1beta1.EnvironmentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: backupBundleName(id.Namespace, b), Labels: id.Labels(function.LabelNamespace, id.Namespace), OwnerReferences: ownerRefs(owner)},
		Data: map[string]extv1.JSON{
			bundleNamespace: str(id.Namespace), bundleCluster: str(id.Name), bundleBackup: str(b),
			bundleSchema: str(schema), bundleUsername: str(username), bundlePKI: str(buf.String()),
		},
	}, nil
}

// openBundle decrypts a backup's PKI with the platform's identity.
func openBundle(armored string, id age.Identity) (map[string]map[string][]byte, error) {
	rd, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), id)
	if err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	var out map[string]map[string][]byte
	return out, json.Unmarshal(plain, &out)
}

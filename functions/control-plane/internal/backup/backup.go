package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
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

// Composed-resource names of the backups: NamePrefixBackup + T is the
// EtcdSnapshot of the slot starting at T (TimeLayout, UTC),
// NamePrefixBackupPKI + T the EnvironmentConfig holding its encrypted PKI.
const (
	NamePrefixBackup    = "backup-"
	NamePrefixBackupPKI = "backup-pki-"
	// TimeLayout is a slot's start in a backup's name: UTC
	// YYYYMMDDhhmmss.
	TimeLayout = "20060102150405"
	// backupDigestLength is the length of a backup name's incarnation
	// digest, in hex characters.
	backupDigestLength = 6
)

// Required-resources keys of the backups.
const (
	RequiredBackupRecipient = "backup-recipient"
	// RequiredBackupSourcePrefix + role: each PKI Secret a backup carries.
	RequiredBackupSourcePrefix = "backup-pki-source-"
)

// Keys of the platform's age key objects.
const (
	recipientKey = "recipient"
	identityKey  = "identity"
)

// backupNamePattern is a backup's name: "<N>-<UTC YYYYMMDDhhmmss>-<6 hex
// digits>" (a cluster's), "<UTC YYYYMMDDhhmmss>-<6 hex digits>" (a
// Tenant's); its first part may be any DNS label, as an observed backup
// keeps the name it has (such as "<N>-backup-<time>-<digits>").
var backupNamePattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?-)?[0-9]{14}-[0-9a-f]{6}$`)

// maxBackupNameLength bounds an EtcdSnapshot's name: etcd-operator v0.5.4
// runs a snapshot as the Job "<name>-snapshot" (controllers/snapshot_job.go),
// and Kubernetes copies a Job's name into its pods' label
// batch.kubernetes.io/job-name, at most 63 characters; the operator leaves
// a snapshot whose Job it cannot create Pending.
const maxBackupNameLength = 63 - len("-snapshot")

// The longest name Name composes, for a cluster of the longest name,
// fits maxBackupNameLength: this constant overflows (a compile error) when
// it does not.
const _ = uint(maxBackupNameLength - (function.MaxClusterNameLength + len("-") + len(TimeLayout) + len("-") + backupDigestLength))

// PKIRole is one Secret a backup carries: Role is its key in the bundle,
// Secret its name for cluster id; an Optional one is carried when it
// exists.
type PKIRole struct {
	Role     string
	Secret   func(id function.Identity) string
	Optional bool
}

// EncryptionRole is the cluster's encryption Secret N-encryption-config
// (the keys its API servers encrypt at rest with), carried where the
// cluster has one: a restore composes the restored cluster's
// configuration with its keys (RestorePlan.Encryption).
var EncryptionRole = PKIRole{Role: "encryption-config", Secret: func(id function.Identity) string { return id.Prefixed("encryption-config") }, Optional: true}

// TenantClusterPKI are the Secrets a Tenant's backup carries of each of
// its TenantClusters: ControlPlanePKI and EncryptionRole.
var TenantClusterPKI = append(slices.Clip(ControlPlanePKI), EncryptionRole)

// ControlPlanePKI are Kamaji's Secrets of a cluster a backup carries (the
// names Kamaji gives them): the cluster CA, service-account key pair and
// front-proxy CA. They make a restored cluster the same cluster to its
// clients (restoredPKI).
var ControlPlanePKI = []PKIRole{
	{Role: "ca", Secret: func(id function.Identity) string { return id.Prefixed("ca") }},
	{Role: "sa-certificate", Secret: func(id function.Identity) string { return id.Prefixed("sa-certificate") }},
	{Role: "front-proxy-ca-certificate", Secret: func(id function.Identity) string { return id.Prefixed("front-proxy-ca-certificate") }},
}

// ClusterPKI are the Secrets a restore of a dedicated etcd needs besides
// the data: ControlPlanePKI, the etcd's client and peer CAs (the
// Secrets etcdCA and etcdPeerCA name) and the encryption keys
// (EncryptionRole).
func ClusterPKI(etcdCA, etcdPeerCA func(id function.Identity) string) []PKIRole {
	return append(slices.Clip(ControlPlanePKI), PKIRole{Role: "etcd-ca", Secret: etcdCA}, PKIRole{Role: "etcd-peer-ca", Secret: etcdPeerCA}, EncryptionRole)
}

// Name is the name of a backup of the slot starting at t: for a
// cluster's etcd (base N) "<N>-<UTC YYYYMMDDhhmmss>-<incarnation>", at
// most 32+1+14+1+6 = 54 characters (maxBackupNameLength); for a Tenant's
// (base "") "<UTC YYYYMMDDhhmmss>-<incarnation>", 21 characters, shorter
// than any cluster's. incarnation is the XR's IncarnationDigest: backups
// outlive their XR (backupOwner), so a cluster created again under the
// same name may reach a slot an earlier one's retained backup has; the
// digest keeps their names apart, and so Crossplane never applies the new
// cluster's backup over the retained one.
func Name(base, incarnation string, t time.Time) string {
	name := t.UTC().Format(TimeLayout) + "-" + incarnation
	if base == "" {
		return name
	}
	return base + "-" + name
}

// IncarnationDigest is the first backupDigestLength hex characters of the
// SHA-256 of the XR's metadata.uid: each XR of a claim has a UID of its
// own.
func IncarnationDigest(uid string) string { return uidDigest(uid, backupDigestLength) }

// uidDigest is the first n hex characters of the SHA-256 of uid.
func uidDigest(uid string, n int) string {
	sum := sha256.Sum256([]byte(uid))
	return hex.EncodeToString(sum[:])[:n]
}

// backupOwner is the ownerReference every backup object carries besides
// Crossplane's controller reference to the XR: the tenant's Namespace
// object (cluster-scoped, so it may own both the namespaced EtcdSnapshot
// and the cluster-scoped EnvironmentConfig). Kubernetes' garbage collector
// deletes an object only once all its owners are gone: deleting the
// cluster leaves its backups, deleting the namespace removes them. nil
// until the Namespace has arrived (function.RequirementNamespace).
func backupOwner(r *function.Request, ns string) (*metav1.OwnerReference, error) {
	nss, _, err := function.Required[corev1.Namespace](r, function.RequirementNamespace)
	if err != nil {
		return nil, err
	}
	for _, o := range nss {
		if o.Name == ns && o.UID != "" {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: o.Name, UID: o.UID}, nil
		}
	}
	return nil, nil
}

// observedBackupOwner is the Namespace ownerReference observed on
// composed resource name (nil for none): what an observed backup keeps
// while the Namespace has not arrived.
func observedBackupOwner(r *function.Request, ns, name string) (*metav1.OwnerReference, error) {
	obj, _, err := function.Observed[metav1.PartialObjectMetadata](r, name)
	if err != nil || obj == nil {
		return nil, err
	}
	for _, ref := range obj.OwnerReferences {
		if ref.APIVersion == "v1" && ref.Kind == "Namespace" && ref.Name == ns && ref.UID != "" {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: ref.UID}, nil
		}
	}
	return nil, nil
}

// backupBundleName is the cluster-scoped name of the EnvironmentConfig
// holding backup b's PKI in namespace ns: "<NS>.<b>", injective as
// "<NS>.<N>" is.
func backupBundleName(ns, b string) string { return ns + "." + b }

// Interval is the interval asked (spec.backup.interval) within the
// platform's [minInterval, interval], or with none asked the platform's
// interval.
func Interval(asked tkv1alpha1.Duration, b *cpinput.EtcdBackup) (time.Duration, *field.Error) {
	hi := b.Interval
	if asked == "" {
		return hi.Parse(field.NewPath("input", "etcd", "backup", "interval"), b.MinInterval, hi)
	}
	return asked.Parse(field.NewPath("spec", "backup", "interval"), b.MinInterval, hi)
}

// IntervalText is the interval Interval takes, as written.
func IntervalText(asked tkv1alpha1.Duration, b *cpinput.EtcdBackup) string {
	if asked == "" {
		return string(b.Interval)
	}
	return string(asked)
}

// compactDuration is d without zero trailing units: 89h29m, 48h, 30s.
func compactDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// SlotStart is the start of the backup slot holding now: slots are
// interval long and offset from the Unix epoch by a per-cluster amount
// (the SHA-256 of "<NS>/<N>" modulo the interval, in whole seconds), so
// the platform's clusters do not all snapshot at once. The slot, and so
// everything composed from it, changes only at a slot boundary.
func SlotStart(id function.Identity, interval time.Duration, now time.Time) time.Time {
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
		rest, ok := strings.CutPrefix(name, NamePrefixBackup)
		if !ok || len(rest) != len(TimeLayout) {
			continue
		}
		t, err := time.Parse(TimeLayout, rest)
		if err != nil {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return b.Compare(a) })
	return out
}

// backupPlan is the state of a schedule's backups: the status and
// condition.
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

// Schedule is one etcd's scheduled backups: a claim's dedicated
// etcd (PlanCluster) or a Tenant's (planTenantBackups).
type Schedule struct {
	// Slot seeds the slots' offset: "<NS>/<Slot.Name>".
	Slot function.Identity
	// Base is the first part of the backups' names (Name).
	Base string
	// Etcd is the EtcdCluster's name; Labels the backup objects' labels.
	Etcd   string
	Labels map[string]string
	// Interval is the length of a slot; IntervalText the same as the
	// tenant or the platform wrote it ("24h", "90m"), which status and
	// messages show.
	Interval     time.Duration
	IntervalText string
	// Tenant: a bundle lists the clusters it carries (a Tenant's);
	// otherwise it is one cluster's.
	Tenant bool
	// Since is when the first backup became due (zero: the XR's
	// creation); Idle says there is nothing to back up.
	Since time.Time
	Idle  bool
	// Require asks for what a backup carries; Carried reads it: the
	// identities of the clusters it carries (none until they arrived) and
	// why a cluster's is refused (ReadPKI).
	Require func(p *function.Plan)
	Carried func(r *function.Request) ([]ClusterIdentity, []string, error)
}

// PlanCluster adds to p the claim's EtcdSnapshots of its dedicated etcd
// (EtcdCluster etcd) and their encrypted PKI (Compose): the Secrets
// of pki (ClusterPKI), and where the control plane's data lives in etcd
// (schema, username).
func PlanCluster(p *function.Plan, r *function.Request, t *function.Cluster, in *cpinput.ControlPlaneInput, etcd string, pki []PKIRole, schema, username string, now time.Time) *field.Error {
	interval, ferr := Interval(t.Spec.Backup.Interval, &in.Etcd.Backup)
	if ferr != nil {
		return ferr
	}
	id := t.ID
	return Compose(p, r, &in.Etcd.Backup, Schedule{
		Slot: id, Base: id.Name, Etcd: etcd,
		Labels: id.Labels(), Interval: interval, IntervalText: IntervalText(t.Spec.Backup.Interval, &in.Etcd.Backup),
		Require: func(p *function.Plan) { RequirePKI(p, id, "", pki) },
		Carried: func(r *function.Request) ([]ClusterIdentity, []string, error) {
			data, refused, err := ReadPKI(r, id, "", pki)
			if data == nil || err != nil {
				return nil, refused, err
			}
			return []ClusterIdentity{{Cluster: id.Name, PKI: data, Schema: schema, Username: username}}, nil, nil
		},
	}, now)
}

// Compose adds to p the EtcdSnapshots of schedule s, their bundles
// and the PKI objects the bundles name (docs/architecture.md, Backups): the
// observed ones, the newest retention of them kept (and the newest
// Complete one, retained), and one for the slot
// holding now when no observed backup is of that slot or later and what
// it carries, the platform's recipient and the tenant's Namespace
// (backupOwner) have arrived, the namespace's S3 credentials are marked as
// its own (backupCredentials) and, for a first backup, the namespace holds
// fewer deleted clusters' backups than the platform's bound
// (deletedClusterBackups). What a backup carries is required only while
// the current slot's backup is to be written. It sets status.backup and
// the BackupCurrent condition.
func Compose(p *function.Plan, r *function.Request, b *cpinput.EtcdBackup, s Schedule, now time.Time) *field.Error {
	ns := s.Slot.Namespace
	uid := r.CompositeString("metadata", "uid")
	if uid == "" {
		return field.Required(field.NewPath("metadata", "uid"), "backup names carry a digest of the XR's UID, which Crossplane's XRs always have")
	}
	owner, err := backupOwner(r, ns)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", function.RequirementNamespace), err)
	}
	slot := SlotStart(s.Slot, s.Interval, now)
	// Nothing watched changes when the next slot starts: Crossplane is
	// asked to run the pipeline again then.
	p.RunAgainWithin(slot.Add(s.Interval).Sub(now))
	backups := observedBackups(r)
	current := len(backups) > 0 && !backups[0].Before(slot)
	pkis := &pkiObjects{ns: ns, incarnation: uidDigest(uid, pkiIncarnationLength), labels: s.Labels, owner: owner}
	due, ferr := backupDue(r, b, s, slot, backups, current, pkis)
	if ferr != nil {
		return ferr
	}
	var c carried
	if due {
		if c, ferr = readCarried(p, r, b, s); ferr != nil {
			return ferr
		}
	}
	refusal, cleared, ferr := refuseBackup(p, r, b, ns, due && len(backups) == 0)
	if ferr != nil {
		return ferr
	}
	// A new backup object needs all it depends on: what it carries, the
	// key that is encrypted to, the Namespace that owns it and the checks
	// above passed. A refusal leaves what was taken as it is.
	canCreate := cleared && refusal == nil && len(c.ids) > 0 && c.recipient != nil && owner != nil
	if !current && canCreate {
		backups = append([]time.Time{slot}, backups...)
	}
	// Older ones leave the desired state: Crossplane deletes them.
	backups = retained(r, backups, b.Retention)
	w := backupWriter{b: b, s: s, incarnation: IncarnationDigest(uid), owner: owner, slot: slot, canCreate: canCreate, ids: c.ids, pkis: pkis}
	for _, ts := range backups {
		if ferr := w.compose(p, r, ts); ferr != nil {
			return ferr
		}
	}
	if err := pkis.compose(p, r, c.recipient); err != nil {
		return field.InternalError(field.NewPath("input", "etcd", "backup", "recipientConfigMap"), err)
	}
	bp := backupStatus(r, s, w.incarnation, backups, now)
	switch {
	case refusal != nil && !s.Idle:
		bp.Current, bp.Reason, bp.Message = false, refusal.Reason, refusal.Message
	case len(c.refused) > 0:
		bp.Current, bp.Reason, bp.Message = false, tkv1alpha1.ReasonPKISecretTooLarge, strings.Join(c.refused, "; ")
	}
	p.Status["backup"] = bp.Status
	p.SetCondition(tkv1alpha1.ConditionBackupCurrent, bp.Current, bp.Reason, bp.Message)
	return nil
}

// backupDue says whether the backup of slot is to be written: the slot
// has no backup (current false) and starts at least the platform's
// minInterval after the newest backup's, or its bundle is missing, or a
// PKI object its bundle names is. An older backup without its bundle is
// not completed: the PKI and clusters of now are not those of its slot.
func backupDue(r *function.Request, b *cpinput.EtcdBackup, s Schedule, slot time.Time, backups []time.Time, current bool, pkis *pkiObjects) (bool, *field.Error) {
	// Each interval has its own slots: without the gap every edit of
	// spec.backup.interval would find a slot newer than the newest backup
	// and snapshot the etcd again.
	gap, err := time.ParseDuration(string(b.MinInterval))
	if err != nil {
		return false, field.Invalid(field.NewPath("input", "etcd", "backup", "minInterval"), b.MinInterval, err.Error())
	}
	if !current {
		return len(backups) == 0 || slot.Sub(backups[0]) >= min(gap, s.Interval), nil
	}
	bundle := NamePrefixBackupPKI + backups[0].Format(TimeLayout)
	missing, err := pkis.missing(r, bundle)
	if err != nil {
		return false, field.InternalError(field.NewPath("observed", bundle), err)
	}
	return !r.ObservedExists(bundle) || missing, nil
}

// carried is what a due backup carries: the identities of its clusters,
// why a cluster's is refused (ReadPKI), and the platform's recipient the
// PKI is encrypted to; none until they arrived.
type carried struct {
	ids       []ClusterIdentity
	refused   []string
	recipient age.Recipient
}

// readCarried requires and reads what a due backup of s carries.
func readCarried(p *function.Plan, r *function.Request, b *cpinput.EtcdBackup, s Schedule) (carried, *field.Error) {
	var c carried
	s.Require(p)
	p.Require(RequiredBackupRecipient, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "ConfigMap",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: b.RecipientConfigMap},
		Namespace: proto.String(b.PKINamespace),
	})
	var err error
	if c.ids, c.refused, err = s.Carried(r); err != nil {
		return carried{}, field.InternalError(field.NewPath("requiredResources", RequiredBackupSourcePrefix), err)
	}
	var ferr *field.Error
	if c.recipient, ferr = backupRecipient(r, b); ferr != nil {
		return carried{}, ferr
	}
	return c, nil
}

// refuseBackup checks, on every reconcile, that the namespace's
// credentials are its own (backupCredentials): BackupCurrent says at once
// when they are not, due or not. A schedule's first backup (first) also
// needs its namespace under the bound on deleted clusters' backups.
// cleared says the checks' required resources arrived.
func refuseBackup(p *function.Plan, r *function.Request, b *cpinput.EtcdBackup, ns string, first bool) (*backupRefusal, bool, *field.Error) {
	refusal, cleared, err := backupCredentials(p, r, b, ns)
	if err != nil {
		return nil, false, field.InternalError(field.NewPath("requiredResources", RequiredBackupCredentials), err)
	}
	if first && cleared && refusal == nil {
		if refusal, cleared, err = deletedClusterBackups(p, r, b, ns); err != nil {
			return nil, false, field.InternalError(field.NewPath("requiredResources", RequiredNamespaceBackups), err)
		}
	}
	return refusal, cleared, nil
}

// backupWriter composes the backups of schedule s: each EtcdSnapshot, and
// the current slot's bundle and PKI objects when canCreate.
type backupWriter struct {
	b           *cpinput.EtcdBackup
	s           Schedule
	incarnation string
	owner       *metav1.OwnerReference
	slot        time.Time
	canCreate   bool
	ids         []ClusterIdentity
	pkis        *pkiObjects
}

// compose adds the EtcdSnapshot of slot ts and its bundle: kept as
// observed, or written for the current slot.
func (w backupWriter) compose(p *function.Plan, r *function.Request, ts time.Time) *field.Error {
	ns := w.s.Slot.Namespace
	suffix := ts.Format(TimeLayout)
	snapshot := NamePrefixBackup + suffix
	name := backupObjectName(r, w.s.Base, w.incarnation, snapshot, ts)
	owner := w.owner
	if owner == nil {
		// Kept as observed until the Namespace arrives: an apply
		// without the reference would remove it.
		var err error
		if owner, err = observedBackupOwner(r, ns, snapshot); err != nil {
			return field.InternalError(field.NewPath("observed", snapshot), err)
		}
	}
	snap := buildEtcdSnapshot(ns, w.s.Etcd, w.s.Labels, w.b, name, owner)
	// A snapshot's spec is immutable: one taken before the platform
	// moved its backups keeps the destination it was written to.
	if dst, err := observedDestination(r, snapshot); err != nil {
		return field.InternalError(field.NewPath("observed", snapshot, "spec", "destination"), err)
	} else if dst != nil {
		snap.Spec.Destination = *dst
	}
	p.Add(snapshot, snap, function.ReadyAlways)
	bundle := NamePrefixBackupPKI + suffix
	switch {
	case r.ObservedExists(bundle):
		p.Kept = append(p.Kept, function.Kept{Name: bundle, Ready: fnv1.Ready_READY_TRUE})
		if err := w.pkis.referencedBy(r, bundle); err != nil {
			return field.InternalError(field.NewPath("observed", bundle), err)
		}
		if w.canCreate && !ts.Before(w.slot) {
			// The current slot's PKI objects, written again where
			// one is missing and the PKI has not changed.
			if err := w.pkis.refill(w.ids); err != nil {
				return field.InternalError(field.NewPath("requiredResources", RequiredBackupSourcePrefix), err)
			}
		}
	case w.canCreate && !ts.Before(w.slot):
		refs, err := w.pkis.carry(w.ids)
		if err != nil {
			return field.InternalError(field.NewPath("requiredResources", RequiredBackupSourcePrefix), err)
		}
		p.Add(bundle, buildBackupBundle(ns, name, snapshotFile(snap.Spec.Destination, name+".db"), w.s, w.ids, refs, w.owner), function.ReadyAlways)
	}
	return nil
}

// retained is the newest n of backups (newest first) and, when none of
// them is Complete, the newest Complete one: snapshots failing n slots
// in a row never leave the cluster without a backup to restore.
func retained(r *function.Request, backups []time.Time, n int32) []time.Time {
	if len(backups) <= int(n) {
		return backups
	}
	kept := backups[:n:n]
	if slices.ContainsFunc(kept, func(ts time.Time) bool { return complete(r, ts) }) {
		return kept
	}
	if i := slices.IndexFunc(backups[n:], func(ts time.Time) bool { return complete(r, ts) }); i >= 0 {
		return append(kept, backups[int(n)+i])
	}
	return kept
}

// complete says whether the observed EtcdSnapshot of slot ts succeeded.
func complete(r *function.Request, ts time.Time) bool {
	return r.ObservedString(NamePrefixBackup+ts.Format(TimeLayout), "status", "phase") == etcdv1alpha2.SnapshotPhaseComplete
}

// RequirePKI asks for the PKI Secrets of roles of cluster id a backup
// carries, as required resources RequiredBackupSourcePrefix + key + role.
func RequirePKI(p *function.Plan, id function.Identity, key string, roles []PKIRole) {
	for _, role := range roles {
		p.Require(RequiredBackupSourcePrefix+key+role.Role, secretSelector(role.Secret(id), id.Namespace))
	}
}

// backupStatus reads the newest successful backup (phase Complete) of
// backups and says whether it is current: at most twice the interval old,
// or, before the first, the schedule younger than that (s.Since, else the
// XR's creation). With nothing to back up (s.Idle) it is current.
func backupStatus(r *function.Request, s Schedule, incarnation string, backups []time.Time, now time.Time) backupPlan {
	interval := s.Interval
	bp := backupPlan{Interval: interval, Retained: len(backups)}
	for _, ts := range backups {
		name := NamePrefixBackup + ts.Format(TimeLayout)
		if !complete(r, ts) {
			continue
		}
		bp.LastName, bp.LastTime, bp.LastFound = backupObjectName(r, s.Base, incarnation, name, ts), ts, true
		if c, err := time.Parse(time.RFC3339, r.ObservedString(name, "metadata", "creationTimestamp")); err == nil {
			bp.LastTime = c.UTC()
		}
		break
	}
	status := map[string]any{"interval": s.IntervalText, "retained": int64(bp.Retained)}
	limit := 2 * interval
	switch {
	case bp.LastFound:
		age := now.Sub(bp.LastTime).Truncate(time.Minute)
		status["lastSuccessful"] = map[string]any{
			"name": bp.LastName, "time": bp.LastTime.Format(time.RFC3339), "age": compactDuration(age),
		}
		bp.Current = age <= limit
		bp.Reason, bp.Message = tkv1alpha1.ReasonBackupSucceeded, fmt.Sprintf("the last successful backup, %s, is %s old (interval %s)", bp.LastName, compactDuration(age), s.IntervalText)
		if !bp.Current {
			bp.Reason, bp.Message = tkv1alpha1.ReasonBackupOverdue, fmt.Sprintf("the last successful backup, %s, is %s old: more than twice the interval %s", bp.LastName, compactDuration(age), s.IntervalText)
		}
	default:
		since := s.Since
		if since.IsZero() {
			c, err := time.Parse(time.RFC3339, r.CompositeString("metadata", "creationTimestamp"))
			if err != nil {
				c = now
			}
			since = c
		}
		bp.Current = now.Sub(since) <= limit
		bp.Reason, bp.Message = tkv1alpha1.ReasonAwaitingFirstBackup, fmt.Sprintf("no backup has succeeded yet (interval %s)", s.IntervalText)
		if !bp.Current {
			bp.Reason, bp.Message = tkv1alpha1.ReasonBackupOverdue, fmt.Sprintf("no backup has succeeded in the first %s: more than twice the interval %s", compactDuration(now.Sub(since).Truncate(time.Minute)), s.IntervalText)
		}
	}
	if s.Idle {
		bp.Current = true
		bp.Reason, bp.Message = tkv1alpha1.ReasonNothingToBackUp, "no cluster keeps its state in this etcd: nothing to back up"
	}
	bp.Status = status
	return bp
}

// backupObjectName is the name of the backup of slot ts, composed as
// snapshot: the observed EtcdSnapshot's, or Name for a new one.
func backupObjectName(r *function.Request, base, incarnation, snapshot string, ts time.Time) string {
	if n := r.ObservedString(snapshot, "metadata", "name"); n != "" {
		return n
	}
	return Name(base, incarnation, ts)
}

// ownerRefs is owner as a list (none for nil).
func ownerRefs(owner *metav1.OwnerReference) []metav1.OwnerReference {
	if owner == nil {
		return nil
	}
	return []metav1.OwnerReference{*owner}
}

// observedDestination is spec.destination of the observed EtcdSnapshot
// name; nil when none is observed.
func observedDestination(r *function.Request, name string) (*etcdv1alpha2.SnapshotLocation, error) {
	o, ok, err := function.Observed[etcdv1alpha2.EtcdSnapshot](r, name)
	if err != nil || !ok || (o.Spec.Destination.S3 == nil && o.Spec.Destination.PVC == nil) {
		return nil, err
	}
	return &o.Spec.Destination, nil
}

// KeepObserved keeps every observed backup object (EtcdSnapshots,
// bundles, PKI objects: composed names starting NamePrefixBackup) as it
// is: with the platform's backups off, what was taken stays restorable
// until the platform deletes it.
func KeepObserved(p *function.Plan, r *function.Request) {
	var kept []string
	for name := range r.ObservedNames() {
		if strings.HasPrefix(name, NamePrefixBackup) {
			kept = append(kept, name)
		}
	}
	slices.Sort(kept)
	for _, name := range kept {
		p.Kept = append(p.Kept, function.Kept{Name: name, Ready: fnv1.Ready_READY_TRUE})
	}
}

// buildEtcdSnapshot is the EtcdSnapshot name in ns of EtcdCluster etcd,
// to the platform's destination: S3 under <keyPrefix>/<ns>/, or the
// namespace's PVC under subPath; the operator stores it as <name>.db
// there. owner is its Namespace reference.
func buildEtcdSnapshot(ns, etcd string, labels map[string]string, b *cpinput.EtcdBackup, name string, owner *metav1.OwnerReference) *etcdv1alpha2.EtcdSnapshot {
	return &etcdv1alpha2.EtcdSnapshot{
		TypeMeta:   metav1.TypeMeta{APIVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdSnapshotKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: ownerRefs(owner)},
		Spec: etcdv1alpha2.EtcdSnapshotSpec{
			ClusterRef:  corev1.LocalObjectReference{Name: etcd},
			Destination: backupLocation(b, ns, ""),
		},
	}
}

// backupLocation is the destination of namespace ns's snapshots (file
// "") or the exact location of its snapshot file (a restore source): the
// S3 key prefix <keyPrefix>/<ns> (key <keyPrefix>/<ns>/<file>), or the
// PVC subPath (<subPath>/<file>).
func backupLocation(b *cpinput.EtcdBackup, ns, file string) etcdv1alpha2.SnapshotLocation {
	var dst etcdv1alpha2.SnapshotLocation
	if b.S3 != nil {
		key := ns
		if pre := strings.Trim(b.S3.KeyPrefix, "/"); pre != "" {
			key = pre + "/" + ns
		}
		dst.S3 = &etcdv1alpha2.S3SnapshotLocation{
			Endpoint: b.S3.Endpoint, Bucket: b.S3.Bucket, Key: key, Region: b.S3.Region, ForcePathStyle: b.S3.ForcePathStyle,
			CredentialsSecretRef: corev1.LocalObjectReference{Name: b.S3.CredentialsSecretName},
		}
	} else {
		dst.PVC = &etcdv1alpha2.PVCSnapshotLocation{ClaimName: b.PVC.ClaimName, SubPath: strings.Trim(b.PVC.SubPath, "/")}
	}
	return snapshotFile(dst, file)
}

// snapshotFile is the location of file in destination dst, where
// etcd-operator's snapshot agent writes it: S3 key <key>/<file>, PVC
// subPath <subPath>/<file> (dst itself for file "").
func snapshotFile(dst etcdv1alpha2.SnapshotLocation, file string) etcdv1alpha2.SnapshotLocation {
	if file == "" {
		return dst
	}
	out := *dst.DeepCopy()
	if out.S3 != nil {
		out.S3.Key += "/" + file
	}
	if out.PVC != nil {
		out.PVC.SubPath = strings.TrimPrefix(path.Join(out.PVC.SubPath, file), "/")
	}
	return out
}

// secretSelector selects Secret name in ns.
func secretSelector(name, ns string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: name},
		Namespace: proto.String(ns),
	}
}

// MaxPKISecretBytes bounds the data of one PKI Secret a backup carries,
// in bytes: a CA or key pair in PEM is a few KiB, and whatever a tenant
// writes into a Secret of its namespace travels in every request with its
// backups.
const MaxPKISecretBytes = 16 << 10

// ReadPKI is the data of cluster id's Secrets of roles, required as
// RequiredBackupSourcePrefix + key + role, once every one has arrived
// with data (nil before). A Secret over MaxPKISecretBytes is not carried:
// nil, and why.
func ReadPKI(r *function.Request, id function.Identity, key string, roles []PKIRole) (map[string]map[string][]byte, []string, error) {
	out := map[string]map[string][]byte{}
	for _, role := range roles {
		secrets, _, err := function.Required[corev1.Secret](r, RequiredBackupSourcePrefix+key+role.Role)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot decode Secret %s/%s: %w", id.Namespace, role.Secret(id), err)
		}
		if len(secrets) != 1 || len(secrets[0].Data) == 0 {
			if role.Optional {
				continue
			}
			return nil, nil, nil
		}
		size := 0
		for k, v := range secrets[0].Data {
			size += len(k) + len(v)
		}
		if size > MaxPKISecretBytes {
			return nil, []string{fmt.Sprintf("cluster %s is not backed up: Secret %s/%s holds %d bytes, more than the %d a PKI Secret may", id.Name, id.Namespace, role.Secret(id), size, MaxPKISecretBytes)}, nil
		}
		out[role.Role] = secrets[0].Data
	}
	return out, nil, nil
}

// backupRecipient is the platform's age recipient once its ConfigMap
// arrived (nil before); a ConfigMap without a valid recipient is an error
// naming the setting.
func backupRecipient(r *function.Request, b *cpinput.EtcdBackup) (age.Recipient, *field.Error) {
	path := field.NewPath("input", "etcd", "backup", "recipientConfigMap")
	cms, arrived, err := function.Required[corev1.ConfigMap](r, RequiredBackupRecipient)
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

// Data keys of a backup's EnvironmentConfig (its bundle): a cluster's
// holds cluster, dataStoreSchema, dataStoreUsername and clusterPKI (its PKI
// object's name); a Tenant's clusters, by each TenantCluster's name its
// dataStoreSchema, dataStoreUsername and clusterPKI. pki: the encrypted
// PKI of a PKI object, or of a bundle without clusterPKI. source: the
// snapshot file a restore bootstraps from (an etcd-operator
// SnapshotLocation), where the platform's settings put it when it was
// taken. namespaceUID: the UID of the Namespace the backup was taken in.
const (
	bundleNamespace    = "namespace"
	bundleCluster      = "cluster"
	bundleClusters     = "clusters"
	bundleBackup       = "backup"
	bundleSchema       = "dataStoreSchema"
	bundleUsername     = "dataStoreUsername"
	bundleClusterPKI   = "clusterPKI"
	bundlePKI          = "pki"
	bundleSource       = "source"
	bundleNamespaceUID = "namespaceUID"
)

// buildBackupBundle is the cluster-scoped EnvironmentConfig "<ns>.<b>" of
// backup b of schedule s: for each of ids where its control plane keeps
// its data in etcd and the name of its PKI object (refs, by cluster).
// source is the snapshot's file; owner is its Namespace reference.
func buildBackupBundle(ns, b string, source etcdv1alpha2.SnapshotLocation, s Schedule, ids []ClusterIdentity, refs map[string]string, owner *metav1.OwnerReference) *xpextv1beta1.EnvironmentConfig {
	fields := map[string]any{bundleNamespace: ns, bundleBackup: b, bundleSource: source}
	if owner != nil {
		fields[bundleNamespaceUID] = string(owner.UID)
	}
	clusters := map[string]any{}
	for _, c := range ids {
		f := map[string]any{bundleSchema: c.Schema, bundleUsername: c.Username, bundleClusterPKI: refs[c.Cluster]}
		if !s.Tenant {
			f[bundleCluster] = c.Cluster
			maps.Copy(fields, f)
		}
		clusters[c.Cluster] = f
	}
	if s.Tenant {
		fields[bundleClusters] = clusters
	}
	l := maps.Clone(s.Labels)
	l[function.LabelNamespace] = ns
	return &xpextv1beta1.EnvironmentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: backupBundleName(ns, b), Labels: l, OwnerReferences: ownerRefs(owner)},
		Data:       jsonData(fields),
	}
}

// dataString is the string at key of env's data ("" for none or another
// JSON value).
func dataString(env *xpextv1beta1.EnvironmentConfig, key string) string {
	var s string
	_ = json.Unmarshal(env.Data[key].Raw, &s)
	return s
}

// jsonData is fields as EnvironmentConfig data (values that marshal).
func jsonData(fields map[string]any) map[string]extv1.JSON {
	data := make(map[string]extv1.JSON, len(fields))
	for k, v := range fields {
		raw, _ := json.Marshal(v) // strings, maps of strings, a SnapshotLocation
		data[k] = extv1.JSON{Raw: raw}
	}
	return data
}

// seal is plain encrypted to the platform's recipient, armored.
func seal(plain []byte, to age.Recipient) (string, error) {
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, to)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(plain); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if err := aw.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// OpenBundle decrypts an encrypted PKI (sealed) with the platform's
// identity into out.
func OpenBundle(armored string, id age.Identity, out any) error {
	rd, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), id)
	if err != nil {
		return err
	}
	plain, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	return json.Unmarshal(plain, out)
}

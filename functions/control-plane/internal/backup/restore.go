package backup

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
)

// Required-resources keys of a restore.
const (
	RequiredRestoreBundle    = "restore-backup"
	RequiredRestoreIdentity  = "restore-identity"
	RequiredRestorePKIObject = "restore-pki"
	// RequiredRestoreBackups is every backup record of the namespace, asked
	// for only while the one named does not exist.
	RequiredRestoreBackups = "restore-backups"
)

// Composed-resource names of the control plane's objects a restore reads:
// EtcdClusterResourceName is the dedicated etcd it bootstraps.
const (
	EtcdClusterResourceName = "etcdcluster"
	nameKamajiControlPlane  = function.KamajiControlPlaneResourceName
)

// maxListedBackups bounds the backups a missing backup's error lists.
const maxListedBackups = 20

// NamePrefixRestoredPKI + role is the composed-resource name of a
// restored PKI Secret.
const NamePrefixRestoredPKI = "restored-pki-"

// restoredPKI are the roles of ClusterPKI a restore writes back under the
// new cluster's names before Kamaji runs: the cluster CA (admin and node
// kubeconfigs, kubelets' trust), the service-account key pair (tokens
// issued before) and the front-proxy CA (aggregated APIs). The etcd CAs
// are carried but not restored: they authenticate only the management
// cluster's own connections to etcd (Kamaji's DataStore, the operator),
// and the new etcd gets them from cert-manager like any new one.
var restoredPKI = ControlPlanePKI

// RestorePlan is a restore the plan carries out: the EtcdCluster's
// bootstrap source, the control plane's etcd account of the cluster the
// backup came from, and whether every restored PKI Secret is observed
// (until then no control plane is composed).
type RestorePlan struct {
	Source            etcdv1alpha2.SnapshotLocation
	Schema, Username  string
	PKIReady, Arrived bool
	Secrets           map[string]*corev1.Secret
	Backup            string
	// Encryption is the data of the restored cluster's encryption Secret
	// as the backup carries it (EncryptionRole), while the PKI is
	// decrypted; nil otherwise or when the backup carries none.
	Encryption map[string][]byte
}

// PlanRestore reads the backup spec.restore names (t's own namespace only)
// and returns what the restore composes. It requires the backup's
// EnvironmentConfig and, while a restored PKI Secret is not observed yet,
// the platform's identity to decrypt it. nil, nil: no restore; restored
// PKI Secrets observed all the same are kept. snapshots says the input's
// etcd operator takes and restores snapshots.
func PlanRestore(p *function.Plan, r *function.Request, t *function.Cluster, in *cpinput.ControlPlaneInput, snapshots bool) (*RestorePlan, field.ErrorList) {
	rs := t.Spec.Restore
	if rs == nil {
		// spec.restore gone from a restored cluster: its PKI Secrets
		// stay, or Kamaji would issue a new CA.
		restored(p, r)
		return nil, nil
	}
	path := field.NewPath("spec", "restore")
	errs := checkRestore(rs, t.ID.Namespace)
	// Once started, a restore keeps the etcd's observed bootstrap (the
	// EtcdCluster CRD refuses any change of spec.bootstrap), whatever the
	// platform's backup settings have become; once done, those settings
	// are not checked again.
	source, err := ObservedRestoreSource(r)
	if err != nil {
		return nil, append(errs, field.InternalError(field.NewPath("observed", EtcdClusterResourceName, "spec", "bootstrap"), err))
	}
	done := restored(p, r) && r.ObservedExists(nameKamajiControlPlane)
	if source != nil && done && len(errs) == 0 {
		return &RestorePlan{Backup: rs.Backup, Source: *source, Secrets: map[string]*corev1.Secret{}, Arrived: true, PKIReady: true}, nil
	}
	if ferr := restoreUnsupported(t, in, snapshots); ferr != nil {
		errs = append(errs, ferr)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if r.ObservedExists(EtcdClusterResourceName) && source == nil {
		return nil, field.ErrorList{field.Invalid(path.Child("backup"), rs.Backup, "a cluster restores a backup only when it is created; its etcd already runs")}
	}

	rp := &RestorePlan{Backup: rs.Backup, Source: backupLocation(&in.Etcd.Backup, t.ID.Namespace, rs.Backup+".db"), Secrets: map[string]*corev1.Secret{}}
	if source != nil {
		rp.Source = *source
	}
	if done {
		// The control plane runs on the restored data, with its account
		// as observed. The backup is not read again; retention may since
		// have deleted it.
		rp.Arrived, rp.PKIReady = true, true
		return rp, nil
	}
	bundle, errs := readRestoreBundle(p, r, t.ID.Namespace, rs)
	if len(errs) > 0 {
		return nil, errs
	}
	if bundle == nil {
		return rp, nil
	}
	rp.Arrived, rp.Schema, rp.Username = true, bundle.Schema, bundle.Username
	if source == nil && bundle.Source != nil {
		// Where the snapshot was written, whatever the platform's
		// settings have become since.
		rp.Source = *bundle.Source
	}
	rp.PKIReady = restored(p, r)
	if rp.PKIReady {
		return rp, nil
	}
	if ferr := decryptRestoredPKI(p, r, t.ID, &in.Etcd.Backup, rs.Backup, bundle, rp); ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	return rp, nil
}

// checkRestore checks spec.restore rs of a cluster of namespace ns: its
// own namespace, a backup's name.
func checkRestore(rs *tkv1alpha1.Restore, ns string) field.ErrorList {
	path := field.NewPath("spec", "restore")
	var errs field.ErrorList
	if rs.Namespace != "" && rs.Namespace != ns {
		errs = append(errs, field.Forbidden(path.Child("namespace"), fmt.Sprintf("%q: a cluster of namespace %q restores only backups of its own namespace", rs.Namespace, ns)))
	}
	if !backupNamePattern.MatchString(rs.Backup) {
		errs = append(errs, field.Invalid(path.Child("backup"), rs.Backup, "must name a backup, <cluster>-<UTC time YYYYMMDDhhmmss>-<6 hex digits> or a Tenant's <UTC time>-<6 hex digits>, as status.backup.lastSuccessful.name shows it"))
	}
	return errs
}

// restoreUnsupported is the error of a restore into cluster t the platform
// cannot carry out: only a claim's dedicated etcd on the
// etcd-operator.cozystack.io/v1alpha2 operator (snapshots), with backups,
// restores.
func restoreUnsupported(t *function.Cluster, in *cpinput.ControlPlaneInput, snapshots bool) *field.Error {
	path := field.NewPath("spec", "restore", "backup")
	backup, b := t.Spec.Restore.Backup, &in.Etcd.Backup
	switch {
	case t.Namespaced && in.DataStoreName == "" && snapshots && b.Enabled():
		return field.Invalid(path, backup, "a TenantCluster's etcd is its namespace's, shared with the namespace's other TenantClusters: restore a Tenant's backup into a KubernetesCluster, naming the TenantCluster in spec.restore.cluster")
	case in.DataStoreName != "" || t.Namespaced || !snapshots || !b.Enabled():
		return field.Invalid(path, backup, "this platform takes no backups a cluster can restore (they need a dedicated etcd of a claim on the etcd-operator.cozystack.io/v1alpha2 operator and input.etcd.backup)")
	}
	return nil
}

// readRestoreBundle requires and reads the record of backup rs.Backup of
// namespace ns, checked against the namespace's UID: nil, nil until it
// and the Namespace arrived.
func readRestoreBundle(p *function.Plan, r *function.Request, ns string, rs *tkv1alpha1.Restore) (*restoreBundle, field.ErrorList) {
	p.Require(RequiredRestoreBundle, &fnv1.ResourceSelector{
		ApiVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: backupBundleName(ns, rs.Backup)},
	})
	envs, arrived, err := function.Required[xpextv1beta1.EnvironmentConfig](r, RequiredRestoreBundle)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources", RequiredRestoreBundle), err)}
	}
	if !arrived {
		return nil, nil
	}
	if len(envs) != 1 {
		return nil, backupNotFound(p, r, field.NewPath("spec", "restore", "backup"), ns, rs.Backup)
	}
	owner, err := backupOwner(r, ns)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources", function.RequirementNamespace), err)}
	}
	if owner == nil {
		// The Namespace is asked for on every call; its UID tells this
		// namespace's backups from those of an earlier one of its name.
		return nil, nil
	}
	bundle, ferr := readBundle(envs[0], rs, ns, owner.UID)
	if ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	return &bundle, nil
}

// decryptRestoredPKI requires the platform's age identity and the
// bundle's PKI, decrypts it and puts into rp.Secrets the restored PKI
// Secrets not observed yet (none until what it requires arrived).
func decryptRestoredPKI(p *function.Plan, r *function.Request, id function.Identity, b *cpinput.EtcdBackup, backup string, bundle *restoreBundle, rp *RestorePlan) *field.Error {
	idPath := field.NewPath("input", "etcd", "backup", "identitySecret")
	if b.IdentitySecret == "" {
		return field.Required(idPath, fmt.Sprintf("cluster %s/%s restores backup %s: the platform's age identity decrypts its PKI", id.Namespace, id.Name, backup))
	}
	p.Require(RequiredRestoreIdentity, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: b.IdentitySecret},
		Namespace: proto.String(b.PKINamespace),
	})
	armored, waiting, ferr := bundle.pki(p, r, backup, id.Namespace)
	if ferr != nil {
		return ferr
	}
	secrets, arrived, err := function.Required[corev1.Secret](r, RequiredRestoreIdentity)
	if err != nil {
		return field.InternalError(idPath, err)
	}
	if !arrived || waiting {
		return nil
	}
	if len(secrets) != 1 {
		return field.Invalid(idPath, b.IdentitySecret, fmt.Sprintf("no Secret %s/%s", b.PKINamespace, b.IdentitySecret))
	}
	ident, err := age.ParseX25519Identity(strings.TrimSpace(string(secrets[0].Data[identityKey])))
	if err != nil {
		return field.Invalid(idPath, b.IdentitySecret, fmt.Sprintf("key %q is no age X25519 identity (AGE-SECRET-KEY-1...)", identityKey))
	}
	pki, err := bundle.open(armored, ident)
	if err != nil {
		return field.Invalid(idPath, b.IdentitySecret, fmt.Sprintf("cannot decrypt the PKI of backup %s: %v", backup, err))
	}
	rp.Encryption = pki[EncryptionRole.Role]
	for _, role := range restoredPKI {
		if r.ObservedExists(NamePrefixRestoredPKI + role.Role) {
			continue
		}
		d := pki[role.Role]
		if len(d) == 0 {
			return field.Invalid(field.NewPath("spec", "restore", "backup"), backup, "the backup carries no "+role.Role+" Secret")
		}
		rp.Secrets[role.Role] = &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: role.Secret(id), Namespace: id.Namespace, Labels: id.Labels()},
			Type:       corev1.SecretTypeOpaque,
			Data:       d,
		}
	}
	return nil
}

// ObservedRestoreSource is spec.bootstrap.restore.source of the observed
// EtcdCluster; nil when none is observed or it names no snapshot.
func ObservedRestoreSource(r *function.Request) (*etcdv1alpha2.SnapshotLocation, error) {
	if r.ObservedString(EtcdClusterResourceName, "apiVersion") != etcdv1alpha2.GroupVersion.String() {
		return nil, nil // none, or the etcd.aenix.io operator's (no bootstrap)
	}
	e, ok, err := function.Observed[etcdv1alpha2.EtcdCluster](r, EtcdClusterResourceName)
	if err != nil || !ok || e.Spec.Bootstrap == nil || e.Spec.Bootstrap.Restore == nil {
		return nil, err
	}
	src := e.Spec.Bootstrap.Restore.Source
	if (src.S3 == nil || src.S3.Key == "") && (src.PVC == nil || src.PVC.SubPath == "") {
		return nil, nil
	}
	return &src, nil
}

// restored says whether every restored PKI Secret is observed; those
// that are are kept as written (the platform's identity may be gone after
// the restore). Kept is added to once per call.
func restored(p *function.Plan, r *function.Request) bool {
	all := true
	for _, role := range restoredPKI {
		name := NamePrefixRestoredPKI + role.Role
		if !r.ObservedExists(name) {
			all = false
			continue
		}
		if !slices.ContainsFunc(p.Kept, func(k function.Kept) bool { return k.Name == name }) {
			p.Kept = append(p.Kept, function.Kept{Name: name, Ready: fnv1.Ready_READY_TRUE})
		}
	}
	return all
}

// ComposeRestoredPKI adds the decrypted PKI Secrets of rp to p (those
// kept as observed are already in p.Kept).
func ComposeRestoredPKI(p *function.Plan, rp *RestorePlan) {
	for _, role := range restoredPKI {
		if s := rp.Secrets[role.Role]; s != nil {
			p.Add(NamePrefixRestoredPKI+role.Role, s, function.ReadyOnceObserved)
		}
	}
}

// restoreBundle is what a restore reads of a backup's EnvironmentConfig:
// the cluster it restores (a claim's, or the TenantCluster of a Tenant's
// backup), its control plane's etcd account and where its PKI is: the PKI
// object PKIObject or, for a bundle holding it, inline.
type restoreBundle struct {
	Schema, Username string
	Cluster          string
	PKIObject        string
	inline           string
	// Source is the snapshot's file as the bundle records it; nil in a
	// bundle that records none.
	Source *etcdv1alpha2.SnapshotLocation
}

// pki is the encrypted PKI of the restored cluster: inline, or its PKI
// object's, which it requires (waiting until it arrived). A PKI object
// that is gone, or not the namespace's and cluster's, is an error naming
// the backup.
func (b restoreBundle) pki(p *function.Plan, r *function.Request, backup, ns string) (armored string, waiting bool, ferr *field.Error) {
	if b.PKIObject == "" {
		return b.inline, false, nil
	}
	p.Require(RequiredRestorePKIObject, &fnv1.ResourceSelector{
		ApiVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: b.PKIObject},
	})
	path := field.NewPath("spec", "restore", "backup")
	envs, arrived, err := function.Required[xpextv1beta1.EnvironmentConfig](r, RequiredRestorePKIObject)
	if err != nil {
		return "", false, field.InternalError(path, err)
	}
	if !arrived {
		return "", true, nil
	}
	if len(envs) != 1 {
		return "", false, field.Invalid(path, backup, fmt.Sprintf("its PKI object %s is gone: the backup cannot be restored", b.PKIObject))
	}
	obj := envs[0]
	if dataString(obj, bundleNamespace) != ns || dataString(obj, bundleCluster) != b.Cluster {
		return "", false, field.Forbidden(path, fmt.Sprintf("%q: its PKI object %s is cluster %s/%s's, not %s/%s's", backup, b.PKIObject, dataString(obj, bundleNamespace), dataString(obj, bundleCluster), ns, b.Cluster))
	}
	return dataString(obj, bundlePKI), false, nil
}

// open decrypts armored, the PKI of the restored cluster, by role.
func (b restoreBundle) open(armored string, id age.Identity) (map[string]map[string][]byte, error) {
	var pki map[string]map[string][]byte
	return pki, OpenBundle(armored, id, &pki)
}

// readBundle reads backup env, which spec.restore rs names, for a cluster
// of namespace ns: a cluster's bundle (cluster, dataStoreSchema,
// dataStoreUsername) or a Tenant's (clusters, the one rs.Cluster names).
// The bundle is the platform's (tenants cannot write EnvironmentConfigs);
// its namespace and name are checked all the same.
func readBundle(env *xpextv1beta1.EnvironmentConfig, rs *tkv1alpha1.Restore, ns string, nsUID types.UID) (restoreBundle, *field.Error) {
	path := field.NewPath("spec", "restore")
	str := func(k string) string { return dataString(env, k) }
	if str(bundleNamespace) != ns || str(bundleBackup) != rs.Backup {
		return restoreBundle{}, field.Forbidden(path.Child("backup"), fmt.Sprintf("%q: the backup is namespace %q's, not %q's", rs.Backup, str(bundleNamespace), ns))
	}
	// A namespace deleted and created again under its name: the earlier
	// one's bundles outlive it while their XR does, or until the garbage
	// collector deletes them. The UID in the data stays; a bundle without
	// it is checked by its Namespace reference.
	uid := types.UID(str(bundleNamespaceUID))
	for _, ref := range env.OwnerReferences {
		if uid == "" && ref.APIVersion == "v1" && ref.Kind == "Namespace" {
			uid = ref.UID
		}
	}
	if uid != "" && uid != nsUID {
		return restoreBundle{}, field.Forbidden(path.Child("backup"), fmt.Sprintf("%q: the backup is an earlier namespace %s's (UID %s), not this one's (UID %s)", rs.Backup, ns, uid, nsUID))
	}
	var source *etcdv1alpha2.SnapshotLocation
	if raw, ok := env.Data[bundleSource]; ok {
		source = &etcdv1alpha2.SnapshotLocation{}
		if err := json.Unmarshal(raw.Raw, source); err != nil || (source.S3 == nil && source.PVC == nil) {
			return restoreBundle{}, field.Invalid(path.Child("backup"), rs.Backup, fmt.Sprintf("the backup records no snapshot file it can be restored from (%s)", raw.Raw))
		}
	}
	raw, tenant := env.Data[bundleClusters]
	if !tenant {
		if rs.Cluster != "" && rs.Cluster != str(bundleCluster) {
			return restoreBundle{}, field.Invalid(path.Child("cluster"), rs.Cluster, fmt.Sprintf("backup %s is cluster %s's alone: leave spec.restore.cluster empty", rs.Backup, str(bundleCluster)))
		}
		return checkedBundle(restoreBundle{Cluster: str(bundleCluster), Schema: str(bundleSchema), Username: str(bundleUsername), PKIObject: str(bundleClusterPKI), inline: str(bundlePKI), Source: source}, rs.Backup)
	}
	var clusters map[string]map[string]string
	if err := json.Unmarshal(raw.Raw, &clusters); err != nil {
		return restoreBundle{}, field.InternalError(path.Child("backup"), fmt.Errorf("backup %s: %s: %w", rs.Backup, bundleClusters, err))
	}
	c, ok := clusters[rs.Cluster]
	if !ok {
		names := slices.Sorted(maps.Keys(clusters))
		msg := fmt.Sprintf("backup %s is the namespace's etcd: name the TenantCluster it restores, one of %s", rs.Backup, strings.Join(names, ", "))
		if rs.Cluster == "" {
			return restoreBundle{}, field.Required(path.Child("cluster"), msg)
		}
		return restoreBundle{}, field.NotFound(path.Child("cluster"), rs.Cluster+": "+msg)
	}
	return checkedBundle(restoreBundle{Cluster: rs.Cluster, Schema: c[bundleSchema], Username: c[bundleUsername], PKIObject: c[bundleClusterPKI], Source: source}, rs.Backup)
}

// checkedBundle is b once it names everything a restore needs: the
// cluster, its etcd account (Kamaji would take its own default otherwise,
// and serve none of the backup's data) and its PKI.
func checkedBundle(b restoreBundle, backup string) (restoreBundle, *field.Error) {
	if b.Cluster == "" || b.Schema == "" || b.Username == "" || (b.PKIObject == "" && b.inline == "") {
		return restoreBundle{}, field.Invalid(field.NewPath("spec", "restore", "backup"), backup, "the backup names no cluster, etcd account or PKI: it cannot be restored")
	}
	return b, nil
}

// backupNotFound is the NotFound error of backup b of namespace ns, whose
// record does not exist: it names where it looked and lists the
// namespace's backups (the first maxListedBackups by name), fetched first
// (no error until then: Crossplane stops fetching at a Fatal).
func backupNotFound(p *function.Plan, r *function.Request, path *field.Path, ns, b string) field.ErrorList {
	p.Require(RequiredRestoreBackups, &fnv1.ResourceSelector{
		ApiVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{function.LabelNamespace: ns}}},
	})
	envs, arrived, err := function.Required[xpextv1beta1.EnvironmentConfig](r, RequiredRestoreBackups)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requiredResources", RequiredRestoreBackups), err)}
	}
	if !arrived {
		return nil
	}
	var names []string
	for _, e := range envs {
		if n := dataString(e, bundleBackup); n != "" && e.Name == backupBundleName(ns, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	exist := "namespace " + ns + " has no backups"
	switch {
	case len(names) > maxListedBackups:
		exist = fmt.Sprintf("namespace %s has %d backups: %s, ...", ns, len(names), strings.Join(names[:maxListedBackups], ", "))
	case len(names) > 0:
		exist = fmt.Sprintf("namespace %s has backups %s", ns, strings.Join(names, ", "))
	}
	e := field.NotFound(path, b)
	e.Detail = fmt.Sprintf("no backup record EnvironmentConfig %s; %s", backupBundleName(ns, b), exist)
	return field.ErrorList{e}
}

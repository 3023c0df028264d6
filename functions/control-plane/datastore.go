package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/quantity"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
)

// dataStore is where a cluster's control plane keeps its state: the Kamaji
// DataStore its KamajiControlPlane names and what that store takes. One
// implementation per kind of store behind one interface, chosen once from
// the input, as Kamaji picks a datastore.Connection per driver
// (clastix/kamaji internal/datastore/connection.go:15-66).
type dataStore interface {
	// Name is the DataStore the KamajiControlPlane names.
	Name() string
	// Check returns a *field.Error when the observed state rules the store
	// out.
	Check(r *function.Request) error
	// Waiting says the DataStore does not exist yet: nothing that needs it
	// is composed anew, what was composed is kept.
	Waiting(r *function.Request) bool
	// Compose adds to p what the store composes or requires.
	Compose(p *function.Plan, s *scope) field.ErrorList
	// NotReady is ControlPlaneReady's reason and message while the control
	// plane is not ready and the store is why (ok false otherwise).
	NotReady(r *function.Request) (reason, message string, ok bool)
	// SetConditions sets the store's own conditions on the XR.
	SetConditions(p *function.Plan)
	// BacksUp says the platform takes this cluster's backups; NoBackups is
	// why spec.backup.interval is ignored otherwise.
	BacksUp() bool
	NoBackups() string
	// Backups adds to p the store's backups: a schedule, the Tenant's
	// mirrored, or the observed ones kept.
	Backups(p *function.Plan, s *scope) field.ErrorList
}

// newDataStore is cluster t's data store: the shared DataStore the input
// names, else for a namespaced XR (which composes nothing cluster-scoped)
// its Tenant's, else a dedicated etcd. Its error is a bad
// input.etcd.storageSize of a dedicated etcd.
func newDataStore(t *function.Cluster, in *cpinput.ControlPlaneInput) (dataStore, error) {
	switch {
	case in.DataStoreName != "":
		return sharedDataStore{name: in.DataStoreName}, nil
	case t.Namespaced:
		return tenantDataStore{id: t.ID, backup: &in.Etcd.Backup}, nil
	}
	storage, err := quantity.ParsePositiveQuantity(field.NewPath("input", "etcd", "storageSize"), string(in.Etcd.StorageSize))
	return dedicatedEtcd{id: t.ID, site: clusterEtcdSite(t.ID, etcdOperatorOf(in.Etcd.Operator)), storage: storage, backup: &in.Etcd.Backup}, err
}

// msgNoBackups is why spec.backup.interval is ignored on a cluster the
// platform does not back up.
const msgNoBackups = "the platform takes no backups of this cluster"

// dedicatedEtcd is the cluster's own etcd: the EtcdCluster N-etcd in NS
// on the input's operator (etcd.aenix.io/v1alpha1 or
// etcd-operator.cozystack.io/v1alpha2: the site's etcdOperator), its
// cert-manager PKI and the cluster-scoped DataStore "<NS>.<N>". A restore bootstraps it from a backup.
type dedicatedEtcd struct {
	id      function.Identity
	site    etcdSite
	storage resource.Quantity
	backup  *cpinput.EtcdBackup
}

func (d dedicatedEtcd) Name() string { return DataStoreName(d.id) }

// Check refuses a move to another etcd operator (etcdOperatorChanged).
func (d dedicatedEtcd) Check(r *function.Request) error {
	return etcdOperatorChanged(r, d.site, "cluster "+d.id.Namespace+"/"+d.id.Name)
}

func (d dedicatedEtcd) Waiting(*function.Request) bool { return false }

// Compose adds the EtcdCluster, the DataStore, the etcd PKI, what an
// earlier etcd left behind and, with Usages, the Usage keeping etcd until
// the control plane is gone.
func (d dedicatedEtcd) Compose(p *function.Plan, s *scope) field.ErrorList {
	if err := d.composeEtcd(p, s); err != nil {
		return field.ErrorList{err}
	}
	p.Add(nameDataStore, buildDataStore(d.id, d.site.Operator), function.ReadyOnStatusReady)
	pki := buildEtcdPKI(d.id, d.site.Operator, s.in.Etcd.Replicas, s.in.ClusterDomain)
	for _, name := range sortedKeys(pki.Issuers) {
		p.Add(name, pki.Issuers[name], readyOnReady)
	}
	for _, name := range sortedKeys(pki.Certificates) {
		p.Add(name, pki.Certificates[name], readyOnReady)
	}
	if err := composeEtcdLeftovers(p, s.r, d.id, d.site.Operator, s.usages); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requiredResources"), err)}
	}
	if s.usages {
		// Kamaji's finalizers clean the tenant's keys out of etcd: etcd and
		// its PKI must outlive the control plane.
		p.Add(nameEtcdUsage, d.id.Usage(d.id.Prefixed("etcd-used-by-control-plane"),
			d.site.ref(),
			d.id.KamajiControlPlaneRef(),
			"Kamaji cleans the tenant's keys out of etcd when its control plane is deleted"), readyOnReady)
	}
	return nil
}

// composeEtcd adds the EtcdCluster, kept as observed while a restore's
// backup is not read yet. It bootstraps from the restore's source or,
// should spec.restore be gone, from the one it started from (the
// operator's CRD refuses a change of spec.bootstrap).
func (d dedicatedEtcd) composeEtcd(p *function.Plan, s *scope) *field.Error {
	rp := s.restore
	if rp != nil && !rp.Arrived {
		keepObserved(p, s.r, nameEtcdCluster)
		return nil
	}
	var source *etcdv1alpha2.SnapshotLocation
	if rp != nil {
		source = &rp.Source
		backup.ComposeRestoredPKI(p, rp)
	} else if src, err := backup.ObservedRestoreSource(s.r); err != nil {
		return field.InternalError(field.NewPath("observed", nameEtcdCluster, "spec", "bootstrap"), err)
	} else {
		source = src
	}
	etcd := buildEtcdCluster(d.site, s.t.Spec, s.in, d.storage)
	if e, ok := etcd.(*etcdv1alpha2.EtcdCluster); ok && source != nil {
		e.Spec.Bootstrap = &etcdv1alpha2.Bootstrap{Restore: &etcdv1alpha2.BootstrapRestore{Source: *source}}
	}
	p.Add(nameEtcdCluster, etcd, d.site.ready())
	return nil
}

// NotReady: the EtcdCluster, then the DataStore, not ready yet.
func (d dedicatedEtcd) NotReady(r *function.Request) (string, string, bool) {
	if etcd, _, _ := r.ObservedCondition(nameEtcdCluster, d.site.Operator.ReadyCondition()); etcd != "True" {
		return tkv1alpha1.ReasonWaitingForEtcd, "the dedicated etcd cluster is not ready yet", true
	}
	if !r.ObservedBool(nameDataStore, "status", "ready") {
		return tkv1alpha1.ReasonWaitingForDataStore, "the Kamaji DataStore is not ready yet", true
	}
	return "", "", false
}

func (d dedicatedEtcd) SetConditions(*function.Plan) {}

func (d dedicatedEtcd) BacksUp() bool { return d.backup.Enabled() }

func (d dedicatedEtcd) NoBackups() string { return msgNoBackups }

// Backups schedules the etcd's backups (backup.PlanCluster) under the control
// plane's etcd account (Kamaji's default when it sets none), or keeps the
// observed ones when the platform takes none.
func (d dedicatedEtcd) Backups(p *function.Plan, s *scope) field.ErrorList {
	if !d.BacksUp() {
		backup.KeepObserved(p, s.r)
		return nil
	}
	schema, username := s.kcp.Spec.DataStoreSchema, s.kcp.Spec.DataStoreUsername
	if schema == "" {
		schema = kamajiDefaultSchema(d.id)
	}
	if username == "" {
		username = schema
	}
	if err := backup.PlanCluster(p, s.r, s.t, s.in, d.site.Names.Cluster, backupPKI, schema, username, s.now); err != nil {
		return field.ErrorList{err}
	}
	return nil
}

// backupPKI are the Secrets a dedicated etcd's backup carries
// (backup.ClusterPKI), with the etcd-operator's client and peer CAs (on
// the one operator that TakesSnapshots).
var backupPKI = backup.ClusterPKI(
	func(id function.Identity) string { return namesOfEtcd(id, cozystackEtcd{}).ClientCA },
	func(id function.Identity) string { return namesOfEtcd(id, cozystackEtcd{}).PeerCA },
)

// tenantDataStore is the namespace's etcd, which its Tenant XR composes
// with the DataStore Identity.TenantDataStoreName: the cluster requires
// it and waits for it; the Tenant takes the backups.
type tenantDataStore struct {
	id     function.Identity
	backup *cpinput.EtcdBackup
}

func (d tenantDataStore) Name() string { return d.id.TenantDataStoreName() }

func (d tenantDataStore) Check(*function.Request) error { return nil }

func (d tenantDataStore) Waiting(r *function.Request) bool {
	n, arrived := r.RequiredArrived(requiredTenantDataStore)
	return !arrived || n != 1
}

// Compose requires the Tenant's DataStore.
func (d tenantDataStore) Compose(p *function.Plan, _ *scope) field.ErrorList {
	p.Require(requiredTenantDataStore, &fnv1.ResourceSelector{
		ApiVersion: kamajiv1alpha1.GroupVersion.String(),
		Kind:       kamajiv1alpha1.DataStoreKind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: d.Name()},
	})
	return nil
}

func (d tenantDataStore) NotReady(r *function.Request) (string, string, bool) {
	if !d.Waiting(r) {
		return "", "", false
	}
	return tkv1alpha1.ReasonWaitingForTenantDataStore,
		"the tenant's DataStore " + d.Name() + " does not exist yet: no control plane is composed until it does", true
}

func (d tenantDataStore) SetConditions(*function.Plan) {}

func (d tenantDataStore) BacksUp() bool { return false }

func (d tenantDataStore) NoBackups() string {
	if d.backup.Enabled() {
		return "a TenantCluster keeps its state in the namespace's etcd, which its Tenant backs up at the platform's interval"
	}
	return msgNoBackups
}

// Backups keeps the observed backups and shows the Tenant's
// (mirrorTenantBackups) when the platform takes them.
func (d tenantDataStore) Backups(p *function.Plan, s *scope) field.ErrorList {
	backup.KeepObserved(p, s.r)
	if !d.backup.Enabled() {
		return nil
	}
	if err := mirrorTenantBackups(p, s.r, d.id.Namespace); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requiredResources", requiredTenantXR), err)}
	}
	return nil
}

// sharedDataStore is the platform's DataStore input.dataStoreName, shared
// by clusters of several tenants; the platform composes it.
type sharedDataStore struct{ name string }

func (d sharedDataStore) Name() string { return d.name }

func (d sharedDataStore) Check(*function.Request) error { return nil }

func (d sharedDataStore) Waiting(*function.Request) bool { return false }

func (d sharedDataStore) Compose(*function.Plan, *scope) field.ErrorList { return nil }

func (d sharedDataStore) NotReady(*function.Request) (string, string, bool) { return "", "", false }

// SetConditions sets DataStoreShared. etcd has no quota per key prefix:
// its one backend quota is every cluster's, and once a cluster fills it
// etcd raises NOSPACE and refuses writes of all of them
// (https://etcd.io/docs/v3.6/op-guide/maintenance/#space-quota).
func (d sharedDataStore) SetConditions(p *function.Plan) {
	p.SetCondition(tkv1alpha1.ConditionDataStoreShared, true, tkv1alpha1.ReasonSharedDataStore,
		"the control plane keeps its state in the shared Kamaji DataStore "+d.name+", with clusters of other tenants: "+
			"it has no quota per cluster, and one cluster filling it makes every cluster on it read-only (etcd: the NOSPACE alarm); "+
			"a shared DataStore is for tenants who trust each other")
}

func (d sharedDataStore) BacksUp() bool { return false }

func (d sharedDataStore) NoBackups() string { return msgNoBackups }

func (d sharedDataStore) Backups(p *function.Plan, s *scope) field.ErrorList {
	backup.KeepObserved(p, s.r)
	return nil
}

// DataStoreName is the cluster-scoped DataStore's name: "<NS>.<N>"
// (Identity.ClusterScopedName, injective). A shared DataStore named in the
// input has no dot (input.dataStoreName), so none is ever taken for a
// tenant's.
func DataStoreName(id function.Identity) string { return id.ClusterScopedName() }

// DataStoreSchema is the control plane's etcd key prefix and SQL database
// and user in its DataStore: "t" and the first 31 hex digits of
// sha256("<NS>/<N>"). Kamaji's default (NS and N joined by '_', '-' turned
// to '_') gives (prod, team-a) and (prod-team, a) one prefix in a shared
// DataStore. 32 characters of [a-z0-9] starting with a letter: a valid
// etcd prefix, PostgreSQL identifier (63) and MySQL user name (32). Distinct
// per (NS, N) up to a collision of 124 bits of SHA-256.
func DataStoreSchema(id function.Identity) string {
	sum := sha256.Sum256([]byte(id.Namespace + "/" + id.Name))
	return "t" + hex.EncodeToString(sum[:])[:31]
}

// dataStoreAccount is the KamajiControlPlane's dataStoreSchema and
// dataStoreUsername: DataStoreSchema for a new control plane, whatever the
// observed one holds otherwise. Kamaji keeps a control plane's data under
// them and they are immutable, so a control plane observed without them keeps
// Kamaji's default (docs/architecture.md, Names).
func dataStoreAccount(id function.Identity, observed observedControlPlane) (schema, username string) {
	if observed.Exists {
		return observed.Schema, observed.Username
	}
	s := DataStoreSchema(id)
	return s, s
}

// kamajiDefaultSchema is the etcd prefix and user Kamaji gives a control
// plane without dataStoreSchema: "<NS>_<N>" with every '-' turned to '_'.
func kamajiDefaultSchema(id function.Identity) string {
	return strings.ReplaceAll(id.Namespace+"_"+id.Name, "-", "_")
}

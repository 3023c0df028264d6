package main

import (
	"errors"
	"fmt"
	"sort"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/hibernation"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// Composed-resource names of this function's objects in the desired state.
const (
	nameCluster            = function.ClusterResourceName
	nameKubevirtCluster    = "kubevirtcluster"
	nameKamajiControlPlane = function.KamajiControlPlaneResourceName
	nameEtcdCluster        = backup.EtcdClusterResourceName
	nameDataStore          = "datastore"
	nameAPIServerService   = "apiserver-service"
	nameAPIServerIngress   = "apiserver-ingress"
	// nameEtcdUsage is the Usage keeping the EtcdCluster until the
	// KamajiControlPlane is gone.
	nameEtcdUsage = "usage-etcdcluster-by-kamajicontrolplane"
	// nameNodeGroupUsagePrefix + G is the Usage keeping the
	// KamajiControlPlane until node group G's MachineDeployment is gone.
	nameNodeGroupUsagePrefix = "usage-kamajicontrolplane-by-nodegroup-"
	// namePKISecretUsagePrefix + S is the Usage keeping the etcd PKI
	// Secret S until the KamajiControlPlane is gone.
	namePKISecretUsagePrefix = "usage-secret-by-kamajicontrolplane-"
)

// requiredKubeconfig is the required-resources key of Kamaji's admin
// kubeconfig Secret, copied into the claim's connection secret once it
// exists.
const requiredKubeconfig = "kubeconfig-secret"

// requiredTenantDataStore is the required-resources key of the tenant's
// DataStore (Identity.TenantDataStoreName), which a namespaced cluster
// uses when the input names no shared DataStore.
const requiredTenantDataStore = "tenant-datastore"

// Readiness of the composed resources: Kamaji and the KubeVirt provider
// report status.ready, etcd-operator, cert-manager and Crossplane's Usage a
// Ready condition, a Cluster API Cluster (v1beta2) an Available condition.
var (
	readyOnReady     = function.ReadyOnCondition("Ready")
	readyOnAvailable = function.ReadyOnCondition("Available")
)

// plan computes the tenant cluster's control plane from the tenant t, the
// input in, the tenant's host policy and the observed state r reads:
// Cluster, KubevirtCluster, KamajiControlPlane and its data store
// (dataStore); the XR's status, the ControlPlaneReady condition, the
// kubeconfig Secret as connection details once it arrived. It returns every
// bad spec or input value as a field.ErrorList, and a claim and a
// TenantCluster naming the same cluster as the later one's error
// (nameClash).
//
// now places the backups in their schedule (internal/backup): the output
// changes with it only at a slot boundary.
func plan(t *function.Cluster, in *cpinput.ControlPlaneInput, hosts function.HostPolicy, r *function.Request, now time.Time) (*function.Plan, field.ErrorList) {
	p := &function.Plan{}
	s, errs := newScope(p, t, in, hosts, r, now)
	if len(errs) > 0 {
		return nil, errs
	}
	requireSameName(p, t, r)
	for _, phase := range []func(*scope, *function.Plan) field.ErrorList{
		(*scope).decideSleep,
		(*scope).spread,
		(*scope).dataStore,
		(*scope).deletionOrder,
		(*scope).management,
		(*scope).clusterAPI,
		(*scope).oidc,
		(*scope).encryption,
		(*scope).kamaji,
		(*scope).ingress,
		(*scope).status,
		(*scope).maintenance,
		(*scope).restoring,
		(*scope).backups,
		(*scope).sleepStatus,
		(*scope).composeRollRecord,
		(*scope).rerun,
		(*scope).connection,
	} {
		if errs := phase(s, p); len(errs) > 0 {
			return nil, errs
		}
	}
	return p, nil
}

// scope is what plan's phases read, decided once from the XR, the input
// and the observed state.
type scope struct {
	t        *function.Cluster
	spec     *tkv1alpha1.KubernetesClusterSpec
	in       *cpinput.ControlPlaneInput
	r        *function.Request
	now      time.Time
	observed observedControlPlane
	version  versions.KubernetesVersion
	sizing   controlPlaneSizing
	host     string
	store    dataStore
	// waiting: the store's DataStore has not arrived.
	waiting bool
	// kubeconfig is Kamaji's admin kubeconfig Secret (needKubeconfig), nil
	// until it arrived.
	kubeconfig *corev1.Secret
	auth       authentication
	oidcSystem bool
	// usages: input.deletionOrder Usages.
	usages bool
	// restore is spec.restore's plan (nil for none); restorePending says
	// its control plane waits for the backup or its restored PKI (Kamaji
	// would issue a new CA otherwise).
	restore        *backup.RestorePlan
	restorePending bool
	// kcp is the KamajiControlPlane the kamaji phase built.
	kcp *kamajiv1alpha2.KamajiControlPlane
	// sleep is the cluster's hibernation state (decideSleep) and
	// sleepFacts what it was decided from.
	sleep      hibernation.Decision
	sleepFacts hibernation.Facts
	// enc is the API server's encryption at rest (nil: none).
	enc *encryptionPlan
	// maint is the maintenance decision at now; pending the changes
	// that wait for the window.
	maint       maintenance.Decision
	maintPolicy maintenance.Policy
	pending     []tkv1alpha1.PendingChange
	// roll is the cluster's roll record to compose (spreadRoll);
	// requireRollRecords asks for every cluster's; waitingForWindow:
	// the platform's changes wait for the window to open.
	roll               rollRecord
	requireRollRecords bool
	// rollRequest: a TenantCluster asks its Tenant for a slot or holds
	// one; requireRollGrant asks for its record (namespacedRoll).
	rollRequest      bool
	requireRollGrant bool
	waitingForWindow bool
}

// needKubeconfig: Kamaji's admin kubeconfig is the claim's connection
// details and the CA of the OIDC kubeconfig.
func (s *scope) needKubeconfig() bool { return !s.t.Namespaced || s.oidcSystem }

// newScope checks t and in against every rule of the API
// (docs/validation.md), the upgrade rule, the data store, the backup
// interval and spec.restore, and returns what the phases read.
func newScope(p *function.Plan, t *function.Cluster, in *cpinput.ControlPlaneInput, hosts function.HostPolicy, r *function.Request, now time.Time) (*scope, field.ErrorList) {
	spec := t.Spec
	s := &scope{
		t: t, spec: spec, in: in, r: r, now: now, observed: observeControlPlane(r),
		oidcSystem: spec.OIDC.Mode == tkv1alpha1.OIDCModeSystem,
		usages:     in.DeletionOrder == cpinput.DeletionOrderUsages,
	}
	errs := spec.Validate()
	var err error
	if s.version, err = versions.Lookup(spec.Version); err == nil {
		errs = appendError(errs, checkUpgrade(spec.Version, s.observed))
	}
	s.sizing, err = resolveSizing(spec.ControlPlane, in.CPUAllocationRatio)
	errs = appendError(errs, err)
	s.host, err = clusterHost(t.ID, spec, hosts)
	errs = appendError(errs, err)
	s.store, err = newDataStore(t, in)
	errs = appendError(errs, err)
	if s.needKubeconfig() {
		s.kubeconfig, err = kubeconfigSecret(r, t.ID)
		errs = appendError(errs, err)
	}
	if len(spec.OIDC.Validate(field.NewPath("spec", "oidc"))) == 0 {
		// Only a valid spec.oidc is resolved: Validate named the rest.
		var aerrs field.ErrorList
		s.auth, aerrs = planAuthentication(t.ID, spec.OIDC, in.OIDC)
		errs = append(errs, aerrs...)
	}
	errs = appendError(errs, s.store.Check(r))
	if clash, err := nameClash(t, r); err != nil {
		errs = append(errs, field.InternalError(field.NewPath("requiredResources"), err))
	} else if clash != nil {
		errs = append(errs, clash)
	}
	errs = append(errs, s.checkBackupInterval(p)...)
	errs = append(errs, s.decideMaintenance()...)
	restore, rerrs := backup.PlanRestore(p, r, t, in, etcdOperatorOf(in.Etcd.Operator).TakesSnapshots())
	if errs = append(errs, rerrs...); len(errs) > 0 {
		return nil, errs
	}
	s.restore = restore
	s.restorePending = restore != nil && (!restore.Arrived || !restore.PKIReady)
	s.waiting = s.store.Waiting(r)
	return s, nil
}

// checkBackupInterval checks spec.backup.interval against the platform's
// bounds when it takes the cluster's backups, and warns that it is ignored
// otherwise.
func (s *scope) checkBackupInterval(p *function.Plan) field.ErrorList {
	b := &s.spec.Backup
	if s.store.BacksUp() {
		if _, err := backup.Interval(b.Interval, &s.in.Etcd.Backup); err != nil {
			return field.ErrorList{err}
		}
		return nil
	}
	if b.Interval != "" && len(b.Validate(field.NewPath("spec", "backup"))) == 0 {
		p.Warn(tkv1alpha1.ReasonInvalidSpec, "spec.backup.interval is ignored: "+s.store.NoBackups())
	}
	return nil
}

// dataStore adds what the cluster's data store composes or requires.
func (s *scope) dataStore(p *function.Plan) field.ErrorList { return s.store.Compose(p, s) }

// deletionOrder adds, with Usages, one Usage per node group: node groups
// go before the control plane, while it can still drain their nodes; CAPI
// bounds each drain.
func (s *scope) deletionOrder(p *function.Plan) field.ErrorList {
	if !s.usages {
		return nil
	}
	id := s.t.ID
	kcp := id.KamajiControlPlaneRef()
	for _, g := range sortedKeys(s.spec.NodeGroups) {
		if s.waiting {
			keepObserved(p, s.r, nameNodeGroupUsagePrefix+g)
			continue
		}
		p.Add(nameNodeGroupUsagePrefix+g, id.Usage(id.Prefixed("control-plane-used-by-nodegroup-"+g),
			kcp, function.ObjectRef{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: id.Prefixed(g)},
			"node group "+g+" is drained through the tenant API server before the control plane goes"), readyOnReady)
	}
	return nil
}

// management adds a claim's objects in the management namespace
// (composeManagement); a namespaced XR has none.
func (s *scope) management(p *function.Plan) field.ErrorList {
	if s.t.Namespaced {
		return nil
	}
	if err := composeManagement(p, s.r, s.t.ID, s.kubeconfig, s.usages); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requiredResources", requiredKubeconfig), err)}
	}
	return nil
}

// clusterAPI adds the Cluster API Cluster and its KubevirtCluster.
func (s *scope) clusterAPI(p *function.Plan) field.ErrorList {
	p.Add(nameCluster, buildCluster(s.t.ID, s.in), readyOnAvailable)
	p.Add(nameKubevirtCluster, buildKubevirtCluster(s.t.ID), function.ReadyOnStatusReady)
	return nil
}

// oidc adds the API server's AuthenticationConfiguration and, for mode
// System, the OIDC kubeconfig: composed once the tenant's CA is known,
// kept until then.
func (s *scope) oidc(p *function.Plan) field.ErrorList {
	if s.auth.ConfigMap != nil {
		p.Add(nameAuthenticationConfig, s.auth.ConfigMap, function.ReadyOnceObserved)
	}
	if !s.oidcSystem {
		return nil
	}
	ca := tenantCA(s.kubeconfig)
	if ca == nil {
		keepObserved(p, s.r, nameOIDCKubeconfig)
		return nil
	}
	secret, err := oidcKubeconfigSecret(s.t.ID, s.in.OIDC, oidcServer(s.host), ca)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "oidc", "mode"), err)}
	}
	p.Add(nameOIDCKubeconfig, secret, function.ReadyOnceObserved)
	return nil
}

// kamaji adds the KamajiControlPlane with its data store account and
// Talos signer, kept as observed while the data store or a restore is
// pending.
func (s *scope) kamaji(p *function.Plan) field.ErrorList {
	id := s.t.ID
	kcp := buildKamajiControlPlane(id, s.spec, s.in, s.versionNow(), s.sizing, s.host, s.store.Name(), s.auth)
	kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername = dataStoreAccount(id, s.observed)
	if s.restore != nil && s.restore.Arrived && !s.observed.Exists {
		// The backup's data lives under the account of the cluster it
		// came from.
		kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername = s.restore.Schema, s.restore.Username
	}
	s.sleepControlPlane(kcp)
	s.kcp = kcp
	s.mountEncryption(kcp)
	if ferr := s.talos(p); ferr != nil {
		return field.ErrorList{ferr}
	}
	if errs := checkPod(kcp); len(errs) > 0 {
		return errs
	}
	if s.waiting || s.restorePending {
		keepObserved(p, s.r, nameKamajiControlPlane)
	} else {
		p.Add(nameKamajiControlPlane, kcp, function.ReadyOnStatusReady)
	}
	return nil
}

// talos adds the Talos node groups' PKI and signer to s.kcp
// (composeTalos); while the data store is pending what was composed is
// kept.
func (s *scope) talos(p *function.Plan) *field.Error {
	if s.waiting {
		for _, name := range []string{nameTalosSelfSignedIssuer, nameTalosCA, nameTalosCAIssuer, nameTalosTLS} {
			keepObserved(p, s.r, name)
		}
		return nil
	}
	if len(talosNodeGroups(s.spec, s.in)) == 0 {
		return nil
	}
	return composeTalos(p, s.r, s.t.ID, s.in, s.kcp)
}

// ingress adds the route to the API server beside the control plane;
// never dropped once composed.
func (s *scope) ingress(p *function.Plan) field.ErrorList {
	r := s.r
	if !s.waiting || r.ObservedExists(nameKamajiControlPlane) || r.ObservedExists(nameAPIServerIngress) || r.ObservedExists(nameAPIServerService) {
		p.Add(nameAPIServerService, apiServerService(s.t.ID), function.ReadyOnceObserved)
		p.Add(nameAPIServerIngress, apiServerIngress(s.t.ID, s.in.IngressClassName, s.host), function.ReadyOnceObserved)
	}
	return nil
}

// status sets the XR's status (status.version only as vMAJOR.MINOR.PATCH
// re-printed), ControlPlaneReady and the data store's conditions.
func (s *scope) status(p *function.Plan) field.ErrorList {
	if p.Status == nil {
		p.Status = map[string]any{}
	}
	p.Status["controlPlane"] = map[string]any{"endpoint": "https://" + s.host + ":443"}
	p.Status["kubeconfigSecret"] = s.t.ID.KubeconfigSecretName()
	if v, ok := versions.ParsePatchVersion(s.observed.Running); ok {
		p.Status["version"] = v
	}
	setControlPlaneCondition(p, s.r, s.host, s.store)
	s.store.SetConditions(p)
	return nil
}

// restoring says, until the restored PKI is observed, that no control
// plane is composed.
func (s *scope) restoring(p *function.Plan) field.ErrorList {
	if s.restorePending && !s.r.ObservedExists(nameKamajiControlPlane) {
		p.SetCondition(tkv1alpha1.ConditionControlPlaneReady, false, tkv1alpha1.ReasonRestoringPKI,
			"restoring backup "+s.restore.Backup+": no control plane is composed until its PKI Secrets are observed")
	}
	return nil
}

// backups adds the data store's backups (dataStore.Backups).
func (s *scope) backups(p *function.Plan) field.ErrorList { return s.store.Backups(p, s) }

// connection requires Kamaji's admin kubeconfig and copies it into a
// claim's connection details once it arrived; a namespaced XR has none
// (status.kubeconfigSecret names the Secret in NS).
func (s *scope) connection(p *function.Plan) field.ErrorList {
	id := s.t.ID
	if s.needKubeconfig() {
		p.Require(requiredKubeconfig, &fnv1.ResourceSelector{
			ApiVersion: "v1",
			Kind:       "Secret",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: id.KubeconfigSecretName()},
			Namespace:  proto.String(id.Namespace),
		})
	}
	if s.t.Namespaced || s.kubeconfig == nil {
		return nil
	}
	p.ConnectionDetails = map[string][]byte{}
	for _, k := range tkv1alpha1.ConnectionSecretKeys {
		if v, ok := s.kubeconfig.Data[k]; ok {
			p.ConnectionDetails[k] = v
		}
	}
	return nil
}

// keepObserved keeps the observed composed resource called name unchanged,
// when there is one.
func keepObserved(p *function.Plan, r *function.Request, name string) {
	if r.ObservedExists(name) {
		p.Kept = append(p.Kept, function.Kept{Name: name})
	}
}

// setControlPlaneCondition sets ControlPlaneReady, with a reason saying
// what the control plane waits for: the data store (dataStore.NotReady),
// else the KamajiControlPlane.
func setControlPlaneCondition(p *function.Plan, r *function.Request, host string, store dataStore) {
	if r.ObservedBool(nameKamajiControlPlane, "status", "ready") {
		p.SetCondition(tkv1alpha1.ConditionControlPlaneReady, true, tkv1alpha1.ReasonControlPlaneAvailable,
			"the tenant API server answers at https://"+host+":443")
		return
	}
	reason, msg, ok := store.NotReady(r)
	if !ok {
		reason, msg = tkv1alpha1.ReasonWaitingForControlPlane, "the KamajiControlPlane is not ready yet"
	}
	p.SetCondition(tkv1alpha1.ConditionControlPlaneReady, false, reason, msg)
}

// kubeconfigSecret is Kamaji's admin kubeconfig Secret N-admin-kubeconfig
// once Crossplane sent it (one object under requiredKubeconfig), else nil.
// It returns a *field.Error naming the Secret when it does not decode.
func kubeconfigSecret(r *function.Request, id function.Identity) (*corev1.Secret, error) {
	secrets, _, err := function.Required[corev1.Secret](r, requiredKubeconfig)
	if err != nil {
		return nil, field.InternalError(field.NewPath("requiredResources", requiredKubeconfig),
			fmt.Errorf("cannot decode the kubeconfig Secret %s/%s: %w", id.Namespace, id.KubeconfigSecretName(), err))
	}
	if len(secrets) != 1 {
		return nil, nil
	}
	return secrets[0], nil
}

// observedControlPlane is the version the observed KamajiControlPlane was
// last asked for (spec.version) and the version it reports running
// (status.version); either is "" when not observed.
// Exists says a KamajiControlPlane was observed; Schema and Username are
// its spec.dataStoreSchema and spec.dataStoreUsername ("" when unset).
type observedControlPlane struct {
	Desired, Running string
	Exists           bool
	Schema, Username string
}

func observeControlPlane(r *function.Request) observedControlPlane {
	return observedControlPlane{
		Desired:  r.ObservedString(nameKamajiControlPlane, "spec", "version"),
		Running:  r.ObservedString(nameKamajiControlPlane, "status", "version"),
		Exists:   r.ObservedExists(nameKamajiControlPlane),
		Schema:   r.ObservedString(nameKamajiControlPlane, "spec", "dataStoreSchema"),
		Username: r.ObservedString(nameKamajiControlPlane, "spec", "dataStoreUsername"),
	}
}

// appendError appends err, a *field.Error from the checks plan runs, to
// errs; nil adds nothing.
func appendError(errs field.ErrorList, err error) field.ErrorList {
	if err == nil {
		return errs
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return append(errs, fe)
	}
	return append(errs, field.InternalError(nil, err))
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

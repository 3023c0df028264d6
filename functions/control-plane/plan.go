package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/quantity"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// Composed-resource names of this function's objects in the desired state.
const (
	nameCluster            = function.ClusterResourceName
	nameKubevirtCluster    = "kubevirtcluster"
	nameKamajiControlPlane = function.KamajiControlPlaneResourceName
	nameEtcdCluster        = "etcdcluster"
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
// Cluster, KubevirtCluster, KamajiControlPlane, and either a dedicated etcd
// (EtcdCluster, cert-manager PKI, DataStore) or a reference to the shared
// DataStore named in the input; the XR's status, the
// ControlPlaneReady condition, the kubeconfig Secret as connection details
// once it arrived; what the dedicated etcd leaves behind, for deletion. It returns every bad spec or input value as a
// field.ErrorList, and a claim and a TenantCluster naming the same cluster
// as the later one's error (nameClash).
//
// now places the backups in their schedule (backup.go): the output changes
// with it only at a slot boundary.
func plan(t *function.Cluster, in *cpinput.ControlPlaneInput, hosts function.HostPolicy, r *function.Request, now time.Time) (*function.Plan, field.ErrorList) {
	spec := t.Spec
	observed := observeControlPlane(r)
	// Every rule of the API (docs/validation.md), then the upgrade rule,
	// which needs the observed control plane.
	errs := spec.Validate()
	version, err := versions.Lookup(spec.Version)
	if err == nil {
		errs = appendError(errs, checkUpgrade(spec.Version, observed))
	}
	sizing, err := resolveSizing(spec.ControlPlane, in.CPUAllocationRatio)
	errs = appendError(errs, err)
	host, err := clusterHost(t.ID, spec, hosts)
	errs = appendError(errs, err)
	// A namespaced XR composes nothing cluster-scoped: unless the input names a shared DataStore, it uses its
	// tenant's, which it requires and waits for. It has no connection
	// details: status.kubeconfigSecret names the Secret in NS.
	tenantDS := t.Namespaced && in.DataStoreName == ""
	external := in.DataStoreName != "" || tenantDS
	storage, err := quantity.ParsePositiveQuantity(field.NewPath("input", "etcd", "storageSize"), string(in.Etcd.StorageSize))
	if !external {
		errs = appendError(errs, err)
	}
	// Kamaji's admin kubeconfig: the claim's connection details, the CA
	// of the OIDC kubeconfig.
	oidcSystem := spec.OIDC.Mode == tkv1alpha1.OIDCModeSystem
	needKubeconfig := !t.Namespaced || oidcSystem
	var secret *corev1.Secret
	if needKubeconfig {
		secret, err = kubeconfigSecret(r, t.ID)
		errs = appendError(errs, err)
	}
	var auth authentication
	if len(spec.OIDC.Validate(field.NewPath("spec", "oidc"))) == 0 {
		// Only a valid spec.oidc is resolved: Validate named the rest.
		var aerrs field.ErrorList
		auth, aerrs = planAuthentication(t.ID, spec.OIDC, in.OIDC)
		errs = append(errs, aerrs...)
	}
	if !external {
		errs = appendError(errs, etcdOperatorChanged(r, clusterEtcdSite(t.ID, in.Etcd.Operator), "cluster "+t.ID.Namespace+"/"+t.ID.Name))
	}
	clash, err := nameClash(t, r)
	if err != nil {
		errs = append(errs, field.InternalError(field.NewPath("requiredResources"), err))
	} else if clash != nil {
		errs = append(errs, clash)
	}
	p := &function.Plan{}
	backups := !external && in.Etcd.Backup.Enabled()
	if backups {
		if _, err := backupInterval(spec.Backup.Interval, &in.Etcd.Backup); err != nil {
			errs = append(errs, err)
		}
	} else if spec.Backup.Interval != "" && len(spec.Backup.Validate(field.NewPath("spec", "backup"))) == 0 {
		msg := "spec.backup.interval is ignored: the platform takes no backups of this cluster"
		if tenantDS && in.Etcd.Backup.Enabled() {
			msg = "spec.backup.interval is ignored: a TenantCluster keeps its state in the namespace's etcd, which its Tenant backs up at the platform's interval"
		}
		p.Warn(tkv1alpha1.ReasonInvalidSpec, msg)
	}
	restore, rerrs := planRestore(p, r, t, in)
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	// A restoring cluster composes its etcd once the backup is read, and
	// its control plane once the restored PKI is observed (Kamaji would
	// issue a new CA otherwise).
	restoring := restore != nil && (!restore.Arrived || !restore.PKIReady)
	site := clusterEtcdSite(t.ID, in.Etcd.Operator)
	requireSameName(p, t, r)
	usages := in.DeletionOrder == cpinput.DeletionOrderUsages
	dsName := in.DataStoreName
	// waiting: the tenant's DataStore does not exist (or has not arrived):
	// nothing that needs it is composed anew, what was composed is kept.
	waiting := false
	if tenantDS {
		dsName = t.ID.TenantDataStoreName()
		n, arrived := r.RequiredArrived(requiredTenantDataStore)
		waiting = !arrived || n != 1
		p.Require(requiredTenantDataStore, &fnv1.ResourceSelector{
			ApiVersion: kamajiv1alpha1.GroupVersion.String(),
			Kind:       kamajiv1alpha1.DataStoreKind,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: dsName},
		})
	}
	if !external {
		ds := buildDataStore(t.ID, in.Etcd.Operator)
		dsName = ds.Name
		etcd := buildEtcdCluster(t.ID, spec, in, storage)
		switch {
		case restore != nil && !restore.Arrived:
			keepObserved(p, r, nameEtcdCluster)
		default:
			// The restore's source or, should spec.restore be gone, the
			// bootstrap an etcd started from a backup keeps (the
			// operator's CRD refuses a change).
			var source *etcdv1alpha2.SnapshotLocation
			if restore != nil {
				source = &restore.Source
				composeRestoredPKI(p, restore)
			} else if source, err = observedRestoreSource(r); err != nil {
				return nil, field.ErrorList{field.InternalError(field.NewPath("observed", nameEtcdCluster, "spec", "bootstrap"), err)}
			}
			if e, ok := etcd.(*etcdv1alpha2.EtcdCluster); ok && source != nil {
				e.Spec.Bootstrap = &etcdv1alpha2.Bootstrap{Restore: &etcdv1alpha2.BootstrapRestore{Source: *source}}
			}
			p.Add(nameEtcdCluster, etcd, site.ready())
		}
		p.Add(nameDataStore, ds, function.ReadyOnStatusReady)
		pki := buildEtcdPKI(t.ID, in.Etcd.Operator, in.Etcd.Replicas, in.ClusterDomain)
		for _, name := range sortedKeys(pki.Issuers) {
			p.Add(name, pki.Issuers[name], readyOnReady)
		}
		for _, name := range sortedKeys(pki.Certificates) {
			p.Add(name, pki.Certificates[name], readyOnReady)
		}
		if err := composeEtcdLeftovers(p, r, t.ID, in.Etcd.Operator, usages); err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources"), err)}
		}
	}
	if !external && usages {
		// Kamaji's finalizers clean the tenant's keys out of etcd: etcd and
		// its PKI must outlive the control plane.
		p.Add(nameEtcdUsage, t.ID.Usage(t.ID.Prefixed("etcd-used-by-control-plane"),
			site.ref(),
			t.ID.KamajiControlPlaneRef(),
			"Kamaji cleans the tenant's keys out of etcd when its control plane is deleted"), readyOnReady)
	}
	if usages {
		// Node groups go before the control plane, while it can still drain
		// their nodes; CAPI bounds each drain.
		kcp := t.ID.KamajiControlPlaneRef()
		for _, g := range sortedKeys(spec.NodeGroups) {
			if waiting {
				keepObserved(p, r, nameNodeGroupUsagePrefix+g)
				continue
			}
			p.Add(nameNodeGroupUsagePrefix+g, t.ID.Usage(t.ID.Prefixed("control-plane-used-by-nodegroup-"+g),
				kcp, function.ObjectRef{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: t.ID.Prefixed(g)},
				"node group "+g+" is drained through the tenant API server before the control plane goes"), readyOnReady)
		}
	}
	if !t.Namespaced {
		if err := composeManagement(p, r, t.ID, secret, usages); err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources", requiredKubeconfig), err)}
		}
	}
	p.Add(nameCluster, buildCluster(t.ID, in), readyOnAvailable)
	p.Add(nameKubevirtCluster, buildKubevirtCluster(t.ID), function.ReadyOnStatusReady)
	if auth.ConfigMap != nil {
		p.Add(nameAuthenticationConfig, auth.ConfigMap, function.ReadyOnceObserved)
	}
	if oidcSystem {
		// Composed once the tenant's CA is known; kept until then.
		if ca := tenantCA(secret); ca != nil {
			s, err := oidcKubeconfigSecret(t.ID, in.OIDC, oidcServer(host), ca)
			if err != nil {
				return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "oidc", "mode"), err)}
			}
			p.Add(nameOIDCKubeconfig, s, function.ReadyOnceObserved)
		} else {
			keepObserved(p, r, nameOIDCKubeconfig)
		}
	}
	kcp := buildKamajiControlPlane(t.ID, spec, in, version, sizing, host, dsName, auth)
	kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername = dataStoreAccount(t.ID, observed)
	if restore != nil && restore.Arrived && !observed.Exists {
		// The backup's data lives under the account of the cluster it
		// came from.
		kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername = restore.Schema, restore.Username
	}
	if len(talosNodeGroups(spec, in)) > 0 && !waiting {
		if ferr := composeTalos(p, r, t.ID, in, kcp); ferr != nil {
			return nil, field.ErrorList{ferr}
		}
	} else if waiting {
		for _, name := range []string{nameTalosSelfSignedIssuer, nameTalosCA, nameTalosCAIssuer, nameTalosTLS} {
			if r.ObservedExists(name) {
				keepObserved(p, r, name)
			}
		}
	}
	if errs := checkPod(kcp); len(errs) > 0 {
		return nil, errs
	}
	if waiting || restoring {
		keepObserved(p, r, nameKamajiControlPlane)
	} else {
		p.Add(nameKamajiControlPlane, kcp, function.ReadyOnStatusReady)
	}

	if !waiting || r.ObservedExists(nameKamajiControlPlane) || r.ObservedExists(nameAPIServerIngress) || r.ObservedExists(nameAPIServerService) {
		// The route to the API server, beside the control plane; never
		// dropped once composed.
		p.Add(nameAPIServerService, apiServerService(t.ID), function.ReadyOnceObserved)
		p.Add(nameAPIServerIngress, apiServerIngress(t.ID, in.IngressClassName, host), function.ReadyOnceObserved)
	}

	p.Status = map[string]any{
		"controlPlane":     map[string]any{"endpoint": "https://" + host + ":443"},
		"kubeconfigSecret": t.ID.KubeconfigSecretName(),
	}
	// status.version only as vMAJOR.MINOR.PATCH re-printed.
	if v, ok := versions.ParsePatchVersion(observed.Running); ok {
		p.Status["version"] = v
	}
	waitingFor := ""
	if waiting {
		waitingFor = dsName
	}
	setControlPlaneCondition(p, r, host, external, waitingFor, site.readyCondition())
	setDataStoreShared(p, in.DataStoreName)
	if restoring && !r.ObservedExists(nameKamajiControlPlane) {
		p.SetCondition(tkv1alpha1.ConditionControlPlaneReady, false, tkv1alpha1.ReasonRestoringPKI,
			"restoring backup "+restore.Backup+": no control plane is composed until its PKI Secrets are observed")
	}
	if backups {
		schema, username := kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername
		if schema == "" {
			schema = kamajiDefaultSchema(t.ID)
		}
		if username == "" {
			username = schema
		}
		if err := planBackups(p, r, t, in, schema, username, now); err != nil {
			return nil, field.ErrorList{err}
		}
	} else {
		keepObservedBackups(p, r)
		if tenantDS && in.Etcd.Backup.Enabled() {
			if err := mirrorTenantBackups(p, r, t.ID.Namespace); err != nil {
				return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources", requiredTenantXR), err)}
			}
		}
	}
	if needKubeconfig {
		p.Require(requiredKubeconfig, &fnv1.ResourceSelector{
			ApiVersion: "v1",
			Kind:       "Secret",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: t.ID.KubeconfigSecretName()},
			Namespace:  proto.String(t.ID.Namespace),
		})
	}
	if t.Namespaced {
		return p, nil
	}
	if secret != nil {
		p.ConnectionDetails = map[string][]byte{}
		for _, k := range tkv1alpha1.ConnectionSecretKeys {
			if v, ok := secret.Data[k]; ok {
				p.ConnectionDetails[k] = v
			}
		}
	}
	return p, nil
}

// keepObserved keeps the observed composed resource called name unchanged,
// when there is one.
func keepObserved(p *function.Plan, r *function.Request, name string) {
	if r.ObservedExists(name) {
		p.Kept = append(p.Kept, function.Kept{Name: name})
	}
}

// setControlPlaneCondition sets ControlPlaneReady, with a reason saying
// what the control plane waits for; tenantDataStore names the tenant's
// DataStore a namespaced cluster waits for ("" when it does not wait);
// etcdReady is the condition type the dedicated EtcdCluster reports.
func setControlPlaneCondition(p *function.Plan, r *function.Request, host string, external bool, tenantDataStore, etcdReady string) {
	if r.ObservedBool(nameKamajiControlPlane, "status", "ready") {
		p.SetCondition(tkv1alpha1.ConditionControlPlaneReady, true, tkv1alpha1.ReasonControlPlaneAvailable,
			"the tenant API server answers at https://"+host+":443")
		return
	}
	reason, msg := tkv1alpha1.ReasonWaitingForControlPlane, "the KamajiControlPlane is not ready yet"
	if tenantDataStore != "" {
		reason, msg = tkv1alpha1.ReasonWaitingForTenantDataStore,
			"the tenant's DataStore "+tenantDataStore+" does not exist yet: no control plane is composed until it does"
	} else if etcd, _, _ := r.ObservedCondition(nameEtcdCluster, etcdReady); !external && etcd != "True" {
		reason, msg = tkv1alpha1.ReasonWaitingForEtcd, "the dedicated etcd cluster is not ready yet"
	} else if !external && !r.ObservedBool(nameDataStore, "status", "ready") {
		reason, msg = tkv1alpha1.ReasonWaitingForDataStore, "the Kamaji DataStore is not ready yet"
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

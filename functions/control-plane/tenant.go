package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// tenantEtcdBase names a Tenant's etcd in NS: the EtcdCluster, its
// StatefulSet and client Service, and the prefix of its PKI objects. Every
// name a cluster derives in NS is N or starts with "N-" (N at most
// function.MaxClusterNameLength characters; Kamaji names its Deployment
// and Service N), so a base whose first run without '-' is longer than
// any N is no such name and starts none (TestTenantEtcdBaseIsInjective).
const tenantEtcdBase = "tenantkubenamespaceetcdofthetenant"

// Composed-resource names of a Tenant's per-cluster objects: prefix + N
// for each TenantCluster N of the namespace.
const (
	// nameTenantCSIBindingPrefix: the CSI controller's ClusterRoleBinding
	// of cluster N, the object a claim's workers step composes.
	nameTenantCSIBindingPrefix = "kcsi-clusterrolebinding-"
	// nameTenantEtcdUsagePrefix: the Usage keeping the etcd until N's
	// KamajiControlPlane is gone.
	nameTenantEtcdUsagePrefix = "usage-etcdcluster-by-kamajicontrolplane-"
	// nameTenantDataStoreUsagePrefix: the Usage keeping the DataStore
	// until N's KamajiControlPlane is gone.
	nameTenantDataStoreUsagePrefix = "usage-datastore-by-kamajicontrolplane-"
	// nameTenantClientCAUsagePrefix and nameTenantClientUsagePrefix: the
	// Usages keeping the client CA and client certificate Secrets the
	// DataStore reads until N's KamajiControlPlane is gone.
	nameTenantClientCAUsagePrefix = "usage-etcd-ca-secret-by-kamajicontrolplane-"
	nameTenantClientUsagePrefix   = "usage-etcd-client-secret-by-kamajicontrolplane-"
	// nameTenantXRUsagePrefix: the Usage keeping the Tenant XR itself
	// until N's KamajiControlPlane is gone (its deletion is refused).
	nameTenantXRUsagePrefix = "usage-tenant-by-kamajicontrolplane-"
)

// Composed-resource names of the Usages keeping the etcd's dependencies
// until the EtcdCluster is gone: prefix + the Secret's or the
// PersistentVolumeClaim's name.
const (
	nameEtcdSecretUsagePrefix = "usage-secret-by-etcdcluster-"
	nameEtcdPVCUsagePrefix    = "usage-persistentvolumeclaim-by-etcdcluster-"
)

// tenantPerClusterPrefixes are the prefixes above, for keeping what was
// observed while the list of KamajiControlPlanes has not arrived.
var tenantPerClusterPrefixes = append([]string{nameTenantCSIBindingPrefix}, tenantUsagePrefixes...)

// tenantUsagePrefixes are the prefixes of the per-cluster Usages.
var tenantUsagePrefixes = []string{nameTenantEtcdUsagePrefix, nameTenantDataStoreUsagePrefix, nameTenantClientCAUsagePrefix, nameTenantClientUsagePrefix, nameTenantXRUsagePrefix}

// requiredTenantControlPlanes is the required-resources key of the
// KamajiControlPlanes (tenantkube's) of the Tenant's namespace, which say
// which TenantClusters it serves (tenantClusters). The Tenant asks for
// nothing a tenant writes: TenantClusters and claims carry tenant-sized
// specs, a KamajiControlPlane only what the control-plane step composed
// within the XRD's bounds.
const requiredTenantControlPlanes = "tenant-controlplanes"

// tenantEtcdSite is the etcd of the tenant namespace ns on operator op,
// shared by its TenantClusters: tenantEtcdBase in ns, labelled with the
// namespace.
func tenantEtcdSite(ns string, op etcdOperator) etcdSite {
	return etcdSite{Operator: op, Namespace: ns, Names: etcdNamesOf(tenantEtcdBase, op), Labels: function.TenantLabels(ns)}
}

// TenantFunction serves a Tenant XR: its namespace's etcd and DataStore
// (planTenant).
type TenantFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	// now is the clock that places backups in their schedule.
	now func() time.Time
}

// RunFunction adds the Tenant's namespace etcd and DataStore (planTenant)
// to the desired state. Bad input is a Fatal result naming the field;
// nothing earlier steps put in the desired state is dropped.
func (f *TenantFunction) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, function.ResponseTTL)
	r := function.NewRequest(req)
	in, settings, err := readInput(r, rsp)
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	if err := function.RequirePlatformAPIs(r, rsp, function.NeededAPIs(function.APINeeds{Tenant: true, EtcdOperator: string(in.Etcd.Operator)})); err != nil {
		return function.Fatal(rsp, err), nil
	}
	spec := &tkv1alpha1.TenantSpec{}
	if err := r.CompositeSpec(spec); err != nil {
		return function.Fatal(rsp, err), nil
	}
	p, errs := planTenant(r.CompositeString("metadata", "name"), spec, in, r, function.Clock(f.now))
	if len(errs) > 0 {
		return function.FatalList(rsp, attributeAll(settings, errs)), nil
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err), nil
	}
	return rsp, nil
}

// planTenant computes what the Tenant ns (its name is the namespace)
// composes: the namespace's etcd
// (EtcdCluster and cert-manager PKI, the claim path's builders keyed by
// tenantEtcdBase) and the DataStore tenantkube.tenant.<ns>; for each
// TenantCluster N served (tenantClusters: its KamajiControlPlane, which
// it controls, uses that DataStore) the CSI controller's ClusterRoleBinding N's namespaced
// XR cannot compose and, with deletion order Usages, Usages keeping the
// etcd, the DataStore, the client Secrets it reads and the Tenant itself
// until N's KamajiControlPlane is gone; the etcd's leftovers for cleanup,
// each kept by a Usage until the EtcdCluster is gone; where the platform
// takes backups, the etcd's (planTenantBackups, placed by now). Until the
// KamajiControlPlanes arrive the per-cluster objects observed are kept.
// It returns every bad spec value, a decrease of the running etcd and a
// bad name at once.
func planTenant(ns string, spec *tkv1alpha1.TenantSpec, in *cpinput.ControlPlaneInput, r *function.Request, now time.Time) (*function.Plan, field.ErrorList) {
	var errs field.ErrorList
	errs = appendError(errs, function.ValidateDNSLabel(field.NewPath("metadata", "name"), ns, validation.DNS1123LabelMaxLength))
	spec.Default()
	errs = append(errs, spec.Validate()...)
	site := tenantEtcdSite(ns, etcdOperatorOf(in.Etcd.Operator))
	errs = appendError(errs, etcdOperatorChanged(r, site, "Tenant "+ns))
	if len(errs) == 0 {
		errs = append(errs, etcdDecreases(spec, site, r)...)
	}
	dsName := function.Identity{Namespace: ns}.TenantDataStoreName()
	clusters, arrived, err := tenantClusters(r, ns, dsName)
	errs = appendError(errs, err)
	if len(errs) > 0 {
		return nil, errs
	}
	storage, err := spec.Etcd.StorageSize.Parse()
	if err != nil { // Validate parsed it
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "etcd", "storageSize"), err)}
	}
	var storageClass *string
	if sc := spec.Etcd.StorageClassName; sc != "" {
		storageClass = &sc
	} else if sc := in.Etcd.StorageClassName; sc != "" {
		storageClass = &sc
	}

	p := &function.Plan{}
	p.Add(nameEtcdCluster, site.Operator.BuildEtcd(site, in.Etcd.Version, *spec.Etcd.Replicas, storage, storageClass), site.ready())
	p.Add(nameDataStore, buildDataStoreOf(site, dsName, function.TenantLabels(ns)), function.ReadyOnStatusReady)
	pki := buildEtcdPKIOf(site, *spec.Etcd.Replicas, in.ClusterDomain)
	for _, name := range sortedKeys(pki.Issuers) {
		p.Add(name, pki.Issuers[name], readyOnReady)
	}
	for _, name := range sortedKeys(pki.Certificates) {
		p.Add(name, pki.Certificates[name], readyOnReady)
	}
	usages := in.DeletionOrder == cpinput.DeletionOrderUsages
	present, err := composeTenantEtcdLeftovers(p, r, site, usages)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources"), err)}
	}
	requireTenantControlPlanes(p, ns)
	p.Status = map[string]any{"dataStoreName": dsName}
	if !arrived {
		// Never shrink: what was composed for the clusters stays.
		keepPerCluster(p, r, nil, tenantPerClusterPrefixes)
	} else {
		served := make(map[string]bool, len(clusters))
		firstUsages := false
		for _, c := range clusters {
			n := c.Name
			served[n] = true
			id := function.Identity{Name: n, Namespace: ns}
			p.Add(nameTenantCSIBindingPrefix+n, id.ControllerClusterRoleBinding(function.CSIControllerComponent, function.CSIPersistentVolumesClusterRole, id.Namespace), function.ReadyOnceObserved)
			if !usages {
				continue
			}
			etcdUsage, dsUsage, xrUsage := tenantUsages(site, dsName, id)
			add := func(name string, u *protectionv1beta1.Usage) {
				p.Add(name, u, readyOnReady)
				firstUsages = firstUsages || !r.ObservedExists(name)
			}
			add(nameTenantEtcdUsagePrefix+n, etcdUsage)
			add(nameTenantDataStoreUsagePrefix+n, dsUsage)
			add(nameTenantXRUsagePrefix+n, xrUsage)
			for _, u := range []struct{ prefix, secret string }{{nameTenantClientCAUsagePrefix, site.Names.ClientCA}, {nameTenantClientUsagePrefix, site.Names.Client}} {
				if present[u.secret] {
					add(u.prefix+n, tenantUsage(id, u.secret+"-used-by-"+n, function.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: u.secret},
						fmt.Sprintf("the DataStore reaches the tenant etcd of cluster %s with this certificate until its control plane is deleted", n)))
				}
			}
		}
		if firstUsages {
			// Crossplane deletes undesired composed resources before it
			// applies the desired ones, and a deleted Usage takes the
			// in-use label off the used object when the Usage
			// controller's cache holds no other Usage of it
			// (internal/controller/protection/usage, v2.4): a Usage
			// created in the same reconcile may be missed, and the
			// object stays unprotected until the new Usage's next poll.
			// The Usages of clusters gone therefore go one reconcile
			// after every Usage of the served clusters is observed.
			keepPerCluster(p, r, served, tenantUsagePrefixes)
		}
		p.Status["clusters"] = len(clusters)
		tenantRolls(p, r, ns, clusters, &in.Settings.Maintenance, now)
	}
	setDataStoreCondition(p, r, dsName, site.Operator.ReadyCondition())
	if in.Etcd.Backup.Enabled() {
		if err := planTenantBackups(p, r, site, clusters, arrived, in, now); err != nil {
			return nil, field.ErrorList{err}
		}
	} else {
		backup.KeepObserved(p, r)
	}
	return p, nil
}

// keepPerCluster keeps the per-cluster objects observed under prefixes
// of every cluster not in served (nil: of every cluster).
func keepPerCluster(p *function.Plan, r *function.Request, served map[string]bool, prefixes []string) {
	var kept []string
	for name := range r.ObservedNames() {
		for _, prefix := range prefixes {
			if n, ok := strings.CutPrefix(name, prefix); ok {
				if !served[n] {
					kept = append(kept, name)
				}
				break
			}
		}
	}
	sort.Strings(kept)
	for _, name := range kept {
		p.Kept = append(p.Kept, function.Kept{Name: name})
	}
}

// tenantUsages are the Usages in NS keeping the tenant's EtcdCluster, its
// DataStore dsName and the Tenant XR itself until the KamajiControlPlane
// of cluster id is gone: Kamaji deletes the cluster's keys from etcd
// through the DataStore when its control plane goes, and a Tenant in use
// cannot be deleted (Crossplane's Usage webhook refuses the DELETE of an
// object labelled crossplane.io/in-use, which the Usage controller sets
// on it). A Usage's spec.of without a namespace means the Usage's own;
// Crossplane's usage index (internal/protection/usage finder.go, v2.4)
// keys spec.of by that namespace, which a cluster-scoped object's
// deletion never looks up, so the Usages of the DataStore and of the
// Tenant (both cluster-scoped) name the empty namespace explicitly.
func tenantUsages(site etcdSite, dsName string, id function.Identity) (etcdUsage, dsUsage, xrUsage *protectionv1beta1.Usage) {
	e := tenantUsage(id, site.Names.Cluster+"-used-by-"+id.Name,
		site.ref(),
		fmt.Sprintf("Kamaji deletes cluster %s's keys from the tenant etcd when its control plane is deleted", id.Name))
	d := tenantUsage(id, site.Names.Cluster+"-datastore-used-by-"+id.Name,
		function.ObjectRef{APIVersion: kamajiv1alpha1.GroupVersion.String(), Kind: kamajiv1alpha1.DataStoreKind, Name: dsName},
		fmt.Sprintf("Kamaji reaches the tenant etcd of cluster %s through this DataStore until its control plane is deleted", id.Name))
	d.Spec.Of.ResourceRef.Namespace = proto.String("")
	x := tenantUsage(id, site.Names.Cluster+"-tenant-used-by-"+id.Name,
		function.ObjectRef{APIVersion: tkv1alpha1.GroupVersion.String(), Kind: tkv1alpha1.TenantKind, Name: id.Namespace},
		fmt.Sprintf("cluster %s stores its state in the namespace's etcd: delete the namespace's clusters before its Tenant", id.Name))
	x.Spec.Of.ResourceRef.Namespace = proto.String("")
	return e, d, x
}

// tenantUsage is the Usage name in NS keeping `of` until the
// KamajiControlPlane of cluster id is gone, labelled with the namespace
// and the cluster.
func tenantUsage(id function.Identity, name string, of function.ObjectRef, reason string) *protectionv1beta1.Usage {
	u := id.Usage(name, of, id.KamajiControlPlaneRef(), reason)
	u.Labels = function.TenantLabels(id.Namespace)
	u.Labels[function.LabelCluster] = id.Name
	return u
}

// composeTenantEtcdLeftovers composes, as composeEtcdLeftovers does for a
// claim's etcd, what the Tenant's etcd leaves in NS so that it goes with
// the Tenant: the PKI Secrets cert-manager wrote and the members'
// PersistentVolumeClaims, found by the Tenant's labels. With usages, each
// one present gets a Usage keeping it until the EtcdCluster is gone: the
// members mount their volumes and TLS Secrets, so the etcd keeps its data
// and its certificates for as long as it runs, whatever else is deleted
// first. It returns the PKI Secrets present.
func composeTenantEtcdLeftovers(p *function.Plan, r *function.Request, site etcdSite, usages bool) (map[string]bool, error) {
	n := site.Names
	pki := map[string]bool{n.PeerCA: true, n.ClientCA: true, n.Server: true, n.Peer: true, n.Client: true}
	id := function.Identity{Namespace: site.Namespace}
	secrets, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "Secret"},
		function.CleanupOptions{Labels: site.Labels, Keep: func(name string) bool { return pki[name] }})
	if err != nil {
		return nil, err
	}
	pvcs, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		// As composeEtcdLeftovers: <template>-<cluster>-<ordinal> or
		// data-<cluster>-<random>.
		function.CleanupOptions{Labels: site.Labels, Keep: func(name string) bool { return strings.Contains(name, "-"+n.Cluster+"-") }})
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, s := range secrets.Present {
		present[s] = true
	}
	if !usages {
		return present, nil
	}
	etcd := site.ref()
	for _, d := range []struct {
		prefix, kind string
		names        []string
	}{{nameEtcdSecretUsagePrefix, "Secret", secrets.Present}, {nameEtcdPVCUsagePrefix, "PersistentVolumeClaim", pvcs.Present}} {
		for _, name := range d.names {
			u := id.Usage(name+"-used-by-etcdcluster", function.ObjectRef{APIVersion: "v1", Kind: d.kind, Name: name}, etcd,
				"the members of the namespace's etcd mount it until the EtcdCluster is deleted")
			u.Labels = function.TenantLabels(site.Namespace)
			p.Add(d.prefix+name, u, readyOnReady)
		}
	}
	return present, nil
}

// requireTenantControlPlanes asks for the namespace's KamajiControlPlanes
// that tenantkube composed (managed-by tenantkube, cluster role
// control-plane).
func requireTenantControlPlanes(p *function.Plan, ns string) {
	p.Require(requiredTenantControlPlanes, &fnv1.ResourceSelector{
		ApiVersion: kamajiv1alpha2.GroupVersion.String(),
		Kind:       kamajiv1alpha2.KamajiControlPlaneKind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			function.LabelManagedBy: function.ManagedByTenantkube, LabelClusterRole: "control-plane",
		}}},
		Namespace: proto.String(ns),
	})
}

// etcdDecreases returns, against the observed EtcdCluster of site, a
// lower spec.etcd.replicas or storageSize (the XRD's transition rules
// refuse both on update): the etcd.aenix.io/v1alpha1 operator removes no
// member when its StatefulSet shrinks (quorum is lost), a bound volume
// cannot shrink, and a lower quota-backend-bytes than the data stops every
// write.
func etcdDecreases(spec *tkv1alpha1.TenantSpec, site etcdSite, r *function.Request) field.ErrorList {
	// Both nil while nothing runs or nothing is readable to compare with.
	replicas, size := site.Operator.ObservedSize(r)
	p := field.NewPath("spec", "etcd")
	var errs field.ErrorList
	if replicas != nil && *spec.Etcd.Replicas < *replicas {
		errs = append(errs, field.Invalid(p.Child("replicas"), *spec.Etcd.Replicas,
			fmt.Sprintf("may not be lower than the running etcd's %d members (the etcd-operator removes no member when it scales down)", *replicas)))
	}
	if size == nil {
		return errs
	}
	if want, err := spec.Etcd.StorageSize.Parse(); err == nil && want.Cmp(*size) < 0 {
		errs = append(errs, field.Invalid(p.Child("storageSize"), string(spec.Etcd.StorageSize),
			fmt.Sprintf("may not be lower than the running etcd's %s (a volume cannot shrink, a lower quota stops writes)", size.String())))
	}
	return errs
}

// dataStoreUser is what tenantClusters reads of a KamajiControlPlane.
type dataStoreUser struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		DataStoreName     string `json:"dataStoreName"`
		DataStoreSchema   string `json:"dataStoreSchema"`
		DataStoreUsername string `json:"dataStoreUsername"`
	} `json:"spec"`
}

// servedCluster is a TenantCluster the Tenant serves: its name and where
// its control plane keeps its data in the namespace's etcd (the
// KamajiControlPlane's dataStoreSchema and dataStoreUsername, Kamaji's
// defaults when unset).
type servedCluster struct {
	Name, Schema, Username string
	// Created is the creationTimestamp of the cluster's
	// KamajiControlPlane (the TenantCluster itself is not read): its
	// control plane, and so its state in the etcd, is no older.
	Created time.Time
	// Request: its control plane asks for a roll slot (labelRollRequest)
	// and is not being deleted (a roll of a cluster going away counts no
	// more).
	Request bool
}

// tenantClusters are the TenantClusters, sorted by name, of namespace ns
// that use the Tenant's DataStore dsName, and whether Crossplane has
// answered the list of KamajiControlPlanes. A TenantCluster N is served
// when a KamajiControlPlane N in ns, whose name is a cluster name, names
// dsName and is controlled by the TenantCluster N (servedBy). Only what
// tenantkube composed is read, never a TenantCluster or a claim. That
// leaves out a TenantCluster that composed no control plane (refused by
// its own function, such as one yielding to a claim N, clash.go; waiting
// for the DataStore) and any cluster of NS on another DataStore: a
// claim's or a claimless XR's KamajiControlPlane names "<NS>.<N>"
// (DataStoreName, one dot) or the input's dataStoreName (a DNS label,
// validateInput), never tenantkube.tenant.<NS>, and a TenantCluster's
// names a platform-shared one when the input sets it.
func tenantClusters(r *function.Request, ns, dsName string) ([]servedCluster, bool, error) {
	kcps, arrived, err := function.Required[dataStoreUser](r, requiredTenantControlPlanes)
	if err != nil {
		return nil, true, field.InternalError(field.NewPath("requiredResources", requiredTenantControlPlanes), fmt.Errorf("cannot decode the KamajiControlPlanes of %s: %w", ns, err))
	}
	seen := map[string]bool{}
	var out []servedCluster
	for _, kcp := range kcps {
		n := kcp.Name
		if kcp.Namespace != ns || seen[n] || kcp.Spec.DataStoreName != dsName || !servedBy(kcp, n) ||
			function.ValidateDNSLabel(field.NewPath("metadata", "name"), n, function.MaxClusterNameLength) != nil {
			continue
		}
		seen[n] = true
		schema, user := kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername
		if schema == "" {
			schema = kamajiDefaultSchema(function.Identity{Namespace: ns, Name: n})
		}
		if user == "" {
			user = schema
		}
		out = append(out, servedCluster{Name: n, Schema: schema, Username: user, Created: kcp.CreationTimestamp.Time, Request: kcp.Labels[labelRollRequest] == "true" && kcp.DeletionTimestamp == nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, arrived, nil
}

// servedBy reports whether the KamajiControlPlane kcp is controlled by
// the TenantCluster n: Crossplane sets a controller reference to the XR
// on each resource it composes, and an object has at most one controller
// (Cluster API's owner reference to its Cluster is no controller).
func servedBy(kcp *dataStoreUser, n string) bool {
	c := metav1.GetControllerOfNoCopy(kcp)
	return c != nil && c.APIVersion == tkv1alpha1.GroupVersion.String() && c.Kind == tkv1alpha1.NamespacedKind && c.Name == n
}

// setDataStoreCondition sets DataStoreReady from the observed EtcdCluster
// (its condition etcdReady) and DataStore dsName.
func setDataStoreCondition(p *function.Plan, r *function.Request, dsName, etcdReady string) {
	switch etcd, _, _ := r.ObservedCondition(nameEtcdCluster, etcdReady); {
	case etcd != "True":
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, false, tkv1alpha1.ReasonWaitingForEtcd, "the namespace's etcd cluster is not ready yet")
	case !r.ObservedBool(nameDataStore, "status", "ready"):
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, false, tkv1alpha1.ReasonWaitingForDataStore, "the Kamaji DataStore "+dsName+" is not ready yet")
	default:
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, true, tkv1alpha1.ReasonDataStoreAvailable, "the namespace's clusters store their state through the DataStore "+dsName)
	}
}

package main

import (
	"fmt"
	"sort"
	"strings"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
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
)

// tenantPerClusterPrefixes are the prefixes above, for keeping what was
// observed while the list of TenantClusters has not arrived.
var tenantPerClusterPrefixes = []string{nameTenantCSIBindingPrefix, nameTenantEtcdUsagePrefix, nameTenantDataStoreUsagePrefix, nameTenantClientCAUsagePrefix, nameTenantClientUsagePrefix}

// requiredTenantClusters is the required-resources key of the
// TenantClusters of the Tenant's namespace; requiredTenantClaims that of
// its claims (KubernetesCluster), whose clusters compose their own
// ClusterRoleBinding.
const (
	requiredTenantClusters = "tenant-clusters"
	requiredTenantClaims   = "tenant-claims"
)

// tenantEtcdSite is the etcd of the tenant namespace ns, shared by its
// TenantClusters: tenantEtcdBase in ns, labelled with the namespace.
func tenantEtcdSite(ns string) etcdSite {
	return etcdSite{Namespace: ns, Names: etcdNamesOf(tenantEtcdBase), Labels: function.TenantLabels(ns)}
}

// runTenant is RunFunction for a Tenant XR: its spec, planTenant, the
// response.
func runTenant(r *function.Request, rsp *fnv1.RunFunctionResponse, in *cpinput.ControlPlaneInput, settings platform.Settings) *fnv1.RunFunctionResponse {
	spec := &tkv1alpha1.TenantSpec{}
	if err := r.CompositeSpec(spec); err != nil {
		return function.Fatal(rsp, err)
	}
	p, errs := planTenant(r.CompositeString("metadata", "name"), spec, in, r)
	if len(errs) > 0 {
		return function.FatalList(rsp, attributeAll(settings, errs))
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err)
	}
	return rsp
}

// planTenant computes what the Tenant ns (its name is the namespace)
// composes (docs/spec.md, amendment 20): the namespace's etcd
// (EtcdCluster and cert-manager PKI, the claim path's builders keyed by
// tenantEtcdBase) and the DataStore tenantkube.tenant.<ns>; for each
// TenantCluster N of the namespace (a required list) the CSI controller's
// ClusterRoleBinding N's namespaced XR cannot compose and, with deletion
// order Usages, Usages keeping the etcd, the DataStore and the client
// Secrets it reads until N's KamajiControlPlane is gone; the etcd's
// leftovers for cleanup. Until the lists arrive the per-cluster objects
// observed are kept. It returns every bad spec value and a bad name at
// once.
func planTenant(ns string, spec *tkv1alpha1.TenantSpec, in *cpinput.ControlPlaneInput, r *function.Request) (*function.Plan, field.ErrorList) {
	var errs field.ErrorList
	errs = appendError(errs, function.ValidateDNSLabel(field.NewPath("metadata", "name"), ns, validation.DNS1123LabelMaxLength))
	spec.Default()
	errs = append(errs, spec.Validate()...)
	clusters, arrived, err := tenantClusters(r, ns)
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

	site := tenantEtcdSite(ns)
	dsName := function.Identity{Namespace: ns}.TenantDataStoreName()
	p := &function.Plan{}
	p.Add(nameEtcdCluster, buildEtcd(site, *spec.Etcd.Replicas, storage, storageClass), readyOnReady)
	p.Add(nameDataStore, buildDataStoreOf(site, dsName, function.TenantLabels(ns)), function.ReadyOnStatusReady)
	pki := buildEtcdPKIOf(site, *spec.Etcd.Replicas)
	for _, name := range sortedKeys(pki.Issuers) {
		p.Add(name, pki.Issuers[name], readyOnReady)
	}
	for _, name := range sortedKeys(pki.Certificates) {
		p.Add(name, pki.Certificates[name], readyOnReady)
	}
	present, err := composeTenantEtcdLeftovers(p, r, site)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("requiredResources"), err)}
	}

	for key, kind := range map[string]string{requiredTenantClusters: tkv1alpha1.NamespacedKind, requiredTenantClaims: tkv1alpha1.ClaimKind} {
		p.Require(key, &fnv1.ResourceSelector{
			ApiVersion: tkv1alpha1.GroupVersion.String(),
			Kind:       kind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
			Namespace:  proto.String(ns),
		})
	}
	p.Status = map[string]any{"dataStoreName": dsName}
	if !arrived {
		// Never shrink: what was composed for the clusters stays.
		var kept []string
		for name := range r.ObservedNames() {
			for _, prefix := range tenantPerClusterPrefixes {
				if strings.HasPrefix(name, prefix) {
					kept = append(kept, name)
					break
				}
			}
		}
		sort.Strings(kept)
		for _, name := range kept {
			p.Kept = append(p.Kept, function.Kept{Name: name})
		}
	} else {
		usages := in.DeletionOrder == cpinput.DeletionOrderUsages
		for _, n := range clusters {
			id := function.Identity{Name: n, Namespace: ns}
			p.Add(nameTenantCSIBindingPrefix+n, id.ControllerClusterRoleBinding(function.CSIControllerComponent, function.CSIPersistentVolumesClusterRole), function.ReadyOnceObserved)
			if usages {
				etcdUsage, dsUsage := tenantUsages(site, dsName, id)
				p.Add(nameTenantEtcdUsagePrefix+n, etcdUsage, readyOnReady)
				p.Add(nameTenantDataStoreUsagePrefix+n, dsUsage, readyOnReady)
				for _, u := range []struct{ prefix, secret string }{{nameTenantClientCAUsagePrefix, site.Names.ClientCA}, {nameTenantClientUsagePrefix, site.Names.Client}} {
					if present[u.secret] {
						p.Add(u.prefix+n, tenantUsage(id, u.secret+"-used-by-"+n, function.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: u.secret},
							fmt.Sprintf("the DataStore reaches the tenant etcd of cluster %s with this certificate until its control plane is deleted", n)), readyOnReady)
					}
				}
			}
		}
		p.Status["clusters"] = len(clusters)
	}
	setDataStoreCondition(p, r, dsName)
	return p, nil
}

// tenantUsages are the Usages in NS keeping the tenant's EtcdCluster and
// its DataStore dsName until the KamajiControlPlane of cluster id is gone:
// Kamaji deletes the cluster's keys from etcd through the DataStore when
// its control plane goes. A Usage's spec.of without a namespace means the
// Usage's own; Crossplane's usage index (internal/protection/usage
// finder.go, v2.4) keys spec.of by that namespace, which a cluster-scoped
// object's deletion never looks up, so the DataStore's Usage names the
// empty namespace explicitly.
func tenantUsages(site etcdSite, dsName string, id function.Identity) (etcdUsage, dsUsage any) {
	e := tenantUsage(id, site.Names.Cluster+"-used-by-"+id.Name,
		function.ObjectRef{APIVersion: etcdv1alpha1.GroupVersion.String(), Kind: etcdv1alpha1.EtcdClusterKind, Name: site.Names.Cluster},
		fmt.Sprintf("Kamaji deletes cluster %s's keys from the tenant etcd when its control plane is deleted", id.Name))
	d := tenantUsage(id, site.Names.Cluster+"-datastore-used-by-"+id.Name,
		function.ObjectRef{APIVersion: kamajiv1alpha1.GroupVersion.String(), Kind: kamajiv1alpha1.DataStoreKind, Name: dsName},
		fmt.Sprintf("Kamaji reaches the tenant etcd of cluster %s through this DataStore until its control plane is deleted", id.Name))
	d.Spec.Of.ResourceRef.Namespace = proto.String("")
	return e, d
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
// PersistentVolumeClaims, found by the Tenant's labels. It returns the
// PKI Secrets present.
func composeTenantEtcdLeftovers(p *function.Plan, r *function.Request, site etcdSite) (map[string]bool, error) {
	n := site.Names
	pki := map[string]bool{n.PeerCA: true, n.ClientCA: true, n.Server: true, n.Peer: true, n.Client: true}
	id := function.Identity{Namespace: site.Namespace}
	secrets, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "Secret"},
		function.CleanupOptions{Labels: site.Labels, Keep: func(name string) bool { return pki[name] }})
	if err != nil {
		return nil, err
	}
	if _, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		// A StatefulSet names its claims <template>-<StatefulSet>-<ordinal>.
		function.CleanupOptions{Labels: site.Labels, Keep: func(name string) bool { return strings.Contains(name, "-"+n.Cluster+"-") }}); err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, s := range secrets.Present {
		present[s] = true
	}
	return present, nil
}

// tenantClusters are the sorted names of the TenantClusters of namespace
// ns Crossplane sent (requiredTenantClusters) that compose no
// ClusterRoleBinding of their own, and whether it answered both
// requirements. Left out: names that are no cluster name (a TenantCluster's
// own function refuses them), objects of other namespaces, and a
// TenantCluster N beside a claim N (requiredTenantClaims) that is not
// strictly older: the older of the two composes, a tie goes to the claim
// (docs/spec.md, amendment 20), and the claim's XR composes the same
// ClusterRoleBinding.
func tenantClusters(r *function.Request, ns string) ([]string, bool, error) {
	items, arrived, err := function.Required[metav1.PartialObjectMetadata](r, requiredTenantClusters)
	if err != nil {
		return nil, arrived, field.InternalError(field.NewPath("requiredResources", requiredTenantClusters), fmt.Errorf("cannot decode the TenantClusters of %s: %w", ns, err))
	}
	claims, claimsArrived, err := function.Required[metav1.PartialObjectMetadata](r, requiredTenantClaims)
	if err != nil {
		return nil, arrived, field.InternalError(field.NewPath("requiredResources", requiredTenantClaims), fmt.Errorf("cannot decode the claims of %s: %w", ns, err))
	}
	claimed := map[string]metav1.Time{}
	for _, c := range claims {
		if c.Namespace == ns {
			claimed[c.Name] = c.CreationTimestamp
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		n := it.Name
		if it.Namespace != ns || seen[n] || function.ValidateDNSLabel(field.NewPath("metadata", "name"), n, function.MaxClusterNameLength) != nil {
			continue
		}
		if c, ok := claimed[n]; ok && !it.CreationTimestamp.Before(&c) {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	sort.Strings(out)
	return out, arrived && claimsArrived, nil
}

// setDataStoreCondition sets DataStoreReady from the observed EtcdCluster
// and DataStore dsName.
func setDataStoreCondition(p *function.Plan, r *function.Request, dsName string) {
	switch etcd, _, _ := r.ObservedCondition(nameEtcdCluster, "Ready"); {
	case etcd != "True":
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, false, tkv1alpha1.ReasonWaitingForEtcd, "the namespace's etcd cluster is not ready yet")
	case !r.ObservedBool(nameDataStore, "status", "ready"):
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, false, tkv1alpha1.ReasonWaitingForDataStore, "the Kamaji DataStore "+dsName+" is not ready yet")
	default:
		p.SetCondition(tkv1alpha1.ConditionDataStoreReady, true, tkv1alpha1.ReasonDataStoreAvailable, "the namespace's clusters store their state through the DataStore "+dsName)
	}
}

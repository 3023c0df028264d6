package test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	workersinput "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// rbacFile is the ClusterRole the platform team applies so that Crossplane
// may compose what the functions compose (docs/platform-guide.md, Prerequisites).
const rbacFile = "deploy/crossplane-rbac.yaml"

// manageVerbs are the verbs Crossplane needs on a kind it composes: it
// reads, watches, creates, applies (patch), updates and deletes it.
var manageVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// readVerbs are the verbs Crossplane needs on a kind it only fetches as a
// required resource.
var readVerbs = []string{"get", "list", "watch"}

// builtinPlurals are the resource plurals of the kinds that have no CRD in
// ../shared/crds: the built-in kinds the functions compose, and the
// KubeVirt, CDI and CSI-snapshot kinds they compose for cleanup or read.
var builtinPlurals = map[schema.GroupKind]string{
	{Group: "", Kind: "ConfigMap"}:                                                 "configmaps",
	{Group: "", Kind: "Secret"}:                                                    "secrets",
	{Group: "", Kind: "PersistentVolumeClaim"}:                                     "persistentvolumeclaims",
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmChart"}:                         "helmcharts",
	{Group: "", Kind: "Service"}:                                                   "services",
	{Group: "", Kind: "ServiceAccount"}:                                            "serviceaccounts",
	{Group: "", Kind: "Namespace"}:                                                 "namespaces",
	{Group: "", Kind: "ResourceQuota"}:                                             "resourcequotas",
	{Group: "apps", Kind: "Deployment"}:                                            "deployments",
	{Group: "batch", Kind: "Job"}:                                                  "jobs",
	{Group: "networking.k8s.io", Kind: "Ingress"}:                                  "ingresses",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                             "roles",
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                      "rolebindings",
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:               "clusterrolebindings",
	{Group: "cdi.kubevirt.io", Kind: "DataVolume"}:                                 "datavolumes",
	{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}:                     "volumesnapshots",
	{Group: "instancetype.kubevirt.io", Kind: "VirtualMachineClusterInstancetype"}: "virtualmachineclusterinstancetypes",
	{Group: "tenantkube.io", Kind: "TenantCluster"}:                                "tenantclusters",
	{Group: "tenantkube.io", Kind: "KubernetesCluster"}:                            "kubernetesclusters",
	{Group: "tenantkube.io", Kind: "XKubernetesCluster"}:                           "xkubernetesclusters",
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                          "apiservices",
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:              "customresourcedefinitions",
}

// grant is one permission: a verb on a resource (plural, or
// plural/subresource) of an API group ("" for the core group).
type grant struct {
	Group, Resource, Verb string
}

// String renders g as "<group> <resource> <verb>", the core group as
// "core".
func (g grant) String() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	return group + " " + g.Resource + " " + g.Verb
}

// needs maps each permission Crossplane needs to where the need comes from
// (the first few sources, for the failure message).
type needs map[grant][]string

// add records that source needs verbs on resource of group.
func (n needs) add(group, resource, source string, verbs ...string) {
	for _, v := range verbs {
		g := grant{Group: group, Resource: resource, Verb: v}
		if len(n[g]) < 3 {
			n[g] = append(n[g], source)
		}
	}
}

// missing lists, sorted, each permission of n that granted lacks, with its
// sources.
func (n needs) missing(granted map[grant]bool) []string {
	var out []string
	for g, src := range n {
		if !granted[g] {
			out = append(out, g.String()+"  (needed by "+strings.Join(src, "; ")+")")
		}
	}
	sort.Strings(out)
	return out
}

// controllerGrants are the permissions of the controllers' ClusterRoles
// (deploy/crossplane-rbac.yaml), bound per tenant in its namespace by the
// RoleBindings the workers function composes, or cluster-wide (read only)
// by its ClusterRoleBindings. A permission added to a
// ClusterRole must be added here too, with the reason in the YAML: this
// table is what a widening is measured against.
var controllerGrants = map[string][]string{
	// cluster-autoscaler, Cluster API provider: node groups of the tenant.
	"tenantkube:cluster-autoscaler": expand([]string{"cluster.x-k8s.io"},
		[]string{"machinedeployments", "machinedeployments/scale", "machines", "machinesets", "machinepools"}, "get", "list", "watch", "update").
		and([]string{"infrastructure.cluster.x-k8s.io"}, []string{"kubevirtmachinetemplates"}, "get", "list", "watch", "update").list(),
	// KubeVirt cloud controller manager: LoadBalancer Services.
	"tenantkube:kccm": expand([]string{""}, []string{"services"}, manageVerbs...).
		and([]string{"discovery.k8s.io"}, []string{"endpointslices"}, manageVerbs...).
		and([]string{"kubevirt.io"}, []string{"virtualmachines", "virtualmachineinstances"}, "get", "list", "watch", "update").list(),
	// KubeVirt CSI controller: volumes of the tenant's VMs.
	"tenantkube:kcsi-controller": expand([]string{"cdi.kubevirt.io"}, []string{"datavolumes"}, "get", "list", "watch", "create", "delete").
		and([]string{""}, []string{"persistentvolumeclaims"}, "get", "list", "watch", "patch", "update").
		and([]string{"kubevirt.io"}, []string{"virtualmachineinstances", "virtualmachines"}, "get", "list", "watch").
		and([]string{"subresources.kubevirt.io"}, []string{"virtualmachineinstances/addvolume", "virtualmachineinstances/removevolume", "virtualmachines/addvolume", "virtualmachines/removevolume"}, "update").
		and([]string{"snapshot.storage.k8s.io"}, []string{"volumesnapshots"}, "get", "list", "watch", "create", "delete").list(),
	// KubeVirt CSI controller, cluster-wide: the infra PV of a claim it
	// expands, by name (kubevirt/csi-driver EnsureControllerResize: Get
	// only, no list or watch).
	"tenantkube:kcsi-persistentvolumes": expand([]string{""}, []string{"persistentvolumes"}, "get").list(),
}

// grantSet is a set of grants, built rule by rule.
type grantSet map[grant]bool

func expand(groups, resources []string, verbs ...string) grantSet {
	return grantSet{}.and(groups, resources, verbs...)
}

func (s grantSet) and(groups, resources []string, verbs ...string) grantSet {
	for _, g := range groups {
		for _, r := range resources {
			for _, v := range verbs {
				s[grant{Group: g, Resource: r, Verb: v}] = true
			}
		}
	}
	return s
}

func (s grantSet) list() []string { return sortedGrants(s) }

// aggregatedName is the ClusterRole aggregated into Crossplane's.
const aggregatedName = "tenantkube:aggregate-to-crossplane"

// TestRBACClusterRole checks deploy/crossplane-rbac.yaml against what the
// functions compose and read, so that it cannot fall behind them nor grant
// more:
//
//   - it holds the ClusterRole aggregated into Crossplane's (aggregation
//     label) and the controllers' ClusterRoles (no aggregation label: never
//     Crossplane's own), nothing else;
//   - the aggregated ClusterRole has no wildcard, non-resource URL, or
//     escalate or impersonate verb, no permission on Roles or ClusterRoles,
//     and exactly one rule with resourceNames: bind on exactly the
//     ClusterRoles the composed RoleBindings and ClusterRoleBindings name,
//     which are exactly the controllers' ClusterRoles of the file;
//   - every object of every golden render (test/testdata/**/*.golden.yaml,
//     the XR itself excepted) is covered with the management verbs (plurals
//     from the CRDs in ../shared/crds, or builtinPlurals); no render
//     composes a Role or ClusterRole, every RoleBinding binds a ClusterRole
//     to a ServiceAccount of its namespace, and every ClusterRoleBinding,
//     named tenantkube:<component>:<NS>.<N>, binds a read-only ClusterRole
//     (get, list, watch) that no RoleBinding binds to the component's
//     ServiceAccount N-<component> of NS;
//   - the kinds composed for cleanup have the management verbs, and the
//     kinds fetched as required resources the read verbs;
//   - the aggregated ClusterRole grants nothing beyond all of the above,
//     and each controller ClusterRole exactly controllerGrants.
func TestRBACClusterRole(t *testing.T) {
	root := repoRoot(t)
	aggregated, controllers, _ := loadRBAC(t, filepath.Join(root, rbacFile))
	granted, bindable := grantsOf(t, aggregated)

	plurals := crdPlurals(t, filepath.Join(root, "..", "shared", "crds"))
	for gk, p := range builtinPlurals {
		if crd, ok := plurals[gk]; ok && crd != p {
			t.Fatalf("%s: builtinPlurals says %q, its CRD %q", gk, p, crd)
		}
		plurals[gk] = p
	}
	for _, x := range packageXRDs(t, root) {
		plurals[schema.GroupKind{Group: x.group, Kind: x.kind}] = x.plural
		if x.claimKind != "" {
			plurals[schema.GroupKind{Group: x.group, Kind: x.claimKind}] = x.claimPlural
		}
	}
	composite := packageCompositeKinds(t, root)
	objects := goldenObjects(t, filepath.Join(root, "test", "testdata"), composite)

	fromObjects := needs{}
	bound, clusterBound := map[string]bool{}, map[string]bool{}
	for _, o := range objects {
		gvk := o.obj.GroupVersionKind()
		src := o.file + ": " + gvk.Kind + " " + o.obj.GetName()
		plural, ok := plurals[gvk.GroupKind()]
		if !ok {
			t.Errorf("%s: no resource plural known for %s (add its CRD to ../shared/crds or the kind to builtinPlurals)", src, gvk.GroupKind())
			continue
		}
		fromObjects.add(gvk.Group, plural, src, manageVerbs...)
		switch gvk.GroupKind() {
		case schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}:
			t.Errorf("%s: a composed %s; permissions come from the ClusterRoles in %s", src, gvk.Kind, rbacFile)
		case schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:
			var crb rbacv1.ClusterRoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &crb); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.APIGroup != rbacv1.GroupName {
				t.Errorf("%s: binds %s %s, want one of the ClusterRoles of %s", src, crb.RoleRef.Kind, crb.RoleRef.Name, rbacFile)
			}
			// The ServiceAccount is in NS (a TenantCluster's) or in the
			// cluster's management namespace (a claim's).
			component, n, ns := crb.Labels["app.kubernetes.io/component"], crb.Labels["tenantkube.io/cluster"], crb.Labels["tenantkube.io/namespace"]
			if len(crb.Subjects) != 1 || crb.Subjects[0].Kind != rbacv1.ServiceAccountKind || crb.Subjects[0].Name != n+"-"+component {
				t.Errorf("%s: subjects %+v, want only the ServiceAccount %s-%s", src, crb.Subjects, n, component)
			} else if want := "tenantkube:" + component + ":" + ns + "." + n; crb.Name != want || component == "" || n == "" || ns == "" {
				t.Errorf("%s: named %q, want %q (tenantkube:<component>:<NS>.<N>)", src, crb.Name, want)
			} else if sub := crb.Subjects[0].Namespace; sub != ns && sub != fntest.ManagementNamespace(ns, n) {
				t.Errorf("%s: ServiceAccount in %q, want the namespace %q of label tenantkube.io/namespace or its cluster's management namespace", src, sub, ns)
			}
			clusterBound[crb.RoleRef.Name] = true
		case schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}:
			var rb rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &rb); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.APIGroup != rbacv1.GroupName {
				t.Errorf("%s: binds %s %s, want one of the ClusterRoles of %s", src, rb.RoleRef.Kind, rb.RoleRef.Name, rbacFile)
			}
			mgmt := fntest.ManagementNamespace(rb.Namespace, rb.Labels["tenantkube.io/cluster"])
			for _, sub := range rb.Subjects {
				if sub.Kind != rbacv1.ServiceAccountKind || (sub.Namespace != rb.Namespace && sub.Namespace != mgmt) {
					t.Errorf("%s: subject %+v is not a ServiceAccount of the binding's namespace %s or its cluster's management namespace %s", src, sub, rb.Namespace, mgmt)
				}
			}
			bound[rb.RoleRef.Name] = true
		}
	}
	for name := range clusterBound {
		if bound[name] {
			t.Errorf("ClusterRole %s is bound both in a namespace and cluster-wide", name)
		}
		for _, g := range controllerGrants[name] {
			if verb := g[strings.LastIndex(g, " ")+1:]; !strings.Contains(" get list watch ", " "+verb+" ") {
				t.Errorf("ClusterRole %s is bound cluster-wide and grants %q: cluster-wide only reads", name, g)
			}
		}
		bound[name] = true
	}
	if len(objects) == 0 || len(bound) == 0 {
		t.Fatalf("the golden renders hold %d composed objects and bind %d ClusterRoles: nothing to check", len(objects), len(bound))
	}

	// Kinds the functions compose, name and namespace only, so that what
	// the tenant's controllers created in NS is deleted with the cluster
	// (internal/function/cleanup.go). They are listed as required
	// resources first, so list and watch are needed too.
	cleanup := []struct{ apiVersion, kind, source string }{
		{"v1", "Secret", "control-plane: etcd PKI Secrets (composeEtcdLeftovers)"},
		{"v1", "PersistentVolumeClaim", "control-plane: etcd members' claims (composeEtcdLeftovers)"},
		{"source.toolkit.fluxcd.io/v1", "HelmChart", "addons: HelmCharts of the releases (HelmChartKind)"},
		{"snapshot.storage.k8s.io/v1", "VolumeSnapshot", "workers input cleanupKinds where CSI snapshots are enabled (docs/architecture.md, Deletion order)"},
	}
	for _, k := range workersinput.DefaultCleanupKinds() {
		cleanup = append(cleanup, struct{ apiVersion, kind, source string }{k.APIVersion, k.Kind, "workers: DefaultCleanupKinds"})
	}
	// Kinds the functions read as required resources. Crossplane's RBAC
	// manager grants Crossplane every verb on the XRDs' own kinds
	// (ClusterRole crossplane:composite:<XRD>:aggregate-to-crossplane)
	// when it runs; the claim and the TenantCluster, which the name clash
	// reads, are granted here too so the reads do not depend on it
	// (docs/platform-guide.md, RBAC).
	required := []struct{ apiVersion, kind, source string }{
		{"instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype", "workers: instance types of node groups"},
		{"cluster.x-k8s.io/v1beta2", "MachineSet", "workers: MachineSets still using a machine template"},
		{"cluster.x-k8s.io/v1beta2", "Machine", "workers: kubelet versions of the node groups (requirementMachines)"},
		{"v1", "ResourceQuota", "workers: capacity pre-flight (requirementResourceQuotas)"},
		{"v1", "Secret", "control-plane: the admin kubeconfig Secret"},
		{"v1", "Namespace", "control-plane, addons: the tenant-host annotation (RequireNamespace)"},
		{"tenantkube.io/v1alpha1", "TenantCluster", "control-plane: the TenantCluster of a claim's name (name clash, requiredSameNameTenantCluster)"},
		{"tenantkube.io/v1alpha1", "KubernetesCluster", "control-plane: the claim of a TenantCluster's name, and a claim's XR's own claim (name clash, requiredSameNameClaim)"},
		{"tenantkube.io/v1alpha1", "XKubernetesCluster", "control-plane: the XR without a claim of a TenantCluster's name (name clash, requiredSameNameXR)"},
		{"controlplane.cluster.x-k8s.io/v1alpha2", "KamajiControlPlane", "control-plane: the control planes of a Tenant's namespace (requiredTenantControlPlanes)"},
		// Crossplane's ExistingRequiredResourcesFetcher gets a required
		// resource by name through its cached client (crossplane v2.4.0
		// internal/xfn/required_resources.go:217; cmd/crossplane/core/core.go:408-420 caches unstructured Gets),
		// whose informer lists and watches: the read verbs.
		{"apiregistration.k8s.io/v1", "APIService", "control-plane: the APIService of every API the pipeline composes (function.PlatformAPIs, Composition bootstrap requirements)"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", "control-plane: the CRD of a kind checked by its CRD (function.PlatformAPIs, Composition bootstrap requirements)"},
	}
	fromCleanup, fromRequired := needs{}, needs{}
	for _, c := range []struct {
		kinds []struct{ apiVersion, kind, source string }
		verbs []string
		into  needs
	}{
		{cleanup, manageVerbs, fromCleanup},
		{required, readVerbs, fromRequired},
	} {
		for _, k := range c.kinds {
			gv, err := schema.ParseGroupVersion(k.apiVersion)
			if err != nil {
				t.Fatalf("%s %s: %v", k.apiVersion, k.kind, err)
			}
			plural, ok := plurals[gv.WithKind(k.kind).GroupKind()]
			if !ok {
				t.Fatalf("no resource plural known for %s %s (add it to builtinPlurals)", k.apiVersion, k.kind)
			}
			c.into.add(gv.Group, plural, k.source, c.verbs...)
		}
	}

	for _, c := range []struct {
		name  string
		needs needs
	}{
		{"composed objects in the golden renders", fromObjects},
		{"kinds composed for cleanup", fromCleanup},
		{"kinds read as required resources", fromRequired},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.needs) == 0 {
				t.Fatal("nothing needed: the source of this check is empty")
			}
			if m := c.needs.missing(granted); len(m) > 0 {
				t.Errorf("%s does not grant (group resource verb):\n  %s", rbacFile, strings.Join(m, "\n  "))
			}
		})
	}

	t.Run("nothing beyond what is needed", func(t *testing.T) {
		all := map[grant]bool{}
		for _, n := range []needs{fromObjects, fromCleanup, fromRequired} {
			for g := range n {
				all[g] = true
			}
		}
		if diff := cmp.Diff(sortedGrants(all), sortedGrants(granted)); diff != "" {
			t.Errorf("%s grants differ from what the functions need (-needed +granted):\n%s", rbacFile, diff)
		}
	})

	t.Run("bind exactly the controllers' ClusterRoles", func(t *testing.T) {
		defined := map[string]bool{}
		for name := range controllers {
			defined[name] = true
		}
		if diff := cmp.Diff(sortedKeys(bound), sortedKeys(bindable)); diff != "" {
			t.Errorf("ClusterRoles Crossplane may bind vs those the composed bindings name (-bound +bindable):\n%s", diff)
		}
		if diff := cmp.Diff(sortedKeys(bound), sortedKeys(defined)); diff != "" {
			t.Errorf("ClusterRoles the composed bindings name vs those %s defines (-bound +defined):\n%s", rbacFile, diff)
		}
	})

	t.Run("controllers' ClusterRoles", func(t *testing.T) {
		got := map[string][]string{}
		for name, cr := range controllers {
			got[name] = controllerRoleGrants(t, cr)
		}
		if diff := cmp.Diff(controllerGrants, got); diff != "" {
			t.Errorf("controller ClusterRoles of %s (-controllerGrants +file):\n%s", rbacFile, diff)
		}
	})
}

// sortedKeys returns the keys of set, sorted.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortedGrants returns the grants of set as sorted strings.
func sortedGrants(set map[grant]bool) []string {
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g.String())
	}
	sort.Strings(out)
	return out
}

// loadRBAC reads path (unknown fields rejected): the aggregated ClusterRole,
// the controllers' ClusterRoles by name, and the tenant-facing ClusterRoles
// (tenantRoles) by name. It fails on any other object.
func loadRBAC(t *testing.T, path string) (aggregated *rbacv1.ClusterRole, controllers, tenant map[string]*rbacv1.ClusterRole) {
	t.Helper()
	controllers, tenant = map[string]*rbacv1.ClusterRole{}, map[string]*rbacv1.ClusterRole{}
	for i, doc := range yamlDocs(t, path) {
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &cr); err != nil {
			t.Fatalf("%s document %d: %v", path, i, err)
		}
		if cr.APIVersion != "rbac.authorization.k8s.io/v1" || cr.Kind != "ClusterRole" {
			t.Fatalf("%s document %d: %s %s, want only ClusterRoles", path, i, cr.APIVersion, cr.Kind)
		}
		if cr.AggregationRule != nil {
			t.Errorf("%s %s: has an aggregationRule; it must list its rules", path, cr.Name)
		}
		if cr.Name == aggregatedName {
			want := map[string]string{"rbac.crossplane.io/aggregate-to-crossplane": "true", "app.kubernetes.io/managed-by": "tenantkube"}
			if diff := cmp.Diff(want, cr.Labels); diff != "" {
				t.Errorf("%s %s labels (-want +got):\n%s", path, cr.Name, diff)
			}
			aggregated = &cr
			continue
		}
		if tr, ok := tenantRoles[cr.Name]; ok {
			if diff := cmp.Diff(tr.labels, cr.Labels); diff != "" {
				t.Errorf("%s %s labels (-want +got):\n%s", path, cr.Name, diff)
			}
			tenant[cr.Name] = &cr
			continue
		}
		if diff := cmp.Diff(map[string]string{"app.kubernetes.io/managed-by": "tenantkube"}, cr.Labels); diff != "" {
			t.Errorf("%s %s labels (-want +got): a controller's ClusterRole never aggregates into Crossplane's nor Kubernetes' roles:\n%s", path, cr.Name, diff)
		}
		if !strings.HasPrefix(cr.Name, "tenantkube:") {
			t.Errorf("%s: ClusterRole %s: names start with tenantkube:", path, cr.Name)
		}
		controllers[cr.Name] = &cr
	}
	if aggregated == nil {
		t.Fatalf("%s has no ClusterRole %s", path, aggregatedName)
	}
	return aggregated, controllers, tenant
}

// editVerbs are the verbs Kubernetes' built-in edit ClusterRole grants on
// the namespaced kinds a namespace's editors manage (its bootstrap policy,
// e.g. on Deployments and ConfigMaps).
var editVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// tenantRoles are the tenant-facing ClusterRoles of rbacFile: the labels
// that aggregate each into Kubernetes' built-in admin, edit or view
// ClusterRole, and the verbs each grants on the namespaced kinds of the
// package's XRDs.
var tenantRoles = map[string]struct {
	labels map[string]string
	verbs  []string
}{
	"tenantkube:aggregate-to-edit": {
		labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"app.kubernetes.io/managed-by":                 "tenantkube",
		},
		verbs: editVerbs,
	},
	"tenantkube:aggregate-to-view": {
		labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-view": "true",
			"app.kubernetes.io/managed-by":                "tenantkube",
		},
		verbs: readVerbs,
	},
}

// TestRBACTenantRoles: the tenant-facing ClusterRoles of rbacFile grant
// exactly their verbs on the namespaced kinds of the package's XRDs — the
// claim KubernetesCluster and the TenantCluster (a tenant with
// only namespace-scoped RBAC creates, reads and deletes its clusters) —
// and nothing on a cluster-scoped kind (XKubernetesCluster, Tenant), on a
// status or finalizers subresource, or by wildcard.
func TestRBACTenantRoles(t *testing.T) {
	root := repoRoot(t)
	_, _, tenant := loadRBAC(t, filepath.Join(root, rbacFile))
	var namespaced []string
	for _, x := range packageXRDs(t, root) {
		if x.claimPlural != "" {
			namespaced = append(namespaced, x.claimPlural)
		}
		if x.namespaced {
			namespaced = append(namespaced, x.plural)
		}
	}
	sort.Strings(namespaced)
	if diff := cmp.Diff([]string{"kubernetesclusters", "tenantclusters"}, namespaced); diff != "" {
		t.Fatalf("namespaced kinds of the package's XRDs (-want +got):\n%s", diff)
	}
	for name, tr := range tenantRoles {
		cr, ok := tenant[name]
		if !ok {
			t.Errorf("%s has no ClusterRole %s", rbacFile, name)
			continue
		}
		want := expand([]string{"tenantkube.io"}, namespaced, tr.verbs...).list()
		if diff := cmp.Diff(want, controllerRoleGrants(t, cr)); diff != "" {
			t.Errorf("%s %s grants (-want +got):\n%s", rbacFile, name, diff)
		}
	}
}

// grantsOf returns every permission cr's rules grant but bind, and the
// ClusterRoles it may bind. It fails the test on a rule that grants more
// than it names: wildcards, non-resource URLs, resourceNames anywhere but
// the one bind rule on clusterroles, the escalate and impersonate verbs, any
// permission on Roles.
func grantsOf(t *testing.T, cr *rbacv1.ClusterRole) (map[grant]bool, map[string]bool) {
	t.Helper()
	if len(cr.Rules) == 0 {
		t.Fatalf("%s has no rules", rbacFile)
	}
	out, bindable := map[grant]bool{}, map[string]bool{}
	for i, r := range cr.Rules {
		where := fmt.Sprintf("%s %s rules[%d]", rbacFile, cr.Name, i)
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("%s: nonResourceURLs are not used", where)
		}
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 {
			t.Errorf("%s: needs apiGroups, resources and verbs", where)
		}
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
			for _, s := range list {
				if strings.Contains(s, "*") {
					t.Errorf("%s: wildcard %q", where, s)
				}
			}
		}
		bindRule := cmp.Equal(r.APIGroups, []string{rbacv1.GroupName}) && cmp.Equal(r.Resources, []string{"clusterroles"}) && cmp.Equal(r.Verbs, []string{"bind"})
		switch {
		case bindRule && len(r.ResourceNames) > 0:
			for _, n := range r.ResourceNames {
				bindable[n] = true
			}
			continue
		case len(r.ResourceNames) > 0:
			t.Errorf("%s: resourceNames only on the bind rule (clusterroles, bind)", where)
		}
		for _, v := range r.Verbs {
			switch v {
			case "escalate", "bind", "impersonate":
				t.Errorf("%s: verb %q: Crossplane may only bind the controllers' ClusterRoles, by name", where, v)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == rbacv1.GroupName && (res == "roles" || res == "clusterroles") {
					t.Errorf("%s: %s: Crossplane creates no Role or ClusterRole; the controllers' permissions are ClusterRoles of this file", where, res)
				}
				for _, v := range r.Verbs {
					out[grant{Group: g, Resource: res, Verb: v}] = true
				}
			}
		}
	}
	return out, bindable
}

// controllerRoleGrants returns the sorted grants of a controller's
// ClusterRole, failing on wildcards, resourceNames, non-resource URLs and
// the escalate, bind and impersonate verbs.
func controllerRoleGrants(t *testing.T, cr *rbacv1.ClusterRole) []string {
	t.Helper()
	set := grantSet{}
	for i, r := range cr.Rules {
		where := fmt.Sprintf("%s %s rules[%d]", rbacFile, cr.Name, i)
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("%s: resourceNames and nonResourceURLs are not used", where)
		}
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			for _, s := range list {
				if strings.Contains(s, "*") {
					t.Errorf("%s: wildcard %q", where, s)
				}
			}
		}
		for _, v := range r.Verbs {
			if v == "escalate" || v == "bind" || v == "impersonate" {
				t.Errorf("%s: verb %q", where, v)
			}
		}
		set.and(r.APIGroups, r.Resources, r.Verbs...)
	}
	return set.list()
}

// crdPlurals returns spec.names.plural of every CustomResourceDefinition in
// the YAML files under dir, recursively, by group and kind.
func crdPlurals(t *testing.T, dir string) map[schema.GroupKind]string {
	t.Helper()
	out := map[schema.GroupKind]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		for _, doc := range yamlDocs(t, path) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(doc, &crd); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			out[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd.Spec.Names.Plural
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no CustomResourceDefinition under %s", dir)
	}
	return out
}

// packageXRD is what the RBAC checks read of one XRD of the package.
type packageXRD struct {
	file string
	// Namespaced: a v2 XRD's scope (default Namespaced); a v1 XRD's
	// composite is cluster-scoped.
	namespaced          bool
	group, kind, plural string
	// claimKind and claimPlural are empty without claimNames.
	claimKind, claimPlural string
}

// packageXRDs reads every XRD of the package (package/xrd*.yaml: the
// claim's, the namespaced TenantCluster's, the Tenant's).
func packageXRDs(t *testing.T, root string) []packageXRD {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "package", "xrd*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("package/xrd*.yaml: %d files, want the claim's and the TenantCluster's at least", len(files))
	}
	var out []packageXRD
	for _, path := range files {
		docs := yamlDocs(t, path)
		if len(docs) != 1 {
			t.Fatalf("%s: want one YAML document, got %d", path, len(docs))
		}
		var xrd struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				Group      string `json:"group"`
				Scope      string `json:"scope"`
				Names      struct{ Kind, Plural string }
				ClaimNames *struct{ Kind, Plural string } `json:"claimNames"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(docs[0], &xrd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if xrd.Spec.Group == "" || xrd.Spec.Names.Kind == "" || xrd.Spec.Names.Plural == "" {
			t.Fatalf("%s: no spec.group or spec.names", path)
		}
		x := packageXRD{
			file: filepath.Base(path), group: xrd.Spec.Group, kind: xrd.Spec.Names.Kind, plural: xrd.Spec.Names.Plural,
			namespaced: xrd.APIVersion == "apiextensions.crossplane.io/v2" && (xrd.Spec.Scope == "" || xrd.Spec.Scope == "Namespaced"),
		}
		if xrd.Spec.ClaimNames != nil {
			x.claimKind, x.claimPlural = xrd.Spec.ClaimNames.Kind, xrd.Spec.ClaimNames.Plural
		}
		out = append(out, x)
	}
	return out
}

// packageCompositeKinds are the composite and claim kinds of every XRD of
// the package.
func packageCompositeKinds(t *testing.T, root string) map[schema.GroupKind]bool {
	t.Helper()
	out := map[schema.GroupKind]bool{}
	for _, x := range packageXRDs(t, root) {
		out[schema.GroupKind{Group: x.group, Kind: x.kind}] = true
		if x.claimKind != "" {
			out[schema.GroupKind{Group: x.group, Kind: x.claimKind}] = true
		}
	}
	return out
}

// goldenObject is one composed object of a golden render.
type goldenObject struct {
	file string // relative to the testdata directory
	obj  *unstructured.Unstructured
}

// goldenObjects returns the composed objects of every *.golden.yaml under
// dir: each render's documents but the XR, which comes first and must be
// of a composite kind, and any other object of a composite kind. A golden
// holding the engine's error message (a Fatal result) has no objects.
func goldenObjects(t *testing.T, dir string, composite map[schema.GroupKind]bool) []goldenObject {
	t.Helper()
	var out []goldenObject
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".golden.yaml") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(data, []byte("---")) {
			return nil // the message of a Fatal result, not a YAML stream
		}
		files++
		for i, doc := range yamlDocs(t, path) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				return fmt.Errorf("%s document %d: %w", rel, i, err)
			}
			gk := u.GroupVersionKind().GroupKind()
			if gk.Kind == "" {
				return fmt.Errorf("%s document %d has no kind", rel, i)
			}
			if i == 0 && !composite[gk] {
				return fmt.Errorf("%s: the first document is a %s, not the composite resource", rel, gk)
			}
			if !composite[gk] {
				out = append(out, goldenObject{file: rel, obj: u})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no golden render under %s", dir)
	}
	return out
}

// yamlDocs returns the non-empty YAML documents of the file at path.
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v != nil {
			out = append(out, doc)
		}
	}
}

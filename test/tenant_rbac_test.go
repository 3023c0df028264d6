package test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"
)

const (
	// tenantRBACFile holds the ClusterRole a platform binds to a tenant in
	// its namespace.
	tenantRBACFile = "deploy/tenant-rbac.yaml"
	tenantRoleName = "tenantkube:tenant"
	// bootstrapRolesFile is Kubernetes' own admin, edit and view, the
	// reference tenantkube:tenant is compared with.
	bootstrapRolesFile = "test/testdata/rbac/kubernetes-bootstrap-roles.yaml"
)

// writeVerbs are the verbs that change an object.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// podRunningKinds are the kinds whose objects make pods (or VMs, which can
// mount a ServiceAccount's token as a disk) run under a ServiceAccount the
// object names: writing one runs code with that ServiceAccount's token.
var podRunningKinds = []schema.GroupResource{
	{Group: "", Resource: "pods"},
	{Group: "", Resource: "replicationcontrollers"},
	{Group: "apps", Resource: "deployments"},
	{Group: "apps", Resource: "replicasets"},
	{Group: "apps", Resource: "statefulsets"},
	{Group: "apps", Resource: "daemonsets"},
	{Group: "batch", Resource: "jobs"},
	{Group: "batch", Resource: "cronjobs"},
	{Group: "kubevirt.io", Resource: "virtualmachines"},
	{Group: "kubevirt.io", Resource: "virtualmachineinstances"},
	{Group: "kubevirt.io", Resource: "virtualmachineinstancereplicasets"},
	{Group: "pool.kubevirt.io", Resource: "virtualmachinepools"},
	{Group: "cluster.x-k8s.io", Resource: "machinedeployments"},
	{Group: "cluster.x-k8s.io", Resource: "machinesets"},
	{Group: "cluster.x-k8s.io", Resource: "machines"},
	{Group: "infrastructure.cluster.x-k8s.io", Resource: "kubevirtmachinetemplates"},
	{Group: "infrastructure.cluster.x-k8s.io", Resource: "kubevirtmachines"},
}

// move is one request that would hand its maker a composed
// ServiceAccount's permissions, as the RBAC rule it needs and the namespace
// the request is made in ("" for a cluster-scoped resource).
type move struct {
	name      string
	rule      rbacv1.PolicyRule
	namespace string
}

// movesToServiceAccount lists every request that reaches the permissions of
// ServiceAccount name in namespace ns: acting as it (impersonation of the
// ServiceAccount, its user name or its groups), minting its token (the
// TokenRequest API, or a Secret of type service-account-token the token
// controller fills), running code as it (creating or changing anything
// that runs pods, exec, attach and port-forward into its pods, ephemeral
// containers), and binding or widening roles.
func movesToServiceAccount(ns, name string) []move {
	user := "system:serviceaccount:" + ns + ":" + name
	r := func(group, resource, verb string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: names}
	}
	// Users, groups, uids, user extras and ClusterRoles are cluster-scoped;
	// everything else is asked for in the ServiceAccount's namespace (a
	// pod runs only as a ServiceAccount of its own namespace, the token
	// controller fills a Secret only for one of the Secret's).
	out := []move{
		{"impersonate ServiceAccount " + ns + "/" + name, r("", "serviceaccounts", "impersonate", name), ns},
		{"impersonate user " + user, r("", "users", "impersonate", user), ""},
		{"impersonate group system:serviceaccounts:" + ns, r("", "groups", "impersonate", "system:serviceaccounts:"+ns), ""},
		{"impersonate group system:serviceaccounts", r("", "groups", "impersonate", "system:serviceaccounts"), ""},
		{"impersonate uids", r("authentication.k8s.io", "uids", "impersonate"), ""},
		{"impersonate userextras", r("authentication.k8s.io", "userextras/authentication.kubernetes.io/credential-id", "impersonate"), ""},
		{"request a token of " + name, r("", "serviceaccounts/token", "create", name), ns},
		{"create a token Secret for " + name, r("", "secrets", "create"), ns},
		{"change the ServiceAccount " + name, r("", "serviceaccounts", "update", name), ns},
		{"bind a ClusterRole", r("rbac.authorization.k8s.io", "clusterroles", "bind"), ""},
		{"escalate a ClusterRole", r("rbac.authorization.k8s.io", "clusterroles", "escalate"), ""},
		{"bind a Role", r("rbac.authorization.k8s.io", "roles", "bind"), ns},
		{"create a RoleBinding", r("rbac.authorization.k8s.io", "rolebindings", "create"), ns},
	}
	for _, sub := range []string{"exec", "attach", "portforward", "proxy"} {
		for _, v := range []string{"create", "get"} {
			out = append(out, move{"pods/" + sub + " " + v, r("", "pods/"+sub, v), ns})
		}
	}
	for _, v := range []string{"update", "patch"} {
		out = append(out, move{"pods/ephemeralcontainers " + v, r("", "pods/ephemeralcontainers", v), ns})
	}
	for _, k := range podRunningKinds {
		for _, v := range []string{"create", "update", "patch"} {
			out = append(out, move{v + " " + k.String(), r(k.Group, k.Resource, v), ns})
		}
	}
	return out
}

// grantedInNamespace reports whether a RoleBinding in namespace ns of a
// ClusterRole with rules lets its subject make move m: as Kubernetes' RBAC
// authorizer applies a RoleBinding, only to a request in ns (never to a
// cluster-scoped one), and then when the rules cover it.
func grantedInNamespace(rules []rbacv1.PolicyRule, ns string, m move) bool {
	return m.namespace != "" && m.namespace == ns && covers(rules, m.rule)
}

// covers reports whether rules grant rule, by Kubernetes' own rule
// comparison (the one the RBAC escalation check uses).
func covers(rules []rbacv1.PolicyRule, rule rbacv1.PolicyRule) bool {
	ok, _ := rbacvalidation.Covers(rules, []rbacv1.PolicyRule{rule})
	return ok
}

// loadTenantRole reads tenantRBACFile: exactly the ClusterRole
// tenantkube:tenant, aggregated nowhere.
func loadTenantRole(t *testing.T, root string) *rbacv1.ClusterRole {
	t.Helper()
	docs := yamlDocs(t, filepath.Join(root, tenantRBACFile))
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want the ClusterRole %s only", tenantRBACFile, len(docs), tenantRoleName)
	}
	var cr rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(docs[0], &cr); err != nil {
		t.Fatalf("%s: %v", tenantRBACFile, err)
	}
	if cr.Kind != "ClusterRole" || cr.Name != tenantRoleName || cr.AggregationRule != nil || len(cr.Rules) == 0 {
		t.Fatalf("%s: %s %s, want the ClusterRole %s with rules and no aggregationRule", tenantRBACFile, cr.Kind, cr.Name, tenantRoleName)
	}
	if diff := fmt.Sprint(cr.Labels); diff != "map[app.kubernetes.io/managed-by:tenantkube]" {
		t.Errorf("%s labels %s: it aggregates into no other ClusterRole", tenantRoleName, diff)
	}
	return &cr
}

// composedAccess is what the golden renders compose into tenants'
// namespaces: the ServiceAccounts, and each object as the resource, name
// and source of a write on it.
type composedAccess struct {
	serviceAccounts map[string]string // namespace/name -> source
	objects         []composedRef
}

type composedRef struct {
	group, resource, namespace, name, source string
}

func composedInNamespaces(t *testing.T, root string) composedAccess {
	t.Helper()
	plurals := crdPlurals(t, filepath.Join(root, "..", "shared", "crds"))
	for gk, p := range builtinPlurals {
		plurals[gk] = p
	}
	out := composedAccess{serviceAccounts: map[string]string{}}
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		gvk := o.obj.GroupVersionKind()
		src := o.file + ": " + gvk.Kind + " " + o.obj.GetNamespace() + "/" + o.obj.GetName()
		plural, ok := plurals[gvk.GroupKind()]
		if !ok {
			t.Fatalf("%s: no resource plural known for %s", src, gvk.GroupKind())
		}
		out.objects = append(out.objects, composedRef{gvk.Group, plural, o.obj.GetNamespace(), o.obj.GetName(), src})
		if gvk.GroupKind() == (schema.GroupKind{Kind: "ServiceAccount"}) {
			out.serviceAccounts[o.obj.GetNamespace()+"/"+o.obj.GetName()] = src
		}
	}
	if len(out.serviceAccounts) == 0 || len(out.objects) == 0 {
		t.Fatal("the golden renders compose no ServiceAccount: nothing to check")
	}
	return out
}

// TestTenantRoleReachesNoControllerPermission: the ClusterRole
// tenantkube:tenant (deploy/tenant-rbac.yaml) grants, by Kubernetes' own
// rule comparison, no request that reaches any ServiceAccount the golden
// renders compose (movesToServiceAccount), no write on any object they
// compose, and nothing of what the controllers' ClusterRoles grant those
// ServiceAccounts beyond reads; it has no wildcard, resourceNames or
// non-resource URL, so every name in the namespace is treated alike.
func TestTenantRoleReachesNoControllerPermission(t *testing.T) {
	root := repoRoot(t)
	tenant := loadTenantRole(t, root)
	for i, r := range tenant.Rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("%s rules[%d]: resourceNames or nonResourceURLs", tenantRoleName, i)
		}
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			for _, s := range list {
				if strings.Contains(s, "*") {
					t.Errorf("%s rules[%d]: wildcard %q", tenantRoleName, i, s)
				}
			}
		}
	}
	composed := composedInNamespaces(t, root)

	t.Run("no move to a composed ServiceAccount", func(t *testing.T) {
		for sa, src := range composed.serviceAccounts {
			ns, name, _ := strings.Cut(sa, "/")
			for _, m := range movesToServiceAccount(ns, name) {
				if covers(tenant.Rules, m.rule) {
					t.Errorf("%s grants %q (%s): it reaches the permissions of %s", tenantRoleName, m.name, src, sa)
				}
			}
		}
	})

	t.Run("no write on a composed object", func(t *testing.T) {
		for _, o := range composed.objects {
			for _, v := range writeVerbs {
				rule := rbacv1.PolicyRule{APIGroups: []string{o.group}, Resources: []string{o.resource}, Verbs: []string{v}, ResourceNames: []string{o.name}}
				if v == "create" || v == "deletecollection" {
					rule.ResourceNames = nil
				}
				if covers(tenant.Rules, rule) {
					t.Errorf("%s grants %s on %s (%s)", tenantRoleName, v, o.resource, o.source)
				}
			}
		}
	})

	t.Run("nothing the controllers hold but reads", func(t *testing.T) {
		_, controllers, _ := loadRBAC(t, filepath.Join(root, rbacFile))
		for name, cr := range controllers {
			for _, r := range cr.Rules {
				for _, b := range rbacvalidation.BreakdownRule(r) {
					if v := b.Verbs[0]; v != "get" && v != "list" && v != "watch" && covers(tenant.Rules, b) {
						t.Errorf("%s holds %s %s %s of ClusterRole %s", tenantRoleName, groupName(b.APIGroups[0]), b.Resources[0], v, name)
					}
				}
			}
		}
	})
}

// TestTenantRoleAgainstEdit: Kubernetes' edit ClusterRole (its bootstrap
// policy, aggregated as kube-controller-manager aggregates it) grants each
// of the moves below, which tenantkube:tenant does not; and every rule edit
// holds beyond tenantkube:tenant is listed, so what must not be granted to
// a tenant is known entry by entry.
func TestTenantRoleAgainstEdit(t *testing.T) {
	root := repoRoot(t)
	tenant := loadTenantRole(t, root)
	roles := map[string]rbacv1.ClusterRole{}
	for i, doc := range yamlDocs(t, filepath.Join(root, bootstrapRolesFile)) {
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &cr); err != nil {
			t.Fatalf("%s document %d: %v", bootstrapRolesFile, i, err)
		}
		roles[cr.Name] = cr
	}
	edit := aggregatedRules(t, roles, "edit")
	admin := aggregatedRules(t, roles, "admin")

	// Each is a request of the live scenario's hostile tenant.
	const sa = "demo-kccm"
	wantInEdit := []move{
		{name: "impersonate a ServiceAccount", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}, ResourceNames: []string{sa}}},
		{name: "request a ServiceAccount's token", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{sa}}},
		{name: "create a pod", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
		{name: "exec into a pod", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}}},
		{name: "patch a Deployment", rule: rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}}},
		{name: "update a ConfigMap", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"update"}}},
		{name: "create a Secret", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}}},
		{name: "update a ServiceAccount", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"update"}}},
	}
	for _, m := range wantInEdit {
		if !covers(edit, m.rule) {
			t.Errorf("edit does not grant %q: the reference %s is not Kubernetes' edit", m.name, bootstrapRolesFile)
		}
		if covers(tenant.Rules, m.rule) {
			t.Errorf("%s grants %q", tenantRoleName, m.name)
		}
	}
	// admin adds RoleBinding writes to edit.
	rb := rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}}
	if !covers(admin, rb) || covers(edit, rb) || covers(tenant.Rules, rb) {
		t.Errorf("RoleBinding create: admin %t (want true), edit %t, %s %t (want false)", covers(admin, rb), covers(edit, rb), tenantRoleName, covers(tenant.Rules, rb))
	}
	for sa := range composedInNamespaces(t, root).serviceAccounts {
		ns, name, _ := strings.Cut(sa, "/")
		var reached []string
		for _, m := range movesToServiceAccount(ns, name) {
			if covers(edit, m.rule) {
				reached = append(reached, m.name)
			}
		}
		if len(reached) == 0 {
			t.Errorf("edit reaches no move to %s: movesToServiceAccount no longer matches edit", sa)
		}
	}

	// Every single-verb rule of edit that tenantkube:tenant does not hold.
	_, beyond := rbacvalidation.Covers(tenant.Rules, edit)
	verbs := map[string][]string{}
	for _, r := range beyond {
		k := groupName(r.APIGroups[0]) + " " + r.Resources[0]
		verbs[k] = append(verbs[k], r.Verbs[0])
	}
	var lines []string
	for k, vs := range verbs {
		sort.Strings(vs)
		lines = append(lines, k+": "+strings.Join(dedupe(vs), " "))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		t.Fatal("edit grants nothing beyond tenantkube:tenant")
	}
	t.Logf("Kubernetes' edit grants, beyond %s (group resource: verbs):\n  %s", tenantRoleName, strings.Join(lines, "\n  "))
}

// aggregatedRules returns the rules of the bootstrap ClusterRole name with
// its aggregationRule resolved as kube-controller-manager does: the rules
// of every ClusterRole its selectors match, themselves resolved.
func aggregatedRules(t *testing.T, roles map[string]rbacv1.ClusterRole, name string) []rbacv1.PolicyRule {
	t.Helper()
	cr, ok := roles[name]
	if !ok {
		t.Fatalf("%s has no ClusterRole %s", bootstrapRolesFile, name)
	}
	if cr.AggregationRule == nil {
		return cr.Rules
	}
	var out []rbacv1.PolicyRule
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if n != name && s.Matches(labels.Set(roles[n].Labels)) {
				out = append(out, aggregatedRules(t, roles, n)...)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s aggregates no rules", name)
	}
	return out
}

func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// TestEditAndAdminReachNoClaimController: a tenant holding Kubernetes' edit
// or admin (bootstrap policy, aggregated) through a RoleBinding in its
// namespace NS makes none of the requests that reach a ServiceAccount a
// claim's cluster composes (movesToServiceAccount, as the RBAC authorizer
// applies a RoleBinding: grantedInNamespace): every such ServiceAccount is
// in the cluster's management namespace, never in NS, and is reached from
// no namespace but its own. For a TenantCluster, whose ServiceAccounts
// Crossplane can compose only into NS, edit reaches each of them, which is
// why tenantkube:tenant is the role there (and what makes this test able
// to fail).
func TestEditAndAdminReachNoClaimController(t *testing.T) {
	root := repoRoot(t)
	roles := map[string]rbacv1.ClusterRole{}
	for i, doc := range yamlDocs(t, filepath.Join(root, bootstrapRolesFile)) {
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &cr); err != nil {
			t.Fatalf("%s document %d: %v", bootstrapRolesFile, i, err)
		}
		roles[cr.Name] = cr
	}
	tenantRoles := map[string][]rbacv1.PolicyRule{"edit": aggregatedRules(t, roles, "edit"), "admin": aggregatedRules(t, roles, "admin")}
	claims, namespaced := 0, 0
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		if o.obj.GetKind() != "ServiceAccount" {
			continue
		}
		sa, saNS := o.obj.GetName(), o.obj.GetNamespace()
		src := o.file + ": ServiceAccount " + saNS + "/" + sa
		tenantNS, claim := o.obj.GetLabels()["crossplane.io/claim-namespace"]
		if !claim {
			// A TenantCluster's: its XR's namespace is NS.
			namespaced++
			for role, rules := range tenantRoles {
				var reached []string
				for _, m := range movesToServiceAccount(saNS, sa) {
					if grantedInNamespace(rules, saNS, m) {
						reached = append(reached, m.name)
					}
				}
				if len(reached) == 0 {
					t.Errorf("%s: %s in %s reaches no move to it: the model of the authorizer no longer matches %s", src, role, saNS, role)
				}
			}
			continue
		}
		claims++
		if want := fntest.ManagementNamespace(tenantNS, o.obj.GetLabels()["tenantkube.io/cluster"]); saNS != want {
			t.Errorf("%s: a claim's controller ServiceAccount outside its management namespace %s", src, want)
		}
		for role, rules := range tenantRoles {
			for _, m := range movesToServiceAccount(saNS, sa) {
				if grantedInNamespace(rules, tenantNS, m) {
					t.Errorf("%s: %s in the claim's namespace %s grants %q", src, role, tenantNS, m.name)
				}
			}
		}
	}
	if claims == 0 || namespaced == 0 {
		t.Fatalf("the golden renders compose %d ServiceAccounts of claims and %d of TenantClusters: nothing to compare", claims, namespaced)
	}
}

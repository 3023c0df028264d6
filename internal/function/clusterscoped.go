package function

// LabelNamespace is the label of a tenant cluster's cluster-scoped objects
// naming NS (tenantkube.io/cluster names N).
const LabelNamespace = "tenantkube.io/namespace"

// ClusterScopedName is "<NS>.<N>", the name of a tenant cluster's object
// outside its namespace. NS and N are DNS labels (no dot), so the dot marks
// where NS ends and no two (NS, N) share a name; at most 63+1+32
// characters, a valid DNS subdomain.
func (id Identity) ClusterScopedName() string { return id.Namespace + "." + id.Name }

// ClusterRoleBindingName is the ClusterRoleBinding of the controller
// component of the tenant cluster: "tenantkube:<component>:<NS>.<N>". The
// component is a fixed name without ':', so the name stays injective in
// (component, NS, N); ':' is allowed in RBAC object names (path segments).
func (id Identity) ClusterRoleBindingName(component string) string {
	return "tenantkube:" + component + ":" + id.ClusterScopedName()
}

// TenantDataStoreName is "tenantkube.tenant.<NS>", the cluster-scoped
// Kamaji DataStore of the tenant NS, shared by the tenant's namespaced
// clusters (TenantCluster), which require it by this name. Two dots: no
// cluster's ClusterScopedName (one dot) and no shared DataStore of the
// platform input (a DNS label) shares it; at most 17+63 characters.
func (id Identity) TenantDataStoreName() string { return "tenantkube.tenant." + id.Namespace }

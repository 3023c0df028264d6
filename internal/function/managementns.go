package function

// The platform-owned namespace of a claim's cluster (ManagementNamespace):
// the once-per-cluster controllers, their ServiceAccounts and the
// kubeconfig they read live there, out of reach of any role the tenant
// holds in NS.
const (
	// ManagementNamespacePrefix starts every management namespace's name.
	ManagementNamespacePrefix = "tenantkube-"
	// LabelManagementNamespace, value "true", marks a management
	// namespace, so that a platform selects them all (quotas,
	// NetworkPolicies, Pod Security labels); each also carries
	// LabelNamespace (NS) and LabelCluster (N).
	LabelManagementNamespace = "tenantkube.io/management-namespace"
	// managementDigestRole is the role hashed into the namespace's digest
	// (identityDigest); no ingress role is "mgmt".
	managementDigestRole = "mgmt"
)

// ManagementNamespace is "tenantkube-<digest>", the Namespace of the
// controllers of the claim API's cluster N of NS: the digest is 128 bits of
// SHA-256("mgmt/<NS>/<N>") (identityDigest), so the name is injective in
// (NS, N) with no collision to search for, and 11+26 = 37 characters, a
// DNS label. A namespaced TenantCluster cannot compose a Namespace and has
// none.
func (id Identity) ManagementNamespace() string {
	return ManagementNamespacePrefix + identityDigest(managementDigestRole, id)
}

// ManagementNamespaceLabels are the labels of the management namespace:
// Labels (managed-by, N), LabelNamespace (NS) and
// LabelManagementNamespace.
func (id Identity) ManagementNamespaceLabels() map[string]string {
	return id.Labels(LabelNamespace, id.Namespace, LabelManagementNamespace, "true")
}

// ControllersNamespace is the namespace of the cluster's once-per-cluster
// controllers: NS for a namespaced TenantCluster (Crossplane composes only
// into the XR's namespace), ManagementNamespace for the claim API.
func (c *Cluster) ControllersNamespace() string {
	if c.Namespaced {
		return c.ID.Namespace
	}
	return c.ID.ManagementNamespace()
}

// ManagementNamespaceResourceName is the composed-resource name of the
// management namespace (the control-plane step composes it).
const ManagementNamespaceResourceName = "management-namespace"

// AddInManagementNamespace adds obj, an object in the management
// namespace, as Add does once that Namespace is observed. Before, obj is
// kept as observed if it was composed already and left out otherwise:
// Crossplane applies composed resources in no set order and fails the
// whole composition (then retries with backoff) on an object whose
// Namespace does not exist yet.
func (p *Plan) AddInManagementNamespace(r *Request, name string, obj any, ready Readiness) {
	switch {
	case r.ObservedExists(ManagementNamespaceResourceName):
		p.Add(name, obj, ready)
	case r.ObservedExists(name):
		k := Kept{Name: name}
		if ready != nil {
			k.Ready = ready(r, name)
		}
		p.Kept = append(p.Kept, k)
	}
}

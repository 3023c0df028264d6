package function

// Labels and annotations every tenantkube composed resource carries.
const (
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByTenantkube = "tenantkube"
	LabelCluster        = "tenantkube.io/cluster"
	// LabelCAPICluster is Cluster API's cluster-name label, set where CAPI
	// expects it (MachineDeployments, templates, selectors).
	LabelCAPICluster = "cluster.x-k8s.io/cluster-name"
)

// Labels returns a new map with the labels every composed resource of the
// tenant cluster carries: managed-by tenantkube and tenantkube.io/cluster N.
// extra key/value pairs (k1, v1, k2, v2, ...) are added; an odd trailing key
// is ignored.
func (id Identity) Labels(extra ...string) map[string]string {
	l := make(map[string]string, 2+len(extra)/2)
	l[LabelManagedBy] = ManagedByTenantkube
	l[LabelCluster] = id.Name
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

// Prefixed returns "N-suffix", the name of an object derived from the
// cluster.
func (id Identity) Prefixed(suffix string) string { return id.Name + "-" + suffix }

// KubeconfigSecretName is the Secret Kamaji writes with the tenant's admin
// kubeconfigs: N-admin-kubeconfig in NS.
func (id Identity) KubeconfigSecretName() string { return id.Prefixed("admin-kubeconfig") }

// KubeconfigSecretKey is the key of the kubeconfig Secret that in-cluster
// consumers (Flux, autoscaler, cloud controller) use: it points at the
// tenant API server's Service.
const KubeconfigSecretKey = "super-admin.svc"

// APIServerServiceHost is the in-cluster address of the tenant API server
// Service Kamaji creates: N.NS.svc.
func (id Identity) APIServerServiceHost() string { return id.Name + "." + id.Namespace + ".svc" }

// ClusterResourceName is the composed-resource name of the Cluster API
// Cluster the control-plane function emits; later steps read settings of
// the cluster (its service CIDR) from it in the desired state.
const ClusterResourceName = "cluster"

// KamajiControlPlaneResourceName is the composed-resource name of the
// KamajiControlPlane the control-plane function emits; later steps read
// from its observed state whether the tenant API server answers.
const KamajiControlPlaneResourceName = "kamajicontrolplane"

package function

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// APIServerServiceHost is the short in-cluster address of the tenant API
// server Service Kamaji creates, N.NS.svc: it resolves only through the
// search path of a pod in the management cluster, so it is for those pods
// alone (APIServerServiceFQDN is for everything else).
func (id Identity) APIServerServiceHost() string { return id.Name + "." + id.Namespace + ".svc" }

// ClusterResourceName is the composed-resource name of the Cluster API
// Cluster the control-plane function emits; later steps read settings of
// the cluster (its service CIDR) from it in the desired state.
const ClusterResourceName = "cluster"

// KamajiControlPlaneResourceName is the composed-resource name of the
// KamajiControlPlane the control-plane function emits; later steps read
// from its observed state whether the tenant API server answers.
const KamajiControlPlaneResourceName = "kamajicontrolplane"

// Label prefixes whose labels on an XR only Crossplane and tenantkube
// write: Crossplane copies some of an XR's labels onto every composed
// resource, and tenantkube's select composed resources.
const (
	crossplaneLabelPrefix = "crossplane.io/"
	tenantkubeLabelPrefix = "tenantkube.io/"
	// LabelComposite is the label Crossplane puts on an XR with its own
	// name when it has none (it never overwrites one) and copies from the
	// XR onto every composed resource.
	LabelComposite = "crossplane.io/composite"
	// labelInUse is the label Crossplane's Usage controller puts on the
	// object a Usage protects; it is copied nowhere.
	labelInUse = "crossplane.io/in-use"
)

// checkReservedLabels refuses the labels of an XR (name, namespaced) that
// would put a value the functions do not derive on composed resources or
// claim a label tenantkube owns. Crossplane copies crossplane.io/composite
// and, when both are set, the claim labels from the XR onto every
// composed resource (RenderComposedResourceMetadata,
// https://github.com/crossplane/crossplane/blob/v2.4.0/internal/controller/apiextensions/composite/composition_render.go),
// after the functions ran and over what they set, and a claim's labels
// are copied onto its XR (a claim's claim labels excepted: Crossplane
// writes them). So crossplane.io/composite must be the XR's own name; a
// namespaced XR, which has no claim, carries no claim label; the only
// other crossplane.io/ label accepted is the Usage controller's
// crossplane.io/in-use; and no tenantkube.io/ label is accepted. Every
// refused label is named, with its value, sorted by key.
func checkReservedLabels(labels map[string]string, name string, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v, p := labels[k], field.NewPath("metadata", "labels").Key(k)
		switch {
		case k == LabelComposite:
			if v != name {
				errs = append(errs, field.Invalid(p, v, fmt.Sprintf("must be the XR's own name %q: Crossplane copies it onto every composed resource", name)))
			}
		case k == LabelClaimName || k == LabelClaimNamespace:
			if namespaced {
				errs = append(errs, field.Forbidden(p, fmt.Sprintf("%q: a namespaced XR has no claim, and Crossplane would copy the claim labels onto every composed resource", v)))
			}
		case k == labelInUse:
		case strings.HasPrefix(k, crossplaneLabelPrefix):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("%q: crossplane.io/ labels are Crossplane's", v)))
		case strings.HasPrefix(k, tenantkubeLabelPrefix):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("%q: tenantkube.io/ labels are the platform's, which composed resources carry with the values the functions derive", v)))
		}
	}
	return errs
}

// APIServerServiceFQDN is the fully qualified name of the tenant API server
// Service Kamaji creates, N.NS.svc.<clusterDomain>: the address handed to
// whatever resolves it without the management cluster's search path (a
// worker VM, whose DNS comes from DHCP, and the tenant's pods on it).
func (id Identity) APIServerServiceFQDN(clusterDomain string) string {
	return ServiceFQDN(id.Name, id.Namespace, clusterDomain)
}

// ServiceFQDN is the fully qualified name of Service name in namespace ns
// of the management cluster, whose DNS domain is clusterDomain:
// name.ns.svc.<clusterDomain>, which resolves with no search path.
func ServiceFQDN(name, ns, clusterDomain string) string {
	return name + "." + ns + ".svc." + clusterDomain
}

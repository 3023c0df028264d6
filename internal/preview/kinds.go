package preview

// ComposedResources are the resources (plural.group) of every kind the
// functions compose for a running cluster, for `kubectl get` to read the
// observed composed resources of a live cluster (docs/tenant-guide.md,
// "Preview a change"). The kinds composed only to delete what tenant
// controllers created are left out.
var ComposedResources = []string{
	"certificates.cert-manager.io",
	"clusterrolebindings.rbac.authorization.k8s.io",
	"clusters.cluster.x-k8s.io",
	"configmaps",
	"datastores.kamaji.clastix.io",
	"deployments.apps",
	"environmentconfigs.apiextensions.crossplane.io",
	"etcdclusters.etcd-operator.cozystack.io",
	"etcdclusters.etcd.aenix.io",
	"etcdsnapshots.etcd-operator.cozystack.io",
	"helmreleases.helm.toolkit.fluxcd.io",
	"helmrepositories.source.toolkit.fluxcd.io",
	"ingresses.networking.k8s.io",
	"issuers.cert-manager.io",
	"jobs.batch",
	"kamajicontrolplanes.controlplane.cluster.x-k8s.io",
	"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io",
	"kubevirtclusters.infrastructure.cluster.x-k8s.io",
	"kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io",
	"machinedeployments.cluster.x-k8s.io",
	"machinehealthchecks.cluster.x-k8s.io",
	"namespaces",
	"ocirepositories.source.toolkit.fluxcd.io",
	"rolebindings.rbac.authorization.k8s.io",
	"secrets",
	"serviceaccounts",
	"services",
	"talosconfigtemplates.bootstrap.cluster.x-k8s.io",
	"usages.protection.crossplane.io",
}

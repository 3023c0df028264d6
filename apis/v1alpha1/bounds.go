package v1alpha1

// Bounds of what a tenant may write, enforced at admission by the XRD (the
// markers in types.go carry the same numbers; the quantity maxima reach it
// through quantitybounds.go) and re-checked by the functions. Every tenant shares the management cluster: no field may make
// an object, a function request or a workload in it grow without limit.
const (
	// MaxReplicasLimit is the XRD's maximum of a node group's minReplicas
	// and maxReplicas: Kubernetes' documented largest cluster, 5000 nodes
	// (kubernetes.io "Considerations for large clusters"). The workers
	// input's maxReplicas lowers it per platform (default 100).
	MaxReplicasLimit = 5000
	// MaxRoles is the most roles of a node group (each a node label).
	MaxRoles = 16
	// MaxGPUs is the most GPUs passed through to one worker VM.
	MaxGPUs = 16
	// MaxNameLength is the longest object or resource name a tenant may
	// write (storage classes, instance types, GPU device names): a DNS
	// subdomain's 253 characters.
	MaxNameLength = 253
	// MaxClusterNameLength is the longest cluster name N: every name
	// derived from N stays a DNS label (function.MaxClusterNameLength).
	MaxClusterNameLength = 32
	// MaxImageLength is the longest image reference: a 255-character
	// repository, a 128-character tag and a sha512 digest fit.
	MaxImageLength = 512
	// MaxIngressHosts is the most hosts of addons.ingressNginx.hosts (each
	// a rule of the shared management ingress).
	MaxIngressHosts = 32
	// MaxValuesOverrideKeys is the most top-level keys of one add-on's
	// valuesOverride at admission (the API server cannot measure a
	// free-form object's bytes; the addons function bounds those).
	MaxValuesOverrideKeys = 64
	// MaxQuantityLength is the longest quantity string.
	MaxQuantityLength = 64
	// MaxExtraArgs is the most kube-apiserver flags of
	// controlPlane.apiServer.extraArgs, each at most MaxExtraArgLength
	// characters.
	MaxExtraArgs      = 64
	MaxExtraArgLength = 1024
	// MaxExtraVolumes is the most extraVolumes, and the most
	// extraVolumeMounts, of the API server.
	MaxExtraVolumes = 16
	// MaxMountPathLength is the longest extraVolumeMounts mountPath.
	MaxMountPathLength = 256
	// MaxAuthenticationConfigLength is the most characters of an inline
	// oidc.customConfig.config (several issuers with their CA bundles fit).
	MaxAuthenticationConfigLength = 32768
	// MaxOIDCUsers is the most oidc.users (one ClusterRoleBinding each).
	MaxOIDCUsers = 64
	// MaxEmailLength is the longest email address (RFC 5321's 254).
	MaxEmailLength = 254
)

// Quantity maxima (resource.Quantity text). Node values bound one KubeVirt
// VM; control-plane components run as pods in the management cluster, so
// their explicit resources stop at the largest preset (4xlarge: 32 CPUs;
// m1.4xlarge: 256Gi).
const (
	MaxNodeCPU         = "256"
	MaxNodeMemory      = "4Ti"
	MaxDiskSize        = "64Ti"
	MaxComponentCPU    = "32"
	MaxComponentMemory = "256Gi"
)

package v1alpha1

// Defaults of the seed chart (values.yaml), applied by the XRD schema at
// admission and again by Default for XRs that skipped admission (objects
// created before a default existed, `crossplane render`). A test checks that
// both agree.
const (
	DefaultStorageClass        = "replicated"
	DefaultNodeGroupName       = "md0"
	DefaultMinReplicas         = 0
	DefaultMaxReplicas         = 10
	DefaultInstanceType        = "u1.medium"
	DefaultDiskSize            = Quantity("20Gi")
	DefaultEvictionHard        = "7%"
	DefaultEvictionSoft        = "10%"
	DefaultControlPlaneCount   = 2
	DefaultAPIServerPreset     = ResourcesPreset("c1.medium")
	DefaultComponentPreset     = ResourcesPreset("t1.micro")
	DefaultIngressExposeMethod = ExposeProxied
	DefaultOIDCMode            = OIDCModeNone
)

// Defaults of the health check and of cluster-autoscaler's provisioning
// time: the Cozystack chart's (nodeHealthCheck, maxNodeProvisionTime).
const (
	DefaultMaxUnhealthy         = IntOrPercent("50%")
	DefaultNodeStartupTimeout   = Duration("20m")
	DefaultReadyUnknownTimeout  = Duration("5m")
	DefaultReadyFalseTimeout    = Duration("10m")
	DefaultMaxNodeProvisionTime = Duration("30m")
)

// DefaultNodeGroups is the node-group map used when spec.nodeGroups is absent
// or empty: one group md0 of u1.medium VMs with the ingress-nginx role,
// scaling 0..10.
func DefaultNodeGroups() map[string]NodeGroup {
	return map[string]NodeGroup{DefaultNodeGroupName: {
		MinReplicas:  ptr(int32(DefaultMinReplicas)),
		MaxReplicas:  ptr(int32(DefaultMaxReplicas)),
		InstanceType: ptr(DefaultInstanceType),
		DiskSize:     DefaultDiskSize,
		Roles:        []string{"ingress-nginx"},
	}}
}

// Default fills every unset field of s with the seed's default, in place.
// An empty nodeGroups map becomes DefaultNodeGroups; a user-supplied group
// gets the per-field defaults (roles stay empty), not md0's.
func (s *KubernetesClusterSpec) Default() {
	if s.StorageClass == "" {
		s.StorageClass = DefaultStorageClass
	}
	if s.Version == "" {
		s.Version = DefaultVersion
	}
	if len(s.NodeGroups) == 0 {
		s.NodeGroups = DefaultNodeGroups()
	}
	for name, g := range s.NodeGroups {
		g.Default()
		s.NodeGroups[name] = g
	}
	s.NodeHealthCheck.Default()
	s.Talos.Default()
	if s.MaxNodeProvisionTime == "" {
		s.MaxNodeProvisionTime = DefaultMaxNodeProvisionTime
	}
	if s.Addons.IngressNginx.ExposeMethod == "" {
		s.Addons.IngressNginx.ExposeMethod = DefaultIngressExposeMethod
	}
	cp := &s.ControlPlane
	if cp.Replicas == nil {
		cp.Replicas = ptr(int32(DefaultControlPlaneCount))
	}
	defaultPreset(&cp.APIServer.ResourcesPreset, DefaultAPIServerPreset)
	defaultPreset(&cp.ControllerManager.ResourcesPreset, DefaultComponentPreset)
	defaultPreset(&cp.Scheduler.ResourcesPreset, DefaultComponentPreset)
	defaultPreset(&cp.Konnectivity.Server.ResourcesPreset, DefaultComponentPreset)
	if s.OIDC.Mode == "" {
		s.OIDC.Mode = DefaultOIDCMode
	}
}

// Default fills the unset fields of one node group with the seed's per-field
// defaults.
func (g *NodeGroup) Default() {
	if g.MinReplicas == nil {
		g.MinReplicas = ptr(int32(DefaultMinReplicas))
	}
	if g.MaxReplicas == nil {
		g.MaxReplicas = ptr(int32(DefaultMaxReplicas))
	}
	// Only an absent instanceType takes the default: an explicit "" means
	// none (the seed chart documents that case).
	if g.InstanceType == nil {
		g.InstanceType = ptr(DefaultInstanceType)
	}
	if !g.DiskSize.IsSet() {
		g.DiskSize = DefaultDiskSize
	}
	if g.Kubelet.EvictionHardMemory == "" {
		g.Kubelet.EvictionHardMemory = DefaultEvictionHard
	}
	if g.Kubelet.EvictionSoftMemory == "" {
		g.Kubelet.EvictionSoftMemory = DefaultEvictionSoft
	}
}

// Default fills the unset health-check settings with the chart's defaults.
func (h *NodeHealthCheck) Default() {
	if h.MaxUnhealthy == "" {
		h.MaxUnhealthy = DefaultMaxUnhealthy
	}
	if h.NodeStartupTimeout == "" {
		h.NodeStartupTimeout = DefaultNodeStartupTimeout
	}
	if h.ReadyUnknownTimeout == "" {
		h.ReadyUnknownTimeout = DefaultReadyUnknownTimeout
	}
	if h.ReadyFalseTimeout == "" {
		h.ReadyFalseTimeout = DefaultReadyFalseTimeout
	}
}

func defaultPreset(p *ResourcesPreset, preset ResourcesPreset) {
	if *p == "" {
		*p = preset
	}
}

func ptr[T any](v T) *T { return &v }

// InstanceTypeName is the node group's instance type, "" for none.
func (g *NodeGroup) InstanceTypeName() string {
	if g.InstanceType == nil {
		return ""
	}
	return *g.InstanceType
}

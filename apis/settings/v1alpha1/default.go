package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// Default fills every unset field with its documented default, in place.
// Container-disk images of versions the map does not list are added. A
// chart source left empty becomes the default source; one that keeps the
// default's kind (or leaves kind empty) inherits each field it leaves
// empty; one of another kind only gets the layout Upstream and the
// default wrapper key.
func (s *Settings) Default() {
	fill(&s.BaseDomain, DefaultBaseDomain)
	fill(&s.IngressClassName, DefaultIngressClassName)
	fill(&s.PodCIDR, DefaultPodCIDR)
	fill(&s.ServiceCIDR, DefaultServiceCIDR)
	fill(&s.ClusterDomain, function.DefaultClusterDomain)
	if s.CPUAllocationRatio == 0 {
		s.CPUAllocationRatio = DefaultCPUAllocationRatio
	}
	if s.DeletionOrder == "" {
		s.DeletionOrder = DeletionOrderUsages
	}
	if s.DefaultWorkerOS == "" {
		s.DefaultWorkerOS = tkv1alpha1.WorkerOSUbuntu
	}
	if s.MaxCleanupObjects == 0 {
		s.MaxCleanupObjects = DefaultMaxCleanupObjects
	}
	if s.RemoteStorageClasses == nil {
		s.RemoteStorageClasses = storageclass.DefaultRemote()
	}
	s.defaultControlPlane()
	s.defaultWorkers()
	s.defaultAddons()
	s.Encryption.defaults()
	s.defaultMaintenance()
}

// defaultControlPlane fills etcd, its backups, the OIDC issuer's claim and
// the Talos signer image.
func (s *Settings) defaultControlPlane() {
	e := &s.Etcd
	if e.Replicas == 0 {
		e.Replicas = DefaultEtcdReplicas
	}
	if e.Operator == "" {
		e.Operator = DefaultEtcdOperator
	}
	fill(&e.Version, DefaultEtcdVersion)
	if !e.StorageSize.IsSet() {
		e.StorageSize = DefaultEtcdStorageSize
	}
	b := &e.Backup
	if b.Interval == "" {
		b.Interval = DefaultBackupInterval
	}
	if b.MinInterval == "" {
		b.MinInterval = DefaultBackupMinInterval
	}
	if b.Retention == 0 {
		b.Retention = DefaultBackupRetention
	}
	if b.MaxDeletedClusterBackups == 0 {
		b.MaxDeletedClusterBackups = DefaultMaxDeletedClusterBackups
	}
	fill(&s.OIDC.UsernameClaim, DefaultOIDCUsernameClaim)
	fill(&s.TalosCSRSignerImage, DefaultTalosCSRSignerImage)
}

// defaultWorkers fills the worker images, mirrors, controllers, bounds
// and Talos sources.
func (s *Settings) defaultWorkers() {
	if s.ContainerDiskImages == nil {
		s.ContainerDiskImages = map[string]string{}
	}
	for v, img := range DefaultContainerDiskImages() {
		if s.ContainerDiskImages[v] == "" {
			s.ContainerDiskImages[v] = img
		}
	}
	fill(&s.KubernetesBinaryMirror, DefaultKubernetesBinaryMirror)
	if s.RegistryMirror != nil && len(s.RegistryMirror.Hosts) == 0 {
		s.RegistryMirror.Hosts = append([]string(nil), DefaultRegistryMirrorHosts...)
	}
	i := &s.Images
	fill(&i.ClusterAutoscaler, DefaultClusterAutoscalerImage)
	fill(&i.CloudControllerManager, DefaultCloudControllerManagerImage)
	fill(&i.CSIDriver, DefaultCSIDriverImage)
	fill(&i.CSIProvisioner, DefaultCSIProvisionerImage)
	fill(&i.CSIAttacher, DefaultCSIAttacherImage)
	fill(&i.CSIResizer, DefaultCSIResizerImage)
	fill(&i.CSILivenessProbe, DefaultCSILivenessProbeImage)
	fill(&i.CSISnapshotter, DefaultCSISnapshotterImage)
	fill(&i.SnapshotController, DefaultSnapshotControllerImage)
	fill(&i.WaitForKubeconfig, DefaultWaitForKubeconfigImage)
	c := &s.Controllers
	if c.Resources == nil {
		c.Resources = DefaultControllerResources()
	}
	if c.RunAsUser == 0 {
		c.RunAsUser = DefaultRunAsUser
	}
	fill(&c.CSIPriorityClassName, DefaultCSIPriorityClassName)
	if c.LoadBalancerMode == "" {
		c.LoadBalancerMode = LoadBalancerSelectorless
	}
	if c.CSIKubeAPIQPS == 0 {
		c.CSIKubeAPIQPS = DefaultCSIKubeAPIQPS
	}
	if c.CSIKubeAPIBurst == 0 {
		c.CSIKubeAPIBurst = DefaultCSIKubeAPIBurst
	}
	if s.MinPodCPURequest == nil {
		q := resource.MustParse(DefaultMinPodCPURequest)
		s.MinPodCPURequest = &q
	}
	if s.MaxNodeGroups == 0 {
		s.MaxNodeGroups = DefaultMaxNodeGroups
	}
	if s.CleanupKinds == nil {
		s.CleanupKinds = DefaultCleanupKinds()
	}
	if s.AllowedImageRegistries == nil {
		s.AllowedImageRegistries = DefaultAllowedImageRegistries()
	}
	if s.MaxReplicas == 0 {
		s.MaxReplicas = DefaultMaxReplicas
	}
	f := &s.HealthCheckFloors
	fill(&f.NodeStartupTimeout, DefaultFloorNodeStartupTimeout)
	fill(&f.ReadyUnknownTimeout, DefaultFloorReadyUnknownTimeout)
	fill(&f.ReadyFalseTimeout, DefaultFloorReadyFalseTimeout)
	fill(&f.MaxNodeProvisionTime, DefaultFloorMaxNodeProvisionTime)
	fill(&s.Talos.ImageFactoryURL, DefaultTalosImageFactoryURL)
	fill(&s.Talos.InstallerRepository, DefaultTalosInstallerRepository)
}

// defaultAddons fills the Flux source interval, the values bound, the
// monitoring destinations and every chart source.
func (s *Settings) defaultAddons() {
	if s.SourceInterval == nil {
		s.SourceInterval = &metav1.Duration{Duration: DefaultSourceInterval}
	}
	if s.MaxValuesOverrideBytes == 0 {
		s.MaxValuesOverrideBytes = DefaultMaxValuesOverrideBytes
	}
	m := &s.Monitoring
	fill(&m.MetricsWriteURL, DefaultMetricsWriteURL)
	fill(&m.MetricsReadURL, DefaultMetricsReadURL)
	fill(&m.LogsURL, DefaultLogsURL)
	if m.LogsHeaders == nil {
		m.LogsHeaders = DefaultLogsHeaders()
	}
	for release, def := range DefaultCharts() {
		src, _ := s.Charts.Source(release)
		src.defaultFrom(def, release)
	}
}

// ContainerDiskImage returns the container-disk image for a minor version
// ("v1.35"). It returns an error when the settings have none for that
// version.
func (s *Settings) ContainerDiskImage(minor string) (string, error) {
	img := s.ContainerDiskImages[minor]
	if img == "" {
		return "", fmt.Errorf("the workers function input has no container-disk image for %s", minor)
	}
	return img, nil
}

// WorkerOS is the operating system of a node group whose os is os: os, or
// the platform's default when it is unset.
func (s *Settings) WorkerOS(os tkv1alpha1.WorkerOS) tkv1alpha1.WorkerOS {
	if os != "" {
		return os
	}
	return s.DefaultWorkerOS
}

// HostSettings are the settings of the hosts tenants may claim.
func (s *Settings) HostSettings() function.HostSettings {
	return function.HostSettings{BaseDomain: s.BaseDomain, AllowedSuffixes: s.AllowedHostSuffixes,
		TenantHostSuffixes: s.AllowedTenantHostSuffixes, AllowWildcards: s.AllowWildcardHosts}
}

package main

import (
	"go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// ccmComponent is the component name of the KubeVirt cloud controller
// manager: Deployment N-kccm, ConfigMap N-kccm-cloud-config.
const ccmComponent = function.CCMComponent

// cloudConfigKey is the ConfigMap key (and file) of the KubeVirt cloud
// provider's configuration.
const cloudConfigKey = "cloud-config"

// cloudConfigFile is the KubeVirt cloud provider's configuration file: the
// infrastructure namespace NS its LoadBalancer Services are created in, the
// labels put on them, and the load-balancer polling settings.
//
// The file is written by go.yaml.in/yaml/v2 straight from these structs,
// whose fields are declared in key order: the file is byte for byte what
// sigs.k8s.io/yaml (JSON, then YAML with sorted keys) wrote for the json
// tags, without its JSON round trip (TestCloudConfigYAMLMatchesSigsYAML).
type cloudConfigFile struct {
	// InfraLabels are added to every infrastructure Service it creates.
	InfraLabels map[string]string `json:"infraLabels" yaml:"infraLabels"`
	// InstancesV2 configures node initialisation from VMIs.
	InstancesV2 cloudConfigInstancesV2 `json:"instancesV2" yaml:"instancesV2"`
	// LoadBalancer configures LoadBalancer Services.
	LoadBalancer cloudConfigLoadBalancer `json:"loadBalancer" yaml:"loadBalancer"`
	// Namespace is NS, where the tenant's VMs and LoadBalancer Services live.
	Namespace string `json:"namespace" yaml:"namespace"`
}

// cloudConfigLoadBalancer are the load-balancer settings: how often
// (seconds) and how long (seconds) to poll for the infrastructure Service's
// address, enabled, and the mode (selectorless Services with the
// EndpointSlice controller, or Services selecting the VMs).
type cloudConfigLoadBalancer struct {
	CreationPollInterval int `json:"creationPollInterval" yaml:"creationPollInterval"`
	CreationPollTimeout  int `json:"creationPollTimeout" yaml:"creationPollTimeout"`
	// EnableEPSController runs the controller's EndpointSlice controller,
	// which backs each selectorless infrastructure Service with the VMs
	// of the tenant nodes that hold endpoints.
	EnableEPSController bool `json:"enableEPSController" yaml:"enableEPSController"`
	Enabled             bool `json:"enabled" yaml:"enabled"`
	// Selectorless creates infrastructure Services without a selector.
	Selectorless bool `json:"selectorless" yaml:"selectorless"`
}

// cloudConfigInstancesV2 enables the InstancesV2 interface (node addresses
// and provider IDs from VMIs); zones and regions are off.
type cloudConfigInstancesV2 struct {
	Enabled              bool `json:"enabled" yaml:"enabled"`
	ZoneAndRegionEnabled bool `json:"zoneAndRegionEnabled" yaml:"zoneAndRegionEnabled"`
}

// cloudConfig is the configuration of cluster N in NS for a load-balancer
// mode.
func cloudConfig(id function.Identity, mode v1alpha1.LoadBalancerMode) cloudConfigFile {
	selectorless := mode == v1alpha1.LoadBalancerSelectorless
	return cloudConfigFile{
		Namespace:   id.Namespace,
		InfraLabels: map[string]string{function.LabelCluster: id.Name, function.LabelCAPICluster: id.Name},
		LoadBalancer: cloudConfigLoadBalancer{Enabled: true, CreationPollInterval: 5, CreationPollTimeout: 60,
			Selectorless: selectorless, EnableEPSController: selectorless},
		InstancesV2: cloudConfigInstancesV2{Enabled: true},
	}
}

// buildCloudConfig returns the cloud-config ConfigMap N-kccm-cloud-config.
// It returns an error when the configuration does not marshal.
func buildCloudConfig(id function.Identity, mode v1alpha1.LoadBalancerMode) (*corev1.ConfigMap, error) {
	cfg := cloudConfig(id, mode)
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: id.Prefixed(ccmComponent + "-cloud-config"), Namespace: id.Namespace, Labels: id.Labels(labelComponent, ccmComponent)},
		Data:       map[string]string{cloudConfigKey: string(raw)},
	}, nil
}

// buildCloudControllerManager returns the KubeVirt cloud controller manager:
// cloud provider kubevirt for cluster N, reading the tenant
// kubeconfig and the cloud-config ConfigMap; its permissions in NS (the
// LoadBalancer Services and, in Selectorless mode through its EndpointSlice
// controller, their EndpointSlices, reading the VMs) are the ClusterRole
// tenantkube:kccm (deploy/crossplane-rbac.yaml).
func buildCloudControllerManager(id function.Identity, in *v1alpha1.WorkersInput, waitImage string) controller {
	const configDir = "/etc/cloud"
	c := corev1.Container{
		Name:    ccmComponent,
		Image:   in.Images.CloudControllerManager,
		Command: []string{"/bin/kubevirt-cloud-controller-manager"},
		Args: []string{
			"--cloud-provider=kubevirt",
			"--cloud-config=" + configDir + "/" + cloudConfigKey,
			"--kubeconfig=" + tenantKubeconfigPath,
			"--authentication-skip-lookup",
			"--cluster-name=" + id.Name,
		},
		VolumeMounts: []corev1.VolumeMount{kubeconfigMount(), {Name: "cloud-config", MountPath: configDir, ReadOnly: true}},
	}
	vol := corev1.Volume{Name: "cloud-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: id.Prefixed(ccmComponent + "-cloud-config")},
	}}}
	return newController(id, in, waitImage, controllerSpec{
		component: ccmComponent, containers: []corev1.Container{c}, volumes: []corev1.Volume{vol},
		managementAPI: []string{ccmComponent}, tmp: []string{ccmComponent},
	})
}

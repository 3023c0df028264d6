package main

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/presets"
	"github.com/tenantkube/tenantkube/internal/quantity"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// KonnectivityPort is the konnectivity server's port.
const KonnectivityPort = 8132

// AnnotationSSLPassthrough makes the management ingress-nginx pass TLS
// through to the tenant API server.
const AnnotationSSLPassthrough = "nginx.ingress.kubernetes.io/ssl-passthrough"

// UnservedIngressClass is the ingress class of the Ingress Kamaji builds
// from the KamajiControlPlane's spec.network.ingress, which must name no
// IngressClass of the management cluster: no controller serves that
// Ingress. Kamaji names it and its backend Service N, so ingress-nginx
// would name its upstream <NS>-<N>-6443, shared by (team, a-prod) and
// (team-a, prod). The spec.network.ingress hostname still gives the API
// server certificate its SAN and Cluster API its endpoint <host>:443; the
// host is routed by apiServerIngress.
const UnservedIngressClass = "tenantkube-unserved"

// APIServerPort is the port of the tenant API server Service Kamaji
// builds (the TenantControlPlane's spec.networkProfile.port default).
const APIServerPort = 6443

// LabelKamajiName is the label Kamaji puts on a TenantControlPlane's pods,
// whose value is the TenantControlPlane's name (the KamajiControlPlane's,
// N); Kamaji's own API server Service selects on it.
const LabelKamajiName = "kamaji.clastix.io/name"

// LabelClusterRole marks the KamajiControlPlane as the cluster's control
// plane.
const LabelClusterRole = "cluster.x-k8s.io/role"

// controlPlaneSizing is the resolved container resources of the four
// control-plane components.
type controlPlaneSizing struct {
	APIServer, ControllerManager, Scheduler, Konnectivity corev1.ResourceRequirements
}

// resolveSizing resolves each component's preset, overridden key by key by
// its explicit resources, into container resources. It returns a
// *field.Error naming the component's field for an unknown preset (listing
// the allowed names) or a malformed quantity.
func resolveSizing(cp tkv1alpha1.ControlPlane, cpuAllocationRatio int64) (controlPlaneSizing, error) {
	base := field.NewPath("spec", "controlPlane")
	var out controlPlaneSizing
	for _, c := range []struct {
		path *field.Path
		spec tkv1alpha1.Component
		into *corev1.ResourceRequirements
	}{
		{base.Child("apiServer"), tkv1alpha1.Component{Resources: cp.APIServer.Resources, ResourcesPreset: cp.APIServer.ResourcesPreset}, &out.APIServer},
		{base.Child("controllerManager"), cp.ControllerManager, &out.ControllerManager},
		{base.Child("scheduler"), cp.Scheduler, &out.Scheduler},
		{base.Child("konnectivity", "server"), cp.Konnectivity.Server, &out.Konnectivity},
	} {
		r, err := componentResources(c.path, c.spec, cpuAllocationRatio)
		if err != nil {
			return controlPlaneSizing{}, err
		}
		*c.into = r
	}
	return out, nil
}

// componentResources sizes one component: the preset's CPU and memory, each
// replaced by resources.cpu / resources.memory when set, and the presets'
// ephemeral-storage, turned into limits and requests by
// presets.ContainerResources.
func componentResources(path *field.Path, c tkv1alpha1.Component, cpuAllocationRatio int64) (corev1.ResourceRequirements, error) {
	preset, err := presets.Lookup(string(c.ResourcesPreset))
	if err != nil {
		return corev1.ResourceRequirements{}, field.NotSupported(path.Child("resourcesPreset"), string(c.ResourcesPreset), presets.Names())
	}
	cpu, memory := preset.CPU, preset.Memory
	if c.Resources.CPU.IsSet() {
		if cpu, err = quantity.ParseBoundedQuantity(path.Child("resources", "cpu"), string(c.Resources.CPU), tkv1alpha1.MaxComponentCPU); err != nil {
			return corev1.ResourceRequirements{}, err
		}
	}
	if c.Resources.Memory.IsSet() {
		if memory, err = quantity.ParseBoundedQuantity(path.Child("resources", "memory"), string(c.Resources.Memory), tkv1alpha1.MaxComponentMemory); err != nil {
			return corev1.ResourceRequirements{}, err
		}
	}
	return presets.ContainerResources(cpu, memory, presets.EphemeralStorage, cpuAllocationRatio), nil
}

// buildKamajiControlPlane returns the KamajiControlPlane N
// (controlplane.cluster.x-k8s.io/v1alpha2) per docs/architecture.md:
// replicas, the patch version and component resources (docs/tenant-guide.md),
// konnectivity on port 8132 with the version override, kubelet cgroupfs systemd with
// InternalIP then ExternalIP, a ClusterIP Service exposed by an SSL
// passthrough Ingress on <host>:443 of UnservedIngressClass, and the
// DataStore dataStoreName; the API server's extra flags, volumes and mounts
// with those of spec.oidc (apiServerComponent); the certSAN
// N.NS.svc.<clusterDomain>, the Service's fully qualified name that worker
// VMs and Cilium dial (their DNS has no management-cluster search path) and
// that Kamaji's own names cover only under cluster.local.
func buildKamajiControlPlane(id function.Identity, spec *tkv1alpha1.KubernetesClusterSpec, in *cpinput.ControlPlaneInput,
	version versions.KubernetesVersion, sizing controlPlaneSizing, host, dataStoreName string, auth authentication,
) *kamajiv1alpha2.KamajiControlPlane {
	apiServer, volumes := apiServerComponent(spec.ControlPlane.APIServer, sizing.APIServer, auth)
	konnectivity := &kamajiv1alpha2.KonnectivitySpec{
		Server: &kamajiv1alpha2.KonnectivityServerSpec{
			Port:      KonnectivityPort,
			Version:   version.Konnectivity,
			Resources: &sizing.Konnectivity,
		},
	}
	if version.Konnectivity != "" {
		konnectivity.Agent = &kamajiv1alpha2.KonnectivityAgentSpec{Version: version.Konnectivity}
	}
	return &kamajiv1alpha2.KamajiControlPlane{
		TypeMeta: metav1.TypeMeta{APIVersion: kamajiv1alpha2.GroupVersion.String(), Kind: kamajiv1alpha2.KamajiControlPlaneKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      id.Name,
			Namespace: id.Namespace,
			Labels:    id.Labels(function.LabelCAPICluster, id.Name, LabelClusterRole, "control-plane"),
			Annotations: map[string]string{
				kamajiv1alpha2.KubeconfigSecretKeyAnnotation: function.KubeconfigSecretKey,
			},
		},
		Spec: kamajiv1alpha2.KamajiControlPlaneSpec{
			Replicas:          spec.ControlPlane.Replicas,
			Version:           version.Patch,
			DataStoreName:     dataStoreName,
			APIServer:         apiServer,
			Deployment:        volumes,
			ControllerManager: &kamajiv1alpha2.ControlPlaneComponent{Resources: &sizing.ControllerManager},
			Scheduler:         &kamajiv1alpha2.ControlPlaneComponent{Resources: &sizing.Scheduler},
			Addons:            &kamajiv1alpha2.AddonsSpec{Konnectivity: konnectivity},
			Kubelet: &kamajiv1alpha2.KubeletSpec{
				CgroupFS:              kamajiv1alpha2.CgroupDriverSystemd,
				PreferredAddressTypes: []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP},
			},
			Network: &kamajiv1alpha2.NetworkSpec{
				ServiceType: corev1.ServiceTypeClusterIP,
				CertSANs:    []string{id.APIServerServiceFQDN(in.ClusterDomain)},
				Ingress: &kamajiv1alpha2.IngressSpec{
					Hostname:         host + ":443",
					ClassName:        UnservedIngressClass,
					ExtraAnnotations: map[string]string{AnnotationSSLPassthrough: "true"},
				},
			},
		},
	}
}

// APIServerServiceName is the Service (and Ingress) in NS through which
// the shared ingress controller reaches the tenant API server:
// N-api-<digest> (function.Identity.IngressBackendName).
func APIServerServiceName(id function.Identity) string {
	return id.IngressBackendName(function.IngressRoleAPIServer)
}

// apiServerService is the ClusterIP Service APIServerServiceName: port
// 6443 of the pods of N's control plane.
func apiServerService(id function.Identity) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: APIServerServiceName(id), Namespace: id.Namespace, Labels: id.Labels()},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelKamajiName: id.Name},
			Ports: []corev1.ServicePort{{
				Name: "kube-apiserver", Protocol: corev1.ProtocolTCP,
				Port: APIServerPort, TargetPort: intstr.FromInt32(APIServerPort),
			}},
		},
	}
}

// apiServerIngress is the Ingress APIServerServiceName of the management
// ingress class: host, path "/" to the Service's port 6443, TLS passed
// through by SNI.
func apiServerIngress(id function.Identity, class, host string) *networkingv1.Ingress {
	pathType := networkingv1.PathTypePrefix
	name := APIServerServiceName(id)
	return &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: id.Namespace, Labels: id.Labels(),
			Annotations: map[string]string{AnnotationSSLPassthrough: "true"},
		},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: name, Port: networkingv1.ServiceBackendPort{Number: APIServerPort},
						}},
					}},
				}},
			}},
		},
	}
}

// clusterHost is spec.host, or <N>.<tenant host> when empty (the seed's
// <cluster-name>.<tenant-host>). It returns a *field.Error naming spec.host
// when the host may not be claimed by this tenant (HostPolicy.Check).
func clusterHost(id function.Identity, spec *tkv1alpha1.KubernetesClusterSpec, hosts function.HostPolicy) (string, error) {
	if spec.Host == "" {
		return hosts.ClusterHost(id), nil
	}
	if err := hosts.Check(field.NewPath("spec", "host"), spec.Host); err != nil {
		return "", err
	}
	return spec.Host, nil
}

// apiServerComponent is the KamajiControlPlane's spec.apiServer and
// spec.deployment (nil without extra volumes): spec.controlPlane.apiServer's
// extraArgs, extraVolumes and extraVolumeMounts with auth's flag, volume and
// mount. Kamaji keys flags by name and a pod's volumes and mounts by name
// and path, so order carries no meaning there; each list is sorted (flags
// by name, volumes by name, mounts by path) so that reordering the spec
// changes no byte and rolls no control-plane pod (kamaji #1154 is a
// reconcile loop on reordered flags).
func apiServerComponent(a tkv1alpha1.APIServer, resources corev1.ResourceRequirements, auth authentication) (*kamajiv1alpha2.ControlPlaneComponent, *kamajiv1alpha2.DeploymentSpec) {
	c := &kamajiv1alpha2.ControlPlaneComponent{Resources: &resources}
	args := make([]tkv1alpha1.APIServerArg, 0, len(a.ExtraArgs)+1)
	args = append(args, a.ExtraArgs...)
	if auth.Arg != "" {
		args = append(args, tkv1alpha1.APIServerArg(auth.Arg))
	}
	slices.SortStableFunc(args, func(x, y tkv1alpha1.APIServerArg) int { return strings.Compare(x.Flag(), y.Flag()) })
	for _, arg := range args {
		c.ExtraArgs = append(c.ExtraArgs, string(arg))
	}
	var volumes []corev1.Volume
	for _, v := range a.ExtraVolumes {
		vol := corev1.Volume{Name: v.Name}
		switch {
		case v.ConfigMap != nil:
			vol.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMap.Name}, Optional: v.ConfigMap.Optional}
		case v.Secret != nil:
			vol.Secret = &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName, Optional: v.Secret.Optional}
		}
		volumes = append(volumes, vol)
	}
	for _, m := range a.ExtraVolumeMounts {
		c.ExtraVolumeMounts = append(c.ExtraVolumeMounts, corev1.VolumeMount{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly})
	}
	if auth.Volume != nil {
		volumes = append(volumes, *auth.Volume)
		c.ExtraVolumeMounts = append(c.ExtraVolumeMounts, *auth.Mount)
	}
	slices.SortStableFunc(volumes, func(x, y corev1.Volume) int { return strings.Compare(x.Name, y.Name) })
	slices.SortStableFunc(c.ExtraVolumeMounts, func(x, y corev1.VolumeMount) int { return strings.Compare(x.MountPath, y.MountPath) })
	if len(volumes) == 0 {
		return c, nil
	}
	return c, &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: volumes}
}

// checkPod refuses a KamajiControlPlane whose pod the Deployment Kamaji
// builds from it would not hold: a volume of spec.deployment.extraVolumes
// named twice or as one of Kamaji's own (tkv1alpha1.KamajiVolumeNames), a
// container of extraContainers named twice or as one of Kamaji's
// (KamajiContainerNames), and a volume mount of a component or an extra
// container naming no extra volume. Kamaji prepends the extra volumes and
// containers to its own, and the API server refuses a pod with two of one
// name. The paths are the KamajiControlPlane's; every problem is listed.
func checkPod(kcp *kamajiv1alpha2.KamajiControlPlane) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("kamajiControlPlane", "spec")
	d := kcp.Spec.Deployment
	if d == nil {
		d = &kamajiv1alpha2.DeploymentSpec{}
	}
	volumes := map[string]bool{}
	vp := spec.Child("deployment", "extraVolumes")
	for i, v := range d.ExtraVolumes {
		if volumes[v.Name] || slices.Contains(tkv1alpha1.KamajiVolumeNames, v.Name) {
			errs = append(errs, field.Duplicate(vp.Index(i).Child("name"), v.Name))
		}
		volumes[v.Name] = true
	}
	containers := map[string]bool{}
	cp := spec.Child("deployment", "extraContainers")
	mounts := func(p *field.Path, ms []corev1.VolumeMount) {
		for i, m := range ms {
			if !volumes[m.Name] {
				errs = append(errs, field.NotFound(p.Index(i).Child("name"), m.Name))
			}
		}
	}
	for i, c := range d.ExtraContainers {
		if containers[c.Name] || slices.Contains(tkv1alpha1.KamajiContainerNames, c.Name) {
			errs = append(errs, field.Duplicate(cp.Index(i).Child("name"), c.Name))
		}
		containers[c.Name] = true
		mounts(cp.Index(i).Child("volumeMounts"), c.VolumeMounts)
	}
	for _, c := range []struct {
		name string
		c    *kamajiv1alpha2.ControlPlaneComponent
	}{{"apiServer", kcp.Spec.APIServer}, {"controllerManager", kcp.Spec.ControllerManager}, {"scheduler", kcp.Spec.Scheduler}} {
		if c.c != nil {
			mounts(spec.Child(c.name, "extraVolumeMounts"), c.c.ExtraVolumeMounts)
		}
	}
	return errs
}

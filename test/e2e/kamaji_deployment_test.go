//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/render"
)

// The control-plane Deployment Kamaji builds from a KamajiControlPlane,
// played. Sources: the Kamaji control-plane provider v0.20.0
// (github.com/clastix/cluster-api-control-plane-provider-kamaji,
// controllers/kamajicontrolplane_controller_tcp.go, "tcp.go" below) maps the
// KamajiControlPlane to a TenantControlPlane; Kamaji at the commit that
// provider pins (go.mod: github.com/clastix/kamaji
// v1.0.1-0.20260330073609-e51909fae3f5) builds the Deployment
// (internal/builders/controlplane/deployment.go, "deployment.go", and
// konnectivity_server.go, "konnectivity.go"). Only the etcd driver is
// played: tenantkube's DataStores are etcd ones.

// Kamaji's own volume and container names (deployment.go:29-51,
// konnectivity.go:20-31).
const (
	kamajiPKIVolume          = "etc-kubernetes-pki"
	kamajiCAVolume           = "etc-ca-certificates"
	kamajiShareCAVolume      = "usr-share-ca-certificates"
	kamajiLocalShareCAVolume = "usr-local-share-ca-certificates"
	kamajiSchedulerVolume    = "scheduler-kubeconfig"
	kamajiCMVolume           = "controller-manager-kubeconfig"
	kamajiKonnUDSVolume      = "konnectivity-uds"
	kamajiEgressVolume       = "egress-selector-configuration"
	kamajiKonnKubeVolume     = "konnectivity-server-kubeconfig"
	kamajiAPIServer          = "kube-apiserver"
	kamajiCM                 = "kube-controller-manager"
	kamajiScheduler          = "kube-scheduler"
	kamajiKonnServer         = "konnectivity-server"
	// kubeadm's v1beta3.DefaultCertificatesDir and constants (file names).
	pkiDir = "/etc/kubernetes/pki"
)

// kcpComponent is ControlPlaneComponent (provider api/v1alpha2).
type kcpComponent struct {
	ExtraVolumeMounts  []corev1.VolumeMount        `json:"extraVolumeMounts"`
	ExtraArgs          []string                    `json:"extraArgs"`
	Resources          corev1.ResourceRequirements `json:"resources"`
	ContainerImageName string                      `json:"containerImageName"`
	Probes             json.RawMessage             `json:"probes"`
}

type kcpMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// kcpSpec is the part of a KamajiControlPlane's spec that reaches the
// Deployment (provider api/v1alpha2/kamajicontrolplane_types.go).
type kcpSpec struct {
	Replicas             *int32       `json:"replicas"`
	Version              string       `json:"version"`
	Registry             string       `json:"registry"`
	DataStoreName        string       `json:"dataStoreName"`
	DataStoreSchema      string       `json:"dataStoreSchema"`
	AdmissionControllers []string     `json:"admissionControllers"`
	APIServer            kcpComponent `json:"apiServer"`
	ControllerManager    kcpComponent `json:"controllerManager"`
	Scheduler            kcpComponent `json:"scheduler"`
	Kubelet              struct {
		PreferredAddressTypes []string `json:"preferredAddressTypes"`
	} `json:"kubelet"`
	Network struct {
		ServiceAddress   string `json:"serviceAddress"`
		AdvertiseAddress string `json:"advertiseAddress"`
	} `json:"network"`
	Addons struct {
		Konnectivity *struct {
			Server struct {
				Port      int32                        `json:"port"`
				Version   string                       `json:"version"`
				Image     string                       `json:"image"`
				Resources *corev1.ResourceRequirements `json:"resources"`
				ExtraArgs []string                     `json:"extraArgs"`
			} `json:"server"`
		} `json:"konnectivity"`
	} `json:"addons"`
	Deployment struct {
		NodeSelector              map[string]string                 `json:"nodeSelector"`
		RuntimeClassName          string                            `json:"runtimeClassName"`
		ServiceAccountName        string                            `json:"serviceAccountName"`
		AdditionalMetadata        kcpMetadata                       `json:"additionalMetadata"`
		PodAdditionalMetadata     kcpMetadata                       `json:"podAdditionalMetadata"`
		Strategy                  appsv1.DeploymentStrategy         `json:"strategy"`
		Affinity                  *corev1.Affinity                  `json:"affinity"`
		Tolerations               []corev1.Toleration               `json:"tolerations"`
		TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
		ExtraInitContainers       []corev1.Container                `json:"extraInitContainers"`
		ExtraContainers           []corev1.Container                `json:"extraContainers"`
		ExtraVolumes              []corev1.Volume                   `json:"extraVolumes"`
		Probes                    json.RawMessage                   `json:"probes"`
	} `json:"deployment"`
}

// clusterNetwork is what the provider takes from the Cluster API Cluster
// (tcp.go:67-79): 0 and "" leave the TenantControlPlane CRD's defaults
// (Kamaji api/v1alpha1/tenantcontrolplane_types.go:49-60: port 6443,
// services 10.96.0.0/16, pods 10.244.0.0/16).
type clusterNetwork struct {
	Port              int32
	ServiceCIDR, Pods string
}

// kamajiDeployment is the Deployment Kamaji builds on its first reconcile
// of the TenantControlPlane the provider makes of KamajiControlPlane
// ns/name (Deployment.Build, deployment.go:78-101, then Konnectivity.Build,
// konnectivity.go:270-276, as the webhook does, internal/webhook/handlers/
// tcp_deployment.go:93-97). endpoints are the etcd DataStore's.
func kamajiDeployment(ns, name string, kcp kcpSpec, cn clusterNetwork, endpoints []string) (*appsv1.Deployment, error) {
	// The provider leaves the TenantControlPlane's probes unset unless all
	// four are (tcp.go:248-265); overrides are not played.
	for _, p := range []json.RawMessage{kcp.Deployment.Probes, kcp.APIServer.Probes, kcp.ControllerManager.Probes, kcp.Scheduler.Probes} {
		if len(p) > 0 && string(p) != "null" {
			return nil, fmt.Errorf("KamajiControlPlane %s/%s sets probes, which this play does not model", ns, name)
		}
	}
	// Defaults of the KamajiControlPlane CRD (provider v0.20.0,
	// config/crd: replicas 2, registry registry.k8s.io, konnectivity
	// server image and port 8132, kubelet address types), for objects
	// read from a render golden, which the API server has not defaulted.
	replicas := ptr.Deref(kcp.Replicas, 2)
	registry := kcp.Registry
	if registry == "" {
		registry = "registry.k8s.io"
	}
	addressTypes := kcp.Kubelet.PreferredAddressTypes
	if addressTypes == nil {
		addressTypes = []string{"InternalIP", "ExternalIP", "Hostname"}
	}
	if cn.Port == 0 {
		cn.Port = 6443
	}
	if cn.ServiceCIDR == "" {
		cn.ServiceCIDR = "10.96.0.0/16"
	}
	if cn.Pods == "" {
		cn.Pods = "10.244.0.0/16"
	}
	version := kcp.Version
	if !strings.HasPrefix(version, "v") { // tcp.go:84-88
		version = "v" + version
	}
	// Kamaji's Secret and ConfigMap names are <tcp>-<resource> (internal/
	// utilities/utilities.go:41-43 and each resource's GetName).
	own := func(s string) string { return name + "-" + s }
	// image is RegistrySettings.buildContainerImage (Kamaji api/v1alpha1/
	// tenantcontrolplane_registrysettings_funcs.go:10-18); the provider
	// copies registry and image names (tcp.go:114, 142-144), empty names
	// take the TenantControlPlane CRD's defaults (registrysettings.go:7-16).
	image := func(img, def string) string {
		if img == "" {
			img = def
		}
		return fmt.Sprintf("%s/%s:%s", registry, img, version)
	}

	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
	}
	// Labels and annotations (deployment.go:81-84; KamajiLabels,
	// internal/utilities/utilities.go:21-27; templateLabels,
	// deployment.go:1057-1069: the Secret hashes are "" until the Secrets
	// exist).
	d.Labels = mergeMaps(map[string]string{"kamaji.clastix.io/project": "kamaji", "kamaji.clastix.io/name": name, "kamaji.clastix.io/component": "deployment"},
		kcp.Deployment.AdditionalMetadata.Labels)
	d.Annotations = mergeMaps(kcp.Deployment.AdditionalMetadata.Annotations)
	tl := map[string]string{"kamaji.clastix.io/name": name, "kamaji.clastix.io/component": "deployment",
		"component.kamaji.clastix.io/datastore": kcp.DataStoreName}
	for _, k := range []string{"api-server-certificate", "api-server-kubelet-client-certificate", "ca", "controller-manager-kubeconfig",
		"front-proxy-ca-certificate", "front-proxy-client-certificate", "service-account", "scheduler-kubeconfig"} {
		tl["component.kamaji.clastix.io/"+k] = ""
	}
	d.Spec.Template.Labels = mergeMaps(tl, kcp.Deployment.PodAdditionalMetadata.Labels)
	d.Spec.Template.Annotations = mergeMaps(kcp.Deployment.PodAdditionalMetadata.Annotations, map[string]string{"storage.kamaji.clastix.io/config": ""})
	ps := &d.Spec.Template.Spec
	ps.NodeSelector = kcp.Deployment.NodeSelector // deployment.go:1166-1176, tcp.go:235-243
	ps.Tolerations = kcp.Deployment.Tolerations
	ps.Affinity = kcp.Deployment.Affinity
	// setStrategy, deployment.go:140-175: no rollingUpdate and not
	// Recreate is a blue/green rollout.
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: kcp.Deployment.Strategy.Type}
	if ru := kcp.Deployment.Strategy.RollingUpdate; kcp.Deployment.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		if ru == nil {
			ru = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("100%"))}
		}
		d.Spec.Strategy.RollingUpdate = ru
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"kamaji.clastix.io/name": name}} // deployment.go:1028-1034
	// setTopologySpreadConstraints, deployment.go:1120-1130.
	for i := range kcp.Deployment.TopologySpreadConstraints {
		if kcp.Deployment.TopologySpreadConstraints[i].LabelSelector == nil {
			kcp.Deployment.TopologySpreadConstraints[i].LabelSelector = d.Spec.Selector
		}
	}
	ps.TopologySpreadConstraints = kcp.Deployment.TopologySpreadConstraints
	if kcp.Deployment.RuntimeClassName != "" { // deployment.go:1040-1048
		ps.RuntimeClassName = ptr.To(kcp.Deployment.RuntimeClassName)
	}
	d.Spec.Replicas = ptr.To(replicas) // deployment.go:1036-1038, tcp.go:81
	// The etcd driver: the init containers are the extra ones
	// (deployment.go:112-125), and no kine container or volumes
	// (deployment.go:896-902, 827-830).
	ps.InitContainers = kcp.Deployment.ExtraInitContainers
	// The extra containers first, then Kamaji's (deployment.go:94-96,
	// 103-108, 129-138).
	ps.Containers = append(ps.Containers, kcp.Deployment.ExtraContainers...)

	// kube-apiserver, deployment.go:587-706; its flags, 708-780 (the
	// extra flags override Kamaji's, 779).
	apiArgs := map[string]string{
		"--allow-privileged": "true", "--authorization-mode": "Node,RBAC",
		"--advertise-address":                  firstNonEmpty(kcp.Network.AdvertiseAddress, kcp.Network.ServiceAddress),
		"--client-ca-file":                     path.Join(pkiDir, "ca.crt"),
		"--enable-admission-plugins":           strings.Join(kcp.AdmissionControllers, ","),
		"--enable-bootstrap-token-auth":        "true",
		"--service-cluster-ip-range":           cn.ServiceCIDR,
		"--kubelet-client-certificate":         path.Join(pkiDir, "apiserver-kubelet-client.crt"),
		"--kubelet-client-key":                 path.Join(pkiDir, "apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types":    strings.Join(addressTypes, ","),
		"--proxy-client-cert-file":             path.Join(pkiDir, "front-proxy-client.crt"),
		"--proxy-client-key-file":              path.Join(pkiDir, "front-proxy-client.key"),
		"--requestheader-allowed-names":        "front-proxy-client",
		"--requestheader-client-ca-file":       path.Join(pkiDir, "front-proxy-ca.crt"),
		"--requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"--requestheader-group-headers":        "X-Remote-Group",
		"--requestheader-username-headers":     "X-Remote-User",
		"--secure-port":                        fmt.Sprint(cn.Port),
		"--service-account-issuer":             "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file":           path.Join(pkiDir, "sa.pub"),
		"--service-account-signing-key-file":   path.Join(pkiDir, "sa.key"),
		"--tls-cert-file":                      path.Join(pkiDir, "apiserver.crt"),
		"--tls-private-key-file":               path.Join(pkiDir, "apiserver.key"),
		"--etcd-compaction-interval":           "0",
		"--etcd-prefix":                        "/" + kcp.DataStoreSchema,
		"--etcd-servers":                       strings.Join(prefixAll("https://", endpoints), ","),
		"--etcd-cafile":                        "/etc/kubernetes/pki/etcd/ca.crt",
		"--etcd-certfile":                      "/etc/kubernetes/pki/etcd/server.crt",
		"--etcd-keyfile":                       "/etc/kubernetes/pki/etcd/server.key",
	}
	if kcp.Addons.Konnectivity != nil { // konnectivity.go:196-201
		apiArgs["--egress-selector-config-file"] = "/etc/kubernetes/konnectivity/configurations/egress-selector-configuration.yaml"
	}
	probe := func(p string, port int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: p, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTPS}},
			TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	ro := func(n, p string) corev1.VolumeMount { return corev1.VolumeMount{Name: n, ReadOnly: true, MountPath: p} }
	// ensure is ensureVolumeMount (deployment.go:558-570) over the extra
	// mounts first (initVolumeMounts, 574-585).
	ensure := func(ms []corev1.VolumeMount, add ...corev1.VolumeMount) []corev1.VolumeMount {
		out := append([]corev1.VolumeMount{}, ms...)
		for _, a := range add {
			i := slicesIndex(out, a.Name)
			if i < 0 {
				out = append(out, a)
				continue
			}
			out[i] = a
		}
		return out
	}
	caMounts := []corev1.VolumeMount{ro(kamajiPKIVolume, pkiDir), ro(kamajiCAVolume, "/etc/ca-certificates"),
		ro(kamajiShareCAVolume, "/usr/share/ca-certificates"), ro(kamajiLocalShareCAVolume, "/usr/local/share/ca-certificates")}
	api := corev1.Container{
		Name: kamajiAPIServer, Image: image(kcp.APIServer.ContainerImageName, "kube-apiserver"), Command: []string{"kube-apiserver"},
		Args:          argsSlice(mergeMaps(apiArgs, argsMap(kcp.APIServer.ExtraArgs))),
		LivenessProbe: probe("/livez", cn.Port), ReadinessProbe: probe("/readyz", cn.Port), StartupProbe: probe("/livez", cn.Port),
		ImagePullPolicy: corev1.PullAlways,
		VolumeMounts:    ensure(kcp.APIServer.ExtraVolumeMounts, caMounts...),
		Resources:       kcp.APIServer.Resources, // tcp.go:133-140
	}
	if kcp.Addons.Konnectivity != nil { // konnectivity.go:204-221
		api.VolumeMounts = ensure(api.VolumeMounts, corev1.VolumeMount{Name: kamajiKonnUDSVolume, MountPath: "/run/konnectivity"},
			corev1.VolumeMount{Name: kamajiEgressVolume, MountPath: "/etc/kubernetes/konnectivity/configurations"})
	}
	// kube-scheduler, deployment.go:345-433.
	schedConf := "/etc/kubernetes/scheduler.conf"
	sched := corev1.Container{
		Name: kamajiScheduler, Image: image(kcp.Scheduler.ContainerImageName, "kube-scheduler"), Command: []string{"kube-scheduler"},
		Args: argsSlice(mergeMaps(argsMap(kcp.Scheduler.ExtraArgs), map[string]string{"--authentication-kubeconfig": schedConf,
			"--authorization-kubeconfig": schedConf, "--bind-address": "0.0.0.0", "--kubeconfig": schedConf, "--leader-elect": "true"})),
		LivenessProbe: probe("/healthz", 10259), StartupProbe: probe("/healthz", 10259),
		Resources:    kcp.Scheduler.Resources,
		VolumeMounts: ensure(kcp.Scheduler.ExtraVolumeMounts, ro(kamajiSchedulerVolume, "/etc/kubernetes")),
	}
	// kube-controller-manager, deployment.go:435-555.
	cmConf := "/etc/kubernetes/controller-manager.conf"
	cm := corev1.Container{
		Name: kamajiCM, Image: image(kcp.ControllerManager.ContainerImageName, "kube-controller-manager"), Command: []string{"kube-controller-manager"},
		Args: argsSlice(mergeMaps(map[string]string{
			"--allocate-node-cidrs": "true", "--authentication-kubeconfig": cmConf, "--authorization-kubeconfig": cmConf,
			"--bind-address": "0.0.0.0", "--client-ca-file": path.Join(pkiDir, "ca.crt"), "--cluster-name": name,
			"--cluster-signing-cert-file": path.Join(pkiDir, "ca.crt"), "--cluster-signing-key-file": path.Join(pkiDir, "ca.key"),
			"--controllers": "*,bootstrapsigner,tokencleaner", "--kubeconfig": cmConf, "--leader-elect": "true",
			"--service-cluster-ip-range": cn.ServiceCIDR, "--cluster-cidr": cn.Pods,
			"--requestheader-client-ca-file": path.Join(pkiDir, "front-proxy-ca.crt"), "--root-ca-file": path.Join(pkiDir, "ca.crt"),
			"--service-account-private-key-file": path.Join(pkiDir, "sa.key"), "--use-service-account-credentials": "true",
		}, argsMap(kcp.ControllerManager.ExtraArgs))),
		LivenessProbe: probe("/healthz", 10257), StartupProbe: probe("/healthz", 10257),
		Resources:    kcp.ControllerManager.Resources,
		VolumeMounts: ensure(kcp.ControllerManager.ExtraVolumeMounts, append([]corev1.VolumeMount{ro(kamajiCMVolume, "/etc/kubernetes")}, caMounts...)...),
	}
	ps.Containers = append(ps.Containers, api, sched, cm)

	// The extra volumes first, then Kamaji's (deployment.go:97-98,
	// 177-189, 191-330, 334-343).
	secretVol := func(n, secret string) corev1.Volume {
		return corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: ptr.To(int32(420))}}}
	}
	proj := func(secret string, keys ...string) corev1.VolumeProjection {
		sp := &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}
		for _, k := range keys {
			sp.Items = append(sp.Items, corev1.KeyToPath{Key: k, Path: k})
		}
		return corev1.VolumeProjection{Secret: sp}
	}
	ps.Volumes = append(ps.Volumes, kcp.Deployment.ExtraVolumes...)
	etcdCerts := corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: own("datastore-certificate")},
		Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "etcd/ca.crt"}, {Key: "server.crt", Path: "etcd/server.crt"}, {Key: "server.key", Path: "etcd/server.key"}}}}
	ps.Volumes = append(ps.Volumes,
		corev1.Volume{Name: kamajiPKIVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To(int32(420)), Sources: []corev1.VolumeProjection{
			proj(own("api-server-certificate"), "apiserver.crt", "apiserver.key"),
			proj(own("ca"), "ca.crt", "ca.key"),
			proj(own("api-server-kubelet-client-certificate"), "apiserver-kubelet-client.crt", "apiserver-kubelet-client.key"),
			proj(own("front-proxy-ca-certificate"), "front-proxy-ca.crt", "front-proxy-ca.key"),
			proj(own("front-proxy-client-certificate"), "front-proxy-client.crt", "front-proxy-client.key"),
			proj(own("sa-certificate"), "sa.pub", "sa.key"),
			etcdCerts,
		}}}},
		secretVol(kamajiCAVolume, own("ca")),
		secretVol(kamajiShareCAVolume, own("ca")),
		secretVol(kamajiLocalShareCAVolume, own("ca")),
		secretVol(kamajiSchedulerVolume, own("scheduler-kubeconfig")),
		secretVol(kamajiCMVolume, own("controller-manager-kubeconfig")),
	)

	// The konnectivity server container and volumes (konnectivity.go:
	// 50-137, 224-268), when the addon is on (tcp.go:93).
	if k := kcp.Addons.Konnectivity; k != nil {
		srv := k.Server
		if srv.Image == "" {
			srv.Image = "registry.k8s.io/kas-network-proxy/proxy-server"
		}
		if srv.Port == 0 {
			srv.Port = 8132
		}
		sv := srv.Version
		if sv == "" { // konnectivity.go:37-48
			var major, minor int
			if _, err := fmt.Sscanf(version, "v%d.%d", &major, &minor); err == nil {
				sv = fmt.Sprintf("v0.%d.0", minor)
			}
		}
		args := mergeMaps(argsMap(srv.ExtraArgs), map[string]string{
			"--uds-name": "/run/konnectivity/konnectivity-server.socket", "--cluster-cert": "/etc/kubernetes/pki/apiserver.crt",
			"--cluster-key": "/etc/kubernetes/pki/apiserver.key", "--mode": "grpc", "--server-port": "0",
			"--agent-port": fmt.Sprint(srv.Port), "--admin-port": "8133", "--health-port": "8134",
			"--agent-namespace": "kube-system", "--agent-service-account": "konnectivity-agent",
			"--kubeconfig": "/etc/kubernetes/konnectivity-server.conf", "--authentication-audience": "system:konnectivity-server",
			"--server-count": fmt.Sprint(replicas),
		})
		c := corev1.Container{
			Name: kamajiKonnServer, Image: srv.Image + ":" + sv, Command: []string{"/proxy-server"}, Args: argsSlice(args),
			LivenessProbe: &corev1.Probe{InitialDelaySeconds: 30, TimeoutSeconds: 60, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8134), Scheme: corev1.URISchemeHTTP}}},
			Ports: []corev1.ContainerPort{{Name: "agentport", ContainerPort: srv.Port, Protocol: corev1.ProtocolTCP},
				{Name: "adminport", ContainerPort: 8133, Protocol: corev1.ProtocolTCP}, {Name: "healthport", ContainerPort: 8134, Protocol: corev1.ProtocolTCP}},
			VolumeMounts: []corev1.VolumeMount{ro(kamajiPKIVolume, pkiDir),
				{Name: kamajiKonnKubeVolume, MountPath: "/etc/kubernetes/konnectivity-server.conf", SubPath: "konnectivity-server.conf", ReadOnly: true},
				{Name: kamajiKonnUDSVolume, MountPath: "/run/konnectivity"}},
			ImagePullPolicy: corev1.PullAlways,
		}
		if srv.Resources != nil {
			c.Resources = *srv.Resources
		}
		ps.Containers = append(ps.Containers, c)
		ps.Volumes = append(ps.Volumes,
			corev1.Volume{Name: kamajiKonnUDSVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			corev1.Volume{Name: kamajiEgressVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: own("konnectivity-egress-selector-configuration")}, DefaultMode: ptr.To(int32(420))}}},
			secretVol(kamajiKonnKubeVolume, own("konnectivity-kubeconfig")),
		)
	}
	ps.ServiceAccountName = firstNonEmpty(kcp.Deployment.ServiceAccountName, "default") // deployment.go:1178-1186
	return d, nil
}

// mergeMaps is utilities.MergeMaps (Kamaji internal/utilities/utilities.go:
// 29-39): later maps win.
func mergeMaps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// argsMap and argsSlice are ArgsFromSliceToMap and ArgsFromMapToSlice
// (Kamaji internal/utilities/args.go:13-41): flag=value keyed by flag,
// back as sorted flag=value, a bare flag when the value is empty.
func argsMap(args []string) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		f, v, _ := strings.Cut(a, "=")
		m[f] = v
	}
	return m
}

func argsSlice(m map[string]string) []string {
	var out []string
	for f, v := range m {
		if v == "" {
			out = append(out, f)
			continue
		}
		out = append(out, f+"="+v)
	}
	sort.Strings(out)
	return out
}

func slicesIndex(ms []corev1.VolumeMount, name string) int {
	for i, m := range ms {
		if m.Name == name {
			return i
		}
	}
	return -1
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func prefixAll(p string, ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, p+s)
	}
	return out
}

// kamajiGoldens are the render goldens whose KamajiControlPlane carries
// extra volumes (test/testdata; none holds a Talos node group's, so one
// is rendered).
var kamajiGoldens = []string{"api-server-oidc", "oidc-custom", "oidc-gate"}

// talosObserved are the Talos signer's serving certificate Secret and the
// tenant API server Service (its ClusterIP), which the control-plane
// function requires before it adds the signer (the CA Secret is
// test/testdata/workers/talos-pki.yaml).
const talosObserved = `apiVersion: v1
kind: Secret
metadata: {name: demo-talos-tls, namespace: tenant-demo}
type: kubernetes.io/tls
data: {tls.crt: Y3J0, tls.key: a2V5}
---
apiVersion: v1
kind: Service
metadata: {name: demo, namespace: tenant-demo}
spec: {clusterIP: 10.96.12.34}
`

const kamajiDryRunNS = "e2e-kamaji-deployment"

// kamajiDeployments: the Deployment Kamaji would build from every
// KamajiControlPlane tenantkube composed in this stack, from the render
// goldens' with extra volumes and from a rendered Talos cluster's, is accepted by the API server (server-side
// dry run, as Kamaji's own webhook checks it, internal/webhook/handlers/
// tcp_deployment.go:99-107); the names Kamaji adds are the ones
// tkv1alpha1.KamajiVolumeNames and KamajiContainerNames reserve. Negative
// controls: an extra volume named as tenantkube's talos-ca or Kamaji's
// etc-kubernetes-pki, and an extra container named kube-apiserver, are
// refused as duplicates.
func (e *env) kamajiDeployments(t *testing.T) {
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kamajiDryRunNS}}
	if err := e.c.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		fatalf(t, "namespace %s: %v", kamajiDryRunNS, err)
	}
	t.Cleanup(func() {
		ctx, cancel := ctxT(30 * time.Second)
		defer cancel()
		_ = e.c.Delete(ctx, ns)
	})
	type source struct {
		what, ns string
		kcp      kcpSpec
		cn       clusterNetwork
		eps      []string
	}
	var srcs []source
	// fromObjects reads a KamajiControlPlane's spec, its Cluster's network
	// and its DataStore's endpoints.
	fromObjects := func(kcp *unstructured.Unstructured, cluster, ds *unstructured.Unstructured) source {
		var s source
		raw, err := json.Marshal(kcp.Object["spec"])
		e.must(t, err, "marshal KamajiControlPlane spec")
		e.must(t, json.Unmarshal(raw, &s.kcp), "decode KamajiControlPlane "+kcp.GetNamespace()+"/"+kcp.GetName())
		if cluster != nil {
			port, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "clusterNetwork", "apiServerPort")
			s.cn.Port = int32(port)
			svc, _, _ := unstructured.NestedStringSlice(cluster.Object, "spec", "clusterNetwork", "services", "cidrBlocks")
			pods, _, _ := unstructured.NestedStringSlice(cluster.Object, "spec", "clusterNetwork", "pods", "cidrBlocks")
			if len(svc) > 0 {
				s.cn.ServiceCIDR = svc[0]
			}
			if len(pods) > 0 {
				s.cn.Pods = pods[0]
			}
		}
		if ds != nil {
			s.eps, _, _ = unstructured.NestedStringSlice(ds.Object, "spec", "endpoints")
		}
		return s
	}
	kcps, err := list(ctx, e.c, gvkKCP)
	e.must(t, err, "list KamajiControlPlanes")
	if len(kcps) == 0 {
		fatalf(t, "no KamajiControlPlane in the stack")
	}
	for i := range kcps {
		k := &kcps[i]
		cl, err := get(ctx, e.c, gvkCluster, k.GetNamespace(), k.GetName())
		if err != nil {
			cl = nil
		}
		dsName, _, _ := unstructured.NestedString(k.Object, "spec", "dataStoreName")
		ds, err := get(ctx, e.c, gvkDataStore, "", dsName)
		if err != nil {
			ds = nil
		}
		s := fromObjects(k, cl, ds)
		s.what, s.ns = "live "+k.GetNamespace()+"/"+k.GetName(), k.GetNamespace()
		srcs = append(srcs, s)
	}
	withExtras := 0
	for _, g := range kamajiGoldens {
		objs, err := decodeFile(e.path("test", "testdata", "control-plane", g+".golden.yaml"))
		e.must(t, err, "read golden "+g)
		find := func(kind, name string) *unstructured.Unstructured {
			for _, o := range objs {
				if o.GetKind() == kind && o.GetName() == name {
					return o
				}
			}
			return nil
		}
		for _, o := range objs {
			if o.GetKind() != "KamajiControlPlane" {
				continue
			}
			dsName, _, _ := unstructured.NestedString(o.Object, "spec", "dataStoreName")
			s := fromObjects(o, find("Cluster", o.GetName()), find("DataStore", dsName))
			if len(s.kcp.Deployment.ExtraVolumes)+len(s.kcp.Deployment.ExtraContainers) == 0 {
				fatalf(t, "golden %s: its KamajiControlPlane has no extra volume or container", g)
			}
			withExtras++
			s.what, s.ns = "golden "+g, kamajiDryRunNS
			srcs = append(srcs, s)
		}
	}
	if withExtras != len(kamajiGoldens) {
		fatalf(t, "%d KamajiControlPlanes in %d goldens, want one each", withExtras, len(kamajiGoldens))
	}
	// A cluster with Talos node groups, rendered through the real engine
	// and this tree's functions: the workers goldens' XR with the Talos
	// CA, the signer's serving certificate and the API server Service
	// observed, so the KamajiControlPlane carries the CSR signer.
	req := filepath.Join(t.TempDir(), "talos-observed.yaml")
	e.must(t, os.WriteFile(req, []byte(talosObserved), 0o644), "write "+req)
	wd := func(p string) string { return e.path("test", "testdata", "workers", p) }
	out, err := render.Render(ctx, render.Options{
		Root: e.root, XR: wd("xr-talos.yaml"), BinDir: e.bin,
		Crossplane: e.binary("crossplane"), CrossplaneCore: e.binary("crossplane-core"),
		Required: []string{e.path("examples", "instancetypes.yaml"), wd("talos-pki.yaml"), wd("platform-fast-ssd.yaml"), req},
		Stderr:   io.Discard,
	})
	e.must(t, err, "render the Talos cluster")
	objs, err := decodeYAML(out)
	e.must(t, err, "decode the rendered Talos cluster")
	var talos *source
	for _, o := range objs {
		if o.GetKind() == "KamajiControlPlane" && o.GetAPIVersion() == gvkKCP.GroupVersion().String() {
			s := fromObjects(o, nil, nil)
			s.what, s.ns = "rendered Talos "+o.GetName(), kamajiDryRunNS
			talos = &s
		}
	}
	if talos == nil || !slices.ContainsFunc(talos.kcp.Deployment.ExtraVolumes, func(v corev1.Volume) bool { return v.Name == tkv1alpha1.TalosCAVolume }) ||
		!slices.ContainsFunc(talos.kcp.Deployment.ExtraContainers, func(c corev1.Container) bool { return c.Name == tkv1alpha1.TalosSignerContainer }) {
		fatalf(t, "the rendered Talos cluster has no KamajiControlPlane with the %s volume and %s container", tkv1alpha1.TalosCAVolume, tkv1alpha1.TalosSignerContainer)
	}
	srcs = append(srcs, *talos)

	name := func(s source) string {
		return "kamaji-" + strings.ToLower(strings.NewReplacer("/", "-", " ", "-").Replace(s.what))
	}
	for _, s := range srcs {
		d, err := kamajiDeployment(s.ns, name(s), s.kcp, s.cn, s.eps)
		e.must(t, err, s.what)
		// What Kamaji adds is what the functions reserve.
		extraV := map[string]bool{}
		for _, v := range s.kcp.Deployment.ExtraVolumes {
			extraV[v.Name] = true
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if !extraV[v.Name] && !slices.Contains(tkv1alpha1.KamajiVolumeNames, v.Name) {
				t.Errorf("%s: Kamaji adds volume %q, not in tkv1alpha1.KamajiVolumeNames", s.what, v.Name)
			}
		}
		extraC := map[string]bool{}
		for _, c := range s.kcp.Deployment.ExtraContainers {
			extraC[c.Name] = true
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !extraC[c.Name] && !slices.Contains(tkv1alpha1.KamajiContainerNames, c.Name) {
				t.Errorf("%s: Kamaji adds container %q, not in tkv1alpha1.KamajiContainerNames", s.what, c.Name)
			}
		}
		if err := e.c.Create(ctx, d, client.DryRunAll); err != nil {
			t.Errorf("%s: the API server refuses the Deployment Kamaji would build (%d volumes, %d containers): %v",
				s.what, len(d.Spec.Template.Spec.Volumes), len(d.Spec.Template.Spec.Containers), err)
			continue
		}
		t.Logf("%s: Deployment accepted (dry run): volumes %v, containers %v", s.what, volumeNames(d), containerNames(d))
	}

	// Negative controls. Kamaji puts the extra volumes and containers
	// first (deployment.go:334-343, 129-138), so a clash is reported on
	// the later entry: a tenant's talos-ca appended to the Talos control
	// plane's extra volumes (as composed before extraVolumes refused
	// reserved names) at volumes[len], Kamaji's own etc-kubernetes-pki
	// after one extra volume at volumes[1], Kamaji's kube-apiserver after
	// one extra container at containers[1].
	secret := func(n string) corev1.Volume {
		return corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n}}}
	}
	nTalos := len(talos.kcp.Deployment.ExtraVolumes)
	for _, c := range []struct {
		name string
		base source
		edit func(k *kcpSpec)
		want string
	}{
		{"tenant volume named as the Talos CA", *talos, func(k *kcpSpec) {
			k.Deployment.ExtraVolumes = append(k.Deployment.ExtraVolumes, secret(tkv1alpha1.TalosCAVolume))
		}, fmt.Sprintf(`spec.template.spec.volumes[%d].name: Duplicate value: "talos-ca"`, nTalos)},
		{"tenant volume named as Kamaji's PKI", srcs[0], func(k *kcpSpec) {
			k.Deployment.ExtraVolumes = []corev1.Volume{secret("etc-kubernetes-pki")}
		}, `spec.template.spec.volumes[1].name: Duplicate value: "etc-kubernetes-pki"`},
		{"extra container named kube-apiserver", srcs[0], func(k *kcpSpec) {
			k.Deployment.ExtraContainers = []corev1.Container{{Name: "kube-apiserver", Image: "registry.example/x:1"}}
		}, `spec.template.spec.containers[1].name: Duplicate value: "kube-apiserver"`},
	} {
		base := c.base
		k := base.kcp
		k.Deployment.ExtraVolumes = slices.Clone(k.Deployment.ExtraVolumes)
		k.Deployment.ExtraContainers = slices.Clone(k.Deployment.ExtraContainers)
		c.edit(&k)
		d, err := kamajiDeployment(base.ns, name(base), k, base.cn, base.eps)
		e.must(t, err, c.name)
		err = e.c.Create(ctx, d, client.DryRunAll)
		switch {
		case err == nil:
			t.Errorf("%s: the API server accepts the Deployment, want a duplicate-name refusal", c.name)
		case !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: refused with %v, want Invalid holding %q", c.name, err, c.want)
		default:
			t.Logf("%s: refused: %v", c.name, err)
		}
	}
}

func volumeNames(d *appsv1.Deployment) []string {
	var out []string
	for _, v := range d.Spec.Template.Spec.Volumes {
		out = append(out, v.Name)
	}
	return out
}

func containerNames(d *appsv1.Deployment) []string {
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}

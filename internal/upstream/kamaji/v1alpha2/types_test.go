package v1alpha2_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

var transition = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func resources(cpu, mem string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse(cpu),
			corev1.ResourceMemory:           resource.MustParse(mem),
			corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
		},
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("200m"),
			corev1.ResourceMemory:           resource.MustParse(mem),
			corev1.ResourceEphemeralStorage: resource.MustParse("53687091"),
		},
	}
}

// demo is the KamajiControlPlane docs/architecture.md describes for cluster "demo" in
// namespace "tenant-demo", with every modelled field set.
func demo() *kamajiv1alpha2.KamajiControlPlane {
	return &kamajiv1alpha2.KamajiControlPlane{
		TypeMeta: metav1.TypeMeta{APIVersion: kamajiv1alpha2.GroupVersion.String(), Kind: kamajiv1alpha2.KamajiControlPlaneKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      "demo",
			Namespace: "tenant-demo",
			Labels: map[string]string{
				"app.kubernetes.io/managed-by":  "tenantkube",
				"tenantkube.io/cluster":         "demo",
				"cluster.x-k8s.io/cluster-name": "demo",
				"cluster.x-k8s.io/role":         "control-plane",
			},
			Annotations: map[string]string{kamajiv1alpha2.KubeconfigSecretKeyAnnotation: "super-admin.svc"},
		},
		Spec: kamajiv1alpha2.KamajiControlPlaneSpec{
			Replicas:             ptr.To[int32](2),
			Version:              "v1.35.1",
			DataStoreName:        "tenant-demo-demo",
			DataStoreSchema:      "t5e3740528f0aca546516b5d8c022c2a",
			DataStoreUsername:    "t5e3740528f0aca546516b5d8c022c2a",
			ControlPlaneEndpoint: &kamajiv1alpha2.APIEndpoint{Host: "demo.example.org", Port: 443},
			APIServer: &kamajiv1alpha2.ControlPlaneComponent{ExtraArgs: []string{"--profiling=false"}, Resources: resources("2", "2Gi"),
				ExtraVolumeMounts: []corev1.VolumeMount{{Name: "authentication-config", MountPath: "/etc/kubernetes/authentication-config", ReadOnly: true}}},
			Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{{Name: "authentication-config",
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "demo-oidc-authn-config"}}}}},
				ExtraContainers: []corev1.Container{{Name: "talos-csr-signer", Image: "ghcr.io/clastix/talos-csr-signer:v0.1.0", Args: []string{"--port=50001"},
					Ports: []corev1.ContainerPort{{Name: "trustd", ContainerPort: 50001, Protocol: corev1.ProtocolTCP}}}},
				PodAdditionalMetadata: &kamajiv1alpha2.AdditionalMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"tenantkube.io/encryption-config": "0123456789abcdef"}}},
			ControllerManager: &kamajiv1alpha2.ControlPlaneComponent{ExtraArgs: []string{"--profiling=false"}, Resources: resources("1", "1Gi")},
			Scheduler:         &kamajiv1alpha2.ControlPlaneComponent{ExtraArgs: []string{"--profiling=false"}, Resources: resources("500m", "512Mi")},
			Addons: &kamajiv1alpha2.AddonsSpec{Konnectivity: &kamajiv1alpha2.KonnectivitySpec{
				Server: &kamajiv1alpha2.KonnectivityServerSpec{
					Port:      8132,
					Image:     "registry.k8s.io/kas-network-proxy/proxy-server",
					Version:   "v0.34.0",
					ExtraArgs: []string{"--keepalive-time=30s"},
					Resources: resources("500m", "512Mi"),
				},
				Agent: &kamajiv1alpha2.KonnectivityAgentSpec{
					Image:       "registry.k8s.io/kas-network-proxy/proxy-agent",
					Version:     "v0.34.0",
					Mode:        kamajiv1alpha2.KonnectivityAgentModeDeployment,
					Replicas:    ptr.To[int32](2),
					ExtraArgs:   []string{"--keepalive-time=30s"},
					Tolerations: []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
				},
			}},
			Kubelet: &kamajiv1alpha2.KubeletSpec{
				CgroupFS:              kamajiv1alpha2.CgroupDriverSystemd,
				PreferredAddressTypes: []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP},
			},
			Network: &kamajiv1alpha2.NetworkSpec{
				ServiceType: corev1.ServiceTypeClusterIP,
				Ingress: &kamajiv1alpha2.IngressSpec{
					Hostname:         "demo.example.org:443",
					ClassName:        "tenant-root",
					ExtraAnnotations: map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"},
					ExtraLabels:      map[string]string{"tenantkube.io/cluster": "demo"},
				},
				CertSANs:               []string{"demo.tenant-demo.svc"},
				AdditionalServicePorts: []kamajiv1alpha2.AdditionalServicePort{{Name: "trustd", Port: 50001, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(50001)}},
			},
		},
		Status: kamajiv1alpha2.KamajiControlPlaneStatus{
			Ready:                       true,
			Initialization:              &kamajiv1alpha2.Initialization{ControlPlaneInitialized: ptr.To(true)},
			Version:                     "v1.35.1",
			ExternalManagedControlPlane: ptr.To(true),
			Replicas:                    2,
			ReadyReplicas:               2,
			UpToDateReplicas:            2,
			AvailableReplicas:           2,
			Selector:                    "kamaji.clastix.io/name=demo",
			FailureReason:               "None",
			FailureMessage:              "no failure",
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: transition, Reason: "Ready", Message: "control plane is ready",
			}},
		},
	}
}

func TestKamajiControlPlaneMatchesCRD(t *testing.T) {
	obj := demo()
	if unset := upstreamtest.UnsetFields(obj); len(unset) > 0 {
		t.Errorf("fields not exercised by the test object: %v", unset)
	}
	upstreamtest.CheckObject(t, obj)
}

func TestKamajiControlPlaneMinimalSpec(t *testing.T) {
	obj := &kamajiv1alpha2.KamajiControlPlane{
		TypeMeta:   metav1.TypeMeta{APIVersion: kamajiv1alpha2.GroupVersion.String(), Kind: kamajiv1alpha2.KamajiControlPlaneKind},
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "tenant-demo"},
		Spec: kamajiv1alpha2.KamajiControlPlaneSpec{
			Version: "v1.35.1",
			Addons:  &kamajiv1alpha2.AddonsSpec{Konnectivity: &kamajiv1alpha2.KonnectivitySpec{Server: &kamajiv1alpha2.KonnectivityServerSpec{Port: 8132}}},
		},
	}
	u := upstreamtest.ToUnstructured(t, obj)
	if _, found := u.Object["status"]; found {
		t.Errorf("zero status is emitted: %v", u.Object["status"])
	}
	want := map[string]any{
		"version": "v1.35.1",
		"addons":  map[string]any{"konnectivity": map[string]any{"server": map[string]any{"port": float64(8132)}}},
	}
	if diff := cmp.Diff(want, u.Object["spec"]); diff != "" {
		t.Errorf("minimal spec emits more than was set (-want +got):\n%s", diff)
	}
	upstreamtest.CheckObject(t, obj)
}

func TestKamajiControlPlaneStatusDecodes(t *testing.T) {
	const statusJSON = `{
		"ready": true,
		"initialization": {"controlPlaneInitialized": true},
		"version": "v1.35.1",
		"externalManagedControlPlane": true,
		"replicas": 2, "readyReplicas": 1, "upToDateReplicas": 2, "availableReplicas": 1,
		"selector": "kamaji.clastix.io/name=demo",
		"conditions": [{"type": "Ready", "status": "False", "observedGeneration": 3,
			"lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "Provisioning", "message": "waiting for pods"}]
	}`
	var got kamajiv1alpha2.KamajiControlPlaneStatus
	upstreamtest.CheckStatusJSON(t, demo(), statusJSON, &got)
	want := kamajiv1alpha2.KamajiControlPlaneStatus{
		Ready:                       true,
		Initialization:              &kamajiv1alpha2.Initialization{ControlPlaneInitialized: ptr.To(true)},
		Version:                     "v1.35.1",
		ExternalManagedControlPlane: ptr.To(true),
		Replicas:                    2, ReadyReplicas: 1, UpToDateReplicas: 2, AvailableReplicas: 1,
		Selector: "kamaji.clastix.io/name=demo",
		Conditions: []metav1.Condition{{
			Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 3,
			LastTransitionTime: transition, Reason: "Provisioning", Message: "waiting for pods",
		}},
	}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestKamajiControlPlaneCELRuleApplies(t *testing.T) {
	// The CRD's rule on addons.konnectivity.agent: no replicas in
	// DaemonSet mode. Proves CEL runs on these types' output.
	obj := demo()
	obj.Spec.Addons.Konnectivity.Agent.Mode = kamajiv1alpha2.KonnectivityAgentModeDaemonSet
	u := upstreamtest.ToUnstructured(t, obj)
	v := upstreamtest.MustLoadShared(t)
	if err := v.Validate(u); err == nil {
		t.Error("DaemonSet agent with replicas 2 validated; want the CRD's CEL rule to reject it")
	}
}

package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Once-per-cluster controllers share these (SPEC §5.2).
const (
	// KubeconfigMountPath is where the tenant kubeconfig Secret
	// (N-admin-kubeconfig) is mounted in each controller.
	KubeconfigMountPath = "/etc/kubernetes/kubeconfig"
	// KubeconfigVolume is the name of that optional Secret volume.
	KubeconfigVolume = "kubeconfig"
	// WaitForKubeconfigTimeoutSeconds is how long the init container waits
	// for the Secret before it fails (and the kubelet retries the pod).
	WaitForKubeconfigTimeoutSeconds = 600
	// waitPollSeconds is the init container's polling interval.
	waitPollSeconds = 5
	// LabelComponent names the controller a Deployment's pods run.
	LabelComponent = "app.kubernetes.io/component"
)

// TenantKubeconfigPath is the file the controllers read the tenant
// kubeconfig from: super-admin.svc, which points at N.NS.svc.
var TenantKubeconfigPath = KubeconfigMountPath + "/" + function.KubeconfigSecretKey

// Controller is one once-per-cluster controller Deployment with its
// ServiceAccount and the RoleBinding granting it, in NS only, the
// permissions of its ClusterRole.
type Controller struct {
	ServiceAccount *corev1.ServiceAccount
	RoleBinding    *rbacv1.RoleBinding
	Deployment     *appsv1.Deployment
}

// ClusterRoleName is the ClusterRole holding the permissions of a
// controller component, shipped in deploy/crossplane-rbac.yaml and bound
// per tenant in NS by the composed RoleBinding; Crossplane may bind exactly
// these (bind with resourceNames) and holds none of their permissions.
func ClusterRoleName(component string) string { return "tenantkube:" + component }

// ControllerComponents are the components whose ClusterRoles the function
// binds.
var ControllerComponents = []string{AutoscalerComponent, CCMComponent, CSIComponent}

// newController assembles a Controller named N-<component>: a
// ServiceAccount, a RoleBinding of the component's ClusterRole to it in NS
// and a one-replica Deployment running containers after the
// wait-for-kubeconfig init container (image waitImage), with the kubeconfig
// Secret volume and extra volumes.
func newController(id function.Identity, component, waitImage string, containers []corev1.Container, extraVolumes []corev1.Volume) Controller {
	name := id.Prefixed(component)
	// One labels map for the four objects and the pod template: they are
	// only read (marshalled), never changed.
	labels := id.Labels(LabelComponent, component)
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: labels}
	}
	selector := map[string]string{function.LabelCluster: id.Name, LabelComponent: component}
	volumes := append([]corev1.Volume{{
		Name: KubeconfigVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: id.KubeconfigSecretName(),
			Optional:   ptr(true),
		}},
	}}, extraVolumes...)
	return Controller{
		ServiceAccount: &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(),
		},
		RoleBinding: &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName(component)},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: id.Namespace}},
		},
		Deployment: &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
			ObjectMeta: meta(),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName:           name,
						AutomountServiceAccountToken: ptr(true),
						InitContainers:               []corev1.Container{WaitForKubeconfigContainer(waitImage)},
						Containers:                   containers,
						Volumes:                      volumes,
					},
				},
			},
		},
	}
}

// WaitForKubeconfigContainer is the init container that waits until the
// tenant kubeconfig Secret is mounted (the Secret volume is optional, so the
// pod starts before Kamaji has written it) and gives up after 10 minutes.
func WaitForKubeconfigContainer(image string) corev1.Container {
	script := fmt.Sprintf(
		`i=0; until [ -s %[1]s ]; do i=$((i+%[2]d)); if [ "$i" -ge %[3]d ]; then echo "%[1]s not mounted after %[3]ds" >&2; exit 1; fi; sleep %[2]d; done`,
		TenantKubeconfigPath, waitPollSeconds, WaitForKubeconfigTimeoutSeconds)
	return corev1.Container{
		Name:         "wait-for-kubeconfig",
		Image:        image,
		Command:      []string{"sh", "-c", script},
		VolumeMounts: []corev1.VolumeMount{kubeconfigMount()},
	}
}

func kubeconfigMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: KubeconfigVolume, MountPath: KubeconfigMountPath, ReadOnly: true}
}

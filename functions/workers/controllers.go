package main

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Once-per-cluster controllers share these.
const (
	// kubeconfigMountPath is where the tenant kubeconfig Secret
	// (N-admin-kubeconfig) is mounted in each controller.
	kubeconfigMountPath = "/etc/kubernetes/kubeconfig"
	// kubeconfigVolume is the name of that optional Secret volume.
	kubeconfigVolume = "kubeconfig"
	// waitForKubeconfigTimeoutSeconds is how long the init container waits
	// for the Secret before it fails (and the kubelet retries the pod).
	waitForKubeconfigTimeoutSeconds = 600
	// waitPollSeconds is the init container's polling interval.
	waitPollSeconds = 5
	// labelComponent names the controller a Deployment's pods run.
	labelComponent = function.LabelComponent
)

// tenantKubeconfigPath is the file the controllers read the tenant
// kubeconfig from: super-admin.svc, which points at N.NS.svc (short: the
// controllers are pods of the management cluster, whose search path
// resolves it; nothing on a worker VM reads this kubeconfig).
var tenantKubeconfigPath = kubeconfigMountPath + "/" + function.KubeconfigSecretKey

// controller is one once-per-cluster controller Deployment with its
// ServiceAccount (in NS as built; runIn moves them) and the RoleBinding
// granting it, in NS only, the permissions of its ClusterRole; for a controller that reads cluster-scoped
// objects, also a ClusterRoleBinding of a read-only ClusterRole (nil
// otherwise).
type controller struct {
	ServiceAccount     *corev1.ServiceAccount
	RoleBinding        *rbacv1.RoleBinding
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	Deployment         *appsv1.Deployment
}

// clusterRoleName is the ClusterRole holding the permissions of a
// controller component, shipped in deploy/crossplane-rbac.yaml and bound
// per tenant in NS by the composed RoleBinding; Crossplane may bind exactly
// these (bind with resourceNames) and holds none of their permissions.
func clusterRoleName(component string) string { return "tenantkube:" + component }

// controllerComponents are the components whose ClusterRoles the function
// binds.
var controllerComponents = []string{autoscalerComponent, ccmComponent, csiComponent}

// csiPersistentVolumesClusterRole is the read-only ClusterRole (get on
// PersistentVolumes, deploy/crossplane-rbac.yaml) the CSI controller holds
// cluster-wide through its ClusterRoleBinding: the driver reads the infra
// PV of a claim it expands (kubevirt/csi-driver pkg/kubevirt/client.go,
// EnsureControllerResize).
const csiPersistentVolumesClusterRole = function.CSIPersistentVolumesClusterRole

// Where a container that talks to the management API finds its
// ServiceAccount token, CA and namespace (client-go's in-cluster
// configuration).
const (
	managementTokenVolumeName = "management-api-token"
	managementTokenMountPath  = "/var/run/secrets/kubernetes.io/serviceaccount"
	// managementTokenSeconds is the token's lifetime as the kubelet's own
	// ServiceAccount volume asks for it.
	managementTokenSeconds = 3607
	// tmpVolume is the writable /tmp of a container whose root file system
	// is read-only.
	tmpVolume = "tmp"
)

// controllerTolerations let the controllers run on nodes reserved for
// critical add-ons and on control-plane nodes (the seed chart's).
var controllerTolerations = []corev1.Toleration{
	{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
	{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// controllerSpec is what distinguishes one controller.
type controllerSpec struct {
	component  string
	containers []corev1.Container
	// managementAPI names the containers that talk to the management
	// API; only they get the ServiceAccount token.
	managementAPI []string
	// tmp names the containers that get a writable /tmp.
	tmp           []string
	volumes       []corev1.Volume
	priorityClass string
	// clusterRole, when set, is a read-only platform ClusterRole of
	// cluster-scoped objects, bound to the ServiceAccount by the
	// ClusterRoleBinding Identity.ClusterRoleBindingName(component).
	clusterRole string
}

// newController assembles a controller named N-<component>: a
// ServiceAccount, a RoleBinding of the component's ClusterRole to it in NS
// and a one-replica Deployment running the containers after the wait-for-kubeconfig init
// container (image waitImage), with the kubeconfig Secret volume and the
// extra volumes. Every container gets the input's requests and limits and
// runs as a non-root user without privilege escalation or capabilities, on
// a read-only root file system, under the runtime's default seccomp
// profile; only the containers that talk to the management API get a
// ServiceAccount token.
func newController(id function.Identity, in *v1alpha1.WorkersInput, waitImage string, cs controllerSpec) controller {
	name := id.Prefixed(cs.component)
	// One labels map for the four objects and the pod template: they are
	// only read (marshalled), never changed.
	labels := id.Labels(labelComponent, cs.component)
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: labels}
	}
	selector := map[string]string{function.LabelCluster: id.Name, labelComponent: cs.component}
	volumes := append([]corev1.Volume{{
		Name: kubeconfigVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: id.KubeconfigSecretName(),
			Optional:   ptr(true),
		}},
	}}, cs.volumes...)
	if len(cs.managementAPI) > 0 {
		volumes = append(volumes, managementTokenVolume())
	}
	if len(cs.tmp) > 0 {
		volumes = append(volumes, corev1.Volume{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	ctl := &in.Controllers
	harden := func(c corev1.Container) corev1.Container {
		c.Resources = ctl.ContainerResourcesFor(c.Name)
		c.SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   ptr(true),
			RunAsNonRoot:             ptr(true),
		}
		if slices.Contains(cs.managementAPI, c.Name) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: managementTokenVolumeName, MountPath: managementTokenMountPath, ReadOnly: true})
		}
		if slices.Contains(cs.tmp, c.Name) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tmpVolume, MountPath: "/tmp"})
		}
		return c
	}
	containers := make([]corev1.Container, len(cs.containers))
	for i, c := range cs.containers {
		containers[i] = harden(c)
	}
	var crb *rbacv1.ClusterRoleBinding
	if cs.clusterRole != "" {
		crb = id.ControllerClusterRoleBinding(cs.component, cs.clusterRole, id.Namespace)
	}
	return controller{
		ClusterRoleBinding: crb,
		ServiceAccount: &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(),
			// Only the pod's own projected token reaches a container.
			AutomountServiceAccountToken: ptr(false),
		},
		RoleBinding: &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRoleName(cs.component)},
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
						AutomountServiceAccountToken: ptr(false),
						EnableServiceLinks:           ptr(false),
						PriorityClassName:            cs.priorityClass,
						Tolerations:                  controllerTolerations,
						SecurityContext: &corev1.PodSecurityContext{
							RunAsNonRoot:   ptr(true),
							RunAsUser:      ptr(ctl.RunAsUser),
							RunAsGroup:     ptr(ctl.RunAsUser),
							FSGroup:        ptr(ctl.RunAsUser),
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						InitContainers: []corev1.Container{harden(waitForKubeconfigContainer(waitImage))},
						Containers:     containers,
						Volumes:        volumes,
					},
				},
			},
		},
	}
}

// runIn returns c with its ServiceAccount and Deployment in namespace ns
// and its bindings' subject the ServiceAccount there; the RoleBinding stays
// in NS, where the controller acts.
func (c controller) runIn(ns string) controller {
	sa, rb, d := *c.ServiceAccount, *c.RoleBinding, *c.Deployment
	sa.Namespace, d.Namespace = ns, ns
	rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}
	out := controller{ServiceAccount: &sa, RoleBinding: &rb, Deployment: &d}
	if c.ClusterRoleBinding != nil {
		crb := *c.ClusterRoleBinding
		crb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}
		out.ClusterRoleBinding = &crb
	}
	return out
}

// managementTokenVolume is the projected volume the kubelet would mount for
// the pod's ServiceAccount: a bound token, the cluster CA and the
// namespace.
func managementTokenVolume() corev1.Volume {
	return corev1.Volume{Name: managementTokenVolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(managementTokenSeconds))}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

// waitForKubeconfigContainer is the init container that waits until the
// tenant kubeconfig Secret is mounted (the Secret volume is optional, so the
// pod starts before Kamaji has written it) and gives up after 10 minutes.
func waitForKubeconfigContainer(image string) corev1.Container {
	script := fmt.Sprintf(
		`i=0; until [ -s %[1]s ]; do i=$((i+%[2]d)); if [ "$i" -ge %[3]d ]; then echo "%[1]s not mounted after %[3]ds" >&2; exit 1; fi; sleep %[2]d; done`,
		tenantKubeconfigPath, waitPollSeconds, waitForKubeconfigTimeoutSeconds)
	return corev1.Container{
		Name:         "wait-for-kubeconfig",
		Image:        image,
		Command:      []string{"sh", "-c", script},
		VolumeMounts: []corev1.VolumeMount{kubeconfigMount()},
	}
}

func kubeconfigMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: kubeconfigVolume, MountPath: kubeconfigMountPath, ReadOnly: true}
}

// rule is a PolicyRule shorthand.
func rule(groups, resources, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

package function

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelComponent names the controller component of a composed object
// (app.kubernetes.io/component).
const LabelComponent = "app.kubernetes.io/component"

// CSIControllerComponent is the component name of the KubeVirt CSI
// controller: ServiceAccount and Deployment N-kcsi-controller.
const CSIControllerComponent = "kcsi-controller"

// Components of the other once-per-cluster controllers: Deployments
// N-cluster-autoscaler and N-kccm.
const (
	AutoscalerComponent = "cluster-autoscaler"
	CCMComponent        = "kccm"
)

// ControllerComponents are the once-per-cluster controllers the workers
// step runs, each as Deployment N-<component>.
var ControllerComponents = []string{AutoscalerComponent, CCMComponent, CSIControllerComponent}

// CSIPersistentVolumesClusterRole is the platform ClusterRole letting the
// CSI controller get PersistentVolumes (deploy/crossplane-rbac.yaml).
const CSIPersistentVolumesClusterRole = "tenantkube:kcsi-persistentvolumes"

// ControllerClusterRoleBinding is the ClusterRoleBinding
// ClusterRoleBindingName(component) binding the platform ClusterRole
// clusterRole to the component's ServiceAccount N-<component> in
// saNamespace: the claim's workers step composes it for the controllers of
// its ManagementNamespace, a Tenant for each TenantCluster of its
// namespace (which composes nothing cluster-scoped), whose controllers run
// in NS.
func (id Identity) ControllerClusterRoleBinding(component, clusterRole, saNamespace string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: id.ClusterRoleBindingName(component), Labels: id.Labels(LabelComponent, component, LabelNamespace, id.Namespace)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: id.Prefixed(component), Namespace: saNamespace}},
	}
}

// TenantLabels are the labels of every object a Tenant composes for the
// namespace ns: managed-by tenantkube and tenantkube.io/namespace ns (no
// tenantkube.io/cluster: they belong to no one cluster).
func TenantLabels(ns string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByTenantkube, LabelNamespace: ns}
}

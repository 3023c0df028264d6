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

// CSIPersistentVolumesClusterRole is the platform ClusterRole letting the
// CSI controller get PersistentVolumes (deploy/crossplane-rbac.yaml).
const CSIPersistentVolumesClusterRole = "tenantkube:kcsi-persistentvolumes"

// ControllerClusterRoleBinding is the ClusterRoleBinding
// ClusterRoleBindingName(component) binding the platform ClusterRole
// clusterRole to the component's ServiceAccount N-<component> in NS. The
// claim's workers step and a Tenant (for each TenantCluster of its
// namespace, which composes nothing cluster-scoped) compose the same
// object.
func (id Identity) ControllerClusterRoleBinding(component, clusterRole string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: id.ClusterRoleBindingName(component), Labels: id.Labels(LabelComponent, component, LabelNamespace, id.Namespace)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: id.Prefixed(component), Namespace: id.Namespace}},
	}
}

// TenantLabels are the labels of every object a Tenant composes for the
// namespace ns: managed-by tenantkube and tenantkube.io/namespace ns (no
// tenantkube.io/cluster: they belong to no one cluster).
func TenantLabels(ns string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByTenantkube, LabelNamespace: ns}
}

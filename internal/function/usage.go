package function

import (
	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// usageAPIVersion is a Usage's apiVersion, written once (GroupVersion.String
// builds a new string on every call).
var usageAPIVersion = protectionv1beta1.SchemeGroupVersion.String()

// ObjectRef names a namespaced composed resource of the tenant cluster by
// apiVersion, kind and name (its namespace is the cluster's NS).
type ObjectRef struct {
	APIVersion, Kind, Name string
}

// Usage returns a Crossplane Usage (protection.crossplane.io/v1beta1, in NS)
// named name that blocks the deletion of `of` while `by` exists, and replays
// the blocked deletion as soon as `by` is gone. Crossplane runs no function
// while an XR is deleted, so the deletion order of docs/architecture.md is declared up
// front with these objects (Crossplane's Usage webhook enforces them).
func (id Identity) Usage(name string, of, by ObjectRef, reason string) *protectionv1beta1.Usage {
	replay := true
	return &protectionv1beta1.Usage{
		TypeMeta:   metav1.TypeMeta{APIVersion: usageAPIVersion, Kind: protectionv1beta1.UsageKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: id.Labels()},
		Spec: protectionv1beta1.UsageSpec{
			Of: protectionv1beta1.NamespacedResource{
				APIVersion:  of.APIVersion,
				Kind:        of.Kind,
				ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: of.Name},
			},
			By: &protectionv1beta1.Resource{
				APIVersion:  by.APIVersion,
				Kind:        by.Kind,
				ResourceRef: &protectionv1beta1.ResourceRef{Name: by.Name},
			},
			Reason:         &reason,
			ReplayDeletion: &replay,
		},
	}
}

// KamajiControlPlaneRef is the KamajiControlPlane N
// (controlplane.cluster.x-k8s.io/v1alpha2), the object the Usages of docs/architecture.md
// keep until node groups and add-ons are gone.
func (id Identity) KamajiControlPlaneRef() ObjectRef {
	return ObjectRef{APIVersion: "controlplane.cluster.x-k8s.io/v1alpha2", Kind: "KamajiControlPlane", Name: id.Name}
}

package encryption

import (
	"slices"
	"testing"
)

// TestServed checks the derived names entry by entry against the
// resource names kube-apiserver serves, as the Kubernetes API reference
// (https://kubernetes.io/docs/reference/kubernetes-api/) and
// `kubectl api-resources` name them, and the minors the APIs went GA in
// (Kubernetes release notes: ServiceCIDR/IPAddress v1.33,
// VolumeAttributesClass v1.34, resource.k8s.io v1 v1.34,
// MutatingAdmissionPolicy v1.36).
func TestServed(t *testing.T) {
	got := Served(31)
	for _, r := range []string{
		"secrets", "configmaps", "endpoints", "events", "serviceaccounts", "persistentvolumeclaims",
		"ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io", "storageclasses.storage.k8s.io",
		"deployments.apps", "statefulsets.apps", "leases.coordination.k8s.io", "horizontalpodautoscalers.autoscaling",
		"cronjobs.batch", "poddisruptionbudgets.policy", "validatingadmissionpolicies.admissionregistration.k8s.io",
	} {
		if !slices.Contains(got, r) {
			t.Errorf("%s: missing from %v", r, got)
		}
	}
	for r, why := range map[string]string{
		"secrest":                                "a typo",
		"componentstatuses":                      "served read-only, not stored",
		"bindings":                               "create-only, no list",
		"tokenreviews.authentication.k8s.io":     "not stored",
		"evictions.policy":                       "a subresource",
		"apigroups":                              "a discovery message, not stored",
		"events.events.k8s.io":                   "kube-apiserver refuses it (CheckResources)",
		"servicecidrs.networking.k8s.io":         "v1 from 1.33",
		"volumeattributesclasses.storage.k8s.io": "v1 from 1.34",
		"deviceclasses.resource.k8s.io":          "v1 from 1.34",
		"mutatingadmissionpolicies.admissionregistration.k8s.io": "v1 from 1.36",
	} {
		if slices.Contains(got, r) {
			t.Errorf("%s (%s): served", r, why)
		}
	}
	if later := Served(34); !slices.Contains(later, "volumeattributesclasses.storage.k8s.io") ||
		slices.Contains(later, "mutatingadmissionpolicies.admissionregistration.k8s.io") {
		t.Errorf("from 1.34: %v, want volumeattributesclasses.storage.k8s.io and no mutatingadmissionpolicies", later)
	}
}

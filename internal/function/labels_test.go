package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestReservedLabels: the labels of an XR that Crossplane copies onto every
// composed resource (crossplane.io/composite; the claim labels, both set)
// hold only what Crossplane derives (the XR's own name; a claim's, on a
// cluster-scoped XR), and no other crossplane.io/ label but the Usage
// controller's in-use, nor any tenantkube.io/ label, is accepted; every
// refused label is named with its value at once.
func TestReservedLabels(t *testing.T) {
	p := func(k string) *field.Path { return field.NewPath("metadata", "labels").Key(k) }
	const nsClaim = "a namespaced XR has no claim, and Crossplane would copy the claim labels onto every composed resource"
	cases := map[string]struct {
		labels     map[string]string
		namespaced bool
		want       field.ErrorList
	}{
		"None":           {},
		"TenantsOwn":     {labels: map[string]string{"team": "a", "app.kubernetes.io/part-of": "x", "e2e.tenantkube.io/run": "1"}, namespaced: true},
		"OwnComposite":   {labels: map[string]string{LabelComposite: "demo"}, namespaced: true},
		"InUse":          {labels: map[string]string{"crossplane.io/in-use": "true"}},
		"ClaimOfClaimXR": {labels: map[string]string{LabelClaimName: "demo", LabelClaimNamespace: "tenant-a", LabelComposite: "demo"}},
		"ForgedComposite": {
			labels: map[string]string{LabelComposite: "victim-x7k2p"},
			want:   field.ErrorList{field.Invalid(p(LabelComposite), "victim-x7k2p", `must be the XR's own name "demo": Crossplane copies it onto every composed resource`)},
		},
		"ForgedCompositeNamespaced": {
			labels: map[string]string{LabelComposite: ""}, namespaced: true,
			want: field.ErrorList{field.Invalid(p(LabelComposite), "", `must be the XR's own name "demo": Crossplane copies it onto every composed resource`)},
		},
		"NamespacedClaimLabels": {
			labels: map[string]string{LabelClaimName: "victim", LabelClaimNamespace: "tenant-b"}, namespaced: true,
			want: field.ErrorList{
				field.Forbidden(p(LabelClaimName), `"victim": `+nsClaim),
				field.Forbidden(p(LabelClaimNamespace), `"tenant-b": `+nsClaim),
			},
		},
		"NamespacedOneClaimLabel": {
			labels: map[string]string{LabelClaimNamespace: "tenant-b"}, namespaced: true,
			want: field.ErrorList{field.Forbidden(p(LabelClaimNamespace), `"tenant-b": `+nsClaim)},
		},
		"OtherCrossplaneAndTenantkube": {
			labels: map[string]string{"crossplane.io/paused": "true", "tenantkube.io/cluster": "victim", "tenantkube.io/namespace": "tenant-b", "tenantkube.io/management-namespace": "true"},
			want: field.ErrorList{
				field.Forbidden(p("crossplane.io/paused"), `"true": crossplane.io/ labels are Crossplane's`),
				field.Forbidden(p("tenantkube.io/cluster"), `"victim": tenantkube.io/ labels are the platform's, which composed resources carry with the values the functions derive`),
				field.Forbidden(p("tenantkube.io/management-namespace"), `"true": tenantkube.io/ labels are the platform's, which composed resources carry with the values the functions derive`),
				field.Forbidden(p("tenantkube.io/namespace"), `"tenant-b": tenantkube.io/ labels are the platform's, which composed resources carry with the values the functions derive`),
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, checkReservedLabels(c.labels, "demo", c.namespaced)); d != "" {
				t.Errorf("checkReservedLabels(%v, demo, namespaced %t): -want +got:\n%s", c.labels, c.namespaced, d)
			}
		})
	}
}

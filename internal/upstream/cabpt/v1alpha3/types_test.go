package v1alpha3_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cabptv1alpha3 "github.com/tenantkube/tenantkube/internal/upstream/cabpt/v1alpha3"
	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
)

// TestTalosConfigTemplateMatchesCRD proves a TalosConfigTemplate with every
// modelled field set against CABPT's CRD (../shared/crds/later): no
// error, nothing pruned, and a strict JSON round trip.
func TestTalosConfigTemplateMatchesCRD(t *testing.T) {
	obj := &cabptv1alpha3.TalosConfigTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: cabptv1alpha3.GroupVersion.String(), Kind: cabptv1alpha3.TalosConfigTemplateKind},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-md0", Namespace: "tenant-demo"},
		Spec: cabptv1alpha3.TalosConfigTemplateSpec{Template: cabptv1alpha3.TalosConfigTemplateResource{Spec: cabptv1alpha3.TalosConfigSpec{
			GenerateType:     cabptv1alpha3.GenerateTypeJoin,
			TalosVersion:     "v1.13.6",
			Hostname:         &cabptv1alpha3.HostnameSpec{Source: cabptv1alpha3.HostnameSourceMachineName},
			ConfigPatches:    []cabptv1alpha3.ConfigPatches{{Op: "add", Path: "/machine/nodeLabels", Value: &apiextensionsv1.JSON{Raw: []byte(`{"gpu":"on"}`)}}},
			StrategicPatches: []string{"machine:\n  install:\n    image: factory.talos.dev/installer/x:v1.13.6\n"},
		}}},
	}
	if unset := upstreamtest.UnsetFields(obj); len(unset) > 0 {
		t.Errorf("fields not exercised by the test object: %v", unset)
	}
	upstreamtest.CheckObject(t, obj)
}

package function

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// apiService is an APIService as Crossplane sends it for a served
// group/version.
func apiService(t *testing.T, name string) *fnv1.Resources {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": name}})
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: s}}}
}

// platformRequest is a request whose required resources answer the
// APIService of every API of apis: present unless its name is in absent
// (Crossplane answered with nothing), left out when in unanswered.
func platformRequest(t *testing.T, apis []PlatformAPI, absent, unanswered []string) *Request {
	t.Helper()
	req := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{}}
	answer := func(key, name string) {
		switch {
		case slices.Contains(unanswered, name):
		case slices.Contains(absent, name):
			req.RequiredResources[key] = &fnv1.Resources{}
		default:
			req.RequiredResources[key] = apiService(t, name)
		}
	}
	for _, a := range apis {
		answer("apiservice-"+a.APIServiceName(), a.APIServiceName())
		for _, k := range a.Kinds {
			if k.CRD != "" {
				answer("crd-"+k.CRD, k.CRD)
			}
		}
	}
	return NewRequest(req)
}

// TestPlatformAPIServiceNames: the names kube-apiserver gives the local
// APIService of a CRD version, <version>.<group>
// (crdregistration_controller.go handleVersionUpdate), written by hand.
func TestPlatformAPIServiceNames(t *testing.T) {
	var got []string
	for _, a := range PlatformAPIs {
		got = append(got, a.APIServiceName())
	}
	want := []string{
		"v1beta2.cluster.x-k8s.io", "v1beta2.bootstrap.cluster.x-k8s.io", "v1alpha2.controlplane.cluster.x-k8s.io",
		"v1alpha1.infrastructure.cluster.x-k8s.io", "v1alpha3.bootstrap.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io",
		"v1alpha1.etcd.aenix.io", "v1alpha2.etcd-operator.cozystack.io", "v1.cert-manager.io",
		"v2.helm.toolkit.fluxcd.io", "v1.source.toolkit.fluxcd.io",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("APIService names (-want +got):\n%s", diff)
	}
}

// TestNeededAPIs: a Tenant needs no Cluster API, provider or Flux API; a
// cluster needs CABPT only with a Talos node group; only the platform's
// etcd operator is needed.
func TestNeededAPIs(t *testing.T) {
	names := func(apis []PlatformAPI) []string {
		var out []string
		for _, a := range apis {
			out = append(out, a.APIServiceName())
		}
		return out
	}
	for _, c := range []struct {
		name  string
		needs APINeeds
		want  []string
	}{
		{"tenant aenix", APINeeds{Tenant: true, EtcdOperator: "etcd.aenix.io/v1alpha1"}, []string{
			"v1alpha2.controlplane.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io", "v1alpha1.etcd.aenix.io", "v1.cert-manager.io"}},
		{"tenant cozystack", APINeeds{Tenant: true, EtcdOperator: "etcd-operator.cozystack.io/v1alpha2"}, []string{
			"v1alpha2.controlplane.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io", "v1alpha2.etcd-operator.cozystack.io", "v1.cert-manager.io"}},
		{"cluster kubeadm", APINeeds{EtcdOperator: "etcd.aenix.io/v1alpha1"}, []string{
			"v1beta2.cluster.x-k8s.io", "v1beta2.bootstrap.cluster.x-k8s.io", "v1alpha2.controlplane.cluster.x-k8s.io",
			"v1alpha1.infrastructure.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io", "v1alpha1.etcd.aenix.io", "v1.cert-manager.io",
			"v2.helm.toolkit.fluxcd.io", "v1.source.toolkit.fluxcd.io"}},
		{"cluster talos", APINeeds{EtcdOperator: "etcd.aenix.io/v1alpha1", Talos: true}, []string{
			"v1beta2.cluster.x-k8s.io", "v1beta2.bootstrap.cluster.x-k8s.io", "v1alpha2.controlplane.cluster.x-k8s.io",
			"v1alpha1.infrastructure.cluster.x-k8s.io", "v1alpha3.bootstrap.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io", "v1alpha1.etcd.aenix.io", "v1.cert-manager.io",
			"v2.helm.toolkit.fluxcd.io", "v1.source.toolkit.fluxcd.io"}},
	} {
		if diff := cmp.Diff(c.want, names(NeededAPIs(c.needs))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestRequirePlatformAPIs: every APIService is asked for by name; no
// error until Crossplane has answered all of them; then one error naming
// every API answered with nothing, its kinds and releases. The platform
// is Cozystack's (Cluster API v1.10.1: no v1beta2; Kamaji control-plane
// provider v0.19.0: v1alpha1 only); the releases are those whose CRDs
// first serve the version (Cluster API v1.11.0 config/crd/bases, the
// provider's v0.20.0 config/crd/bases).
func TestRequirePlatformAPIs(t *testing.T) {
	apis := NeededAPIs(APINeeds{EtcdOperator: "etcd.aenix.io/v1alpha1"})
	cozystack := []string{"v1beta2.cluster.x-k8s.io", "v1beta2.bootstrap.cluster.x-k8s.io", "v1alpha2.controlplane.cluster.x-k8s.io"}

	t.Run("asked by name", func(t *testing.T) {
		rsp := &fnv1.RunFunctionResponse{}
		if err := RequirePlatformAPIs(platformRequest(t, apis, nil, nil), rsp, apis); err != nil {
			t.Fatal(err)
		}
		sel := rsp.GetRequirements().GetResources()["apiservice-v1beta2.cluster.x-k8s.io"]
		if sel.GetApiVersion() != "apiregistration.k8s.io/v1" || sel.GetKind() != "APIService" || sel.GetMatchName() != "v1beta2.cluster.x-k8s.io" {
			t.Errorf("selector %v", sel)
		}
		crd := rsp.GetRequirements().GetResources()["crd-externalartifacts.source.toolkit.fluxcd.io"]
		if crd.GetApiVersion() != "apiextensions.k8s.io/v1" || crd.GetKind() != "CustomResourceDefinition" || crd.GetMatchName() != "externalartifacts.source.toolkit.fluxcd.io" {
			t.Errorf("CRD selector %v", crd)
		}
		// Nine APIServices and the ExternalArtifact CRD.
		if n := len(rsp.GetRequirements().GetResources()); n != 10 {
			t.Errorf("%d requirements, want 10", n)
		}
	})
	t.Run("not answered yet", func(t *testing.T) {
		r := platformRequest(t, apis, cozystack[1:], cozystack[:1])
		if err := RequirePlatformAPIs(r, &fnv1.RunFunctionResponse{}, apis); err != nil {
			t.Errorf("an unanswered requirement: %v", err)
		}
	})
	t.Run("cozystack", func(t *testing.T) {
		err := RequirePlatformAPIs(platformRequest(t, apis, cozystack, nil), &fnv1.RunFunctionResponse{}, apis)
		if err == nil {
			t.Fatal("no error")
		}
		for _, want := range []string{
			"cluster.x-k8s.io/v1beta2 Cluster, MachineDeployment, MachineHealthCheck, MachineSet, Machine (Cluster API v1.11.0)",
			"bootstrap.cluster.x-k8s.io/v1beta2 KubeadmConfigTemplate (Cluster API v1.11.0)",
			"controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane (Cluster API control-plane provider Kamaji v0.20.0)",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q not in %q", want, err)
			}
		}
		if strings.Contains(err.Error(), "cert-manager") || strings.Count(err.Error(), "; ") != 2 {
			t.Errorf("names an API served, or not one per missing API: %v", err)
		}
	})
	// Flux v2.6: source.toolkit.fluxcd.io/v1 is served, its
	// ExternalArtifact CRD (source-controller v1.7.0, Flux v2.7.0) is not.
	t.Run("flux v2.6", func(t *testing.T) {
		err := RequirePlatformAPIs(platformRequest(t, apis, []string{"externalartifacts.source.toolkit.fluxcd.io"}, nil), &fnv1.RunFunctionResponse{}, apis)
		want := "the platform does not serve these kinds tenantkube composes (no CustomResourceDefinition): source.toolkit.fluxcd.io/v1 ExternalArtifact (Flux v2.7.0)."
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "no APIService") {
			t.Errorf("got %v, want only %q", err, want)
		}
	})
	t.Run("CRD not answered yet", func(t *testing.T) {
		r := platformRequest(t, apis, cozystack, []string{"externalartifacts.source.toolkit.fluxcd.io"})
		if err := RequirePlatformAPIs(r, &fnv1.RunFunctionResponse{}, apis); err != nil {
			t.Errorf("an unanswered requirement: %v", err)
		}
	})
	t.Run("all served", func(t *testing.T) {
		if err := RequirePlatformAPIs(platformRequest(t, apis, nil, nil), &fnv1.RunFunctionResponse{}, apis); err != nil {
			t.Error(err)
		}
	})
}

// TestPlatformAPIsServedByCRDs: every kind of PlatformAPIs whose CRD is
// in ../shared/crds (or crds/later) is served at the table's version
// there.
func TestPlatformAPIsServedByCRDs(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "crds")
	served := map[string]bool{} // group/version/Kind
	for _, d := range []string{dir, filepath.Join(dir, "later")} {
		files, _ := filepath.Glob(filepath.Join(d, "*.yaml"))
		for _, f := range files {
			raw, err := os.ReadFile(f) //nolint:gosec // test data
			if err != nil {
				t.Fatal(err)
			}
			var crd struct {
				Spec struct {
					Group string `json:"group"`
					Names struct {
						Kind string `json:"kind"`
					} `json:"names"`
					Versions []struct {
						Name   string `json:"name"`
						Served bool   `json:"served"`
					} `json:"versions"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(raw, &crd); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, v := range crd.Spec.Versions {
				if v.Served {
					served[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = true
				}
			}
		}
	}
	if len(served) == 0 {
		t.Fatalf("no CRDs under %s", dir)
	}
	checked := 0
	for _, a := range PlatformAPIs {
		for _, k := range a.Kinds {
			gvk := a.Group + "/" + a.Version + "/" + k.Kind
			if !served[gvk] {
				// A CRD of the group and kind at another version only.
				for s := range served {
					if strings.HasPrefix(s, a.Group+"/") && strings.HasSuffix(s, "/"+k.Kind) {
						t.Errorf("%s: the CRD serves %s, not %s", k.Kind, s, a.Version)
					}
				}
				continue
			}
			checked++
		}
	}
	if checked < 15 {
		t.Errorf("only %d kinds found in the CRDs", checked)
	}
}

// TestCompositionsRequireAPIServices: the control-plane step of each
// Composition declares the APIService of every API of PlatformAPIs as a
// bootstrap requirement under the key the function reads, so the first
// call already sees what the platform lacks.
func TestCompositionsRequireAPIServices(t *testing.T) {
	type sel struct {
		RequirementName string `json:"requirementName"`
		APIVersion      string `json:"apiVersion"`
		Kind            string `json:"kind"`
		Name            string `json:"name"`
	}
	var want []sel
	for _, a := range PlatformAPIs {
		want = append(want, sel{"apiservice-" + a.APIServiceName(), "apiregistration.k8s.io/v1", "APIService", a.APIServiceName()})
	}
	want = append(want, sel{"crd-externalartifacts.source.toolkit.fluxcd.io", "apiextensions.k8s.io/v1", "CustomResourceDefinition", "externalartifacts.source.toolkit.fluxcd.io"})
	for _, f := range []string{"composition.yaml", "composition-namespaced.yaml", "composition-tenant.yaml"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "package", f)) //nolint:gosec // test data
		if err != nil {
			t.Fatal(err)
		}
		var comp struct {
			Spec struct {
				Pipeline []struct {
					Step         string `json:"step"`
					Requirements struct {
						RequiredResources []sel `json:"requiredResources"`
					} `json:"requirements"`
				} `json:"pipeline"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &comp); err != nil {
			t.Fatal(err)
		}
		var got []sel
		for _, s := range comp.Spec.Pipeline[0].Requirements.RequiredResources {
			if s.Kind == "APIService" || s.Kind == "CustomResourceDefinition" {
				got = append(got, s)
			}
		}
		if comp.Spec.Pipeline[0].Step != "control-plane" {
			t.Errorf("%s: first step %q", f, comp.Spec.Pipeline[0].Step)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: APIService requirements of the first step (-want +got):\n%s", f, diff)
		}
	}
}

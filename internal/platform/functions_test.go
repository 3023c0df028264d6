package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	settings "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

func envConfig(t *testing.T, dataYAML string) *structpb.Struct {
	t.Helper()
	obj := map[string]any{"apiVersion": platform.APIVersion, "kind": platform.Kind, "metadata": map[string]any{"name": platform.Name}}
	if dataYAML != "" {
		data := map[string]any{}
		if err := yaml.Unmarshal([]byte(dataYAML), &data); err != nil {
			t.Fatal(err)
		}
		obj["data"] = data
	}
	s, err := structpb.NewStruct(obj)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func request(items ...*structpb.Struct) *fnv1.RunFunctionRequest {
	rs := &fnv1.Resources{}
	for _, it := range items {
		rs.Items = append(rs.Items, &fnv1.Resource{Resource: it})
	}
	return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{platform.RequirementKey: rs}}
}

func TestReadRequestsTheEnvironmentConfig(t *testing.T) {
	for name, req := range map[string]*fnv1.RunFunctionRequest{
		"not fetched yet": {},
		"fetched":         request(),
	} {
		rsp := &fnv1.RunFunctionResponse{}
		in := &settings.Settings{BaseDomain: "from.composition.test"}
		s, err := platform.Functions.Read(function.NewRequest(req), rsp, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sel := rsp.GetRequirements().GetResources()[platform.RequirementKey]
		if sel.GetApiVersion() != "apiextensions.crossplane.io/v1beta1" || sel.GetKind() != "EnvironmentConfig" || sel.GetMatchName() != "tenantkube" {
			t.Errorf("%s: requirement %s = %v, want the EnvironmentConfig tenantkube", name, platform.RequirementKey, sel)
		}
		if s.Found || in.BaseDomain != "from.composition.test" {
			t.Errorf("%s: found=%v, baseDomain %q: the input must stay as the Composition gave it", name, s.Found, in.BaseDomain)
		}
		if s.Arrived != (name == "fetched") {
			t.Errorf("%s: Arrived = %v", name, s.Arrived)
		}
	}
}

func TestReadMergesOverTheInput(t *testing.T) {
	req := request(envConfig(t, `
baseDomain: k8s.example.net
etcd: {storageSize: 8Gi}
dataStoreName: null
serviceCIDR: 10.200.0.0/16
images: {clusterAutoscaler: mirror.example.net/cluster-autoscaler:v1.35.1}
charts: {cilium: {version: 1.19.0}}
`))
	cp := &settings.Settings{BaseDomain: "old.test", DataStoreName: "shared", Etcd: settings.Etcd{Replicas: 5}}
	s, err := platform.Functions.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, cp)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Found {
		t.Error("Found = false")
	}
	// Set by the EnvironmentConfig; etcd.replicas kept from the
	// Composition (objects merge); dataStoreName unset by null.
	if cp.BaseDomain != "k8s.example.net" || cp.Etcd.StorageSize != "8Gi" || cp.Etcd.Replicas != 5 || cp.DataStoreName != "" || cp.ServiceCIDR != "10.200.0.0/16" {
		t.Errorf("control-plane input after the merge = %+v", cp)
	}
	w := &settings.Settings{Images: settings.Images{CSIDriver: "from.composition/csi:v1"}}
	if _, err := platform.Functions.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, w); err != nil {
		t.Fatal(err)
	}
	if w.Images.ClusterAutoscaler != "mirror.example.net/cluster-autoscaler:v1.35.1" || w.Images.CSIDriver != "from.composition/csi:v1" {
		t.Errorf("workers images after the merge = %+v", w.Images)
	}
	a := &settings.Settings{}
	if _, err := platform.Functions.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, a); err != nil {
		t.Fatal(err)
	}
	a.Default()
	// Only the version changes; the rest of cilium's default source stays.
	if a.ServiceCIDR != "10.200.0.0/16" || a.Charts.Cilium.Version != "1.19.0" || a.Charts.Cilium.URL != "https://helm.cilium.io/" {
		t.Errorf("addons input after the merge: serviceCIDR %q, cilium %+v", a.ServiceCIDR, a.Charts.Cilium)
	}
}

func TestReadRejectsBadSettings(t *testing.T) {
	for _, c := range []struct {
		data, path, value string
		in                any
	}{
		{data: "baseDomian: x.test", path: "EnvironmentConfig(tenantkube).data.baseDomian"},
		{data: "images: {csiDrivr: x}", path: "EnvironmentConfig(tenantkube).data.images.csiDrivr"},
		{data: "etcd: {replicas: three}", path: "EnvironmentConfig(tenantkube).data.etcd.replicas", value: `"three"`},
		{data: "cpuAllocationRatio: [1]", path: "EnvironmentConfig(tenantkube).data.cpuAllocationRatio"},
		{data: "apiVersion: v1", path: "EnvironmentConfig(tenantkube).data.apiVersion"},
	} {
		in := c.in
		if in == nil {
			in = &settings.Settings{BaseDomain: "keep.test"}
		}
		before, _ := json.Marshal(in)
		_, err := platform.Functions.Read(function.NewRequest(request(envConfig(t, c.data))), &fnv1.RunFunctionResponse{}, in)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.value) {
			t.Errorf("data %s (%T): error %v, want one naming %s %s", c.data, in, err, c.path, c.value)
		}
		if after, _ := json.Marshal(in); string(after) != string(before) {
			t.Errorf("data %s: the input changed on error: %s", c.data, after)
		}
	}
}

func TestAttributeNamesTheEnvironmentConfig(t *testing.T) {
	cp := &settings.Settings{}
	s, err := platform.Functions.Read(function.NewRequest(request(envConfig(t, "podCIDR: 10.0.0.0/99"))), &fnv1.RunFunctionResponse{}, cp)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv := s.Attribute(field.Invalid(field.NewPath("input", "podCIDR"), cp.PodCIDR, "must be a CIDR"))
	if got := fromEnv.Error(); !strings.HasPrefix(got, `EnvironmentConfig(tenantkube).data.podCIDR: Invalid value: "10.0.0.0/99"`) {
		t.Errorf("error = %q", got)
	}
	fromInput := s.Attribute(field.Invalid(field.NewPath("input", "serviceCIDR"), "x", "must be a CIDR"))
	if got := fromInput.Error(); !strings.HasPrefix(got, "input.serviceCIDR:") {
		t.Errorf("an error about a field the EnvironmentConfig did not set = %q, want it under input", got)
	}
}

// Every error of an aggregate (a function's Validate) is attributed on its
// own: the field the EnvironmentConfig set names it, the other stays under
// input.
func TestAttributeEachErrorOfAnAggregate(t *testing.T) {
	in := &settings.Settings{}
	s, err := platform.Functions.Read(function.NewRequest(request(envConfig(t, "podCIDR: 10.0.0.0/99"))), &fnv1.RunFunctionResponse{}, in)
	if err != nil {
		t.Fatal(err)
	}
	in.Default()
	in.MaxReplicas = 5001
	got := s.Attribute(in.Validate().ToAggregate()).Error()
	want := `[EnvironmentConfig(tenantkube).data.podCIDR: Invalid value: "10.0.0.0/99": must be a CIDR such as 10.95.0.0/16, input.maxReplicas: Invalid value: 5001: must be between 1 and 5000]`
	if got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

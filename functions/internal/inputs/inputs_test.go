package inputs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	addonsinput "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	workersinput "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

type defaulter interface{ Default() }

// The keys more than one function reads, found by hand in the three input
// types: each is one setting, so every function must read it with the same
// type and the same default.
func TestSharedSettingsAgree(t *testing.T) {
	owners := map[string][]int{}
	for i, in := range All() {
		for _, k := range platform.Keys(in) {
			owners[k] = append(owners[k], i)
		}
	}
	var shared []string
	for k, o := range owners {
		if len(o) > 1 {
			shared = append(shared, k)
		}
	}
	want := []string{"allowedHostSuffixes", "allowedTenantHostSuffixes", "baseDomain", "clusterDomain", "cpuAllocationRatio", "defaultWorkerOS", "deletionOrder", "ingressClassName", "maxCleanupObjects", "podCIDR", "remoteStorageClasses", "serviceCIDR"}
	if !sameSet(shared, want) {
		t.Errorf("settings read by several functions = %v, want %v", shared, want)
	}
	defaults := make([]map[string]any, len(All()))
	for i, in := range All() {
		in.(defaulter).Default()
		raw, _ := json.Marshal(in)
		_ = json.Unmarshal(raw, &defaults[i])
	}
	for _, k := range shared {
		first := owners[k][0]
		for _, i := range owners[k][1:] {
			if !reflect.DeepEqual(defaults[first][k], defaults[i][k]) {
				t.Errorf("%s defaults to %v in %T but %v in %T", k, defaults[first][k], All()[first], defaults[i][k], All()[i])
			}
			if a, b := fieldType(All()[first], k), fieldType(All()[i], k); a.Kind() != b.Kind() {
				t.Errorf("%s is a %s in %T but a %s in %T", k, a, All()[first], b, All()[i])
			}
		}
	}
	// The defaults themselves (docs/architecture.md: service CIDR
	// 10.95.0.0/16; CPU allocation ratio 10; nginx ingress class;
	// Kubernetes' default cluster domain).
	for k, v := range map[string]any{"serviceCIDR": "10.95.0.0/16", "cpuAllocationRatio": float64(10), "ingressClassName": "nginx", "deletionOrder": "Usages", "clusterDomain": "cluster.local"} {
		if got := defaults[0][k]; got != v {
			t.Errorf("default of %s = %v, want %v", k, got, v)
		}
	}
}

func fieldType(in any, key string) reflect.Type {
	for _, f := range reflect.VisibleFields(reflect.TypeOf(in).Elem()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key {
			return f.Type
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

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
		in := &cpinput.ControlPlaneInput{BaseDomain: "from.composition.test"}
		s, err := Platform.Read(function.NewRequest(req), rsp, in)
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
	cp := &cpinput.ControlPlaneInput{BaseDomain: "old.test", DataStoreName: "shared", Etcd: cpinput.Etcd{Replicas: 5}}
	s, err := Platform.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, cp)
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
	w := &workersinput.WorkersInput{Images: workersinput.Images{CSIDriver: "from.composition/csi:v1"}}
	if _, err := Platform.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, w); err != nil {
		t.Fatal(err)
	}
	if w.Images.ClusterAutoscaler != "mirror.example.net/cluster-autoscaler:v1.35.1" || w.Images.CSIDriver != "from.composition/csi:v1" {
		t.Errorf("workers images after the merge = %+v", w.Images)
	}
	a := &addonsinput.AddonsInput{}
	if _, err := Platform.Read(function.NewRequest(req), &fnv1.RunFunctionResponse{}, a); err != nil {
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
		// An unknown top-level key fails every function, not only the one
		// it was meant for.
		{data: "baseDomian: x.test", path: "EnvironmentConfig(tenantkube).data.baseDomian", in: &addonsinput.AddonsInput{}},
		{data: "images: {csiDrivr: x}", path: "EnvironmentConfig(tenantkube).data.images.csiDrivr", in: &workersinput.WorkersInput{}},
		{data: "etcd: {replicas: three}", path: "EnvironmentConfig(tenantkube).data.etcd.replicas", value: `"three"`},
		{data: "cpuAllocationRatio: [1]", path: "EnvironmentConfig(tenantkube).data.cpuAllocationRatio"},
		{data: "apiVersion: v1", path: "EnvironmentConfig(tenantkube).data.apiVersion"},
	} {
		in := c.in
		if in == nil {
			in = &cpinput.ControlPlaneInput{BaseDomain: "keep.test"}
		}
		before, _ := json.Marshal(in)
		_, err := Platform.Read(function.NewRequest(request(envConfig(t, c.data))), &fnv1.RunFunctionResponse{}, in)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.value) {
			t.Errorf("data %s (%T): error %v, want one naming %s %s", c.data, in, err, c.path, c.value)
		}
		if after, _ := json.Marshal(in); string(after) != string(before) {
			t.Errorf("data %s: the input changed on error: %s", c.data, after)
		}
	}
}

func TestAttributeNamesTheEnvironmentConfig(t *testing.T) {
	cp := &cpinput.ControlPlaneInput{}
	s, err := Platform.Read(function.NewRequest(request(envConfig(t, "podCIDR: 10.0.0.0/99"))), &fnv1.RunFunctionResponse{}, cp)
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

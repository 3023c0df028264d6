package fntest

import (
	"strconv"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Request builders shared by the function tests: a request is
// NewRequest of an observed XR changed by RequestOptions.

// RequestOption changes a test RunFunctionRequest.
type RequestOption func(*fnv1.RunFunctionRequest)

// NewRequest is a RunFunctionRequest observing the XR xr, with an empty
// desired state, changed by opts in order. A claim's XR (claim labels)
// observes its management namespace, as every reconcile after the first
// (WithoutManagementNamespace: the first).
func NewRequest(xr *structpb.Struct, opts ...RequestOption) *fnv1.RunFunctionRequest {
	r := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
		Desired:  &fnv1.State{},
	}
	labels := xr.GetFields()["metadata"].GetStructValue().GetFields()["labels"].GetStructValue().GetFields()
	if ns, n := labels["crossplane.io/claim-namespace"].GetStringValue(), labels["crossplane.io/claim-name"].GetStringValue(); ns != "" && n != "" {
		r.Observed.Resources = map[string]*fnv1.Resource{function.ManagementNamespaceResourceName: {Resource: ManagementNamespaceObject(ns, n)}}
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// WithObserved adds observed composed resources, by composed-resource name.
func WithObserved(objs map[string]*structpb.Struct) RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		if r.Observed.Resources == nil {
			r.Observed.Resources = map[string]*fnv1.Resource{}
		}
		for k, v := range objs {
			r.Observed.Resources[k] = &fnv1.Resource{Resource: v}
		}
	}
}

// WithoutManagementNamespace leaves the management namespace out of the
// observed state (a claim's first reconcile).
func WithoutManagementNamespace() RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		delete(r.Observed.Resources, function.ManagementNamespaceResourceName)
	}
}

// WithRequired answers the requirement key with items (none: Crossplane
// found nothing).
func WithRequired(key string, items ...*structpb.Struct) RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		if r.RequiredResources == nil {
			r.RequiredResources = map[string]*fnv1.Resources{}
		}
		rs := &fnv1.Resources{}
		for _, it := range items {
			rs.Items = append(rs.Items, &fnv1.Resource{Resource: it})
		}
		r.RequiredResources[key] = rs
	}
}

// WithInput sets the step's input.
func WithInput(in *structpb.Struct) RequestOption {
	return func(r *fnv1.RunFunctionRequest) { r.Input = in }
}

// MustYAML parses an object given as YAML, failing t when it does not
// parse.
func MustYAML(t testing.TB, y string) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatalf("bad test object: %v", err)
	}
	return s
}

// SeedInstancetype is a row of the seed's instance-type table: vCPUs and
// memory.
type SeedInstancetype struct {
	CPU    uint32
	Memory string
}

// SeedInstancetypes are rows of the seed chart's instance-type table (as
// in examples/instancetypes.yaml).
var SeedInstancetypes = map[string]SeedInstancetype{
	"u1.nano": {1, "512Mi"}, "u1.micro": {1, "1Gi"}, "u1.medium": {1, "4Gi"}, "u1.large": {2, "8Gi"},
	"u1.xlarge": {4, "16Gi"}, "u1.2xlarge": {8, "32Gi"}, "u1.8xlarge": {32, "128Gi"}, "gn1.xlarge": {4, "16Gi"},
	"cx1.medium": {1, "2Gi"},
}

// Instancetype is the VirtualMachineClusterInstancetype name of the seed's
// table, failing t for a name not in it.
func Instancetype(t testing.TB, name string) *structpb.Struct {
	t.Helper()
	row, ok := SeedInstancetypes[name]
	if !ok {
		t.Fatalf("no seed instance type %s", name)
	}
	return MustYAML(t, `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: `+name+`
spec:
  cpu:
    guest: `+strconv.Itoa(int(row.CPU))+`
  memory:
    guest: `+row.Memory)
}

// MachineSet is a MachineSet called name of cluster n in ns whose machines
// use the KubevirtMachineTemplate template.
func MachineSet(t testing.TB, ns, n, name, template string) *structpb.Struct {
	t.Helper()
	return MustYAML(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: `+name+`
  namespace: `+ns+`
  labels:
    cluster.x-k8s.io/cluster-name: `+n+`
spec:
  clusterName: `+n+`
  selector: {}
  template:
    spec:
      clusterName: `+n+`
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: `+n+`-md0}
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: KubevirtMachineTemplate
        name: `+template)
}

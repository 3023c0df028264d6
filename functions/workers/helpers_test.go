package main

import (
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// Test cluster identity: claim demo in tenant-foo.
const (
	testN  = "demo"
	testNS = "tenant-foo"
)

// mustStruct parses YAML into a structpb.Struct.
func mustStruct(t testing.TB, y string) *structpb.Struct {
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

// xr returns the observed XR of claim demo/tenant-foo with the given spec
// (YAML, indented by nothing).
func xr(t testing.TB, spec string) *structpb.Struct {
	t.Helper()
	indented := "  " + strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ")
	if strings.TrimSpace(spec) == "" {
		indented = "  {}"
	}
	return mustStruct(t, `apiVersion: tenantkube.io/v1alpha1
kind: XKubernetesCluster
metadata:
  name: demo-x7k2p
  labels:
    crossplane.io/claim-name: `+testN+`
    crossplane.io/claim-namespace: `+testNS+`
spec:
`+indented)
}

// seedInstancetypes are rows of the seed's instance-type table: vCPUs and
// memory.
var seedInstancetypes = map[string]struct {
	cpu uint32
	mem string
}{
	"u1.nano": {1, "512Mi"}, "u1.micro": {1, "1Gi"}, "u1.medium": {1, "4Gi"}, "u1.large": {2, "8Gi"},
	"u1.xlarge": {4, "16Gi"}, "u1.2xlarge": {8, "32Gi"}, "u1.8xlarge": {32, "128Gi"}, "gn1.xlarge": {4, "16Gi"},
	"cx1.medium": {1, "2Gi"},
}

// instancetype returns a VirtualMachineClusterInstancetype of the seed table.
func instancetype(t testing.TB, name string) *structpb.Struct {
	t.Helper()
	row, ok := seedInstancetypes[name]
	if !ok {
		t.Fatalf("no test instance type %s", name)
	}
	return mustStruct(t, `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: `+name+`
spec:
  cpu:
    guest: `+itoa(int(row.cpu))+`
  memory:
    guest: `+row.mem)
}

func itoa(i int) string { return strconv.Itoa(i) }

// reqOpt modifies a test request.
type reqOpt func(*fnv1.RunFunctionRequest)

// withInstancetypes answers the requirement of each named instance type
// with the seed's object (or with no items for names not in the table).
func withInstancetypes(t testing.TB, names ...string) reqOpt {
	return func(r *fnv1.RunFunctionRequest) {
		for _, n := range names {
			var items []*fnv1.Resource
			if _, ok := seedInstancetypes[n]; ok {
				items = append(items, &fnv1.Resource{Resource: instancetype(t, n)})
			}
			setRequired(r, requirementInstancetypeKey(n), items...)
		}
	}
}

// withMachineSets answers the MachineSets requirement with MachineSets
// referring to the given machine template names.
func withMachineSets(t testing.TB, templates ...string) reqOpt {
	return func(r *fnv1.RunFunctionRequest) {
		var items []*fnv1.Resource
		for i, tmpl := range templates {
			items = append(items, &fnv1.Resource{Resource: mustStruct(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: ms-`+itoa(i)+`
  namespace: `+testNS+`
  labels:
    cluster.x-k8s.io/cluster-name: `+testN+`
spec:
  clusterName: `+testN+`
  selector: {}
  template:
    spec:
      clusterName: `+testN+`
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: demo-md0}
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: KubevirtMachineTemplate
        name: `+tmpl)})
		}
		setRequired(r, requirementMachineSets, items...)
	}
}

// withObserved adds observed composed resources.
func withObserved(objs map[string]*structpb.Struct) reqOpt {
	return func(r *fnv1.RunFunctionRequest) {
		if r.Observed.Resources == nil {
			r.Observed.Resources = map[string]*fnv1.Resource{}
		}
		for k, v := range objs {
			r.Observed.Resources[k] = &fnv1.Resource{Resource: v}
		}
	}
}

// withInput sets the step's input.
func withInput(in *structpb.Struct) reqOpt {
	return func(r *fnv1.RunFunctionRequest) { r.Input = in }
}

func setRequired(r *fnv1.RunFunctionRequest, key string, items ...*fnv1.Resource) {
	if r.RequiredResources == nil {
		r.RequiredResources = map[string]*fnv1.Resources{}
	}
	r.RequiredResources[key] = &fnv1.Resources{Items: items}
}

// newRequest builds a RunFunctionRequest for the XR spec.
func newRequest(t testing.TB, spec string, opts ...reqOpt) *fnv1.RunFunctionRequest {
	t.Helper()
	r := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(t, spec)}},
		Desired:  &fnv1.State{},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// run calls RunFunction in process.
func run(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := fntest.RunAsServed((&Function{}).RunFunction, req)
	if err != nil {
		t.Fatalf("RunFunction returned an error: %v", err)
	}
	return rsp
}

// fatals returns the messages of rsp's Fatal results.
func fatals(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			out = append(out, r.GetMessage())
		}
	}
	return out
}

// mustNoFatal fails the test when rsp has a Fatal result.
func mustNoFatal(t testing.TB, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if f := fatals(rsp); len(f) > 0 {
		t.Fatalf("unexpected Fatal results: %v", f)
	}
}

// desired returns the desired composed resource called name as a map.
func desired(t testing.TB, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, desiredNames(rsp))
	}
	return r.GetResource().AsMap()
}

// desiredNames lists the desired composed-resource names, sorted.
func desiredNames(rsp *fnv1.RunFunctionResponse) []string {
	return sortedKeys(rsp.GetDesired().GetResources())
}

// get walks a path of map keys and list indexes (ints) in an object.
func get(obj any, path ...any) any {
	cur := obj
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			cur = l[k]
		}
	}
	return cur
}

func yamlInto(y string, out any) error { return yaml.Unmarshal([]byte(y), out) }

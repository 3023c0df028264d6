package main

import (
	"maps"
	"slices"
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

func mustStruct(t testing.TB, y string) *structpb.Struct { return fntest.MustYAML(t, y) }

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

// withInstancetypes answers the requirement of each named instance type
// with the seed's object (or with no items for names not in the table),
// and, when a name is not in it, the list of every instance type with the
// whole table, as Crossplane answers the next call.
func withInstancetypes(t testing.TB, names ...string) fntest.RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		missing := false
		for _, n := range names {
			var items []*structpb.Struct
			if _, ok := fntest.SeedInstancetypes[n]; ok {
				items = append(items, fntest.Instancetype(t, n))
			} else {
				missing = true
			}
			fntest.WithRequired(requirementInstancetypeKey(n), items...)(r)
		}
		if missing {
			var all []*structpb.Struct
			for _, n := range slices.Sorted(maps.Keys(fntest.SeedInstancetypes)) {
				all = append(all, fntest.Instancetype(t, n))
			}
			fntest.WithRequired(requirementInstancetypes, all...)(r)
		}
	}
}

// withMachineSets answers the MachineSets requirement with MachineSets
// referring to the given machine template names.
func withMachineSets(t testing.TB, templates ...string) fntest.RequestOption {
	var items []*structpb.Struct
	for i, tmpl := range templates {
		items = append(items, fntest.MachineSet(t, testNS, testN, "ms-"+itoa(i), tmpl))
	}
	return fntest.WithRequired(requirementMachineSets, items...)
}

// withRemoteClasses sets the input's remoteStorageClasses to replicated
// and classes: the management classes a node group's disks may use.
func withRemoteClasses(t testing.TB, classes ...string) fntest.RequestOption {
	return fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\nremoteStorageClasses: [replicated, "+strings.Join(classes, ", ")+"]"))
}

// newRequest builds a RunFunctionRequest for the XR spec.
func newRequest(t testing.TB, spec string, opts ...fntest.RequestOption) *fnv1.RunFunctionRequest {
	t.Helper()
	return fntest.NewRequest(xr(t, spec), opts...)
}

func itoa(i int) string { return strconv.Itoa(i) }

// run calls RunFunction in process.
func run(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := fntest.Run((&Function{now: fixedClock}).RunFunction, req)
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

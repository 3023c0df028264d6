package fntest

import (
	"sort"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// DesiredObject is the desired composed resource name of rsp as a JSON-like
// map; it fails t when rsp has none of that name.
func DesiredObject(t testing.TB, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired composed resource %q; have %v", name, DesiredNames(rsp))
	}
	return r.GetResource().AsMap()
}

// DesiredNames are the names of rsp's desired composed resources, sorted.
func DesiredNames(rsp *fnv1.RunFunctionResponse) []string {
	out := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for k := range rsp.GetDesired().GetResources() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Get is the value at path (map keys) of a JSON-like object; nil when
// absent.
func Get(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

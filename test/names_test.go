package test

import (
	"path/filepath"
	"testing"
)

// TestComposedObjectNamesAreUnique checks every golden render of the
// pipeline: no two composed resources name the same object (API group,
// kind, namespace, name). Two would make the steps fight over one object
// through Crossplane's single field manager, and garbage-collecting either
// composed resource would delete the other's object. The name-clash render
// names its node groups like the add-ons and the per-cluster objects.
func TestComposedObjectNamesAreUnique(t *testing.T) {
	root := repoRoot(t)
	objs := goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root))
	type key struct{ file, group, kind, namespace, name string }
	seen := map[key]bool{}
	for _, o := range objs {
		k := key{o.file, o.obj.GroupVersionKind().Group, o.obj.GetKind(), o.obj.GetNamespace(), o.obj.GetName()}
		if seen[k] {
			t.Errorf("%s: two composed resources are %s %s/%s", o.file, k.kind, k.namespace, k.name)
		}
		seen[k] = true
	}
	if len(seen) == 0 {
		t.Fatal("no composed objects in the golden renders")
	}
}

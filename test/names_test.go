package test

import (
	"path/filepath"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
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

// TestGoldenIngressesShareNoUpstream reads every golden render's Ingresses
// of the shared class, with the one Kamaji builds from each
// KamajiControlPlane (fntest.KamajiIngress), as ingress-nginx reads them
// (fntest.ReadAsNginx): no snippet annotation, and no upstream name is made
// by the objects of two tenant clusters (namespace and cluster label).
// Renders of one cluster in several files are one tenant.
func TestGoldenIngressesShareNoUpstream(t *testing.T) {
	root := repoRoot(t)
	objs := goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root))
	var ingresses []map[string]any
	// tenant is the cluster ("<NS>/<N>") of each Ingress ("<NS>/<name>").
	tenant := map[string]string{}
	for _, o := range objs {
		switch o.obj.GetKind() {
		case "Ingress":
			ingresses = append(ingresses, o.obj.Object)
			tenant[o.obj.GetNamespace()+"/"+o.obj.GetName()] = o.obj.GetNamespace() + "/" + o.obj.GetLabels()["tenantkube.io/cluster"]
		case "KamajiControlPlane":
			if ing := fntest.KamajiIngress(o.obj.Object); ing != nil {
				ingresses = append(ingresses, ing)
				tenant[o.obj.GetNamespace()+"/"+o.obj.GetName()] = o.obj.GetNamespace() + "/" + o.obj.GetName()
			}
		}
	}
	if len(ingresses) == 0 {
		t.Fatal("no Ingress in the golden renders")
	}
	v := fntest.ReadAsNginx("nginx", ingresses)
	if len(v.Snippets) > 0 {
		t.Errorf("snippet annotations %v", v.Snippets)
	}
	owner := map[string]string{}
	for key, ups := range v.Made {
		for _, up := range ups {
			who := tenant[key]
			if prev, ok := owner[up]; ok && prev != who {
				t.Errorf("upstream %s made by %s and %s", up, prev, who)
			}
			owner[up] = who
		}
	}
	if len(owner) == 0 {
		t.Fatal("no upstream on the shared class")
	}
}

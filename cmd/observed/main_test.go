package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/preview"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// fakeCluster serves objs; the mapper knows each kind listed in scopes.
func fakeCluster(t *testing.T, objs ...*unstructured.Unstructured) (*dynamicfake.FakeDynamicClient, meta.RESTMapper) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct {
		gvk        schema.GroupVersionKind
		namespaced bool
	}{
		{schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "KubernetesCluster"}, true},
		{schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "XKubernetesCluster"}, false},
		{schema.GroupVersionKind{Group: "tenantkube.io", Version: "v1alpha1", Kind: "TenantCluster"}, true},
		{schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha2", Kind: "KamajiControlPlane"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true},
	} {
		scope := meta.RESTScopeRoot
		if k.namespaced {
			scope = meta.RESTScopeNamespace
		}
		mapper.Add(k.gvk, scope)
		plural, _ := meta.UnsafeGuessKindToResource(k.gvk)
		listKinds[plural] = k.gvk.Kind + "List"
	}
	objects := make([]runtime.Object, len(objs))
	for i, o := range objs {
		objects[i] = o
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objects...), mapper
}

const kcp = `apiVersion: controlplane.cluster.x-k8s.io/v1alpha2
kind: KamajiControlPlane
metadata:
  name: demo
  namespace: tenant-demo
  annotations: {crossplane.io/composition-resource-name: control-plane}
  managedFields: [{manager: crossplane, operation: Apply}]
spec: {version: v1.35.6}
status: {ready: true}
`

// A claim's XR (Crossplane's legacy schema: spec.resourceRefs): every
// referenced object is written, as read, without managedFields; the
// cluster-scoped Namespace without a namespace; a reference to an object
// gone is reported and left out; an object not referenced is not written.
// make preview reads the directory back as the same composed resources.
func TestRunClaim(t *testing.T) {
	dyn, mapper := fakeCluster(t,
		obj(t, "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-demo}\nspec:\n  resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}\n"),
		obj(t, `apiVersion: tenantkube.io/v1alpha1
kind: XKubernetesCluster
metadata: {name: demo-x7k2p, uid: 0b5e-uid, managedFields: [{manager: crossplane}]}
spec:
  version: v1.35
  resourceRefs:
  - {apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, name: demo, namespace: tenant-demo}
  - {apiVersion: v1, kind: Namespace, name: tenantkube-mgmt}
  - {apiVersion: v1, kind: Secret, name: demo-gone, namespace: tenant-demo}
status: {conditions: [{type: Ready, status: "False"}]}
`),
		obj(t, kcp),
		obj(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenantkube-mgmt\n  annotations: {crossplane.io/composition-resource-name: management-namespace}\n"),
		obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: unrelated\n  namespace: tenant-demo\n  annotations: {crossplane.io/composition-resource-name: x}\n"),
	)
	out := filepath.Join(t.TempDir(), "observed")
	xrOut := filepath.Join(t.TempDir(), "xr.yaml")
	var warn bytes.Buffer
	n, err := run(context.Background(), dyn, mapper, "demo", "tenant-demo", out, xrOut, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("wrote %d objects, want 2", n)
	}
	if !strings.Contains(warn.String(), "Secret tenant-demo/demo-gone") {
		t.Errorf("the missing Secret is not reported: %q", warn.String())
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	want := []string{"kamajicontrolplane.controlplane.cluster.x-k8s.io_tenant-demo_demo.yaml", "namespace_tenantkube-mgmt.yaml"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	got := obj(t, string(must(os.ReadFile(filepath.Join(out, want[0])))))
	wantKCP := obj(t, kcp)
	unstructured.RemoveNestedField(wantKCP.Object, "metadata", "managedFields")
	if !reflect.DeepEqual(got.Object, wantKCP.Object) {
		t.Errorf("written KamajiControlPlane\n%v\nwant\n%v", got.Object, wantKCP.Object)
	}

	objs, err := preview.ReadPath(out)
	if err != nil {
		t.Fatal(err)
	}
	composed, err := preview.Composed(objs)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range composed.Keys() {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	if w := []string{"KamajiControlPlane demo", "Namespace tenantkube-mgmt"}; !reflect.DeepEqual(keys, w) {
		t.Errorf("make preview reads %v, want %v", keys, w)
	}

	xr := obj(t, string(must(os.ReadFile(xrOut))))
	if xr.GetName() != "demo-x7k2p" || xr.GetUID() != "0b5e-uid" || xr.Object["status"] != nil || xr.GetManagedFields() != nil {
		t.Errorf("XR written as %v", xr.Object)
	}

	// A directory holding YAML already is refused.
	if _, err := run(context.Background(), dyn, mapper, "demo", "tenant-demo", out, "", &warn); err == nil || !strings.Contains(err.Error(), "holds") {
		t.Errorf("a directory with YAML: err %v", err)
	}
}

// A TenantCluster (Crossplane v2: spec.crossplane.resourceRefs): a
// reference without a namespace is in the XR's namespace.
func TestRunTenantCluster(t *testing.T) {
	dyn, mapper := fakeCluster(t,
		obj(t, "apiVersion: tenantkube.io/v1alpha1\nkind: TenantCluster\nmetadata: {name: demo, namespace: tenant-demo}\nspec:\n  crossplane:\n    resourceRefs:\n    - {apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, name: demo}\n"),
		obj(t, kcp),
	)
	out := t.TempDir()
	n, err := run(context.Background(), dyn, mapper, "demo", "tenant-demo", out, "", &bytes.Buffer{})
	if err != nil || n != 1 {
		t.Fatalf("wrote %d, err %v; want 1", n, err)
	}
	if _, err := os.Stat(filepath.Join(out, "kamajicontrolplane.controlplane.cluster.x-k8s.io_tenant-demo_demo.yaml")); err != nil {
		t.Error(err)
	}

	_, err = run(context.Background(), dyn, mapper, "other", "tenant-demo", t.TempDir(), "", &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "KubernetesCluster") || !strings.Contains(err.Error(), "TenantCluster tenant-demo/other") {
		t.Errorf("no cluster: err %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package function

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dataVolume is a DataVolume in namespace ns with the given extra metadata.
func dataVolume(t *testing.T, name, ns string, meta map[string]any) *fnv1.Resource {
	m := map[string]any{"name": name, "namespace": ns, "labels": map[string]any{LabelCluster: "demo"}}
	for k, v := range meta {
		m[k] = v
	}
	return &fnv1.Resource{Resource: mustStruct(t, map[string]any{
		"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": m,
		"spec": map[string]any{"storage": map[string]any{}},
	})}
}

func TestComposeForCleanup(t *testing.T) {
	id := Identity{Name: "demo", Namespace: "tenant-demo"}
	dv := CleanupKind{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}
	xr := mustStruct(t, map[string]any{"metadata": map[string]any{"name": "demo-x7k2p", "uid": "xr-uid"}})
	controller := func(uid string) map[string]any {
		return map[string]any{"ownerReferences": []any{map[string]any{"apiVersion": "x/v1", "kind": "K", "name": "o", "uid": uid, "controller": true}}}
	}
	required := []*fnv1.Resource{
		dataVolume(t, "pvc-tenant", "tenant-demo", nil),
		dataVolume(t, "pvc-adopted", "tenant-demo", map[string]any{
			"annotations": map[string]any{annotationComposedName: "cleanup-datavolume-pvc-adopted"},
		}),
		dataVolume(t, "pvc-xr-controlled", "tenant-demo", controller("xr-uid")),
		dataVolume(t, "vm-root-disk", "tenant-demo", controller("vm-uid")),
		dataVolume(t, "composed-by-a-step", "tenant-demo", map[string]any{
			"annotations": map[string]any{annotationComposedName: "nodegroup-md0-disk"},
		}),
		dataVolume(t, "elsewhere", "other-ns", nil),
	}
	observed := map[string]*fnv1.Resource{
		"cleanup-datavolume-pvc-adopted":   dataVolume(t, "pvc-adopted", "tenant-demo", nil),
		"cleanup-datavolume-pvc-kept-only": dataVolume(t, "pvc-kept-only", "tenant-demo", nil),
		"nodegroup-md0-disk":               dataVolume(t, "composed-by-a-step", "tenant-demo", nil),
	}
	composed := func(req *fnv1.RunFunctionRequest, keep func(string) bool) ([]string, *fnv1.RunFunctionResponse) {
		t.Helper()
		rsp := &fnv1.RunFunctionResponse{}
		p := &Plan{}
		res, err := p.ComposeForCleanup(NewRequest(req), id, dv, CleanupOptions{Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(rsp, NewRequest(req), p); err != nil {
			t.Fatal(err)
		}
		return res.Composed, rsp
	}

	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		keep func(string) bool
		want []string
	}{
		"required resources arrived": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: observed},
				RequiredResources: map[string]*fnv1.Resources{"cleanup-datavolume.cdi.kubevirt.io": {Items: required}},
			},
			want: []string{"pvc-adopted", "pvc-kept-only", "pvc-tenant", "pvc-xr-controlled"},
		},
		"required resources not fetched yet: the composed ones stay": {
			req:  &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: observed}},
			want: []string{"pvc-adopted", "pvc-kept-only"},
		},
		"keep limits the names": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
				RequiredResources: map[string]*fnv1.Resources{"cleanup-datavolume.cdi.kubevirt.io": {Items: required}},
			},
			keep: func(n string) bool { return n == "pvc-tenant" },
			want: []string{"pvc-tenant"},
		},
		"none": {req: &fnv1.RunFunctionRequest{}, want: []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			names, rsp := composed(tc.req, tc.keep)
			if d := cmp.Diff(tc.want, names); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
			if got := len(rsp.GetDesired().GetResources()); got != len(tc.want) {
				t.Errorf("%d composed resources, want %d", got, len(tc.want))
			}
			for _, n := range tc.want {
				r := rsp.GetDesired().GetResources()["cleanup-datavolume-"+n]
				if d := cmp.Diff(map[string]any{
					"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
					"metadata": map[string]any{"name": n, "namespace": "tenant-demo"},
				}, r.GetResource().AsMap()); d != "" {
					t.Errorf("%s (-want +got):\n%s", n, d)
				}
				if r.GetReady() != fnv1.Ready_READY_TRUE {
					t.Errorf("%s ready %v", n, r.GetReady())
				}
			}
			sel := rsp.GetRequirements().GetResources()["cleanup-datavolume.cdi.kubevirt.io"]
			if d := cmp.Diff(map[string]string{LabelCluster: "demo"}, sel.GetMatchLabels().GetLabels()); d != "" || sel.GetNamespace() != "tenant-demo" ||
				sel.GetApiVersion() != dv.APIVersion || sel.GetKind() != dv.Kind {
				t.Errorf("requirement %v", sel)
			}
		})
	}
	if got := (CleanupKind{APIVersion: "v1", Kind: "Service"}).requiredKey(); got != "cleanup-service" {
		t.Errorf("core kind key %q", got)
	}
}

func TestComposeForCleanupPresentLimitAndType(t *testing.T) {
	id := Identity{Name: "demo", Namespace: "tenant-demo"}
	secret := CleanupKind{APIVersion: "v1", Kind: "Secret"}
	mk := func(name string, meta map[string]any) *fnv1.Resource {
		m := map[string]any{"name": name, "namespace": "tenant-demo"}
		for k, v := range meta {
			m[k] = v
		}
		return &fnv1.Resource{Resource: mustStruct(t, map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": m})}
	}
	owned := map[string]any{"ownerReferences": []any{map[string]any{"kind": "Certificate", "name": "c", "uid": "cert-uid", "controller": true}}}
	req := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"cleanup-secret": {Items: []*fnv1.Resource{
		mk("c", nil), mk("a", nil), mk("b", nil), mk("owned", owned),
	}}}}
	rsp := &fnv1.RunFunctionResponse{}
	p := &Plan{}
	res, err := p.ComposeForCleanup(NewRequest(req), id, secret, CleanupOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(rsp, NewRequest(req), p); err != nil {
		t.Fatal(err)
	}
	want := CleanupResult{Present: []string{"a", "b", "c", "owned"}, Composed: []string{"a", "b"}, Skipped: 1}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	// A Secret's immutable type is carried, so a re-create cannot make it
	// something else.
	if d := cmp.Diff(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "a", "namespace": "tenant-demo"},
	}, rsp.GetDesired().GetResources()["cleanup-secret-a"].GetResource().AsMap()); d != "" {
		t.Errorf("composed Secret (-want +got):\n%s", d)
	}
}

// Plan.ComposeForCleanup composes at most Limit of the required objects, in
// name order, besides those composed earlier (still observed), and reports
// what it skipped.
func TestComposeForCleanupLimit(t *testing.T) {
	id := Identity{Name: "demo", Namespace: "tenant-demo"}
	dv := CleanupKind{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{
			"cleanup-datavolume-old": dataVolume(t, "old", "tenant-demo", nil),
		}},
		RequiredResources: map[string]*fnv1.Resources{"cleanup-datavolume.cdi.kubevirt.io": {Items: []*fnv1.Resource{
			dataVolume(t, "b", "tenant-demo", nil), dataVolume(t, "a", "tenant-demo", nil), dataVolume(t, "c", "tenant-demo", nil),
		}}},
	}
	p := &Plan{}
	res, err := p.ComposeForCleanup(NewRequest(req), id, dv, CleanupOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(CleanupResult{Present: []string{"a", "b", "c", "old"}, Composed: []string{"a", "b", "old"}, Skipped: 1}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
}

// What was composed for cleanup stays in the desired state until it is no
// longer observed, whatever the current kinds: dropping it would delete a
// tenant's volume.
func TestKeepComposedForCleanup(t *testing.T) {
	observed := map[string]*fnv1.Resource{
		"cleanup-datavolume-pvc-1": dataVolume(t, "pvc-1", "tenant-demo", map[string]any{"uid": "u", "managedFields": []any{}}),
		"cleanup-secret-demo-etcd-ca": {Resource: mustStruct(t, map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
			"metadata": map[string]any{"name": "demo-etcd-ca", "namespace": "tenant-demo"},
		})},
		"nodegroup-md0-machinedeployment": dataVolume(t, "not-cleanup", "tenant-demo", nil),
	}
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{
		"cleanup-secret-demo-etcd-ca": {Resource: mustStruct(t, map[string]any{"kind": "Secret", "set": "by an earlier step"})},
	}}}
	if err := keepComposedForCleanup(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: observed}}, rsp); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for n, r := range rsp.GetDesired().GetResources() {
		got[n] = r.GetResource().AsMap()
	}
	want := map[string]any{
		"cleanup-datavolume-pvc-1": map[string]any{
			"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": "pvc-1", "namespace": "tenant-demo"},
		},
		"cleanup-secret-demo-etcd-ca": map[string]any{"kind": "Secret", "set": "by an earlier step"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("desired (-want +got):\n%s", d)
	}
}

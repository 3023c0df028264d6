package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeptMetadataKeepsOnlyWhatCrossplaneApplied(t *testing.T) {
	const crossplane = "apiextensions.crossplane.io/composed/0123abcd"
	fieldsV1 := func(labels, annotations []string) map[string]any {
		l, a := map[string]any{}, map[string]any{}
		for _, k := range labels {
			l["f:"+k] = map[string]any{}
		}
		for _, k := range annotations {
			a["f:"+k] = map[string]any{}
		}
		return map[string]any{"f:metadata": map[string]any{"f:labels": l, "f:annotations": a}, "f:spec": map[string]any{"f:replicas": map[string]any{}}}
	}
	obj := func(managed ...any) map[string]any {
		return map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
			"metadata": map[string]any{
				"name": "demo-md0", "namespace": "tenant-demo", "uid": "u1",
				"labels": map[string]any{
					"tenantkube.io/cluster": "demo", "crossplane.io/composite": "demo-x7k2p", "crossplane.io/in-use": "true",
				},
				"annotations": map[string]any{
					"crossplane.io/composition-resource-name":      "nodegroup-md0-machinedeployment",
					"machinedeployment.clusters.x-k8s.io/revision": "3",
				},
				"managedFields": managed,
			},
		}
	}
	cases := map[string]struct {
		obj  map[string]any
		want map[string]any
	}{
		"Crossplane's apply recorded: other owners' keys left out": {
			obj: obj(
				map[string]any{"manager": crossplane, "operation": "Apply", "fieldsV1": fieldsV1(
					[]string{"tenantkube.io/cluster", "crossplane.io/composite"}, []string{"crossplane.io/composition-resource-name"})},
				map[string]any{"manager": "manager", "operation": "Update", "fieldsV1": fieldsV1(nil, []string{"machinedeployment.clusters.x-k8s.io/revision"})},
				map[string]any{"manager": "apiextensions.crossplane.io/usage", "operation": "Update", "fieldsV1": fieldsV1([]string{"crossplane.io/in-use"}, nil)},
			),
			want: map[string]any{
				"name": "demo-md0", "namespace": "tenant-demo",
				"labels":      map[string]any{"tenantkube.io/cluster": "demo", "crossplane.io/composite": "demo-x7k2p"},
				"annotations": map[string]any{"crossplane.io/composition-resource-name": "nodegroup-md0-machinedeployment"},
			},
		},
		"no Crossplane apply recorded: everything kept": {
			obj: obj(map[string]any{"manager": "manager", "operation": "Update", "fieldsV1": fieldsV1(nil, []string{"machinedeployment.clusters.x-k8s.io/revision"})}),
			want: map[string]any{
				"name": "demo-md0", "namespace": "tenant-demo",
				"labels": map[string]any{
					"tenantkube.io/cluster": "demo", "crossplane.io/composite": "demo-x7k2p", "crossplane.io/in-use": "true",
				},
				"annotations": map[string]any{
					"crossplane.io/composition-resource-name":      "nodegroup-md0-machinedeployment",
					"machinedeployment.clusters.x-k8s.io/revision": "3",
				},
			},
		},
		"Crossplane owns no annotation: none kept": {
			obj: obj(map[string]any{"manager": crossplane, "operation": "Apply", "fieldsV1": fieldsV1([]string{"tenantkube.io/cluster"}, nil)}),
			want: map[string]any{
				"name": "demo-md0", "namespace": "tenant-demo",
				"labels": map[string]any{"tenantkube.io/cluster": "demo"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, keptMetadata(mustStruct(t, tc.obj)).AsMap()); d != "" {
				t.Errorf("kept metadata (-want +got):\n%s", d)
			}
		})
	}
	if got := keptMetadata(mustStruct(t, map[string]any{"kind": "X"})).AsMap(); len(got) != 0 {
		t.Errorf("no metadata: %v", got)
	}
}

// An apply that leaves out an ownerReference it applied before removes it
// (server-side apply, ownerReferences a list keyed by uid): a kept object
// keeps the non-controller references Crossplane applied, in the
// managedFields form the API server records them (k:{"uid":"<uid>"}).
func TestKeptMetadataKeepsAppliedOwnerReferences(t *testing.T) {
	const crossplane = "apiextensions.crossplane.io/composed/0123abcd"
	xr := map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster", "name": "demo-x7k2p", "uid": "xr-uid", "controller": true, "blockOwnerDeletion": true}
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "name": "tenant-demo", "uid": "ns-uid"}
	other := map[string]any{"apiVersion": "example.io/v1", "kind": "Thing", "name": "t", "uid": "other-uid"}
	refs := func(uids ...string) map[string]any {
		m := map[string]any{".": map[string]any{}}
		for _, u := range uids {
			m[`k:{"uid":"`+u+`"}`] = map[string]any{}
		}
		return m
	}
	obj := func(managed ...any) map[string]any {
		return map[string]any{
			"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
			"metadata": map[string]any{"name": "tenant-demo.demo-backup-20261202183044-1a2b3c", "ownerReferences": []any{xr, ns, other}, "managedFields": managed},
		}
	}
	for name, tc := range map[string]struct {
		obj  map[string]any
		want any
	}{
		"recorded: Crossplane's non-controller reference kept": {
			obj: obj(
				map[string]any{"manager": crossplane, "operation": "Apply", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:ownerReferences": refs("xr-uid", "ns-uid")}}},
				map[string]any{"manager": "other", "operation": "Update", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:ownerReferences": refs("other-uid")}}},
			),
			want: []any{ns},
		},
		"recorded without references: none kept": {
			obj:  obj(map[string]any{"manager": crossplane, "operation": "Apply", "fieldsV1": map[string]any{"f:data": map[string]any{}}}),
			want: nil,
		},
		"not recorded: every non-controller reference kept": {
			obj:  obj(),
			want: []any{ns, other},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := keptMetadata(mustStruct(t, tc.obj)).AsMap()["ownerReferences"]
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("kept ownerReferences (-want +got):\n%s", d)
			}
		})
	}
}

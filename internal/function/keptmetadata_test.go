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

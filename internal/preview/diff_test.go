package preview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	type args struct{ old, new any }
	cases := []struct {
		reason string
		args   args
		want   []change
	}{
		{reason: "equal", args: args{old: map[string]any{"a": int64(1)}, new: map[string]any{"a": int64(1)}}, want: nil},
		{reason: "a scalar changes", args: args{
			old: map[string]any{"spec": map[string]any{"size": "20Gi"}},
			new: map[string]any{"spec": map[string]any{"size": "30Gi"}},
		}, want: []change{{Path: "spec.size"}}},
		{reason: "a key only new has, leaf by leaf", args: args{
			old: map[string]any{},
			new: map[string]any{"it": map[string]any{"kind": "K", "name": "u1.medium"}},
		}, want: []change{{Path: "it.kind"}, {Path: "it.name"}}},
		{reason: "a key only old has is removed", args: args{
			old: map[string]any{"a": "x", "b": "y"},
			new: map[string]any{"a": "x"},
		}, want: []change{{Path: "b", Removed: true}}},
		{reason: "a key with dots or slashes is bracketed", args: args{
			old: map[string]any{"labels": map[string]any{"tenantkube.io/x": "1"}},
			new: map[string]any{"labels": map[string]any{"tenantkube.io/x": "2"}},
		}, want: []change{{Path: "labels[tenantkube.io/x]"}}},
		{reason: "lists by index, extra elements added or removed", args: args{
			old: map[string]any{"l": []any{"a", "b", "c"}},
			new: map[string]any{"l": []any{"a", "B"}},
		}, want: []change{{Path: "l[*]"}, {Path: "l[*]", Removed: true}}},
		{reason: "an empty map added", args: args{
			old: map[string]any{},
			new: map[string]any{"blank": map[string]any{}},
		}, want: []change{{Path: "blank"}}},
		{reason: "a scalar replaced by a map", args: args{
			old: map[string]any{"v": "x"},
			new: map[string]any{"v": map[string]any{"k": "y"}},
		}, want: []change{{Path: "v", Removed: true}, {Path: "v.k"}}},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			if diff := cmp.Diff(c.want, diff(c.args.old, c.args.new)); diff != "" {
				t.Errorf("diff(...): -want, +got:\n%s", diff)
			}
		})
	}
}

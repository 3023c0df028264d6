package preview

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func sleepObj(kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "spec": spec}}
}

func sleepObjects(us ...*unstructured.Unstructured) Objects {
	out := Objects{}
	for _, u := range us {
		out[KeyOf(u)] = u
	}
	return out
}

func TestHibernationChanges(t *testing.T) {
	awake := sleepObjects(
		sleepObj("MachineDeployment", "demo-md0", map[string]any{"replicas": int64(2)}),
		sleepObj("KamajiControlPlane", "demo", map[string]any{"replicas": int64(2)}),
		sleepObj("Deployment", "demo-cluster-autoscaler", map[string]any{"replicas": int64(1)}),
		sleepObj("HelmRelease", "demo-cilium", map[string]any{}),
		sleepObj("HelmRelease", "demo-coredns", map[string]any{"suspend": false}),
	)
	asleep := sleepObjects(
		sleepObj("MachineDeployment", "demo-md0", map[string]any{"replicas": int64(0)}),
		sleepObj("KamajiControlPlane", "demo", map[string]any{"replicas": int64(0)}),
		sleepObj("Deployment", "demo-cluster-autoscaler", map[string]any{"replicas": int64(0)}),
		sleepObj("HelmRelease", "demo-cilium", map[string]any{"suspend": true}),
		sleepObj("HelmRelease", "demo-coredns", map[string]any{"suspend": true}),
	)
	woken := sleepObjects(
		sleepObj("MachineDeployment", "demo-md0", map[string]any{}),
		sleepObj("KamajiControlPlane", "demo", map[string]any{"replicas": int64(2)}),
		sleepObj("Deployment", "demo-cluster-autoscaler", map[string]any{"replicas": int64(1)}),
		sleepObj("HelmRelease", "demo-cilium", map[string]any{}),
		sleepObj("HelmRelease", "demo-coredns", map[string]any{"suspend": true}),
	)
	for _, c := range []struct {
		name          string
		before, after Objects
		want          []string
	}{
		{"sleep", awake, asleep, []string{"Deployment demo-cluster-autoscaler replicas 1 -> 0", "KamajiControlPlane demo replicas 2 -> 0",
			"MachineDeployment demo-md0 replicas 2 -> 0", "2 add-on releases suspended"}},
		{"wake", asleep, woken, []string{"Deployment demo-cluster-autoscaler replicas 0 -> 1", "KamajiControlPlane demo replicas 0 -> 2",
			"MachineDeployment demo-md0 replicas 0 -> its minimum (released to cluster-autoscaler)", "1 add-on releases resumed"}},
		{"awake: the autoscaler's replicas are not a change", awake, sleepObjects(sleepObj("MachineDeployment", "demo-md0", map[string]any{})), nil},
	} {
		got := HibernationChanges(c.before, c.after)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestHibernationString(t *testing.T) {
	next := time.Date(2026, 3, 11, 21, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    *Hibernation
		want string
	}{
		{nil, ""},
		{&Hibernation{}, ""},
		{&Hibernation{State: "Hibernated"}, "hibernation: Hibernated\nhibernation: no scheduled transition\n"},
		{&Hibernation{State: "Awake", Next: next, AtNext: []string{"a", "b"}},
			"hibernation: Awake\nhibernation: at 2026-03-11T21:00:00Z: a\nhibernation: at 2026-03-11T21:00:00Z: b\n"},
		{&Hibernation{State: "Hibernating", Now: []string{"x"}, Next: next},
			"hibernation: Hibernating\nhibernation: now: x\nhibernation: at 2026-03-11T21:00:00Z: no change\n"},
	} {
		if got := c.h.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.h, got, c.want)
		}
	}
}

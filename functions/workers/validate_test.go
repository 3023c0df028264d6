package main

import (
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// group returns a defaulted node group with changes applied.
func group(change func(*v1alpha1.NodeGroup)) v1alpha1.NodeGroup {
	g := v1alpha1.NodeGroup{}
	if change != nil {
		change(&g)
	}
	g.Default()
	return g
}

func i32(v int32) *int32 { return &v }

func TestValidateNodeGroupAccepts(t *testing.T) {
	cases := map[string]struct {
		name string
		g    v1alpha1.NodeGroup
	}{
		"defaults":                {"md0", group(nil)},
		"16-character name":       {"abcdefghijklmnop", group(nil)},
		"roles with dots":         {"md0", group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"ingress-nginx", "gpu.worker"} })},
		"min equals max":          {"md0", group(func(g *v1alpha1.NodeGroup) { g.MinReplicas, g.MaxReplicas = i32(3), i32(3) })},
		"zero max":                {"md0", group(func(g *v1alpha1.NodeGroup) { g.MinReplicas, g.MaxReplicas = i32(0), i32(0) })},
		"both resources":          {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources = v1alpha1.Resources{CPU: "4", Memory: "16Gi"} })},
		"resources in millicores": {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources = v1alpha1.Resources{CPU: "4000m", Memory: "1e9"} })},
		"gpus and storage class": {"md0", group(func(g *v1alpha1.NodeGroup) {
			g.GPUs = []v1alpha1.GPU{{Name: "nvidia.com/AD102GL_L40S"}}
			g.StorageClass = "fast-ssd"
		})},
		"decimal exponent disk size": {"md0", group(func(g *v1alpha1.NodeGroup) { g.DiskSize = "50e9" })},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if errs := ValidateNodeGroup(c.name, c.g, 100); len(errs) > 0 {
				t.Errorf("rejected: %v", errs)
			}
		})
	}
}

func TestValidateNodeGroupRejects(t *testing.T) {
	cases := map[string]struct {
		name string
		g    v1alpha1.NodeGroup
		want []string
	}{
		"17-character name":  {"abcdefghijklmnopq", group(nil), []string{"spec.nodeGroups[abcdefghijklmnopq]", "16"}},
		"upper-case name":    {"MD0", group(nil), []string{"spec.nodeGroups[MD0]", `"MD0"`}},
		"name with a dot":    {"md.0", group(nil), []string{"spec.nodeGroups[md.0]", `"md.0"`}},
		"upper-case role":    {"md0", group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"Ingress"} }), []string{"spec.nodeGroups[md0].roles[0]", `"Ingress"`}},
		"empty role":         {"md0", group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"ok", ""} }), []string{"spec.nodeGroups[md0].roles[1]"}},
		"role with a slash":  {"md0", group(func(g *v1alpha1.NodeGroup) { g.Roles = []string{"a/b"} }), []string{"roles[0]", `"a/b"`}},
		"min above max":      {"md0", group(func(g *v1alpha1.NodeGroup) { g.MinReplicas, g.MaxReplicas = i32(5), i32(2) }), []string{"spec.nodeGroups[md0].minReplicas", "5", "maxReplicas (2)"}},
		"negative max":       {"md0", group(func(g *v1alpha1.NodeGroup) { g.MinReplicas, g.MaxReplicas = i32(0), i32(-1) }), []string{"spec.nodeGroups[md0].maxReplicas", "-1"}},
		"cpu alone":          {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources.CPU = "2" }), []string{"spec.nodeGroups[md0].resources.memory", `"2"`, "together or neither"}},
		"memory alone":       {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources.Memory = "4Gi" }), []string{"spec.nodeGroups[md0].resources.cpu", `"4Gi"`, "together or neither"}},
		"cpu not a quantity": {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources = v1alpha1.Resources{CPU: "four", Memory: "4Gi"} }), []string{"spec.nodeGroups[md0].resources.cpu", `"four"`}},
		"fractional cores":   {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources = v1alpha1.Resources{CPU: "1500m", Memory: "4Gi"} }), []string{"spec.nodeGroups[md0].resources.cpu", `"1500m"`, "whole"}},
		"memory negative":    {"md0", group(func(g *v1alpha1.NodeGroup) { g.Resources = v1alpha1.Resources{CPU: "2", Memory: "-4Gi"} }), []string{"spec.nodeGroups[md0].resources.memory", `"-4Gi"`}},
		"absurd disk size":   {"md0", group(func(g *v1alpha1.NodeGroup) { g.DiskSize = "1e999999999" }), []string{"spec.nodeGroups[md0].diskSize", "out of range"}},
		"bad disk size":      {"md0", group(func(g *v1alpha1.NodeGroup) { g.DiskSize = "big" }), []string{"spec.nodeGroups[md0].diskSize", `"big"`}},
		"ephemeralStorage":   {"md0", group(func(g *v1alpha1.NodeGroup) { q := v1alpha1.Quantity("20Gi"); g.EphemeralStorage = &q }), []string{"spec.nodeGroups[md0].ephemeralStorage", "diskSize"}},
		"empty gpu name":     {"md0", group(func(g *v1alpha1.NodeGroup) { g.GPUs = []v1alpha1.GPU{{}} }), []string{"spec.nodeGroups[md0].gpus[0].name"}},
		"bad storage class":  {"md0", group(func(g *v1alpha1.NodeGroup) { g.StorageClass = "Fast_SSD" }), []string{"spec.nodeGroups[md0].storageClass", `"Fast_SSD"`}},
		"bad instance type":  {"md0", group(func(g *v1alpha1.NodeGroup) { g.InstanceType = ptr("U1 Large") }), []string{"spec.nodeGroups[md0].instanceType", `"U1 Large"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			errs := ValidateNodeGroup(c.name, c.g, 100)
			if len(errs) == 0 {
				t.Fatal("accepted, want an error")
			}
			msg := errs.ToAggregate().Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

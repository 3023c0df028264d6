package main

import (
	"regexp"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// Shapes a status string read back from observed objects may have,
// written from the Kubernetes version format (vMAJOR.MINOR.PATCH) and the
// template naming N-G-<6 hex>, independently of the code.
var (
	strictVersion = regexp.MustCompile(`^v(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$`)
	md0Template   = regexp.MustCompile(`^demo-md0-[0-9a-f]{6}$`)
	quantityText  = regexp.MustCompile(`^[0-9]+(m|Ki|Mi|Gi|Ti)?$`)
	readyOfTotal  = regexp.MustCompile(`^[0-9]+/[0-9]+$`)
)

// FuzzStatusTextFromObserved: whatever the Machines' kubeletVersion, the
// MachineSets' and the MachineDeployment's machine-template names (objects
// CAPI, the tenant's kubelet or anyone editing them write), every string
// the function shows on the XR is from a closed set or parsed and
// re-printed: kubelet versions vMAJOR.MINOR.PATCH or "unknown", rollout
// templates demo-md0-<6 hex>, allocatable quantities, nodes as
// <ready>/<total>; and no string of the
// observed objects that has none of these shapes appears anywhere in the
// status, a condition or a result.
func FuzzStatusTextFromObserved(f *testing.F) {
	for _, s := range [][4]string{
		{"v1.35.1", "v1.34.4", "demo-md0-aaaaaa", "demo-md0-bbbbbb"},
		{"v1.35.1-URGENT.platform-admins.rotate.creds", "1.35.1", "demo-md0-URGENT", "demo-md0-bbbbbb"},
		{"v1.35.1+evil", "v01.2.3", "demo-md0-aaaaaa", "see https://evil.example"},
		{"v99999.1.1", "<script>", "demo-md0-aaaaaaa", "demo-md0-ABCDEF"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, kubelet1, kubelet2, oldTemplate, mdTemplate string) {
		machine := func(name, kubelet string) *structpb.Struct {
			s, err := structpb.NewStruct(map[string]any{
				"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
				"metadata": map[string]any{"name": name, "namespace": testNS, "labels": map[string]any{
					"cluster.x-k8s.io/cluster-name": testN, "cluster.x-k8s.io/deployment-name": "demo-md0"}},
				"spec":   map[string]any{"clusterName": testN},
				"status": map[string]any{"nodeInfo": map[string]any{"kubeletVersion": kubelet}},
			})
			if err != nil {
				t.Skip(err) // not UTF-8: no Struct holds it
			}
			return s
		}
		set := func(name, template string) *structpb.Struct {
			s, err := structpb.NewStruct(map[string]any{
				"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
				"metadata": map[string]any{"name": name, "namespace": testNS, "labels": map[string]any{
					"cluster.x-k8s.io/cluster-name": testN, "cluster.x-k8s.io/deployment-name": "demo-md0"}},
				"spec": map[string]any{"clusterName": testN, "template": map[string]any{"spec": map[string]any{
					"clusterName": testN, "infrastructureRef": map[string]any{"kind": "KubevirtMachineTemplate", "name": template}}}},
				"status": map[string]any{"replicas": 1},
			})
			if err != nil {
				t.Skip(err)
			}
			return s
		}
		md, err := structpb.NewStruct(map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
			"metadata": map[string]any{"name": "demo-md0", "namespace": testNS, "generation": 2},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"version": "v1.35.1",
				"infrastructureRef": map[string]any{"kind": "KubevirtMachineTemplate", "name": mdTemplate}}}},
			"status": map[string]any{"observedGeneration": 2, "replicas": 2, "readyReplicas": 2, "upToDateReplicas": 1},
		})
		if err != nil {
			t.Skip(err)
		}
		req := newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 1, maxReplicas: 3}}`,
			withInstancetypes(t, "u1.large"),
			fntest.WithRequired(requirementMachineSets, set("ms-old", oldTemplate), set("ms-new", mdTemplate)),
			fntest.WithRequired(requirementMachines, machine("m1", kubelet1), machine("m2", kubelet2)),
			fntest.WithObserved(map[string]*structpb.Struct{machineDeploymentResourceName("md0"): md}))
		rsp := run(t, req)
		checkStatusText(t, rsp, kubelet1, kubelet2, oldTemplate, mdTemplate)
	})
}

// checkStatusText asserts the shapes of FuzzStatusTextFromObserved on
// rsp, given the strings the observed objects held.
func checkStatusText(t *testing.T, rsp *fnv1.RunFunctionResponse, observed ...string) {
	t.Helper()
	shaped := func(s string) bool { return strictVersion.MatchString(s) || md0Template.MatchString(s) }
	for _, s := range fntest.StatusStrings(rsp) {
		p := s.Path
		switch {
		case strings.HasSuffix(p, ".version") && strings.Contains(p, ".kubeletVersions["):
			if s.Value != unknownKubeletVersion && !strictVersion.MatchString(s.Value) {
				t.Fatalf("%s = %q: neither vMAJOR.MINOR.PATCH nor %q", p, s.Value, unknownKubeletVersion)
			}
		case strings.Contains(p, ".rollout.from[") || strings.HasSuffix(p, ".rollout.to"):
			if !md0Template.MatchString(s.Value) {
				t.Fatalf("%s = %q: not a template name of md0", p, s.Value)
			}
		case strings.Contains(p, ".allocatable."):
			if !quantityText.MatchString(s.Value) {
				t.Fatalf("%s = %q: not a quantity", p, s.Value)
			}
		case p == "status.nodes":
			if !readyOfTotal.MatchString(s.Value) {
				t.Fatalf("%s = %q: not <ready>/<total>", p, s.Value)
			}
		case strings.HasPrefix(p, "status."):
			t.Fatalf("%s = %q: a status string with no rule of this test", p, s.Value)
		}
		for _, o := range observed {
			if len(o) >= 4 && !shaped(o) && strings.Contains(s.Value, o) {
				t.Fatalf("%s = %q shows the observed text %q", p, s.Value, o)
			}
		}
	}
}

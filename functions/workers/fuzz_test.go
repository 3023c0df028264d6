package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// FuzzRunFunction feeds arbitrary XR specs (YAML) with and without the
// instance types answered: RunFunction must never panic or return an
// error, and a response without a Fatal result must hold the MachineSets
// requirement and no MachineDeployment with spec.replicas.
func FuzzRunFunction(f *testing.F) {
	for _, seed := range []string{
		``,
		`nodeGroups: {md0: {instanceType: u1.large}}`,
		`nodeGroups: {md0: {resources: {cpu: 4, memory: 16Gi}}}`,
		`nodeGroups: {md0: {resources: {cpu: "0.5", memory: 1e9}}}`,
		`nodeGroups: {md0: {instanceType: u1.large, kubelet: {evictionHardMemory: "10%", evictionSoftMemory: "5%"}}}`,
		`nodeGroups: {md0: {instanceType: u1.nano}}`,
		`nodeGroups: {"": {}}`,
		`nodeGroups: {md0: {gpus: [{name: ""}], roles: ["A"]}}`,
		`nodeGroups: {md0: {minReplicas: -1, maxReplicas: -5, diskSize: "-1"}}`,
		`nodeGroups: {md0: {resources: {cpu: 1E, memory: 1E}}}`,
		`nodeGroups: {md0: {kubelet: {systemReservedMemory: "9999999999999999999999Ei"}}}`,
		`version: v9.99`,
		`nodeGroups: [1, 2]`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, spec string, answered bool) {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
			return
		}
		specValue, err := structpb.NewValue(m)
		if err != nil {
			return
		}
		x := xr(t, ``)
		x.Fields["spec"] = specValue
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: x}}, Desired: &fnv1.State{}}
		if answered {
			withInstancetypes(t, "u1.nano", "u1.medium", "u1.large", "no.such")(req)
			withMachineSets(t)(req)
		}
		rsp, err := fntest.Run((&Function{now: fixedClock}).RunFunction, req)
		if err != nil {
			t.Fatalf("RunFunction error: %v", err)
		}
		if len(fatals(rsp)) > 0 {
			return
		}
		if _, ok := rsp.GetRequirements().GetResources()[requirementMachineSets]; !ok {
			t.Error("no MachineSets requirement without a Fatal result")
		}
		for name, r := range rsp.GetDesired().GetResources() {
			if r.GetResource().GetFields()["kind"].GetStringValue() == "MachineDeployment" {
				if _, ok := r.GetResource().GetFields()["spec"].GetStructValue().GetFields()["replicas"]; ok {
					t.Errorf("%s has spec.replicas", name)
				}
			}
		}
	})
}

package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// FuzzRunFunction feeds arbitrary XR specs and observed HelmRelease status
// to RunFunction: it must never panic, and a Fatal result must come with no
// desired composed resources.
func FuzzRunFunction(f *testing.F) {
	for _, s := range []string{"{}", everything, "addons: {hami: {enabled: true}}", "addons: {cilium: {valuesOverride: [1]}}",
		"addons: {ingressNginx: {enabled: true, exposeMethod: x, hosts: ['*.', '']}}",
		"addons: {ouroboros: {enabled: true, valuesOverride: {controller: {gatewayApi: {enabled: 1}}}}}", "addons: 3", "spec: null"} {
		f.Add([]byte(s), []byte(`status: {conditions: [{type: Ready, status: "False", message: x}]}`))
	}
	f.Fuzz(func(t *testing.T, spec, observed []byte) {
		m := map[string]any{}
		if yaml.Unmarshal(spec, &m) != nil {
			return
		}
		obj := map[string]any{
			"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster",
			"metadata": map[string]any{"name": "demo-x", "labels": map[string]any{
				"crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "tenant-demo"}},
			"spec": m,
		}
		s, err := structpb.NewStruct(obj)
		if err != nil {
			return
		}
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}}
		om := map[string]any{}
		if yaml.Unmarshal(observed, &om) == nil {
			if os, err := structpb.NewStruct(om); err == nil {
				req.Observed.Resources = map[string]*fnv1.Resource{"addon-cilium": {Resource: os}}
			}
		}
		rsp, err := fntest.Run(runFn, req)
		if err != nil {
			t.Fatal(err)
		}
		if fntest.FatalMessage(rsp) != "" && len(rsp.GetDesired().GetResources()) != 0 {
			t.Fatal("desired resources alongside a Fatal result")
		}
	})
}

package main

import (
	"encoding/json"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// FuzzRunFunction feeds RunFunction arbitrary XR specs, inputs and observed
// KamajiControlPlanes (as JSON): it must never panic or hang, must report
// every problem as a Fatal result, and must keep an earlier step's desired
// composed resource. `make test` runs the seed corpus (testdata/fuzz);
// `make fuzz` explores for a bounded time.
func FuzzRunFunction(f *testing.F) {
	for _, seed := range [][3]string{
		{`{}`, ``, ``},
		{`{"version":"v1.33","controlPlane":{"replicas":3,"apiServer":{"resourcesPreset":"s1.large"}}}`, ``, ``},
		{`{"version":"v1.35"}`, `{"dataStoreName":"shared"}`, `{"spec":{"version":"v1.33.8"}}`},
		{`{"controlPlane":{"scheduler":{"resources":{"cpu":"abc","memory":-1}}}}`, `{"etcd":{"storageSize":"0"}}`, ``},
		{`{"namespace":"other","host":"Bad_Host","nodeGroups":{"md0":{"minReplicas":"x"}}}`, `{"podCIDR":"nope","cpuAllocationRatio":0}`, `{"status":{"ready":"yes"}}`},
		{`{"controlPlane":{"replicas":1e12,"konnectivity":{"server":{"resources":{"memory":"1e400"}}}}}`, ``, `{"spec":{"version":7}}`},
		{`[1,2]`, `"str"`, `null`},
		// The API server's extras and spec.oidc.
		{`{"controlPlane":{"apiServer":{"extraArgs":["--v=2","--etcd-prefix=/x","--v=3"],"extraVolumes":[{"name":"v","secret":{"secretName":"s"}},{"name":"w"}],"extraVolumeMounts":[{"name":"x","mountPath":"/etc"}]}}}`, ``, ``},
		{`{"oidc":{"mode":"System","users":[{"email":"a@b.c","role":"admin"},{"email":"a@b.c","role":"root"}]}}`, `{"oidc":{"issuerURL":"https://id.example.com"}}`, ``},
		{`{"oidc":{"mode":"CustomConfig","customConfig":{"config":"apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 'https://x', audiences: [a]}\n  claimMappings: {username: {expression: 'claims.sub +'}}\n"}}}`, ``, ``},
		{`{"oidc":{"mode":"CustomConfig","customConfig":{"config":"{{{","secretRef":{"name":"x"}}}}`, `{"oidc":{"issuerURL":"http://x","certificateAuthority":"junk"}}`, ``},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, spec, input, observedKCP string) {
		var specV any
		_ = json.Unmarshal([]byte(spec), &specV)
		xr, err := fntest.Struct(fntest.XR(specV))
		if err != nil {
			return // not representable in a request at all
		}
		earlier, _ := fntest.Struct(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"})
		req := &fnv1.RunFunctionRequest{
			Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: map[string]*fnv1.Resource{}},
			Desired:  &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier-step": {Resource: earlier}}},
		}
		var in map[string]any
		if json.Unmarshal([]byte(input), &in) == nil && in != nil {
			if s, err := fntest.Struct(in); err == nil {
				req.Input = s
			}
		}
		var kcp map[string]any
		if json.Unmarshal([]byte(observedKCP), &kcp) == nil && kcp != nil {
			if s, err := fntest.Struct(kcp); err == nil {
				req.Observed.Resources[nameKamajiControlPlane] = &fnv1.Resource{Resource: s}
			}
		}
		if err := fntest.CheckInvariants((&Function{}).RunFunction, req, 10*time.Second); err != nil {
			t.Fatalf("spec=%s input=%s observed=%s: %v", spec, input, observedKCP, err)
		}
	})
}

package main

import (
	"sort"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestWaitForControlPlane: while a TenantCluster waits for its tenant's
// DataStore (the control-plane step desired no KamajiControlPlane and none
// is observed; docs/architecture.md), the addons step composes no
// HelmRelease, chart source or Usage of the KamajiControlPlane, and keeps
// what it composed before. With a KamajiControlPlane it composes what it
// composes for the claim of the same spec (the claim is never gated).
func TestWaitForControlPlane(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: demo, namespace: tenant-demo}}`
	const release = `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: demo-cilium, namespace: tenant-demo}, spec: {suspend: true, interval: 5m}}`
	const usage = `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage, metadata: {name: demo-control-plane-used-by-addon-cilium, namespace: tenant-demo}, spec: {replayDeletion: true}}`
	claimNames := fntest.DesiredNames(fntest.Call{Spec: "{}"}.Run(t, runFn))
	if len(claimNames) < 10 {
		t.Fatalf("the claim's render composes only %v", claimNames)
	}
	type want struct {
		names  []string
		reason string
		// kept are desired objects that must equal the observed ones
		// (nil: not checked).
		kept map[string]map[string]any
	}
	cases := map[string]struct {
		reason string
		call   fntest.Call
		want   want
	}{
		"WaitingNothingObserved": {
			reason: "No KamajiControlPlane desired nor observed, nothing composed before: nothing is composed.",
			call:   fntest.Call{Namespaced: true, Spec: "{}"},
			want:   want{names: []string{}, reason: v1alpha1.ReasonWaitingForTenantDataStore},
		},
		"WaitingKeepsObserved": {
			reason: "The observed release and Usage stay as observed; nothing else is added.",
			call: fntest.Call{Namespaced: true, Spec: "{}", Observed: map[string]string{
				"addon-cilium": release, "usage-kamajicontrolplane-by-addon-cilium": usage,
			}},
			want: want{
				names:  []string{"addon-cilium", "usage-kamajicontrolplane-by-addon-cilium"},
				reason: v1alpha1.ReasonWaitingForTenantDataStore,
				kept: map[string]map[string]any{
					"addon-cilium": fntest.YAMLStruct(t, release).AsMap(),
					"usage-kamajicontrolplane-by-addon-cilium": fntest.YAMLStruct(t, usage).AsMap(),
				},
			},
		},
		"ControlPlaneDesired": {
			reason: "The control-plane step composed the KamajiControlPlane: the claim's objects are composed.",
			call:   fntest.Call{Namespaced: true, Spec: "{}", Desired: map[string]string{"kamajicontrolplane": kcp}},
			want:   want{names: sortedNames(append([]string{"kamajicontrolplane"}, claimNames...)), reason: v1alpha1.ReasonWaitingForHelmRelease},
		},
		"ControlPlaneObserved": {
			reason: "A KamajiControlPlane exists: the claim's objects are composed.",
			call:   fntest.Call{Namespaced: true, Spec: "{}", Observed: map[string]string{"kamajicontrolplane": kcp}},
			want:   want{names: claimNames, reason: v1alpha1.ReasonWaitingForHelmRelease},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := tc.call.Run(t, runFn)
			fntest.NoFatal(t, rsp)
			got := want{names: fntest.DesiredNames(rsp), reason: conditionReason(rsp, v1alpha1.ConditionAddonsReady)}
			if tc.want.kept != nil {
				got.kept = map[string]map[string]any{}
				for n := range tc.want.kept {
					got.kept[n] = fntest.DesiredObject(t, rsp, n)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRunFunction: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// sortedNames is names sorted.
func sortedNames(names []string) []string {
	out := append([]string{}, names...)
	sort.Strings(out)
	return out
}

// conditionReason is the reason of rsp's condition typ ("" when unset).
func conditionReason(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c.GetReason()
		}
	}
	return ""
}

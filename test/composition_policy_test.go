package test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
)

// TestCompositionPolicy evaluates deploy/composition-policy.yaml with the
// API server's own ValidatingAdmissionPolicy validator: a tenant may not
// set or change any of Crossplane's five composition fields on a claim
// (spec.<field>) or a TenantCluster (spec.crossplane.<field>), may keep a
// value Crossplane wrote, and Crossplane's ServiceAccount, system:masters
// and the group tenantkube:platform may do anything. A tenant's claim may
// not name the XR it binds (spec.resourceRef) either, nor set or change
// the annotation crossplane.io/paused on a claim, TenantCluster or
// XKubernetesCluster (it may keep or remove one). The field names are
// Crossplane's (claim and legacy XR spec, v2 XR spec.crossplane).
func TestCompositionPolicy(t *testing.T) {
	policy, _, v := loadPolicy(t, filepath.Join(repoRoot(t), "deploy", "composition-policy.yaml"))
	resources := map[string]bool{}
	for _, r := range policy.Spec.MatchConstraints.ResourceRules {
		for _, res := range r.Resources {
			resources[res] = true
		}
	}
	for _, r := range []string{"kubernetesclusters", "xkubernetesclusters", "tenantclusters"} {
		if !resources[r] {
			t.Errorf("the policy does not match %s", r)
		}
	}
	tenant := &user.DefaultInfo{Name: "mallory@tenant-a", Groups: []string{"system:authenticated"}}
	crossplane := &user.DefaultInfo{Name: "system:serviceaccount:crossplane-system:crossplane", Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	platform := &user.DefaultInfo{Name: "ops@corp", Groups: []string{"tenantkube:platform", "system:authenticated"}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	claim := func(spec string) *unstructured.Unstructured {
		return obj(t, "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-a}\nspec: "+spec)
	}
	tc := func(spec string) *unstructured.Unstructured {
		return obj(t, "apiVersion: tenantkube.io/v1alpha1\nkind: TenantCluster\nmetadata: {name: demo, namespace: tenant-a}\nspec: "+spec)
	}
	// paused is u with the annotation crossplane.io/paused of value v.
	paused := func(u *unstructured.Unstructured, v string) *unstructured.Unstructured {
		u.SetAnnotations(map[string]string{"crossplane.io/paused": v, "note": "kept"})
		return u
	}
	xr := func(spec string) *unstructured.Unstructured {
		return obj(t, "apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nmetadata: {name: demo-x7k2p}\nspec: "+spec)
	}
	const picked = `{version: v1.35, compositionRef: {name: kubernetesclusters.tenantkube.io}, compositionRevisionRef: {name: kubernetesclusters.tenantkube.io-abc1234}}`
	cases := map[string]struct {
		user     user.Info
		old, new *unstructured.Unstructured
		resource string
		// denied: substrings of the denial; nil: admitted.
		denied []string
	}{
		"PlainClaim":      {user: tenant, new: claim(`{version: v1.35}`), resource: "kubernetesclusters"},
		"ClaimRevision":   {user: tenant, new: claim(`{compositionRevisionRef: {name: old-rev}}`), resource: "kubernetesclusters", denied: []string{"spec.compositionRevisionRef"}},
		"ClaimEveryField": {user: tenant, new: claim(`{compositionRef: {name: x}, compositionSelector: {matchLabels: {a: b}}, compositionRevisionRef: {name: y}, compositionRevisionSelector: {matchLabels: {a: b}}, compositionUpdatePolicy: Manual}`), resource: "kubernetesclusters", denied: []string{"spec.compositionRef, spec.compositionSelector, spec.compositionRevisionRef, spec.compositionRevisionSelector, spec.compositionUpdatePolicy"}},
		"ClaimPolicyOnly": {user: tenant, new: claim(`{compositionUpdatePolicy: Automatic}`), resource: "kubernetesclusters", denied: []string{"spec.compositionUpdatePolicy"}},
		"KeepsCrossplanesChoice": {user: tenant, old: claim(picked),
			new: claim(`{version: v1.34, compositionRef: {name: kubernetesclusters.tenantkube.io}, compositionRevisionRef: {name: kubernetesclusters.tenantkube.io-abc1234}}`), resource: "kubernetesclusters"},
		"ChangesRevision": {user: tenant, old: claim(picked),
			new: claim(`{version: v1.35, compositionRef: {name: kubernetesclusters.tenantkube.io}, compositionRevisionRef: {name: kubernetesclusters.tenantkube.io-0ld0000}}`), resource: "kubernetesclusters", denied: []string{"spec.compositionRevisionRef"}},
		"AddsSelector": {user: tenant, old: claim(picked),
			new: claim(`{version: v1.35, compositionRef: {name: kubernetesclusters.tenantkube.io}, compositionRevisionRef: {name: kubernetesclusters.tenantkube.io-abc1234}, compositionRevisionSelector: {matchLabels: {channel: old}}}`), resource: "kubernetesclusters", denied: []string{"spec.compositionRevisionSelector"}},
		"DropsRevision":      {user: tenant, old: claim(picked), new: claim(`{version: v1.35}`), resource: "kubernetesclusters"},
		"CrossplanePicks":    {user: crossplane, old: claim(`{version: v1.35}`), new: claim(picked), resource: "kubernetesclusters"},
		"PlatformPins":       {user: platform, new: claim(`{compositionRevisionRef: {name: old-rev}, compositionUpdatePolicy: Manual}`), resource: "kubernetesclusters"},
		"AdminPins":          {user: admin, new: claim(`{compositionRevisionRef: {name: old-rev}}`), resource: "kubernetesclusters"},
		"TenantClusterPlain": {user: tenant, new: tc(`{version: v1.35}`), resource: "tenantclusters"},
		"TenantClusterRevision": {user: tenant, new: tc(`{crossplane: {compositionRevisionRef: {name: old-rev}}}`), resource: "tenantclusters",
			denied: []string{"spec.crossplane.compositionRevisionRef"}},
		"TenantClusterResourceRefs": {user: tenant, new: tc(`{crossplane: {resourceRefs: []}}`), resource: "tenantclusters"},
		"TenantClusterKeeps": {user: tenant, old: tc(`{crossplane: {compositionRef: {name: tenantclusters.tenantkube.io}}}`),
			new: tc(`{version: v1.34, crossplane: {compositionRef: {name: tenantclusters.tenantkube.io}}}`), resource: "tenantclusters"},
		"TenantClusterSwitches": {user: tenant, old: tc(`{crossplane: {compositionRef: {name: tenantclusters.tenantkube.io}}}`),
			new: tc(`{crossplane: {compositionRef: {name: evil}, compositionUpdatePolicy: Manual}}`), resource: "tenantclusters",
			denied: []string{"spec.crossplane.compositionRef, spec.crossplane.compositionUpdatePolicy"}},
		"ClaimBindsXR": {user: tenant, new: claim(`{resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: victim}}`), resource: "kubernetesclusters",
			denied: []string{"spec.resourceRef"}},
		"ClaimRebinds": {user: tenant, old: claim(`{resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}}`),
			new: claim(`{resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: victim}}`), resource: "kubernetesclusters", denied: []string{"spec.resourceRef"}},
		"ClaimKeepsBinding": {user: tenant, old: claim(`{resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}}`),
			new: claim(`{version: v1.34, resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}}`), resource: "kubernetesclusters"},
		"CrossplaneBinds": {user: crossplane, old: claim(`{version: v1.35}`),
			new: claim(`{resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}}`), resource: "kubernetesclusters"},
		"CrossplaneOnTenantCluster": {user: crossplane, new: tc(`{crossplane: {compositionRef: {name: tenantclusters.tenantkube.io}}}`), resource: "tenantclusters"},
		"ClaimPaused": {user: tenant, old: claim(`{version: v1.35}`), new: paused(claim(`{version: v1.35}`), "true"), resource: "kubernetesclusters",
			denied: []string{"crossplane.io/paused"}},
		"ClaimCreatedPaused":   {user: tenant, new: paused(claim(`{version: v1.35}`), "true"), resource: "kubernetesclusters", denied: []string{"crossplane.io/paused"}},
		"ClaimPauseFalse":      {user: tenant, new: paused(claim(`{version: v1.35}`), "false"), resource: "kubernetesclusters", denied: []string{"crossplane.io/paused"}},
		"ClaimPauseChanged":    {user: tenant, old: paused(claim(`{version: v1.35}`), "false"), new: paused(claim(`{version: v1.35}`), "true"), resource: "kubernetesclusters", denied: []string{"crossplane.io/paused"}},
		"ClaimKeepsPause":      {user: tenant, old: paused(claim(`{version: v1.35}`), "true"), new: paused(claim(`{version: v1.34}`), "true"), resource: "kubernetesclusters"},
		"ClaimUnpauses":        {user: tenant, old: paused(claim(`{version: v1.35}`), "true"), new: claim(`{version: v1.35}`), resource: "kubernetesclusters"},
		"TenantClusterPaused":  {user: tenant, old: tc(`{version: v1.35}`), new: paused(tc(`{version: v1.35}`), "true"), resource: "tenantclusters", denied: []string{"crossplane.io/paused"}},
		"XRPaused":             {user: tenant, old: xr(`{version: v1.35}`), new: paused(xr(`{version: v1.35}`), "true"), resource: "xkubernetesclusters", denied: []string{"crossplane.io/paused"}},
		"PlatformPauses":       {user: platform, old: claim(`{version: v1.35}`), new: paused(claim(`{version: v1.35}`), "true"), resource: "kubernetesclusters"},
		"AdminPausesXR":        {user: admin, old: xr(`{version: v1.35}`), new: paused(xr(`{version: v1.35}`), "true"), resource: "xkubernetesclusters"},
		"CrossplanePropagates": {user: crossplane, old: xr(`{version: v1.35}`), new: paused(xr(`{version: v1.35}`), "true"), resource: "xkubernetesclusters"},
		"TenantAnnotates": {user: tenant, old: claim(`{version: v1.35}`), new: func() *unstructured.Unstructured {
			u := claim(`{version: v1.35}`)
			u.SetAnnotations(map[string]string{"note": "mine"})
			return u
		}(), resource: "kubernetesclusters"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gvr := schema.GroupVersionResource{Group: "tenantkube.io", Version: "v1alpha1", Resource: tc.resource}
			op, old := admission.Create, (*unstructured.Unstructured)(nil)
			if tc.old != nil {
				op, old = admission.Update, tc.old
			}
			decisions := evaluate(t, v, admissionRequest{op: op, gvr: gvr, gvk: tc.new.GroupVersionKind(), obj: tc.new, old: old, user: tc.user})
			var denials []string
			for _, d := range decisions {
				if d.Evaluation == validating.EvalError {
					t.Fatalf("evaluation error: %s", d.Message)
				}
				if d.Action == validating.ActionDeny {
					denials = append(denials, d.Message)
					if d.Reason != "Forbidden" {
						t.Errorf("denial reason %q, want Forbidden", d.Reason)
					}
				}
			}
			if tc.denied == nil {
				if len(denials) > 0 {
					t.Fatalf("denied: %v", denials)
				}
				return
			}
			if len(denials) != 1 {
				t.Fatalf("%d denials %v, want 1", len(denials), denials)
			}
			for _, w := range tc.denied {
				if !strings.Contains(denials[0], w) {
					t.Errorf("denial %q does not name %s", denials[0], w)
				}
			}
		})
	}
}

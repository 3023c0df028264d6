package test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// compositionPolicy reads deploy/composition-policy.yaml: the policy and
// the name of the policy its binding binds.
func compositionPolicy(t *testing.T) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "deploy", "composition-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	var binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for {
		doc, err := d.Read()
		if err != nil {
			break
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			err = yaml.UnmarshalStrict(doc, policy)
		case "ValidatingAdmissionPolicyBinding":
			binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			err = yaml.UnmarshalStrict(doc, binding)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if policy == nil || binding == nil {
		t.Fatal("deploy/composition-policy.yaml: want a ValidatingAdmissionPolicy and its binding")
	}
	return policy, binding
}

// compileCompositionPolicy compiles policy as kube-apiserver's
// ValidatingAdmissionPolicy plugin does (plugin.go compilePolicy of
// k8s.io/apiserver): its variables, matchConditions, validations and
// messageExpressions in the base CEL environment.
func compileCompositionPolicy(t *testing.T, policy *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	t.Helper()
	compiler, err := cel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	vars := cel.OptionalVariableDeclarations{HasAuthorizer: true}
	var named []cel.NamedExpressionAccessor
	for _, v := range policy.Spec.Variables {
		named = append(named, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(named, vars, environment.StoredExpressions)
	var matches []cel.ExpressionAccessor
	for i := range policy.Spec.MatchConditions {
		matches = append(matches, (*matchconditions.MatchCondition)(&policy.Spec.MatchConditions[i]))
	}
	matcher := matchconditions.NewMatcher(compiler.CompileCondition(matches, vars, environment.StoredExpressions), policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	var validations, messages []cel.ExpressionAccessor
	for _, v := range policy.Spec.Validations {
		validations = append(validations, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		messages = append(messages, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations, vars, environment.StoredExpressions), matcher,
		compiler.CompileCondition(nil, vars, environment.StoredExpressions),
		compiler.CompileCondition(messages, cel.OptionalVariableDeclarations{}, environment.StoredExpressions),
		policy.Spec.FailurePolicy, nil)
}

// TestCompositionPolicy evaluates deploy/composition-policy.yaml with the
// API server's own ValidatingAdmissionPolicy validator: a tenant may not
// set or change any of Crossplane's five composition fields on a claim
// (spec.<field>) or a TenantCluster (spec.crossplane.<field>), may keep a
// value Crossplane wrote, and Crossplane's ServiceAccount, system:masters
// and the group tenantkube:platform may do anything. A tenant's claim may
// not name the XR it binds (spec.resourceRef) either. The field names are
// Crossplane's (claim and legacy XR spec, v2 XR spec.crossplane).
func TestCompositionPolicy(t *testing.T) {
	policy, binding := compositionPolicy(t)
	if binding.Spec.PolicyName != policy.Name || len(binding.Spec.ValidationActions) != 1 || binding.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Fatalf("binding %s: binds %q with %v, want %q with [Deny]", binding.Name, binding.Spec.PolicyName, binding.Spec.ValidationActions, policy.Name)
	}
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
	v := compileCompositionPolicy(t, policy)
	if err := v.CompileError(); err != nil {
		t.Fatalf("the policy does not compile: %v", err)
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gvr := schema.GroupVersionResource{Group: "tenantkube.io", Version: "v1alpha1", Resource: tc.resource}
			op, old := admission.Create, runtime.Object(nil)
			if tc.old != nil {
				op, old = admission.Update, tc.old
			}
			attr := admission.NewAttributesRecord(tc.new, old, tc.new.GroupVersionKind(), "tenant-a", "demo", gvr, "", op, nil, false, tc.user)
			res := v.Validate(context.Background(), gvr, &admission.VersionedAttributes{Attributes: attr, VersionedKind: tc.new.GroupVersionKind(), VersionedObject: tc.new, VersionedOldObject: old},
				nil, nil, celconfig.RuntimeCELCostBudget, nil)
			var denials []string
			for _, d := range res.Decisions {
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

// obj is the object y (YAML) as the API server hands it to admission.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	return u
}

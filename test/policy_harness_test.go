package test

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The evaluation harness of the ValidatingAdmissionPolicies in deploy/:
// each is compiled and evaluated with kube-apiserver's own validator
// (k8s.io/apiserver admission/plugin/policy/validating), as its plugin
// does, without an API server.

// loadPolicy reads the ValidatingAdmissionPolicy and its binding from path
// (two documents, unknown fields rejected), checks that the binding binds
// the policy with [Deny] and that the policy fails closed, and compiles its
// variables, matchConditions, validations and messageExpressions the way
// kube-apiserver's plugin does (policy/validating compilePolicy), failing
// on any compile error.
func loadPolicy(t *testing.T, path string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, validating.Validator) {
	t.Helper()
	docs := yamlDocs(t, path)
	if len(docs) != 2 {
		t.Fatalf("%s: %d documents, want the policy and its binding", path, len(docs))
	}
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(docs[0], &p); err != nil || p.Kind != "ValidatingAdmissionPolicy" {
		t.Fatalf("%s document 0: %s, %v", path, p.Kind, err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &b); err != nil || b.Kind != "ValidatingAdmissionPolicyBinding" {
		t.Fatalf("%s document 1: %s, %v", path, b.Kind, err)
	}
	if b.Spec.PolicyName != p.Name || len(b.Spec.ValidationActions) != 1 || b.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Errorf("%s: binding %s binds %q with %v, want %q with [Deny]", path, b.Name, b.Spec.PolicyName, b.Spec.ValidationActions, p.Name)
	}
	if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("%s: failurePolicy %v, want Fail", path, p.Spec.FailurePolicy)
	}
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Spec.Variables {
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.StoredExpressions); r.Error != nil {
			t.Fatalf("%s variable %s: %v", path, v.Name, r.Error)
		}
	}
	var matcher matchconditions.Matcher // nil: every request matches
	if len(p.Spec.MatchConditions) > 0 {
		var matches []plugincel.ExpressionAccessor
		for i := range p.Spec.MatchConditions {
			m := (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
			if r := compiler.CompileCELExpression(m, opts, environment.StoredExpressions); r.Error != nil {
				t.Fatalf("%s matchCondition %s: %v", path, m.Name, r.Error)
			}
			matches = append(matches, m)
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(matches, opts, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	var conds, msgs []plugincel.ExpressionAccessor
	for _, v := range p.Spec.Validations {
		conds = append(conds, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		msgs = append(msgs, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
		for _, e := range []plugincel.ExpressionAccessor{conds[len(conds)-1], msgs[len(msgs)-1]} {
			if e.GetExpression() == "" {
				continue // a validation with a static message
			}
			if r := compiler.CompileCELExpression(e, opts, environment.StoredExpressions); r.Error != nil {
				t.Fatalf("%s validation %q: %v", path, e.GetExpression(), r.Error)
			}
		}
	}
	msgOpts := plugincel.OptionalVariableDeclarations{HasParams: opts.HasParams}
	m := validating.NewValidator(
		compiler.CompileCondition(conds, opts, environment.StoredExpressions), matcher,
		compiler.CompileCondition(nil, opts, environment.StoredExpressions),
		compiler.CompileCondition(msgs, msgOpts, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)
	if err := m.CompileError(); err != nil {
		t.Fatalf("%s does not compile: %v", path, err)
	}
	return &p, &b, m
}

// admissionRequest is one request to a policy: the operation on resource
// gvr (subresource sub) of an object of kind gvk, the new and old objects
// (nil where the operation has none), the binding's parameters and the
// requester.
type admissionRequest struct {
	op       admission.Operation
	gvr      schema.GroupVersionResource
	gvk      schema.GroupVersionKind
	sub      string
	obj, old *unstructured.Unstructured
	params   runtime.Object
	user     user.Info
}

// evaluate runs v on req within the API server's CEL cost budget and
// returns its decisions.
func evaluate(t *testing.T, v validating.Validator, req admissionRequest) []validating.PolicyDecision {
	t.Helper()
	var o, oo runtime.Object
	name, ns := "", ""
	if req.obj != nil {
		o = req.obj
		name, ns = req.obj.GetName(), req.obj.GetNamespace()
	}
	if req.old != nil {
		oo = req.old
		if req.obj == nil { // a DELETE names the object deleted
			name, ns = req.old.GetName(), req.old.GetNamespace()
		}
	}
	attr := admission.NewAttributesRecord(o, oo, req.gvk, ns, name, req.gvr, req.sub, req.op, nil, false, req.user)
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: req.gvk, VersionedObject: o, VersionedOldObject: oo}
	return v.Validate(context.Background(), req.gvr, va, req.params, nil, celconfig.RuntimeCELCostBudget, nil).Decisions
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

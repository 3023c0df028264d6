//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// compositionFields: the platform applies deploy/composition-policy.yaml;
// a tenant holding tenantkube:tenant (deploy/tenant-rbac.yaml) in its
// namespace (an impersonated user) then cannot create a claim pinning
// compositionRevisionRef or naming another XR (spec.resourceRef), nor add
// a pin to its claim later, nor create a
// TenantCluster naming spec.crossplane.compositionRef; its plain claim is
// admitted and composes (Crossplane writes compositionRef onto the XR and
// the claim itself), and the tenant may still update that claim. The
// policy is removed at the end, as the scenarios after this one expect the
// installation without it.
func (e *env) compositionFields(t *testing.T) {
	const (
		ns   = "tenant-policy"
		user = "mallory@tenant-policy"
	)
	ctx, cancel := ctxT(8 * time.Minute)
	defer cancel()
	e.must(t, e.ensureNamespace(ctx, ns), "namespace "+ns)
	roles, err := decodeFile(e.path("deploy", "tenant-rbac.yaml"))
	e.must(t, err, "read deploy/tenant-rbac.yaml")
	for _, o := range roles {
		e.must(t, apply(ctx, e.c, o), "apply "+describe(o))
	}
	rb := roleBinding(ns, "mallory-tenant", "tenantkube:tenant", user)
	e.must(t, apply(ctx, e.c, rb), "RoleBinding "+ns+"/mallory-tenant")
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")
	waitFor(t, time.Minute, user+" may create KubernetesClusters and TenantClusters in "+ns, func(ctx context.Context) (bool, string, error) {
		for _, r := range []string{"kubernetesclusters", "tenantclusters"} {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Group: "tenantkube.io", Resource: r},
			}}, metav1.CreateOptions{})
			if err != nil || !sar.Status.Allowed {
				return false, "not yet for " + r, err
			}
		}
		return true, "", nil
	})
	cfg := rest.CopyConfig(e.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	tenant, err := client.New(cfg, client.Options{Scheme: e.c.Scheme()})
	e.must(t, err, "client impersonating "+user)

	policy, err := decodeFile(e.path("deploy", "composition-policy.yaml"))
	e.must(t, err, "read deploy/composition-policy.yaml")
	for _, o := range policy {
		e.must(t, apply(ctx, e.c, o), "apply "+describe(o))
	}
	t.Cleanup(func() {
		ctx, cancel := ctxT(30 * time.Second)
		defer cancel()
		for _, o := range policy {
			if err := e.c.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
				errorf(t, "delete %s: %v", describe(o), err)
			}
		}
	})
	refused := func(err error, field string) (bool, string) {
		if err == nil {
			return false, "admitted"
		}
		return kerrors.IsForbidden(err) && strings.Contains(err.Error(), field), err.Error()
	}

	// The API server loads a new policy within seconds: until then the
	// claim might be admitted, so it is deleted and tried again.
	pinned := e.tenantClaim(t, ns, "pinned", nil)
	e.must(t, unstructured.SetNestedField(pinned.Object, map[string]any{"name": "xkubernetesclusters.tenantkube.io-0ld0000"}, "spec", "compositionRevisionRef"), "pin the claim")
	waitFor(t, time.Minute, "the claim pinning compositionRevisionRef refused", func(ctx context.Context) (bool, string, error) {
		err := tenant.Create(ctx, pinned.DeepCopy())
		if err == nil {
			_ = e.c.Delete(ctx, pinned.DeepCopy())
		}
		ok, why := refused(err, "spec.compositionRevisionRef")
		return ok, why, nil
	})
	if _, err := get(ctx, e.c, gvkClaim, ns, "pinned"); !kerrors.IsNotFound(err) {
		errorf(t, "claim %s/pinned after the refusal: %v, want NotFound", ns, err)
	}

	bound := e.tenantClaim(t, ns, "binder", nil)
	e.must(t, unstructured.SetNestedField(bound.Object, map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster", "name": "victim"}, "spec", "resourceRef"), "name an XR")
	if ok, why := refused(tenant.Create(ctx, bound), "spec.resourceRef"); !ok {
		errorf(t, "claim %s/binder naming XR victim as %s: %s; want Forbidden naming spec.resourceRef", ns, user, why)
	}

	tc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "TenantCluster",
		"metadata": map[string]any{"name": "chooser", "namespace": ns},
		"spec":     map[string]any{"crossplane": map[string]any{"compositionRef": map[string]any{"name": "tenantclusters.tenantkube.io"}}},
	}}
	if ok, why := refused(tenant.Create(ctx, tc), "spec.crossplane.compositionRef"); !ok {
		errorf(t, "TenantCluster %s/chooser naming spec.crossplane.compositionRef as %s: %s; want Forbidden naming the field", ns, user, why)
	}

	e.must(t, tenant.Create(ctx, e.tenantClaim(t, ns, "plain", nil)), user+" creates the plain claim "+ns+"/plain")
	defer e.deleteTenantClaim(t, ns, "plain")
	e.waitComposed(t, ns, "plain", withCertManager(), true)
	xr, err := e.xrName(ctx, ns, "plain")
	e.must(t, err, "XR of "+ns+"/plain")
	x, err := get(ctx, e.c, gvkXR, "", xr)
	e.must(t, err, "XR "+xr)
	if ref, _, _ := unstructured.NestedString(x.Object, "spec", "compositionRef", "name"); ref != "xkubernetesclusters.tenantkube.io" {
		errorf(t, "XR %s spec.compositionRef.name %q, want xkubernetesclusters.tenantkube.io (written by Crossplane under the policy)", xr, ref)
	}
	waitFor(t, time.Minute, "the claim carrying Crossplane's compositionRef", func(ctx context.Context) (bool, string, error) {
		cl, err := get(ctx, tenant, gvkClaim, ns, "plain")
		if err != nil {
			return false, "", err
		}
		ref, _, _ := unstructured.NestedString(cl.Object, "spec", "compositionRef", "name")
		return ref != "", fmt.Sprintf("claim spec.compositionRef %q", ref), nil
	})
	e.must(t, mergePatch(ctx, tenant, gvkClaim, ns, "plain", `{"metadata":{"labels":{"team":"a"}}}`), user+" labels its claim")
	err = mergePatch(ctx, tenant, gvkClaim, ns, "plain", `{"spec":{"compositionRevisionRef":{"name":"xkubernetesclusters.tenantkube.io-0ld0000"}}}`)
	if ok, why := refused(err, "spec.compositionRevisionRef"); !ok {
		errorf(t, "%s pins its claim's compositionRevisionRef: %s; want Forbidden naming the field", user, why)
	}
	err = mergePatch(ctx, tenant, gvkClaim, ns, "plain", `{"spec":{"compositionUpdatePolicy":"Manual"}}`)
	if ok, why := refused(err, "spec.compositionUpdatePolicy"); !ok {
		errorf(t, "%s sets its claim's compositionUpdatePolicy: %s; want Forbidden naming the field", user, why)
	}
}

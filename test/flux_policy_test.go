package test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
)

const fluxPolicyFile = "deploy/flux-policy.yaml"

// TestFluxPolicy evaluates deploy/flux-policy.yaml with kube-apiserver's
// own validator. Flux applies a HelmRelease or Kustomization without
// spec.kubeConfig to its own cluster with cluster-admin (the
// cluster-reconciler binding of its release), and its release aggregates
// writes on both into edit and admin: so a requester other than the
// platform creates them only with spec.kubeConfig, never changes that
// field, and never changes the spec of one that lacks it. Every composed
// HelmRelease of the golden renders (each has spec.kubeConfig) stays
// writable by Crossplane, and its tenant-side rewrites of the target are
// refused.
func TestFluxPolicy(t *testing.T) {
	root := repoRoot(t)
	_, _, v := loadPolicy(t, filepath.Join(root, fluxPolicyFile))
	hrGVR := schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
	ksGVR := schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}

	// Who is the platform, by the policy's header: Crossplane's
	// ServiceAccount, Flux's own controllers, system:masters and the group
	// tenantkube:platform. Everyone else, lookalikes included, is a tenant.
	type requester struct {
		name     string
		groups   []string
		platform bool
	}
	requesters := []requester{
		{"system:serviceaccount:crossplane-system:crossplane", nil, true},
		{"system:serviceaccount:flux-system:helm-controller", nil, true},
		{"system:serviceaccount:flux-system:kustomize-controller", nil, true},
		{"admin", []string{"system:masters"}, true},
		{"platform-team", []string{"tenantkube:platform"}, true},
		{"eve", nil, false},
		{"system:serviceaccount:tenant-demo:default", nil, false},
		{"system:serviceaccount:crossplane-system:crossplane-rbac-manager", nil, false},
		{"system:serviceaccount:flux-system-evil:helm-controller", nil, false},
		{"system:serviceaccount:tenant-demo:flux-system", nil, false},
		{"eve", []string{"tenantkube:platform-x", "system:masters-x"}, false},
	}

	release := func(kubeConfig string) *unstructured.Unstructured {
		return obj(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: evil, namespace: tenant-demo}
spec:
  interval: 5m
  chart: {spec: {chart: evil, sourceRef: {kind: HelmRepository, name: evil}}}
`+kubeConfig)
	}
	kustomization := func(kubeConfig string) *unstructured.Unstructured {
		return obj(t, `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: evil, namespace: tenant-demo}
spec:
  interval: 5m
  prune: true
  sourceRef: {kind: GitRepository, name: evil}
`+kubeConfig)
	}
	const remote = "  kubeConfig: {secretRef: {name: demo-admin-kubeconfig, key: super-admin.svc}}\n"
	const otherRemote = "  kubeConfig: {secretRef: {name: evil-kubeconfig, key: value}}\n"
	withAnnotation := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u = u.DeepCopy()
		u.SetAnnotations(map[string]string{"reconcile.fluxcd.io/requestedAt": "now"})
		u.SetFinalizers([]string{"finalizers.fluxcd.io"})
		return u
	}
	withValues := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u = u.DeepCopy()
		_ = unstructured.SetNestedField(u.Object, "evil", "spec", "targetNamespace")
		return u
	}

	type move struct {
		name     string
		gvr      schema.GroupVersionResource
		op       admission.Operation
		obj, old *unstructured.Unstructured
		tenantOK bool // admitted for a requester that is not the platform
		message  string
	}
	var moves []move
	for _, k := range []struct {
		kind string
		gvr  schema.GroupVersionResource
		mk   func(string) *unstructured.Unstructured
	}{{"HelmRelease", hrGVR, release}, {"Kustomization", ksGVR, kustomization}} {
		moves = append(moves,
			move{k.kind + ": create without kubeConfig", k.gvr, admission.Create, k.mk(""), nil, false, "spec.kubeConfig is required"},
			move{k.kind + ": create with kubeConfig", k.gvr, admission.Create, k.mk(remote), nil, true, ""},
			move{k.kind + ": remove kubeConfig", k.gvr, admission.Update, k.mk(""), k.mk(remote), false, "spec.kubeConfig is the platform's to change"},
			move{k.kind + ": change kubeConfig", k.gvr, admission.Update, k.mk(otherRemote), k.mk(remote), false, "spec.kubeConfig is the platform's to change"},
			move{k.kind + ": add kubeConfig", k.gvr, admission.Update, k.mk(remote), k.mk(""), false, "spec.kubeConfig is the platform's to change"},
			move{k.kind + ": change the spec of one with kubeConfig", k.gvr, admission.Update, withValues(k.mk(remote)), k.mk(remote), true, ""},
			move{k.kind + ": change the spec of one without kubeConfig", k.gvr, admission.Update, withValues(k.mk("")), k.mk(""), false, "is applied to the management cluster"},
			move{k.kind + ": annotate and finalize one without kubeConfig", k.gvr, admission.Update, withAnnotation(k.mk("")), k.mk(""), true, ""},
		)
	}
	for _, m := range moves {
		for _, r := range requesters {
			ok, msg := admitted(t, v, m.op, m.gvr, m.obj.GroupVersionKind(), "", m.obj, m.old, nil, r.name, r.groups...)
			want := r.platform || m.tenantOK
			if ok != want {
				t.Errorf("%s by %s %v: admitted %t, want %t (%s)", m.name, r.name, r.groups, ok, want, msg)
			}
			if !ok && !strings.Contains(msg, m.message) {
				t.Errorf("%s by %s: denial %q, want it to say %q", m.name, r.name, msg, m.message)
			}
		}
	}

	// Every composed HelmRelease: Crossplane creates and changes it;
	// a tenant cannot point it elsewhere or at the management cluster.
	seen := 0
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		if o.obj.GetKind() != "HelmRelease" {
			continue
		}
		seen++
		what := o.file + " HelmRelease " + o.obj.GetName()
		if _, ok, _ := unstructured.NestedMap(o.obj.Object, "spec", "kubeConfig"); !ok {
			t.Errorf("%s has no spec.kubeConfig: Flux would install it into the management cluster", what)
		}
		if ok, msg := admitted(t, v, admission.Create, hrGVR, o.obj.GroupVersionKind(), "", o.obj, nil, nil, "system:serviceaccount:crossplane-system:crossplane"); !ok {
			t.Errorf("%s: Crossplane's create refused: %s", what, msg)
		}
		dropped := o.obj.DeepCopy()
		unstructured.RemoveNestedField(dropped.Object, "spec", "kubeConfig")
		redirected := o.obj.DeepCopy()
		_ = unstructured.SetNestedField(redirected.Object, "evil-kubeconfig", "spec", "kubeConfig", "secretRef", "name")
		for name, changed := range map[string]*unstructured.Unstructured{"drop kubeConfig": dropped, "redirect kubeConfig": redirected} {
			if ok, _ := admitted(t, v, admission.Update, hrGVR, changed.GroupVersionKind(), "", changed, o.obj, nil, "eve"); ok {
				t.Errorf("%s: %s by a tenant admitted", what, name)
			}
			if ok, msg := admitted(t, v, admission.Update, hrGVR, changed.GroupVersionKind(), "", changed, o.obj, nil, "system:serviceaccount:crossplane-system:crossplane"); !ok {
				t.Errorf("%s: %s by Crossplane refused: %s", what, name, msg)
			}
		}
	}
	if seen == 0 {
		t.Error("no composed HelmRelease in the golden renders: nothing checked")
	}
}

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// fluxTenant holds tenantkube:tenant in demoNS; fluxEditor holds
	// Kubernetes' edit there, into which Flux's release aggregates
	// flux-edit.
	fluxTenant = "mallory-flux"
	fluxEditor = "eve-flux"
	// escapeRole is the cluster-scoped object the hostile chart creates: it
	// exists only where helm-controller installed the chart into the
	// management cluster.
	escapeRole = "e2e-flux-escape"
)

var (
	gvkHelmRepository = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmRepository"}
	gvkClusterRole    = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
)

// escapeTemplate is a chart whose one object is cluster-scoped: installed
// into the management cluster, it is a ClusterRole there.
const escapeTemplate = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ` + escapeRole + `
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list]
`

// fluxBoundary: with Flux's RBAC as its release installs it (helm-controller
// cluster-admin, flux-edit aggregated into edit), a tenant holding
// tenantkube:tenant may write no Flux object; a tenant holding edit may,
// and, before deploy/flux-policy.yaml is applied, its HelmRelease without
// spec.kubeConfig installs a chart into the management cluster (the test
// world is as open as production). With the policy applied, the same
// release and every rewrite of a composed release's target are refused,
// what the policy leaves (a release with a kubeConfig of the tenant's own)
// still works, and the composed releases are unchanged. The policy stays
// applied for the scenarios after this one, which install, retry and
// uninstall add-ons under it.
func (e *env) fluxBoundary(t *testing.T) {
	ctx, cancel := ctxT(8 * time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")

	objs, err := decodeFile(e.path("deploy", "tenant-rbac.yaml"))
	e.must(t, err, "deploy/tenant-rbac.yaml")
	objs = append(objs, roleBinding(demoNS, "flux-tenant", "tenantkube:tenant", fluxTenant), roleBinding(demoNS, "flux-editor", "edit", fluxEditor))
	for _, o := range objs {
		e.must(t, apply(ctx, e.c, o), "apply "+describe(o))
	}
	t.Cleanup(func() {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		for _, n := range []string{"flux-tenant", "flux-editor"} {
			rb := roleBinding(demoNS, n, "edit", "")
			if err := e.c.Delete(ctx, rb); err != nil && !kerrors.IsNotFound(err) {
				errorf(t, "delete RoleBinding %s: %v", n, err)
			}
		}
	})

	// What each role may do with Flux's kinds in demoNS, as Flux ships.
	writes := []authorizationv1.ResourceAttributes{
		{Namespace: demoNS, Verb: "create", Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"},
		{Namespace: demoNS, Verb: "patch", Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases", Name: demo + "-cilium"},
		{Namespace: demoNS, Verb: "create", Group: "source.toolkit.fluxcd.io", Resource: "helmrepositories"},
		{Namespace: demoNS, Verb: "create", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations"},
	}
	waitFor(t, time.Minute, "Flux's flux-edit aggregated into edit", func(ctx context.Context) (bool, string, error) {
		return e.sar(ctx, t, cs, fluxEditor, writes[0]), "edit may not create HelmReleases yet", nil
	})
	for _, w := range writes {
		what := w.Verb + " " + w.Group + "/" + w.Resource + " " + w.Name
		if e.sar(ctx, t, cs, fluxTenant, w) {
			errorf(t, "SubjectAccessReview: %s (tenantkube:tenant) may %s", fluxTenant, what)
		}
		if !e.sar(ctx, t, cs, fluxEditor, w) {
			errorf(t, "SubjectAccessReview: %s (edit) may not %s: Flux's release aggregates it, the test world is narrower than production", fluxEditor, what)
		}
	}
	if sar := (authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}); !e.sar(ctx, t, cs, "system:serviceaccount:flux-system:helm-controller", sar) {
		errorf(t, "helm-controller may not create ClusterRoles: it does not run as Flux's release binds it (cluster-admin)")
	}

	tenant, err := client.New(e.userConfig(t, fluxTenant), client.Options{Scheme: e.c.Scheme()})
	e.must(t, err, "client as "+fluxTenant)
	editor, err := client.New(e.userConfig(t, fluxEditor), client.Options{Scheme: e.c.Scheme()})
	e.must(t, err, "client as "+fluxEditor)

	chart, err := buildChart("escape", escapeTemplate, "{}\n")
	e.must(t, err, "chart")
	repo, err := serveCharts(map[string][]byte{"escape": chart})
	e.must(t, err, "chart repository")
	defer repo.srv.Close()
	hostileRepo := referenceRepository(demoNS, "escape", repo.url)
	hostile := func(name string) *unstructured.Unstructured {
		r := referenceRelease(demoNS, name, "escape")
		_ = unstructured.SetNestedField(r.Object, "escape", "spec", "chart", "spec", "chart")
		return r
	}

	if err := tenant.Create(ctx, hostileRepo.DeepCopy()); !kerrors.IsForbidden(err) {
		errorf(t, "create HelmRepository as %s: %v, want Forbidden", fluxTenant, err)
	}
	if err := tenant.Create(ctx, hostile("escape-tenant")); !kerrors.IsForbidden(err) {
		errorf(t, "create HelmRelease as %s: %v, want Forbidden", fluxTenant, err)
	}

	// Before the policy: edit installs a chart into the management cluster.
	e.must(t, editor.Create(ctx, hostileRepo.DeepCopy()), "create HelmRepository as "+fluxEditor)
	e.must(t, editor.Create(ctx, hostile("escape")), "create HelmRelease without spec.kubeConfig as "+fluxEditor)
	waitFor(t, 3*time.Minute, "helm-controller to install the edit user's chart into the management cluster (Flux as shipped)", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkClusterRole, "", escapeRole)
		if err == nil {
			return true, "", nil
		}
		hr, _ := get(ctx, e.c, gvkHR, demoNS, "escape")
		s, r, m := condition(hr, "Ready")
		return false, fmt.Sprintf("ClusterRole %s: %v; HelmRelease Ready=%s %s %q %s", escapeRole, err, s, r, m, e.fluxState()), nil
	})
	t.Logf("Flux as shipped: a HelmRelease by %s (edit) without spec.kubeConfig created ClusterRole %s in the management cluster", fluxEditor, escapeRole)
	e.must(t, e.c.Delete(ctx, hostile("escape")), "delete the hostile HelmRelease")
	waitFor(t, 2*time.Minute, "the hostile release uninstalled", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkClusterRole, "", escapeRole)
		return kerrors.IsNotFound(err), fmt.Sprintf("ClusterRole %s: %v", escapeRole, err), nil
	})

	// The policy.
	policy, err := decodeFile(e.path("deploy", "flux-policy.yaml"))
	e.must(t, err, "deploy/flux-policy.yaml")
	for _, o := range policy {
		e.must(t, apply(ctx, e.c, o), "apply "+describe(o))
	}
	waitFor(t, time.Minute, "the Flux policy to refuse a dry run", func(ctx context.Context) (bool, string, error) {
		err := editor.Create(ctx, hostile("escape-dry-run"), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spec.kubeConfig is required"), fmt.Sprintf("%v", err), nil
	})
	composed, err := get(ctx, e.c, gvkHR, demoNS, demo+"-cilium")
	e.must(t, err, "composed HelmRelease "+demo+"-cilium")
	refused := func(what, want string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			errorf(t, "%s as %s: want refused (%q), got %v", what, fluxEditor, want, err)
		}
	}
	refused("create a HelmRelease without spec.kubeConfig", "spec.kubeConfig is required", editor.Create(ctx, hostile("escape")))
	refused("drop spec.kubeConfig of "+composed.GetName(), "spec.kubeConfig is the platform's to change",
		editor.Patch(ctx, composed.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"kubeConfig":null}}`))))
	refused("point "+composed.GetName()+" at another kubeconfig", "spec.kubeConfig is the platform's to change",
		editor.Patch(ctx, composed.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"kubeConfig":{"secretRef":{"name":"escape","key":"value"}}}}`))))
	// What the policy leaves: a release into a cluster of the tenant's own
	// kubeconfig (dry run).
	own := hostile("own-cluster")
	_ = unstructured.SetNestedMap(own.Object, map[string]any{"secretRef": map[string]any{"name": "own-kubeconfig", "key": "value"}}, "spec", "kubeConfig")
	if err := editor.Create(ctx, own, client.DryRunAll); err != nil {
		errorf(t, "create a HelmRelease with a kubeConfig of its own as %s (dry run): %v", fluxEditor, err)
	}

	after, err := get(ctx, e.c, gvkHR, demoNS, demo+"-cilium")
	e.must(t, err, "composed HelmRelease "+demo+"-cilium")
	if after.GetGeneration() != composed.GetGeneration() {
		errorf(t, "HelmRelease %s changed: generation %d -> %d", composed.GetName(), composed.GetGeneration(), after.GetGeneration())
	}
	if _, err := get(ctx, e.c, gvkClusterRole, "", escapeRole); !kerrors.IsNotFound(err) {
		errorf(t, "ClusterRole %s: %v, want NotFound", escapeRole, err)
	}
	if err := e.c.Delete(ctx, hostileRepo.DeepCopy()); err != nil && !kerrors.IsNotFound(err) {
		errorf(t, "delete HelmRepository escape: %v", err)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	downNS = "tenant-down"
	down   = "down"
)

// ownKamajiSecrets makes the KamajiControlPlane ns/n the controller of the
// Secrets playKamaji wrote, as in a real installation, so the garbage
// collector deletes them with the control plane: N-kubeconfig is the
// KamajiControlPlane's, and the TenantControlPlane, which no Kamaji creates
// here, owns the other two and is the KamajiControlPlane's.
func (e *env) ownKamajiSecrets(ctx context.Context, ns, n string) error {
	kcp, err := get(ctx, e.c, gvkKCP, ns, n)
	if err != nil {
		return err
	}
	// Provider v0.20.0 controllers/kamajicontrolplane_controller_resources.go:176,
	// _tcp.go:268; Kamaji e51909fa internal/resources/kubeconfig.go:183,
	// ca_certificate.go:160 (controller-runtime SetControllerReference).
	ref := map[string]any{"ownerReferences": []any{map[string]any{
		"apiVersion": gvkKCP.GroupVersion().String(), "kind": gvkKCP.Kind, "name": n, "uid": string(kcp.GetUID()),
		"controller": true, "blockOwnerDeletion": true,
	}}}
	for _, s := range []string{n + "-admin-kubeconfig", n + "-ca", n + "-kubeconfig"} {
		if err := patchAs(ctx, e.c, "kamaji-played-by-e2e", gvkSecret, ns, s, "", map[string]any{"metadata": ref}); err != nil {
			return fmt.Errorf("Secret %s: %w", s, err)
		}
	}
	return nil
}

// leftInNamespace lists every object of every namespaced, listable API
// type in ns, except Events and what kube-controller-manager puts in every
// namespace (ServiceAccount default, ConfigMap kube-root-ca.crt).
func (e *env) leftInNamespace(ctx context.Context, ns string) ([]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(e.cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var left []string
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") || r.Kind == "Event" {
				continue
			}
			items, err := list(ctx, e.c, gv.WithKind(r.Kind), client.InNamespace(ns))
			if err != nil {
				if kerrors.IsNotFound(err) || meta.IsNoMatchError(err) || kerrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("list %s: %w", gv.WithKind(r.Kind), err)
			}
			for _, it := range items {
				if (r.Kind == "ServiceAccount" && it.GetName() == "default") || (r.Kind == "ConfigMap" && it.GetName() == "kube-root-ca.crt") {
					continue
				}
				left = append(left, r.Kind+" "+it.GetName())
			}
		}
	}
	sort.Strings(left)
	return left, nil
}

// deleteWithTenantDown: a second tenant cluster (claim tenant-down/down on
// the loopback Composition, API server of its own) gets its add-ons from
// Flux; then its kube-apiserver and etcd are stopped and the played Kamaji
// reports the control plane not ready (KamajiControlPlane status.ready
// false, as Kamaji's provider does when the TenantControlPlane's API server
// is not available). The product's rule (docs/architecture.md, Deletion order): a reconcile
// that observes the control plane not ready composes every release with
// spec.suspend, and Flux deletes a suspended release without touching the
// tenant. So the claim's deletion completes within deleteBound, in the
// Usages' order, and nothing of the cluster is left in its namespace.
func (e *env) deleteWithTenantDown(t *testing.T) {
	ctx, cancel := ctxT(15 * time.Minute)
	defer cancel()
	ta, err := e.startTenantAPI(down)
	e.must(t, err, "tenant API server of "+down)
	claim := e.claimYAML(t)
	claim.SetNamespace(downNS)
	claim.SetName(down)
	unstructured.RemoveNestedField(claim.Object, "spec", "writeConnectionSecretToRef")
	e.must(t, unstructured.SetNestedField(claim.Object, e2eComposition, "spec", "compositionRef", "name"), "compositionRef")
	e.must(t, e.ensureNamespace(ctx, downNS), "namespace")
	e.must(t, apply(ctx, e.c, claim), "apply claim "+downNS+"/"+down)
	e.waitComposed(t, downNS, down, withCertManager(), false)
	e.must(t, e.playKamaji(ctx, ta, downNS, down), "play Kamaji")
	e.checkManagementNamespace(t, downNS, down)
	e.must(t, e.ownKamajiSecrets(ctx, downNS, down), "Kamaji's Secrets owned by the control plane")

	releases := withCertManager()
	waitFor(t, 6*time.Minute, "Flux installing "+down+"'s add-ons into its tenant cluster", func(ctx context.Context) (bool, string, error) {
		var pending []string
		for _, r := range releases {
			hr, err := get(ctx, e.c, gvkHR, downNS, down+"-"+r)
			if err != nil {
				return false, "", err
			}
			if s, reason, _ := condition(hr, "Ready"); s != "True" {
				pending = append(pending, r+" "+reason)
			}
		}
		return len(pending) == 0, fmt.Sprintf("not Ready: %v %s", pending, e.fluxState()), nil
	})
	for _, r := range releases {
		hr, err := get(ctx, e.c, gvkHR, downNS, down+"-"+r)
		e.must(t, err, "HelmRelease "+r)
		storage, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace")
		release, _, _ := unstructured.NestedString(hr.Object, "spec", "releaseName")
		secrets, err := helmStorage(ctx, ta, storage, release)
		e.must(t, err, "Helm storage of "+r+" in "+down)
		if len(secrets) != 1 || secrets[0].Labels["status"] != "deployed" {
			fatalf(t, "release %s: %d Helm storage Secrets in %s of %s's tenant cluster, want 1 deployed", r, len(secrets), storage, down)
		}
	}

	pids := fmt.Sprintf("kube-apiserver pid %d, etcd pid %d", ta.api.pid(), ta.etcd.pid())
	ta.api.kill()
	ta.etcd.kill()
	t.Logf("tenant API server of %s stopped (%s)", down, pids)
	// Provider v0.20.0 controllers/kamajicontrolplane_controller.go:341-344; Kamaji e51909fa
	// internal/resources/k8s_deployment_resource.go:85-102, 158-160.
	e.must(t, patchAs(ctx, e.c, "kamaji-played-by-e2e", gvkKCP, downNS, down, "status",
		map[string]any{"status": map[string]any{"ready": false}}), "KamajiControlPlane not ready")
	waitFor(t, 2*time.Minute, "every release of "+down+" suspended", func(ctx context.Context) (bool, string, error) {
		var running []string
		for _, r := range releases {
			hr, err := get(ctx, e.c, gvkHR, downNS, down+"-"+r)
			if err != nil {
				return false, "", err
			}
			if s, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend"); !s {
				running = append(running, r)
			}
		}
		return len(running) == 0, fmt.Sprintf("not suspended: %v", running), nil
	})
	e.deleteAndWait(t, downNS, down)
	var left []string
	waitFor(t, time.Minute, "nothing left in namespace "+downNS, func(ctx context.Context) (bool, string, error) {
		var err error
		left, err = e.leftInNamespace(ctx, downNS)
		return len(left) == 0, fmt.Sprintf("%d left: %v", len(left), left), err
	})
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(gvkNamespace)
	ns.SetName(downNS)
	e.must(t, client.IgnoreNotFound(e.c.Delete(ctx, ns, client.PropagationPolicy(metav1.DeletePropagationBackground))), "delete namespace "+downNS)
}

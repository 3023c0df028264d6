//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// composedManager stands for the field manager with which Crossplane applies
// an XR's composed resources (apiextensions.crossplane.io/composed/<hash>).
const composedManager = "apiextensions.crossplane.io/composed/e2e"

var (
	gvkEtcdSnapshot      = schema.GroupVersionKind{Group: "etcd-operator.cozystack.io", Version: "v1alpha2", Kind: "EtcdSnapshot"}
	gvkEnvironmentConfig = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
)

// TestBackupOutlivesItsCluster checks the lifetime of a backup's objects on
// a real kube-apiserver with kube-controller-manager's garbage collector and
// namespace controller (no Crossplane, no operator):
//
//   - the objects are the EtcdSnapshot and PKI EnvironmentConfig of the
//     render golden etcd-backup-observed (the control-plane function's
//     output through Crossplane's engine: owned by the XR as controller and
//     by the Namespace tenant-demo), with the UIDs of a live Namespace and
//     a live XR of the XRD's kind (a stand-in CRD), applied server-side
//     under a composed-resource field manager as Crossplane applies them;
//     twice, for one XR deleted with background and one with foreground
//     propagation (a claim's compositeDeletePolicy);
//   - after each XR is deleted, both its objects remain with the Namespace
//     as their only owner;
//   - after the Namespace is deleted, the EtcdSnapshots are gone (the
//     namespace controller) and the cluster-scoped EnvironmentConfigs too
//     (the garbage collector: their last owner is gone).
func TestBackupOutlivesItsCluster(t *testing.T) {
	e := newBackupEnv(t)
	e.logs = filepath.Join(e.root, "_output", "e2e", "logs", "backup-gc")
	if err := os.MkdirAll(e.logs, 0o755); err != nil {
		fatal(t, err)
	}
	if _, err := os.Stat(e.binary("kube-controller-manager")); err != nil {
		fatalf(t, "bin/kube-controller-manager is missing: run make e2e-tools: %v", err)
	}
	e.fnPorts, e.fnMetricsPorts = map[string]int{}, map[string]int{}
	e.shared = filepath.Join(e.root, "..", "shared")
	if d := os.Getenv("TENANTKUBE_SHARED"); d != "" {
		e.shared = d
	}
	step(t, "ports and PKI", e.pki)
	step(t, "etcd", e.startEtcd)
	step(t, "kube-apiserver", e.startAPIServer)
	step(t, "kube-controller-manager", e.startKCM)
	t.Cleanup(func() { e.kcm.stop(); e.apiserver.stop(); e.etcd.stop() })

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	crds := []*unstructured.Unstructured{minimalCRD(gvkXR.Group, gvkXR.Version, gvkXR.Kind, "xkubernetesclusters", "Cluster", false)}
	for _, f := range []string{
		filepath.Join(e.shared, "crds", "crossplane", "apiextensions.crossplane.io_environmentconfigs.yaml"),
		filepath.Join(e.shared, "crds", "later", "etcd-operator.cozystack.io_etcdsnapshots.yaml"),
	} {
		objs, err := decodeFile(f)
		if err != nil {
			fatal(t, err)
		}
		crds = append(crds, objs...)
	}
	e.must(t, e.applyCRDs(ctx, crds, time.Minute), "CRDs established")

	const ns = "tenant-demo"
	e.must(t, e.ensureNamespace(ctx, ns), "namespace "+ns)
	nsObj, err := get(ctx, e.c, gvkNamespace, "", ns)
	e.must(t, err, "get namespace")

	golden, err := decodeFile(e.path("test", "testdata", "control-plane", "etcd-backup-observed.golden.yaml"))
	e.must(t, err, "read the render golden")
	var backup []*unstructured.Unstructured
	for _, o := range golden {
		if o.GroupVersionKind() == gvkEtcdSnapshot || o.GroupVersionKind() == gvkEnvironmentConfig {
			backup = append(backup, o)
		}
	}
	if len(backup) != 2 {
		fatalf(t, "the golden holds %d backup objects, want an EtcdSnapshot and an EnvironmentConfig", len(backup))
	}

	type dep struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}
	var deps []dep
	policies := map[string]metav1.DeletionPropagation{"bg": metav1.DeletePropagationBackground, "fg": metav1.DeletePropagationForeground}
	for suffix, policy := range policies {
		xr := &unstructured.Unstructured{}
		xr.SetGroupVersionKind(gvkXR)
		xr.SetName("demo-" + suffix)
		e.must(t, apply(ctx, e.c, xr), "create XR "+xr.GetName())
		xr, err = get(ctx, e.c, gvkXR, "", xr.GetName())
		e.must(t, err, "get XR")
		for _, g := range backup {
			o := g.DeepCopy()
			unstructured.RemoveNestedField(o.Object, "status")
			o.SetName(o.GetName() + "-" + suffix)
			refs := o.GetOwnerReferences()
			kinds := map[string]bool{}
			for i := range refs {
				kinds[refs[i].Kind] = true
				switch refs[i].Kind {
				case "Namespace":
					if refs[i].Controller != nil || refs[i].Name != ns {
						fatalf(t, "%s %s: Namespace reference %+v", o.GetKind(), g.GetName(), refs[i])
					}
					refs[i].UID = nsObj.GetUID()
				case gvkXR.Kind:
					refs[i].Name, refs[i].UID = xr.GetName(), xr.GetUID()
				}
			}
			if len(refs) != 2 || !kinds["Namespace"] || !kinds[gvkXR.Kind] {
				fatalf(t, "%s %s of the golden has ownerReferences %+v, want the XR's and the Namespace's", o.GetKind(), g.GetName(), refs)
			}
			o.SetOwnerReferences(refs)
			o.SetResourceVersion("")
			o.SetManagedFields(nil)
			//nolint:staticcheck // Patch with client.Apply works for unstructured objects.
			e.must(t, e.c.Patch(ctx, o, client.Apply, client.FieldOwner(composedManager), client.ForceOwnership),
				"apply "+o.GetKind()+" "+o.GetName())
			deps = append(deps, dep{o.GroupVersionKind(), o.GetNamespace(), o.GetName()})
			// The form in which function.Kept reads the references
			// Crossplane applied (internal/function/keptmetadata.go).
			live, err := get(ctx, e.c, o.GroupVersionKind(), o.GetNamespace(), o.GetName())
			e.must(t, err, "get "+o.GetName())
			if !appliedOwnerRef(live, composedManager, string(nsObj.GetUID())) {
				errorf(t, "%s %s: managedFields of %s hold no f:metadata.f:ownerReferences.k:{\"uid\":%q}", o.GetKind(), o.GetName(), composedManager, nsObj.GetUID())
			}
		}
		e.must(t, e.c.Delete(ctx, xr, client.PropagationPolicy(policy)), "delete XR "+xr.GetName())
	}

	waitFor(t, 4*time.Minute, "the XRs gone and their references removed, the backups kept", func(ctx context.Context) (bool, string, error) {
		for suffix := range policies {
			if _, err := get(ctx, e.c, gvkXR, "", "demo-"+suffix); !kerrors.IsNotFound(err) {
				return false, "XR demo-" + suffix + " still there", nil
			}
		}
		for _, d := range deps {
			u, err := get(ctx, e.c, d.gvk, d.ns, d.name)
			if err != nil {
				return false, "", fmt.Errorf("%s %s: %w", d.gvk.Kind, d.name, err)
			}
			refs := u.GetOwnerReferences()
			if len(refs) != 1 {
				return false, fmt.Sprintf("%s %s owned by %d", d.gvk.Kind, d.name, len(refs)), nil
			}
			if r := refs[0]; r.APIVersion != "v1" || r.Kind != "Namespace" || r.Name != ns || r.UID != nsObj.GetUID() || r.Controller != nil {
				return false, "", fmt.Errorf("%s %s: owner %+v, want the Namespace %s", d.gvk.Kind, d.name, r, ns)
			}
		}
		return true, "", nil
	})

	e.must(t, e.c.Delete(ctx, nsObj), "delete namespace "+ns)
	waitFor(t, 4*time.Minute, "the backups deleted with the namespace", func(ctx context.Context) (bool, string, error) {
		for _, d := range deps {
			if _, err := get(ctx, e.c, d.gvk, d.ns, d.name); !kerrors.IsNotFound(err) {
				return false, d.gvk.Kind + " " + d.name + " still there", err
			}
		}
		return true, "", nil
	})
}

// appliedOwnerRef reports whether manager's Apply entry in u's
// managedFields owns the ownerReference of uid (the list is keyed by uid).
func appliedOwnerRef(u *unstructured.Unstructured, manager, uid string) bool {
	for _, m := range u.GetManagedFields() {
		if m.Manager != manager || m.Operation != metav1.ManagedFieldsOperationApply || m.FieldsV1 == nil {
			continue
		}
		var f map[string]any
		if json.Unmarshal(m.FieldsV1.Raw, &f) != nil {
			continue
		}
		refs, _, _ := unstructured.NestedMap(f, "f:metadata", "f:ownerReferences")
		if _, ok := refs[`k:{"uid":"`+uid+`"}`]; ok {
			return true
		}
	}
	return false
}

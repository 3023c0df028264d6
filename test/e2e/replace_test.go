//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// replaceUser holds Kubernetes' edit in demoNS for composedReplaceRefused
// only (hostileTenantRole removes its own bindings).
const replaceUser = "rhea"

// composedReplaceRefused: with deploy/composed-objects-policy.yaml applied,
// a user holding Kubernetes' edit in demoNS tries kubectl replace --force
// (delete, then create) of the composed Service behind the shared ingress
// and of a composed ConfigMap of demoNS (the OIDC AuthenticationConfiguration
// where the claim has one): each delete is refused, and so is each create
// under the name with a controller owner reference of the user's (the
// Service as ExternalName), a controller reference set on the composed
// Service, and a ConfigMap created ahead of Crossplane under the name of
// the claim's AuthenticationConfiguration. The objects read afterwards
// keep their UID and resourceVersion. Then the administrator, whom the
// policy admits, puts an object of another controller under the Service's
// name (the XR paused meanwhile, so Crossplane does not re-create it
// first): Crossplane cannot apply it and the XR's Synced condition is
// False naming the composed resource; once the administrator deletes it,
// Crossplane composes the Service again.
func (e *env) composedReplaceRefused(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()

	var installed []*unstructured.Unstructured
	objs, err := decodeFile(e.path("deploy", "composed-objects-policy.yaml"))
	e.must(t, err, "deploy/composed-objects-policy.yaml")
	installed = append(installed, objs...)
	installed = append(installed, roleBinding(demoNS, "replace-edit", "edit", replaceUser))
	for _, o := range installed {
		e.must(t, apply(ctx, e.c, o), "apply "+o.GetKind()+" "+o.GetName())
	}
	t.Cleanup(func() {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		for _, o := range installed {
			if err := e.c.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
				errorf(t, "delete %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})

	all, err := e.composed(ctx, demo)
	e.must(t, err, "composed objects of "+demo)
	var cm, svc *unstructured.Unstructured
	for i := range all {
		o := &all[i]
		if o.GetNamespace() != demoNS || o.GetLabels()["crossplane.io/composite"] == "" {
			continue
		}
		switch {
		case o.GetKind() == "ConfigMap" && (cm == nil || strings.HasSuffix(o.GetName(), "-oidc-authn-config")):
			cm = o
		case o.GetKind() == "Service" && strings.HasPrefix(o.GetName(), demo+"-api-"):
			svc = o
		}
	}
	if svc == nil {
		fatalf(t, "no composed Service %s-api-<digest> in %s", demo, demoNS)
	}
	if cm == nil {
		t.Logf("the claim composes no ConfigMap into %s (no OIDC): the ConfigMap is played ahead of Crossplane only", demoNS)
	}

	rc, err := client.New(e.userConfig(t, replaceUser), client.Options{Scheme: e.c.Scheme()})
	e.must(t, err, "client as "+replaceUser)
	// The policy takes effect once the API server has loaded it: a dry-run
	// delete by the edit user is refused from then on.
	waitFor(t, time.Minute, "the composed-objects policy to refuse a dry-run delete", func(ctx context.Context) (bool, string, error) {
		err := rc.Delete(ctx, svc.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "is composed by Crossplane"), fmt.Sprintf("%v", err), nil
	})
	before := e.tenantObjects(t, demoNS, demo)

	// The owner the user makes controller: a ConfigMap of its own.
	owner := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "replace-owner", "namespace": demoNS}, "data": map[string]any{"a": "b"}}}
	e.must(t, rc.Create(ctx, owner), "create ConfigMap "+demoNS+"/replace-owner as "+replaceUser)
	t.Cleanup(func() {
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		if err := e.c.Delete(ctx, owner); err != nil && !kerrors.IsNotFound(err) {
			errorf(t, "delete ConfigMap %s/replace-owner: %v", demoNS, err)
		}
	})
	ownedBy := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}
	// replacement is o as kubectl replace --force sends it again: its
	// content, no label, the user's controller.
	replacement := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		r := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind()}}
		r.SetNamespace(o.GetNamespace())
		r.SetName(o.GetName())
		r.SetOwnerReferences(ownedBy)
		for _, k := range []string{"data", "binaryData"} {
			if v, ok := o.Object[k]; ok {
				r.Object[k] = v
			}
		}
		return r
	}
	refused := func(what, want string, err error) {
		t.Helper()
		if !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			errorf(t, "%s as %s: want Forbidden (%q), got %v", what, replaceUser, want, err)
		}
	}

	refused("delete Service "+svc.GetName(), "is composed by Crossplane", rc.Delete(ctx, svc.DeepCopy()))
	ext := replacement(svc)
	ext.Object["spec"] = map[string]any{"type": "ExternalName", "externalName": "metadata.internal.example"}
	refused("create Service "+svc.GetName()+" as ExternalName under "+replaceUser+"'s controller", "is a name tenantkube composes", rc.Create(ctx, ext))
	hijack, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []any{map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "name": owner.GetName(), "uid": string(owner.GetUID()), "controller": true}}}})
	e.must(t, err, "patch")
	refused("make ConfigMap replace-owner the controller of Service "+svc.GetName(), "its controller",
		rc.Patch(ctx, svc.DeepCopy(), client.RawPatch(types.MergePatchType, hijack)))
	if cm != nil {
		refused("delete ConfigMap "+cm.GetName(), "is composed by Crossplane", rc.Delete(ctx, cm.DeepCopy()))
		refused("create ConfigMap "+cm.GetName()+" under "+replaceUser+"'s controller", "is a name tenantkube composes", rc.Create(ctx, replacement(cm)))
	}
	if cm == nil || !strings.HasSuffix(cm.GetName(), "-oidc-authn-config") {
		ahead := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "immutable": true,
			"metadata": map[string]any{"name": demo + "-oidc-authn-config", "namespace": demoNS},
			"data":     map[string]any{"config.yaml": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"}}}
		refused("create ConfigMap "+ahead.GetName()+" ahead of Crossplane", "is a name tenantkube composes", rc.Create(ctx, ahead))
	}

	after := e.tenantObjects(t, demoNS, demo)
	for _, o := range []*unstructured.Unstructured{svc, cm} {
		if o == nil {
			continue
		}
		k := describe(o)
		b, a := before[k], after[k]
		if a.uid == "" || a.uid != b.uid || a.rv != b.rv {
			errorf(t, "%s changed: uid %s -> %s, resourceVersion %s -> %s", k, b.uid, a.uid, b.rv, a.rv)
		}
	}
	if t.Failed() {
		return
	}

	// What Crossplane does with an object of another controller under a
	// composed name, played by the administrator.
	xr, err := e.xrName(ctx, demoNS, demo)
	e.must(t, err, "XR of "+demo)
	resName := svc.GetAnnotations()["crossplane.io/composition-resource-name"]
	if resName == "" {
		fatalf(t, "Service %s has no crossplane.io/composition-resource-name", svc.GetName())
	}
	pause := func(on bool) {
		t.Helper()
		v := `null`
		if on {
			v = `"true"`
		}
		e.must(t, mergePatch(ctx, e.c, gvkXR, "", xr, `{"metadata":{"annotations":{"crossplane.io/paused":`+v+`}}}`), "pause XR "+xr)
		if !on {
			return
		}
		// A reconcile already running when the annotation lands still
		// applies the composed objects: wait until Crossplane reports the pause.
		waitFor(t, time.Minute, "XR "+xr+" paused", func(ctx context.Context) (bool, string, error) {
			u, err := get(ctx, e.c, gvkXR, "", xr)
			if err != nil {
				return false, "", err
			}
			s, r, m := condition(u, "Synced")
			return s == "False" && r == "ReconcilePaused", s + " " + r + " " + m, nil
		})
	}
	// gone waits until the Service of that uid is deleted.
	gone := func(uid types.UID) {
		t.Helper()
		waitFor(t, time.Minute, "Service "+svc.GetName()+" (uid "+string(uid)+") gone", func(ctx context.Context) (bool, string, error) {
			u, err := get(ctx, e.c, gvkService, demoNS, svc.GetName())
			if kerrors.IsNotFound(err) {
				return true, "", nil
			}
			if err != nil {
				return false, "", err
			}
			return u.GetUID() != uid, fmt.Sprintf("uid %s, deletionTimestamp %v, finalizers %v", u.GetUID(), u.GetDeletionTimestamp(), u.GetFinalizers()), nil
		})
	}
	// foreign is the Service under the composed name, controlled by the
	// user's ConfigMap; deleted (Crossplane composes it again) on the way out.
	foreign := replacement(svc)
	foreign.Object["spec"] = svc.Object["spec"]
	unstructured.RemoveNestedField(foreign.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(foreign.Object, "spec", "clusterIPs")
	restored := false
	t.Cleanup(func() {
		if restored {
			return
		}
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		_ = mergePatch(ctx, e.c, gvkXR, "", xr, `{"metadata":{"annotations":{"crossplane.io/paused":"true"}}}`)
		if err := e.c.Delete(ctx, foreign.DeepCopy()); err != nil && !kerrors.IsNotFound(err) {
			errorf(t, "delete Service %s: %v", foreign.GetName(), err)
		}
		_ = mergePatch(ctx, e.c, gvkXR, "", xr, `{"metadata":{"annotations":{"crossplane.io/paused":null}}}`)
	})
	pause(true)
	e.must(t, e.c.Delete(ctx, svc.DeepCopy(), client.Preconditions{UID: ptr.To(svc.GetUID())}), "delete Service "+svc.GetName()+" as the administrator")
	gone(svc.GetUID())
	e.must(t, e.c.Create(ctx, foreign), "create Service "+svc.GetName()+" under ConfigMap replace-owner as the administrator")
	pause(false)
	waitFor(t, 2*time.Minute, "XR "+xr+" Synced False naming "+resName, func(ctx context.Context) (bool, string, error) {
		u, err := get(ctx, e.c, gvkXR, "", xr)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(u, "Synced")
		return s == "False" && strings.Contains(m, resName), s + " " + r + " " + m, nil
	})
	cur, err := get(ctx, e.c, gvkService, demoNS, svc.GetName())
	e.must(t, err, "Service "+svc.GetName())
	if cur.GetUID() != foreign.GetUID() || cur.GetLabels()["crossplane.io/composite"] != "" {
		errorf(t, "Service %s: uid %s, labels %v; want the administrator's object, unlabelled", svc.GetName(), cur.GetUID(), cur.GetLabels())
	}

	pause(true)
	e.must(t, e.c.Delete(ctx, foreign.DeepCopy(), client.Preconditions{UID: ptr.To(foreign.GetUID())}), "delete the administrator's Service "+svc.GetName())
	gone(foreign.GetUID())
	pause(false)
	restored = true
	waitFor(t, 2*time.Minute, "Crossplane to compose Service "+svc.GetName()+" again", func(ctx context.Context) (bool, string, error) {
		u, err := get(ctx, e.c, gvkXR, "", xr)
		if err != nil {
			return false, "", err
		}
		_, _, m := condition(u, "Synced")
		s, err := get(ctx, e.c, gvkService, demoNS, svc.GetName())
		if err != nil {
			return false, m, err
		}
		c := metav1.GetControllerOf(s)
		return c != nil && c.Name == xr && !strings.Contains(m, resName), fmt.Sprintf("controller %v, Synced: %s", c, m), nil
	})
}

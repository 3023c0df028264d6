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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The CRD a platform on Flux older than v2.7.0 lacks (source-controller
// v1.7.0 first ships it), and the APIService of its group/version, which
// HelmRepository, HelmChart and OCIRepository keep served.
const (
	externalArtifactCRD = "externalartifacts.source.toolkit.fluxcd.io"
	sourceAPIService    = "v1.source.toolkit.fluxcd.io"
	// lacksMessage is the group/version, kind and release the Fatal names.
	lacksMessage = "source.toolkit.fluxcd.io/v1 ExternalArtifact (Flux v2.7.0)"
)

var gvkExternalArtifact = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "ExternalArtifact"}

// resourceRefs are the XR's composed resources as "apiVersion kind
// ns/name", sorted: spec.crossplane.resourceRefs, or spec.resourceRefs
// for a claim's XR (legacy scope).
func resourceRefs(u *unstructured.Unstructured) []string {
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if len(refs) == 0 {
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		m, _ := r.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v %v/%v", m["apiVersion"], m["kind"], m["namespace"], m["name"]))
	}
	sort.Strings(out)
	return out
}

// recreatable is a saved object without what the API server sets.
func recreatable(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "status")
	return c
}

// platformLacksAPI deletes the ExternalArtifact CRD under the converged
// demo claim: the control-plane function's one Fatal names the kind and
// its release, the XR keeps every composed resource, none is deleted, and
// kube-apiserver keeps the APIService of source.toolkit.fluxcd.io/v1.
// The CRD back, the XR and the claim are Synced again.
func (e *env) platformLacksAPI(t *testing.T) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	xrName, err := e.xrName(ctx, demoNS, demo)
	e.must(t, err, "XR of the demo claim")
	xr, err := get(ctx, e.c, gvkXR, "", xrName)
	e.must(t, err, "XR "+xrName)
	refsBefore := resourceRefs(xr)
	if len(refsBefore) == 0 {
		fatalf(t, "XR %s has no resourceRefs", xrName)
	}
	before := e.snapshot(t, demo)
	crd, err := get(ctx, e.c, gvkCRD, "", externalArtifactCRD)
	e.must(t, err, "CRD "+externalArtifactCRD)
	apiSvc, err := get(ctx, e.c, gvkAPIService, "", sourceAPIService)
	e.must(t, err, "APIService "+sourceAPIService)
	// Deleting a CRD deletes its objects: save them to re-create.
	artifacts, err := list(ctx, e.c, gvkExternalArtifact)
	e.must(t, err, "list ExternalArtifacts")
	t.Logf("%d composed resources, %d composed objects labelled, %d ExternalArtifacts saved", len(refsBefore), len(before), len(artifacts))

	// apiServiceKept fails unless the APIService is the one of before.
	apiServiceKept := func(ctx context.Context) error {
		a, err := get(ctx, e.c, gvkAPIService, "", sourceAPIService)
		if kerrors.IsNotFound(err) {
			return fmt.Errorf("kube-apiserver removed APIService %s (HelmRepository, HelmChart, OCIRepository still serve it)", sourceAPIService)
		} else if err != nil {
			return err
		}
		if a.GetUID() != apiSvc.GetUID() {
			return fmt.Errorf("APIService %s re-created: UID %s -> %s", sourceAPIService, apiSvc.GetUID(), a.GetUID())
		}
		return nil
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		ctx, cancel := ctxT(time.Minute)
		defer cancel()
		err := poll(time.Minute, func(ctx context.Context) (bool, string, error) {
			_, err := get(ctx, e.c, gvkCRD, "", externalArtifactCRD)
			if err == nil {
				return true, "", nil
			} else if !kerrors.IsNotFound(err) {
				return false, "", err
			}
			if err := e.c.Create(ctx, recreatable(crd)); err != nil && !kerrors.IsAlreadyExists(err) {
				return false, "create CRD: " + err.Error(), nil
			}
			return false, "CRD created", nil
		})
		e.must(t, err, "re-create CRD "+externalArtifactCRD)
		e.must(t, e.waitEstablished(time.Minute, externalArtifactCRD), "CRD "+externalArtifactCRD+" Established")
		for i := range artifacts {
			e.must(t, e.c.Create(ctx, recreatable(&artifacts[i])), "re-create "+describe(&artifacts[i]))
		}
	}
	t.Cleanup(restore) // the later scenarios need the CRD

	start := time.Now()
	e.must(t, e.c.Delete(ctx, crd), "delete CRD "+externalArtifactCRD)
	waitFor(t, time.Minute, "CRD "+externalArtifactCRD+" gone", func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, e.c, gvkCRD, "", externalArtifactCRD)
		if kerrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, fmt.Sprint("CRD still there: ", err), nil
	})
	// Crossplane watches required resources (realtime compositions): no
	// nudge; the deletion alone reconciles the XR.
	var xrMsg string
	waitFor(t, 2*time.Minute, "XR Synced=False naming "+lacksMessage, func(ctx context.Context) (bool, string, error) {
		if err := apiServiceKept(ctx); err != nil {
			return false, "", err
		}
		u, err := get(ctx, e.c, gvkXR, "", xrName)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(u, "Synced")
		if s != "False" || !strings.Contains(m, lacksMessage) {
			return false, fmt.Sprintf("XR Synced=%s %s %q", s, r, m), nil
		}
		xrMsg = m
		return true, "", nil
	})
	took := time.Since(start)
	t.Logf("XR Synced=False %.1fs after the CRD deletion: %s", took.Seconds(), xrMsg)
	// Crossplane v2.4 keeps a claim's Synced its own (the claim's
	// reconcile) and copies no XR message to it: logged, not asserted.
	ctxC, cancelC := ctxT(30 * time.Second)
	defer cancelC()
	if cl, err := get(ctxC, e.c, gvkClaim, demoNS, demo); err == nil {
		cs, cr, cm := condition(cl, "Synced")
		t.Logf("claim meanwhile Synced=%s %s %q", cs, cr, cm)
	}
	report("platform lacks an API: Synced=False %.1fs after the ExternalArtifact CRD was deleted", took.Seconds())
	// One API missing: the message names no group/version as absent.
	if strings.Contains(xrMsg, "no APIService") {
		errorf(t, "XR message names a missing APIService, want only the ExternalArtifact kind: %s", xrMsg)
	}

	// Two more pipelines run on the Fatal: still nothing touched.
	e.reconciles(t, "control-plane", 2, time.Minute)
	ctx2, cancel2 := ctxT(time.Minute)
	defer cancel2()
	e.must(t, apiServiceKept(ctx2), "APIService "+sourceAPIService)
	xr, err = get(ctx2, e.c, gvkXR, "", xrName)
	e.must(t, err, "XR "+xrName)
	if refs := resourceRefs(xr); strings.Join(refs, "\n") != strings.Join(refsBefore, "\n") {
		errorf(t, "XR resourceRefs changed on the Fatal: %d -> %d\n  before: %v\n  after: %v", len(refsBefore), len(refs), refsBefore, refs)
	}
	objs, err := e.composed(ctx2, demo)
	e.must(t, err, "composed objects of "+demo)
	for i := range objs {
		if ts := objs[i].GetDeletionTimestamp(); ts != nil {
			errorf(t, "%s has deletionTimestamp %s on the Fatal", describe(&objs[i]), ts)
		}
	}
	e.compare(t, "while the platform lacks ExternalArtifact", before, e.snapshot(t, demo), false)

	start = time.Now()
	restore()
	waitFor(t, 2*time.Minute, "XR and claim Synced=True with the CRD back", func(ctx context.Context) (bool, string, error) {
		u, err := get(ctx, e.c, gvkXR, "", xrName)
		if err != nil {
			return false, "", err
		}
		if s, r, m := condition(u, "Synced"); s != "True" {
			return false, fmt.Sprintf("XR Synced=%s %s %q", s, r, m), nil
		}
		cl, err := get(ctx, e.c, gvkClaim, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(cl, "Synced")
		return s == "True", fmt.Sprintf("claim Synced=%s %s %q", s, r, m), nil
	})
	t.Logf("XR and claim Synced=True %.1fs after the CRD was re-created", time.Since(start).Seconds())
	e.must(t, apiServiceKept(ctx2), "APIService "+sourceAPIService)
	e.compare(t, "after the ExternalArtifact CRD came back", before, e.snapshot(t, demo), false)
}

package main

import (
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
)

// The DataVolumes of the KubeVirt CSI driver and the Services of the
// KubeVirt cloud controller, labelled with the cluster, are composed so that
// Crossplane deletes them with the cluster (SPEC §7); the kinds come from
// the input, DataVolume and Service by default.
func TestTenantCreatedObjectsAreComposedForCleanup(t *testing.T) {
	labelled := func(apiVersion, kind, name string) *fnv1.Resource {
		return &fnv1.Resource{Resource: mustStruct(t, "apiVersion: "+apiVersion+"\nkind: "+kind+
			"\nmetadata: {name: "+name+", namespace: "+testNS+", labels: {tenantkube.io/cluster: "+testN+"}}")}
	}
	req := newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t))
	setRequired(req, "cleanup-datavolume.cdi.kubevirt.io", labelled("cdi.kubevirt.io/v1beta1", "DataVolume", "pvc-0d1e"))
	setRequired(req, "cleanup-service", labelled("v1", "Service", "a1b2c3"))
	rsp := run(t, req)
	mustNoFatal(t, rsp)

	var keys []string
	for k, sel := range rsp.GetRequirements().GetResources() {
		if strings.HasPrefix(k, "cleanup-") {
			keys = append(keys, k+" "+sel.GetApiVersion()+" "+sel.GetKind()+" "+sel.GetNamespace())
		}
	}
	sort.Strings(keys)
	if d := cmp.Diff([]string{
		"cleanup-datavolume.cdi.kubevirt.io cdi.kubevirt.io/v1beta1 DataVolume " + testNS,
		"cleanup-service v1 Service " + testNS,
	}, keys); d != "" {
		t.Errorf("requirements (-want +got):\n%s", d)
	}
	for name, want := range map[string]map[string]any{
		"cleanup-datavolume-pvc-0d1e": {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "pvc-0d1e", "namespace": testNS}},
		"cleanup-service-a1b2c3":      {"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a1b2c3", "namespace": testNS}},
	} {
		if d := cmp.Diff(want, rsp.GetDesired().GetResources()[name].GetResource().AsMap()); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}

	// cleanupKinds: [] composes nothing and asks for nothing.
	req = newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t),
		withInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncleanupKinds: []")))
	setRequired(req, "cleanup-service", labelled("v1", "Service", "a1b2c3"))
	rsp = run(t, req)
	mustNoFatal(t, rsp)
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, "cleanup-") {
			t.Errorf("cleanupKinds []: %s composed", n)
		}
	}

	rsp = run(t, newRequest(t, `{}`, withInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncleanupKinds: [{apiVersion: v1}]"))))
	var msg string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			msg = r.GetMessage()
		}
	}
	if !strings.Contains(msg, "input.cleanupKinds[0].kind") {
		t.Errorf("a kind without a name: Fatal %q", msg)
	}
}

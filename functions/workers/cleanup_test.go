package main

import (
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// The DataVolumes of the KubeVirt CSI driver and the Services of the
// KubeVirt cloud controller, labelled with the cluster, are composed so that
// Crossplane deletes them with the cluster; the kinds come from
// the input, DataVolume and Service by default.
func TestTenantCreatedObjectsAreComposedForCleanup(t *testing.T) {
	labelled := func(apiVersion, kind, name string) *structpb.Struct {
		return mustStruct(t, "apiVersion: "+apiVersion+"\nkind: "+kind+
			"\nmetadata: {name: "+name+", namespace: "+testNS+", labels: {tenantkube.io/cluster: "+testN+"}}")
	}
	req := newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t))
	fntest.WithRequired("cleanup-datavolume.cdi.kubevirt.io", labelled("cdi.kubevirt.io/v1beta1", "DataVolume", "pvc-0d1e"))(req)
	fntest.WithRequired("cleanup-service", labelled("v1", "Service", "a1b2c3"))(req)
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

	// cleanupKinds: [] adopts nothing new, but what was composed earlier
	// stays until its creator deletes it: dropping it would delete a
	// tenant's volume.
	req = newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t),
		fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncleanupKinds: []")),
		fntest.WithObserved(map[string]*structpb.Struct{"cleanup-datavolume-pvc-0d1e": labelled("cdi.kubevirt.io/v1beta1", "DataVolume", "pvc-0d1e")}))
	fntest.WithRequired("cleanup-service", labelled("v1", "Service", "a1b2c3"))(req)
	rsp = run(t, req)
	mustNoFatal(t, rsp)
	var composed []string
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, "cleanup-") {
			composed = append(composed, n)
		}
	}
	if d := cmp.Diff([]string{"cleanup-datavolume-pvc-0d1e"}, composed); d != "" {
		t.Errorf("cleanupKinds []: composed (-want +got):\n%s", d)
	}

	// Beyond maxCleanupObjects per kind, objects are not composed and a
	// Warning says how many.
	req = newRequest(t, `nodeGroups: {md0: {instanceType: u1.large}}`, withInstancetypes(t, "u1.large"), withMachineSets(t),
		fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\nmaxCleanupObjects: 1")))
	fntest.WithRequired("cleanup-service", labelled("v1", "Service", "a"), labelled("v1", "Service", "b"), labelled("v1", "Service", "c"))(req)
	rsp = run(t, req)
	mustNoFatal(t, rsp)
	if _, ok := rsp.GetDesired().GetResources()["cleanup-service-a"]; !ok {
		t.Error("the first Service was not composed")
	}
	if _, ok := rsp.GetDesired().GetResources()["cleanup-service-b"]; ok {
		t.Error("a Service beyond maxCleanupObjects was composed")
	}
	var warned bool
	for _, r := range rsp.GetResults() {
		warned = warned || (r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && strings.HasPrefix(r.GetMessage(), "2 more Service objects"))
	}
	if !warned {
		t.Errorf("no Warning about the 2 Services left out: %v", rsp.GetResults())
	}

	rsp = run(t, newRequest(t, `{}`, fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncleanupKinds: [{apiVersion: v1}]"))))
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

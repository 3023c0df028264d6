package main

import (
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// secret is a Secret in tenant-demo with the cluster's labels, as
// cert-manager writes it from a Certificate's secretTemplate.
func secret(t *testing.T, name string) *fnv1.Resource {
	return &fnv1.Resource{Resource: mustStruct(t, map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{
			"name": name, "namespace": "tenant-demo",
			"labels": map[string]any{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"},
		},
		"data": map[string]any{"tls.crt": "eA==", "tls.key": "eA=="},
	})}
}

// The etcd PKI Secrets cert-manager wrote are composed (metadata only) so
// that Crossplane deletes them with the cluster, each kept by a Usage until
// the KamajiControlPlane is gone; other labelled Secrets are left alone.
func TestPKISecretsAreComposedAndOutliveControlPlane(t *testing.T) {
	req := newRequest(t, `{}`, "")
	req.RequiredResources = map[string]*fnv1.Resources{"cleanup-secret": {Items: []*fnv1.Resource{
		secret(t, "demo-etcd-ca"), secret(t, "demo-etcd-client-tls"), secret(t, "someone-elses"),
	}}}
	rsp := run(t, req)
	if m := fatal(rsp); m != "" {
		t.Fatal(m)
	}
	sel := rsp.GetRequirements().GetResources()["cleanup-secret"]
	if sel.GetKind() != "Secret" || sel.GetNamespace() != "tenant-demo" ||
		!cmp.Equal(sel.GetMatchLabels().GetLabels(), map[string]string{"tenantkube.io/cluster": "demo"}) {
		t.Errorf("requirement %v", sel)
	}
	var composed []string
	for name := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(name, "cleanup-") || strings.HasPrefix(name, "usage-secret-") {
			composed = append(composed, name)
		}
	}
	sort.Strings(composed)
	want := []string{
		"cleanup-secret-demo-etcd-ca", "cleanup-secret-demo-etcd-client-tls",
		"usage-secret-by-kamajicontrolplane-demo-etcd-ca", "usage-secret-by-kamajicontrolplane-demo-etcd-client-tls",
	}
	if d := cmp.Diff(want, composed); d != "" {
		t.Errorf("composed (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "demo-etcd-ca", "namespace": "tenant-demo"},
	}, desired(t, rsp, "cleanup-secret-demo-etcd-ca")); d != "" {
		t.Errorf("composed Secret (-want +got):\n%s", d)
	}
	u := desired(t, rsp, "usage-secret-by-kamajicontrolplane-demo-etcd-ca")
	if d := cmp.Diff(map[string]any{
		"of":             map[string]any{"apiVersion": "v1", "kind": "Secret", "resourceRef": map[string]any{"name": "demo-etcd-ca"}},
		"by":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
		"reason":         "Kamaji reaches etcd with this certificate to delete the tenant's keys when its control plane is deleted",
		"replayDeletion": true,
	}, u["spec"]); d != "" {
		t.Errorf("Usage spec (-want +got):\n%s", d)
	}
	if got := get(u, "metadata", "name"); got != "demo-etcd-ca-used-by-control-plane" {
		t.Errorf("Usage name %v", got)
	}

	// Every Certificate asks cert-manager to label its Secret with the
	// cluster, which is how the function finds it.
	for name := range rsp.GetDesired().GetResources() {
		obj := desired(t, rsp, name)
		if obj["kind"] != "Certificate" {
			continue
		}
		if d := cmp.Diff(map[string]any{"labels": map[string]any{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"}},
			get(obj, "spec", "secretTemplate")); d != "" {
			t.Errorf("%s secretTemplate (-want +got):\n%s", name, d)
		}
	}

	// A Secret its Certificate owns (cert-manager's
	// --enable-certificate-owner-ref) is not composed — its Certificate is
	// its owner — but is still kept by a Usage until the control plane is
	// gone.
	owned := secret(t, "demo-etcd-peer-tls")
	owned.Resource.Fields["metadata"].GetStructValue().Fields["ownerReferences"] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
		structpb.NewStructValue(mustStruct(t, map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "demo-etcd-peer-tls", "uid": "c1", "controller": true})),
	}})
	req = newRequest(t, `{}`, "")
	req.RequiredResources = map[string]*fnv1.Resources{"cleanup-secret": {Items: []*fnv1.Resource{owned}}}
	got := run(t, req).GetDesired().GetResources()
	if _, ok := got["cleanup-secret-demo-etcd-peer-tls"]; ok {
		t.Error("a Secret its Certificate controls was composed")
	}
	if _, ok := got["usage-secret-by-kamajicontrolplane-demo-etcd-peer-tls"]; !ok {
		t.Error("no Usage for a Secret its Certificate controls")
	}

	// The etcd members' claims (StatefulSet claims data-<N-etcd>-<i>,
	// labelled from the EtcdCluster's claim template) are composed too.
	req = newRequest(t, `{}`, "")
	req.RequiredResources = map[string]*fnv1.Resources{"cleanup-persistentvolumeclaim": {Items: []*fnv1.Resource{
		{Resource: mustStruct(t, map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{
			"name": "data-demo-etcd-0", "namespace": "tenant-demo", "labels": map[string]any{"tenantkube.io/cluster": "demo"}}})},
		{Resource: mustStruct(t, map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{
			"name": "unrelated", "namespace": "tenant-demo", "labels": map[string]any{"tenantkube.io/cluster": "demo"}}})},
	}}}
	rsp = run(t, req)
	if _, ok := rsp.GetDesired().GetResources()["cleanup-persistentvolumeclaim-data-demo-etcd-0"]; !ok {
		t.Error("etcd member claim not composed")
	}
	if _, ok := rsp.GetDesired().GetResources()["cleanup-persistentvolumeclaim-unrelated"]; ok {
		t.Error("an unrelated claim was composed")
	}
	if d := cmp.Diff(map[string]any{"labels": map[string]any{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"}},
		get(desired(t, rsp, "etcdcluster"), "spec", "storage", "volumeClaimTemplate", "metadata")); d != "" {
		t.Errorf("EtcdCluster claim template metadata (-want +got):\n%s", d)
	}

	// A shared DataStore has no PKI of ours: nothing is composed.
	req = newRequest(t, `{}`, `{dataStoreName: shared}`)
	req.RequiredResources = map[string]*fnv1.Resources{"cleanup-secret": {Items: []*fnv1.Resource{secret(t, "demo-etcd-ca")}}}
	for name := range run(t, req).GetDesired().GetResources() {
		if strings.HasPrefix(name, "cleanup-") {
			t.Errorf("shared DataStore: %s composed", name)
		}
	}
	// deletionOrder None: composed for deletion, without Usages.
	req = newRequest(t, `{}`, `{deletionOrder: None}`)
	req.RequiredResources = map[string]*fnv1.Resources{"cleanup-secret": {Items: []*fnv1.Resource{secret(t, "demo-etcd-ca")}}}
	got = run(t, req).GetDesired().GetResources()
	if _, ok := got["cleanup-secret-demo-etcd-ca"]; !ok {
		t.Error("deletionOrder None: PKI Secret not composed")
	}
	for name := range got {
		if strings.HasPrefix(name, "usage-") {
			t.Errorf("deletionOrder None: %s emitted", name)
		}
	}
}

// Usages are ready once Crossplane reports them Ready (in effect), not
// merely once they exist.
func TestUsageReadyFromItsReadyCondition(t *testing.T) {
	req := newRequest(t, `{}`, "")
	req.Observed.Resources = map[string]*fnv1.Resource{
		"usage-etcdcluster-by-kamajicontrolplane": {Resource: mustStruct(t, map[string]any{
			"apiVersion": "protection.crossplane.io/v1beta1", "kind": "Usage",
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available"}}},
		})},
		"usage-kamajicontrolplane-by-nodegroup-md0": {Resource: mustStruct(t, map[string]any{
			"apiVersion": "protection.crossplane.io/v1beta1", "kind": "Usage",
		})},
	}
	rsp := run(t, req)
	for name, want := range map[string]fnv1.Ready{
		"usage-etcdcluster-by-kamajicontrolplane":   fnv1.Ready_READY_TRUE,
		"usage-kamajicontrolplane-by-nodegroup-md0": fnv1.Ready_READY_FALSE,
	} {
		if got := rsp.GetDesired().GetResources()[name].GetReady(); got != want {
			t.Errorf("%s ready %v, want %v", name, got, want)
		}
	}
}

package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// pkiSecret is a Secret in tenant-demo with the cluster's labels, as
// cert-manager writes it from a Certificate's secretTemplate; owner, when
// not "", is the Certificate controlling it.
func pkiSecret(name, owner string) string {
	refs := ""
	if owner != "" {
		refs = `, ownerReferences: [{apiVersion: cert-manager.io/v1, kind: Certificate, name: ` + owner + `, uid: c1, controller: true}]`
	}
	return `{apiVersion: v1, kind: Secret, type: kubernetes.io/tls,
		metadata: {name: ` + name + `, namespace: tenant-demo, labels: {tenantkube.io/cluster: demo, app.kubernetes.io/managed-by: tenantkube}` + refs + `},
		data: {tls.crt: eA==, tls.key: eA==}}`
}

// claim is a PersistentVolumeClaim in tenant-demo with the cluster's label.
func claim(name string) string {
	return `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: ` + name + `, namespace: tenant-demo, labels: {tenantkube.io/cluster: demo}}}`
}

// cleanupNames are the composed resources of rsp that clean up after etcd.
func cleanupNames(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, name := range fntest.DesiredNames(rsp) {
		if strings.HasPrefix(name, "cleanup-") || strings.HasPrefix(name, "usage-secret-") {
			out = append(out, name)
		}
	}
	return out
}

// TestEtcdLeftovers: the etcd PKI Secrets cert-manager wrote and the etcd
// members' claims are composed (metadata only) so that Crossplane deletes
// them with the cluster, each PKI Secret kept by a Usage until the
// KamajiControlPlane is gone; other labelled objects are left alone.
func TestEtcdLeftovers(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   fntest.Call
		want   []string
	}{
		"PKISecrets": {
			reason: "Two PKI Secrets composed, each with its Usage; someone else's Secret is not.",
			args: fntest.Call{Spec: `{}`, Required: map[string][]string{"cleanup-secret": {
				pkiSecret("demo-etcd-ca", ""), pkiSecret("demo-etcd-client-tls", ""), pkiSecret("someone-elses", "")}}},
			want: []string{"cleanup-secret-demo-etcd-ca", "cleanup-secret-demo-etcd-client-tls",
				"usage-secret-by-kamajicontrolplane-demo-etcd-ca", "usage-secret-by-kamajicontrolplane-demo-etcd-client-tls"},
		},
		"SecretACertificateOwns": {
			reason: "A Secret its Certificate controls (cert-manager's --enable-certificate-owner-ref) is its owner's to delete, but is still kept by a Usage until the control plane is gone.",
			args: fntest.Call{Spec: `{}`, Required: map[string][]string{"cleanup-secret": {
				pkiSecret("demo-etcd-peer-tls", "demo-etcd-peer-tls")}}},
			want: []string{"usage-secret-by-kamajicontrolplane-demo-etcd-peer-tls"},
		},
		"MemberClaims": {
			reason: "A StatefulSet claim data-<N-etcd>-<i> is composed; an unrelated labelled claim is not.",
			args: fntest.Call{Spec: `{}`, Required: map[string][]string{"cleanup-persistentvolumeclaim": {
				claim("data-demo-etcd-0"), claim("unrelated")}}},
			want: []string{"cleanup-persistentvolumeclaim-data-demo-etcd-0"},
		},
		"SharedDataStore": {
			reason: "A shared DataStore has no PKI of ours: nothing is composed.",
			args: fntest.Call{Spec: `{}`, Input: `{dataStoreName: shared}`, Required: map[string][]string{"cleanup-secret": {
				pkiSecret("demo-etcd-ca", "")}}},
		},
		"DeletionOrderNone": {
			reason: "Composed for deletion, without Usages.",
			args: fntest.Call{Spec: `{}`, Input: `{deletionOrder: None}`, Required: map[string][]string{"cleanup-secret": {
				pkiSecret("demo-etcd-ca", "")}}},
			want: []string{"cleanup-secret-demo-etcd-ca"},
		},
		"ComposedEarlier": {
			reason: "An object composed for cleanup in an earlier call stays, also before the required resources arrive.",
			args: fntest.Call{Spec: `{}`, Observed: map[string]string{
				"cleanup-secret-demo-etcd-ca": `{apiVersion: v1, kind: Secret, type: kubernetes.io/tls, metadata: {name: demo-etcd-ca, namespace: tenant-demo}}`}},
			want: []string{"cleanup-secret-demo-etcd-ca", "usage-secret-by-kamajicontrolplane-demo-etcd-ca"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := tc.args.Run(t, fn)
			fntest.NoFatal(t, rsp)
			if diff := cmp.Diff(tc.want, cleanupNames(rsp)); diff != "" {
				t.Errorf("\n%s\n-want composed, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEtcdLeftoverObjects: what is composed for a PKI Secret, and the
// labels that let the function find the leftovers.
func TestEtcdLeftoverObjects(t *testing.T) {
	rsp := fntest.Call{Spec: `{}`, Required: map[string][]string{"cleanup-secret": {pkiSecret("demo-etcd-ca", "")}}}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	sel := rsp.GetRequirements().GetResources()["cleanup-secret"]
	if sel.GetKind() != "Secret" || sel.GetNamespace() != "tenant-demo" ||
		!cmp.Equal(sel.GetMatchLabels().GetLabels(), map[string]string{"tenantkube.io/cluster": "demo"}) {
		t.Errorf("requirement %v", sel)
	}
	if d := cmp.Diff(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "demo-etcd-ca", "namespace": "tenant-demo"},
	}, fntest.DesiredObject(t, rsp, "cleanup-secret-demo-etcd-ca")); d != "" {
		t.Errorf("composed Secret (-want +got):\n%s", d)
	}
	u := fntest.DesiredObject(t, rsp, "usage-secret-by-kamajicontrolplane-demo-etcd-ca")
	if d := cmp.Diff(map[string]any{
		"of":             map[string]any{"apiVersion": "v1", "kind": "Secret", "resourceRef": map[string]any{"name": "demo-etcd-ca"}},
		"by":             map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2", "kind": "KamajiControlPlane", "resourceRef": map[string]any{"name": "demo"}},
		"reason":         "Kamaji reaches etcd with this certificate to delete the tenant's keys when its control plane is deleted",
		"replayDeletion": true,
	}, u["spec"]); d != "" {
		t.Errorf("Usage spec (-want +got):\n%s", d)
	}
	if got := fntest.Get(u, "metadata", "name"); got != "demo-etcd-ca-used-by-control-plane" {
		t.Errorf("Usage name %v", got)
	}
	// Every Certificate asks cert-manager to label its Secret with the
	// cluster, and the claim template labels the members' claims: that is
	// how the function finds them.
	labels := map[string]any{"labels": map[string]any{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"}}
	for _, name := range fntest.DesiredNames(rsp) {
		if obj := fntest.DesiredObject(t, rsp, name); obj["kind"] == "Certificate" {
			if d := cmp.Diff(labels, fntest.Get(obj, "spec", "secretTemplate")); d != "" {
				t.Errorf("%s secretTemplate (-want +got):\n%s", name, d)
			}
		}
	}
	if d := cmp.Diff(labels, fntest.Get(fntest.DesiredObject(t, rsp, "etcdcluster"), "spec", "storage", "volumeClaimTemplate", "metadata")); d != "" {
		t.Errorf("EtcdCluster claim template metadata (-want +got):\n%s", d)
	}
}

// Usages are ready once Crossplane reports them Ready (in effect), not
// merely once they exist.
func TestPKISecretUsageReadyFromItsReadyCondition(t *testing.T) {
	rsp := fntest.Call{Spec: `{}`,
		Required: map[string][]string{"cleanup-secret": {pkiSecret("demo-etcd-ca", ""), pkiSecret("demo-etcd-peer-tls", "")}},
		Observed: map[string]string{"usage-secret-by-kamajicontrolplane-demo-etcd-ca": `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage,
			status: {conditions: [{type: Ready, status: "True", reason: Available}]}}`},
	}.Run(t, fn)
	got := map[string]fnv1.Ready{}
	for _, name := range []string{"usage-secret-by-kamajicontrolplane-demo-etcd-ca", "usage-secret-by-kamajicontrolplane-demo-etcd-peer-tls"} {
		got[name] = rsp.GetDesired().GetResources()[name].GetReady()
	}
	if d := cmp.Diff(map[string]fnv1.Ready{
		"usage-secret-by-kamajicontrolplane-demo-etcd-ca":       fnv1.Ready_READY_TRUE,
		"usage-secret-by-kamajicontrolplane-demo-etcd-peer-tls": fnv1.Ready_READY_FALSE,
	}, got); d != "" {
		t.Errorf("readiness (-want +got):\n%s", d)
	}
}

package render

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/claim"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func loadXRD(t *testing.T) *xpv1.CompositeResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile("../../package/xrd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(raw, xrd); err != nil {
		t.Fatal(err)
	}
	return xrd
}

func claimOf(t *testing.T, doc string) *claim.Unstructured {
	t.Helper()
	cm := claim.New()
	if err := yaml.Unmarshal([]byte(doc), &cm.Object); err != nil {
		t.Fatal(err)
	}
	return cm
}

// The XR of a claim as Crossplane v2.4's server-side apply syncer makes
// it (internal/controller/apiextensions/claim/syncer_ssa.go:73-164), worked
// out by hand: the claim's own spec fields (writeConnectionSecretToRef,
// compositeDeletePolicy, resourceRef) and the XR machinery (resourceRefs,
// claimRef) stripped, compositionRef propagated, reserved label and
// annotation prefixes dropped.
func TestClaimToXR(t *testing.T) {
	cm := claimOf(t, `
apiVersion: tenantkube.io/v1alpha1
kind: KubernetesCluster
metadata:
  name: demo
  namespace: tenant-demo
  labels:
    team: blue
    app.kubernetes.io/name: demo
    example.k8s.io/x: "y"
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    note: kept
spec:
  version: v1.35
  writeConnectionSecretToRef: {name: demo-kubeconfig}
  compositeDeletePolicy: Foreground
  compositionRef: {name: xkubernetesclusters.tenantkube.io}
  resourceRefs: [{apiVersion: v1, kind: Secret, name: stolen}]
  claimRef: {apiVersion: v1, kind: Secret, name: x, namespace: y}
`)
	xr, err := ClaimToXR(cm, loadXRD(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := xr.GetAPIVersion()+" "+xr.GetKind(), "tenantkube.io/v1alpha1 XKubernetesCluster"; got != want {
		t.Errorf("XR is %s, want %s", got, want)
	}
	name := xr.GetName()
	if !strings.HasPrefix(name, "demo-") || len(name) != len("demo-")+5 || strings.Trim(name[5:], alphanums) != "" {
		t.Errorf("name %q: want demo- and five of %s", name, alphanums)
	}
	wantLabels := map[string]string{"team": "blue", "crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "tenant-demo", "crossplane.io/composite": name}
	if got := xr.GetLabels(); !reflect.DeepEqual(got, wantLabels) {
		t.Errorf("labels %v, want %v", got, wantLabels)
	}
	if got, want := xr.GetAnnotations(), map[string]string{"note": "kept"}; !reflect.DeepEqual(got, want) {
		t.Errorf("annotations %v, want %v", got, want)
	}
	wantSpec := map[string]any{
		"version":        "v1.35",
		"compositionRef": map[string]any{"name": "xkubernetesclusters.tenantkube.io"},
		"claimRef":       map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster", "name": "demo", "namespace": "tenant-demo"},
	}
	if got := xr.Object["spec"]; !reflect.DeepEqual(got, wantSpec) {
		t.Errorf("spec %v, want %v", got, wantSpec)
	}
	if xr.GetNamespace() != "" {
		t.Errorf("the XR is cluster-scoped, got namespace %q", xr.GetNamespace())
	}

	again, err := ClaimToXR(cm, loadXRD(t))
	if err != nil || again.GetName() != name {
		t.Errorf("a second conversion named the XR %q (err %v), want %q", again.GetName(), err, name)
	}

	// A claim bound to its XR keeps that XR's name.
	bound := claimOf(t, "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-demo}\nspec:\n  resourceRef: {apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, name: demo-x7k2p}\n")
	xr, err = ClaimToXR(bound, loadXRD(t))
	if err != nil {
		t.Fatal(err)
	}
	if xr.GetName() != "demo-x7k2p" || xr.GetLabels()["crossplane.io/composite"] != "demo-x7k2p" {
		t.Errorf("bound claim: XR %q labelled %v, want demo-x7k2p", xr.GetName(), xr.GetLabels())
	}
	if _, ok := xr.Object["spec"].(map[string]any)["resourceRef"]; ok {
		t.Error("spec.resourceRef copied to the XR")
	}

	for _, bad := range []string{
		"apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo}\n",
		"apiVersion: example.org/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-demo}\n",
	} {
		if _, err := ClaimToXR(claimOf(t, bad), loadXRD(t)); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}

// A file of another kind or apiVersion names what render takes.
func TestClaimAsXRKinds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct{ name, doc string }{
		{"kind.yaml", "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesClusterr\nmetadata: {name: demo}\n"},
		{"version.yaml", "apiVersion: tenantkube.io/v1beta1\nkind: KubernetesCluster\nmetadata: {name: demo}\n"},
		{"group.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Kubernetes\nmetadata: {name: demo}\n"},
	} {
		o := &Options{XR: write(c.name, c.doc), XRD: "../../package/xrd.yaml"}
		_, err := o.claimAsXR(true)
		var ke *KindError
		if !errors.As(err, &ke) {
			t.Fatalf("%s: want a KindError, got %v", c.name, err)
		}
		for _, w := range []string{"tenantkube.io/v1alpha1", "XKubernetesCluster", "KubernetesCluster", "TenantCluster", "Tenant", c.name} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not name %s", c.name, err, w)
			}
		}
	}

	o := &Options{XR: write("claim.yaml", "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-demo}\nspec: {version: v1.35}\n"), XRD: "../../package/xrd.yaml"}
	done, err := o.claimAsXR(true)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(o.XR)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if !strings.Contains(string(raw), "kind: XKubernetesCluster\n") || !strings.Contains(string(raw), "crossplane.io/claim-namespace: tenant-demo\n") {
		t.Errorf("converted file:\n%s", raw)
	}
	if _, err := os.Stat(o.XR); !os.IsNotExist(err) {
		t.Errorf("done left %s behind (%v)", o.XR, err)
	}

	// A claim the API server would reject is named as written.
	bad := write("bad.yaml", "apiVersion: tenantkube.io/v1alpha1\nkind: KubernetesCluster\nmetadata: {name: demo, namespace: tenant-demo}\nspec: {foo: 1}\n")
	o = &Options{XR: bad, XRD: "../../package/xrd.yaml"}
	_, err = o.claimAsXR(true)
	var xe *XRError
	if !errors.As(err, &xe) || xe.File != bad || xe.Kind != "KubernetesCluster" || len(xe.Errs) != 1 || xe.Errs[0].Field != "spec.foo" {
		t.Errorf("bad claim: got %v, want an XRError of %s naming spec.foo", err, bad)
	}
}

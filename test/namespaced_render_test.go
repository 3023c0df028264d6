package test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/render"
)

const namespacedTestdata = "testdata/namespaced"

// TestNamespacedRender renders the namespaced TenantCluster
// through the real Crossplane engine and its own Composition and XRD
// (package/composition-namespaced.yaml, package/xrd-namespaced.yaml, picked
// by the XR's kind as `make render` does), and compares with golden files:
// the example with its tenant's DataStore, the example before the DataStore
// exists (waiting conditions; only the CAPI Cluster and KubevirtCluster),
// a spec.namespace naming another namespace (Fatal, as for a claim), and a
// TenantCluster created after the claim of its name (Fatal naming
// metadata.name and the claim). Then "scopes" renders
// every case of TestPipelineRender without observed state through both
// APIs from one list (pipelineCases) and holds the differences to the list
// the scope must change; a Fatal case must name the same field and value
// through both.
func TestNamespacedRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	validator := sharedValidator(t)
	example := func(p string) string { return filepath.Join(root, "examples", p) }
	// admitted skips the XRD's schema check (pipelineCase.admitted).
	renderXR := func(xr string, required []string, admitted bool) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return render.Render(ctx, render.Options{Root: root, XR: xr, Required: required, BinDir: binDir, Stderr: &bytes.Buffer{},
			SkipXRValidation: admitted})
	}

	cases := []struct {
		name, xr string
		required []string
		fatal    []string
		contains []string
	}{
		{name: "example", xr: example("xr-namespaced.yaml"), required: []string{example("instancetypes.yaml"), example("tenant-datastore.yaml")},
			contains: []string{"  dataStoreName: tenantkube.tenant.tenant-demo\n", "kubeconfigSecret: demo-admin-kubeconfig\n"}},
		{name: "waiting-for-datastore", xr: example("xr-namespaced.yaml"), required: []string{example("instancetypes.yaml")},
			contains: []string{"reason: WaitingForTenantDataStore\n"}},
		{name: "fatal-namespace", xr: filepath.Join(root, "test", namespacedTestdata, "xr-fatal-namespace.yaml"),
			fatal: []string{"step control-plane", "spec.namespace", `"tenant-other"`}},
		// Labels Crossplane copies onto every composed resource, forged
		// by the tenant, and a tenantkube.io/ label: each named.
		{name: "fatal-forged-labels", xr: filepath.Join(root, "test", namespacedTestdata, "xr-fatal-forged-labels.yaml"),
			fatal: []string{"step control-plane", `metadata.labels[crossplane.io/composite]: Invalid value: "victim-x7k2p"`,
				`metadata.labels[crossplane.io/claim-name]: Forbidden: "victim"`, `metadata.labels[crossplane.io/claim-namespace]: Forbidden: "tenant-victim"`,
				`metadata.labels[tenantkube.io/cluster]: Forbidden: "victim"`}},
		{name: "name-clash", xr: filepath.Join(root, "test", namespacedTestdata, "xr-name-clash.yaml"),
			required: []string{example("instancetypes.yaml"), example("tenant-datastore.yaml"), filepath.Join(root, "test", namespacedTestdata, "claim-name-clash.yaml")},
			fatal:    []string{"step control-plane", "metadata.name", `"demo"`, "claim KubernetesCluster tenant-demo/demo, created 2026-12-01T10:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderXR(c.xr, c.required, false)
			var got []byte
			if c.fatal != nil {
				var ce *render.CrossplaneError
				if !errors.As(err, &ce) {
					t.Fatalf("want a Fatal render error, got err=%v", err)
				}
				msg := render.Message(ce.Stderr)
				for _, w := range c.fatal {
					if !strings.Contains(msg, w) {
						t.Errorf("Fatal message does not name %s:\n%s", w, msg)
					}
				}
				got = []byte(msg + "\n")
			} else {
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if err := validator.ValidateYAMLStream(out); err != nil {
					t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
				}
				for _, w := range c.contains {
					if !bytes.Contains(out, []byte(w)) {
						t.Errorf("output does not hold %q", w)
					}
				}
				got = out
			}
			compareGolden(t, filepath.Join(namespacedTestdata, c.name+".golden.yaml"), got)
		})
	}
	t.Run("waiting-composes-only-what-is-allowed", func(t *testing.T) {
		// Before its tenant's DataStore exists the pipeline composes only
		// what needs no control plane: the control-plane step's CAPI
		// Cluster and KubevirtCluster (the example sets no spec.oidc, so
		// no authentication ConfigMap); no KamajiControlPlane and no Usage
		// of it, no node group, no controller, no add-on. Each step says
		// why in its condition.
		out, err := renderXR(example("xr-namespaced.yaml"), []string{example("instancetypes.yaml")}, false)
		if err != nil {
			t.Fatal(err)
		}
		objs := renderedObjects(t, out)
		var got []string
		for k := range objs {
			if k != "XR" {
				got = append(got, k)
			}
		}
		sort.Strings(got)
		if diff := cmp.Diff([]string{"Cluster/demo", "KubevirtCluster/demo"}, got); diff != "" {
			t.Errorf("composed objects while the tenant's DataStore does not exist: -want, +got:\n%s", diff)
		}
		status, _ := objs["XR"]["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		byType, _ := conditionsByType(conds)
		for _, typ := range []string{"ControlPlaneReady", "WorkersReady", "AddonsReady"} {
			c, _ := byType[typ].(map[string]any)
			if c["status"] != "False" || c["reason"] != "WaitingForTenantDataStore" {
				t.Errorf("condition %s = %v, want status False reason WaitingForTenantDataStore", typ, c)
			}
		}
	})

	// scopes: the same spec through the claim's XR and through a
	// TenantCluster of the claim's name and namespace. What the scope must
	// change, worked out from docs/architecture.md: a namespaced XR
	// composes nothing cluster-scoped (no DataStore, no CSI
	// ClusterRoleBinding) and uses its tenant's DataStore instead of a
	// dedicated etcd (no EtcdCluster, no etcd PKI, no Usage keeping them);
	// its control plane names that DataStore, and it waits for the control
	// plane rather than etcd. A shared DataStore of the platform settings
	// leaves only the ClusterRoleBinding. Crossplane itself reports claim
	// condition types on a legacy XR only, and its Ready message lists the
	// composed resources not ready yet, which include the dedicated etcd's.
	// The names of the dedicated etcd's objects are docs/architecture.md's as
	// the claim goldens (testdata/control-plane) hold them.
	dedicatedEtcd := func(ns, n string) []string {
		return []string{
			"Certificate/" + n + "-etcd-ca", "Certificate/" + n + "-etcd-client-tls", "Certificate/" + n + "-etcd-peer-ca",
			"Certificate/" + n + "-etcd-peer-tls", "Certificate/" + n + "-etcd-server-tls",
			"ClusterRoleBinding/tenantkube:kcsi-controller:" + ns + "." + n,
			"DataStore/" + ns + "." + n, "EtcdCluster/" + n + "-etcd",
			"Issuer/" + n + "-etcd-ca-issuer", "Issuer/" + n + "-etcd-peer-ca-issuer", "Issuer/" + n + "-etcd-selfsigned",
			"Usage/" + n + "-etcd-used-by-control-plane",
		}
	}
	changed := func(n string) []string {
		return []string{
			"KamajiControlPlane/" + n + " spec.dataStoreName",
			"XR status.claimConditionTypes",
			"XR status.conditions[ControlPlaneReady].message", "XR status.conditions[ControlPlaneReady].reason",
			"XR status.conditions[Ready].message",
		}
	}
	// The claim's controllers run in its management namespace
	// (docs/architecture.md, Names): the claim alone composes that
	// Namespace, a Usage of it by each controller's Deployment and, once
	// Kamaji's kubeconfig Secret is there, the controllers' copy of it; the
	// controllers' Deployments, ServiceAccounts and cloud-config move
	// there under composed-resource names of their own, and their
	// RoleBindings in NS name the ServiceAccounts there.
	components := []string{"cluster-autoscaler", "kccm", "kcsi-controller"}
	management := func(ns, n string, kubeconfig bool) (only, moved []string) {
		only = []string{"Namespace/" + fntest.ManagementNamespace(ns, n)}
		for _, c := range components {
			only = append(only, "Usage/"+n+"-namespace-used-by-"+c)
			moved = append(moved, "RoleBinding/"+n+"-"+c+" subjects[0].namespace")
			for _, k := range []string{"Deployment/", "ServiceAccount/"} {
				moved = append(moved, k+n+"-"+c+" metadata.namespace", k+n+"-"+c+" metadata.annotations.crossplane.io/composition-resource-name")
			}
		}
		if kubeconfig {
			only = append(only, "Secret/"+n+"-admin-kubeconfig")
		}
		return only, append(moved, "ConfigMap/"+n+"-kccm-cloud-config metadata.namespace", "ConfigMap/"+n+"-kccm-cloud-config metadata.annotations.crossplane.io/composition-resource-name")
	}
	// Every render of TestPipelineRender, through both APIs. Those with an
	// observed state are left out: it holds the claim's composed resources
	// (the dedicated etcd among them), which a TenantCluster never
	// composed. A shared DataStore leaves only the ClusterRoleBinding.
	// A Fatal names the same field and value through both.
	sharedDataStore := scopeDiff{
		OnlyClaim: []string{"ClusterRoleBinding/tenantkube:kcsi-controller:tenant-shared.shared"},
		Changed:   []string{"XR status.claimConditionTypes", "XR status.conditions[Ready].message"},
	}
	var compared int
	for _, c := range pipelineCases(root) {
		if c.observed != "" {
			continue
		}
		compared++
		t.Run("scopes/"+c.name, func(t *testing.T) {
			claimOut, claimErr := renderXR(c.xr, c.required, c.admitted)
			nsXR, n, ns := namespacedTwin(t, c.xr)
			nsOut, nsErr := renderXR(nsXR, append(append([]string{}, c.required...), tenantDataStore(t, ns)), c.admitted)
			if c.namespacedFatal != nil {
				var ce *render.CrossplaneError
				if claimErr != nil || !errors.As(nsErr, &ce) {
					t.Fatalf("want the claim rendered and the TenantCluster Fatal, got %v and %v", claimErr, nsErr)
				}
				for _, w := range c.namespacedFatal {
					if msg := render.Message(ce.Stderr); !strings.Contains(msg, w) {
						t.Errorf("TenantCluster: Fatal message does not name %s:\n%s", w, msg)
					}
				}
				return
			}
			if c.fatal != nil {
				for api, err := range map[string]error{"claim's XR": claimErr, "TenantCluster": nsErr} {
					var ce *render.CrossplaneError
					if !errors.As(err, &ce) {
						t.Fatalf("%s: want a Fatal render error, got err=%v", api, err)
					}
					msg := render.Message(ce.Stderr)
					for _, w := range c.fatal {
						if !strings.Contains(msg, w) {
							t.Errorf("%s: Fatal message does not name %s:\n%s", api, w, msg)
						}
					}
				}
				return
			}
			if claimErr != nil || nsErr != nil {
				t.Fatalf("render: claim's XR: %v; TenantCluster: %v", claimErr, nsErr)
			}
			if err := validator.ValidateYAMLStream(nsOut); err != nil {
				t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
			}
			want := scopeDiff{OnlyClaim: dedicatedEtcd(ns, n), Changed: changed(n)}
			if c.name == "shared-datastore" {
				want = sharedDataStore
			}
			if c.name == "encryption" {
				// Two XRs, two UIDs: each cluster's keys are its own.
				want.Changed = append(slices.Clone(want.Changed), "KamajiControlPlane/"+n+" spec.deployment.podAdditionalMetadata.annotations.tenantkube.io/encryption-config",
					"Secret/"+n+"-encryption-config data.encryption-configuration.yaml", "Secret/"+n+"-encryption-config data.keys.json",
					"XR status.encryption.writeKey.fingerprint")
			}
			if c.name == "encryption-kms" {
				// The plugin names no key; its seal is bound to each XR's UID.
				want.Changed = append(slices.Clone(want.Changed), "Secret/"+n+"-encryption-config data.keys.json")
			}
			kubeconfig := false
			for _, r := range c.required {
				kubeconfig = kubeconfig || strings.HasSuffix(r, "admin-kubeconfig-oidc.yaml")
			}
			only, moved := management(ns, n, kubeconfig)
			want.OnlyClaim = append(append([]string{}, want.OnlyClaim...), only...)
			want.Changed = append(append([]string{}, want.Changed...), moved...)
			sort.Strings(want.OnlyClaim)
			sort.Strings(want.Changed)
			got := diffScopes(renderedObjects(t, claimOut), renderedObjects(t, nsOut))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("composed objects of the two APIs differ beyond what the scope changes: -want, +got:\n%s", diff)
			}
		})
	}
	if compared < 20 {
		t.Errorf("scopes compared %d renders of TestPipelineRender, want all but the observed ones (at least 20)", compared)
	}
}

// scopeDiff is how the render of a claim's XR and of the TenantCluster of
// the same spec differ: objects only one composes ("<kind>/<name>") and
// the leaf fields that differ in objects both compose ("<kind>/<name>
// <path>", the XR as "XR").
type scopeDiff struct {
	OnlyClaim, OnlyNamespaced, Changed []string
}

// namespacedTwin writes the TenantCluster of the claim's XR in file xr: the
// claim's name and namespace (its labels) as its own, the same spec. It
// returns the file, the name and the namespace.
func namespacedTwin(t *testing.T, xr string) (string, string, string) {
	t.Helper()
	raw, err := os.ReadFile(xr)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	labels, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any)
	n, _ := labels["crossplane.io/claim-name"].(string)
	ns, _ := labels["crossplane.io/claim-namespace"].(string)
	if n == "" || ns == "" {
		t.Fatalf("%s: no claim labels", xr)
	}
	twin := map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "TenantCluster",
		"metadata": map[string]any{"name": n, "namespace": ns}, "spec": obj["spec"]}
	out, err := yaml.Marshal(twin)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "xr.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, n, ns
}

// tenantDataStore writes examples/tenant-datastore.yaml renamed for
// namespace ns (tenantkube.tenant.<ns>).
func tenantDataStore(t *testing.T, ns string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "tenant-datastore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(raw), "tenantkube.tenant.tenant-demo", "tenantkube.tenant."+ns)
	path := filepath.Join(t.TempDir(), "datastore.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// renderedObjects are the objects of a render by "<kind>/<name>" (the XR
// as "XR"), without what Crossplane writes from the XR's own identity
// (owner references, the crossplane.io/ labels and spec.crossplane or the
// legacy spec.resourceRefs and friends, apiVersion/kind/metadata of the XR).
func renderedObjects(t *testing.T, out []byte) map[string]map[string]any {
	t.Helper()
	objs := map[string]map[string]any{}
	for i, doc := range bytes.Split(out, []byte("\n---\n")) {
		obj := map[string]any{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		if len(obj) == 0 {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		if i <= 1 && (obj["kind"] == "XKubernetesCluster" || obj["kind"] == "TenantCluster") {
			objs["XR"] = map[string]any{"status": obj["status"]}
			continue
		}
		key := fmt.Sprintf("%s/%s", obj["kind"], md["name"])
		delete(md, "ownerReferences")
		if labels, ok := md["labels"].(map[string]any); ok {
			for k := range labels {
				if strings.HasPrefix(k, "crossplane.io/") {
					delete(labels, k)
				}
			}
		}
		objs[key] = obj
	}
	return objs
}

// diffScopes lists how the claim's render and the TenantCluster's differ.
func diffScopes(claim, namespaced map[string]map[string]any) scopeDiff {
	var d scopeDiff
	for k, c := range claim {
		n, ok := namespaced[k]
		if !ok {
			d.OnlyClaim = append(d.OnlyClaim, k)
			continue
		}
		for _, p := range leafDiff("", c, n) {
			d.Changed = append(d.Changed, k+" "+p)
		}
	}
	for k := range namespaced {
		if _, ok := claim[k]; !ok {
			d.OnlyNamespaced = append(d.OnlyNamespaced, k)
		}
	}
	sort.Strings(d.OnlyClaim)
	sort.Strings(d.OnlyNamespaced)
	sort.Strings(d.Changed)
	return d
}

// leafDiff lists the dotted paths where a and b differ; list items that
// are conditions are keyed by their type.
func leafDiff(path string, a, b any) []string {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return []string{path}
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		var out []string
		for k := range keys {
			out = append(out, leafDiff(join(k), av[k], bv[k])...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return []string{path}
		}
		if byType, ok := conditionsByType(av); ok && strings.HasSuffix(path, "conditions") {
			other, _ := conditionsByType(bv)
			var out []string
			for typ, c := range byType {
				out = append(out, leafDiff(path+"["+typ+"]", c, other[typ])...)
			}
			for typ, c := range other {
				if _, ok := byType[typ]; !ok {
					out = append(out, leafDiff(path+"["+typ+"]", nil, c)...)
				}
			}
			return out
		}
		if len(av) != len(bv) {
			return []string{path}
		}
		var out []string
		for i := range av {
			out = append(out, leafDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
		return out
	default:
		if !cmp.Equal(a, b) {
			return []string{path}
		}
		return nil
	}
}

// conditionsByType indexes a list of conditions by type; false when an
// item is no condition.
func conditionsByType(items []any) (map[string]any, bool) {
	out := map[string]any{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		typ, _ := m["type"].(string)
		if !ok || typ == "" {
			return nil, false
		}
		out[typ] = m
	}
	return out, true
}

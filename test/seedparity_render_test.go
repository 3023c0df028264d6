package test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/render"
)

// TestSeedParityRender renders testdata/control-plane/xr-seed-parity.yaml
// through the real Crossplane engine and the whole Composition and checks
// the fields that follow the seed chart, on the objects
// as the engine outputs them (the golden file seed-parity.golden.yaml,
// compared by TestPipelineRender, holds the rest).
func TestSeedParityRender(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := render.Render(ctx, render.Options{
		Root: root, XR: filepath.Join(root, "test", pipelineTestdata, "xr-seed-parity.yaml"),
		Required: []string{filepath.Join(root, "examples", "instancetypes.yaml")}, BinDir: binDir, Stderr: &bytes.Buffer{},
	})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil || len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		objs[u.GetKind()+"/"+u.GetName()] = u
	}
	obj := func(key string) *unstructured.Unstructured {
		t.Helper()
		u, ok := objs[key]
		if !ok {
			t.Fatalf("no %s rendered", key)
		}
		return u
	}
	str := func(u *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return fmt.Sprint(v)
	}

	t.Run("ingress routes HTTP and HTTPS", func(t *testing.T) {
		// N-<role>-<first 16 bytes of sha256("<role>/<NS>/<N>") in
		// lower-case base32>, computed with Python's hashlib and base64.
		const proxy, api = "parity-app-i4mmd6pamv5ojz5ddw2vzda5pa", "parity-api-3hdr4l5fv62mfjyoylmnlxuyti"
		var ingresses []map[string]any
		for _, k := range []string{"Ingress/" + proxy, "Ingress/" + proxy + "-http", "Ingress/" + api} {
			ingresses = append(ingresses, obj(k).Object)
		}
		// The whole pipeline's Ingresses of the shared class, with the one
		// Kamaji builds from the KamajiControlPlane, read as ingress-nginx
		// reads them.
		ingresses = append(ingresses, fntest.KamajiIngress(obj("KamajiControlPlane/parity").Object))
		v := fntest.ReadAsNginx("nginx", ingresses)
		if len(v.Snippets) > 0 {
			t.Errorf("snippet annotations %v", v.Snippets)
		}
		want := map[string]fntest.Route{
			"apps.tenant-parity.tenants.example.com": {
				HTTPS: "tenant-parity-" + proxy + "-443", HTTP: "tenant-parity-" + proxy + "-80", Passthrough: true, Canary: true,
				HTTPSTo: fntest.Backend{Namespace: "tenant-parity", Service: proxy, Port: int64(443)},
				HTTPTo:  fntest.Backend{Namespace: "tenant-parity", Service: proxy, Port: int64(80)},
			},
			"parity.tenant-parity.tenants.example.com": {
				HTTPS: "tenant-parity-" + api + "-6443", HTTP: "tenant-parity-" + api + "-6443", Passthrough: true,
				HTTPSTo: fntest.Backend{Namespace: "tenant-parity", Service: api, Port: int64(6443)},
				HTTPTo:  fntest.Backend{Namespace: "tenant-parity", Service: api, Port: int64(6443)},
			},
		}
		if d := cmp.Diff(want, v.Routes); d != "" {
			t.Errorf("routes (-want +got):\n%s", d)
		}
		if got := str(obj("Service/"+proxy), "spec", "ports"); got != "[map[appProtocol:http name:http port:80 protocol:TCP targetPort:30000] map[appProtocol:https name:https port:443 protocol:TCP targetPort:30001]]" {
			t.Errorf("Service ports %s", got)
		}
		if got := str(obj("Service/"+api), "spec"); got != "map[ports:[map[name:kube-apiserver port:6443 protocol:TCP targetPort:6443]] selector:map[kamaji.clastix.io/name:parity] type:ClusterIP]" {
			t.Errorf("API server Service spec %s", got)
		}
	})

	// The seed chart's kubeadm config labels the nodes of a GPU group
	// (kubeletExtraArgs node-labels: "gpu=on"), HAMi's device plugin's
	// node selector; the group without GPUs gets no such flag.
	t.Run("GPU node label", func(t *testing.T) {
		for group, want := range map[string]string{"gpu": "[map[name:node-labels value:gpu=on]]", "md0": "[]"} {
			args, _, _ := unstructured.NestedSlice(obj("KubeadmConfigTemplate/parity-"+group).Object,
				"spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs")
			var labels []any
			for _, a := range args {
				if a.(map[string]any)["name"] == "node-labels" {
					labels = append(labels, a)
				}
			}
			if got := fmt.Sprint(labels); got != want {
				t.Errorf("node group %s: node-labels kubelet args %s, want %s", group, got, want)
			}
		}
	})

	t.Run("CSI controller", func(t *testing.T) {
		d := obj("Deployment/parity-kcsi-controller")
		cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		var names []string
		for _, c := range cs {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		if want := []string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "snapshot-controller", "csi-liveness-probe"}; !slices.Equal(names, want) {
			t.Errorf("containers %v, want %v", names, want)
		}
		if got := str(d, "spec", "template", "spec", "priorityClassName"); got != "system-cluster-critical" {
			t.Errorf("priorityClassName %s", got)
		}
	})

	t.Run("monitoring and VPA", func(t *testing.T) {
		hr := obj("HelmRelease/parity-monitoring-agents")
		if got := str(hr, "spec", "releaseName"); got != "cozy-monitoring-agents" {
			t.Errorf("releaseName %s", got)
		}
		// The seed's endpoints under the platform's cluster domain (no
		// settings here: cluster.local; the seed writes Cozystack's,
		// cozy.local).
		if got := str(hr, "spec", "values", "vmagent", "remoteWrite", "url"); got != "http://vminsert-shortterm.tenant-root.svc.cluster.local:8480/insert/0/prometheus" {
			t.Errorf("remoteWrite %s", got)
		}
		if got := str(hr, "spec", "values", "fluent-bit", "config", "outputs"); !strings.Contains(got, "    Host vlinsert-generic.tenant-root.svc.cluster.local\n    Port 9481\n") {
			t.Errorf("fluent-bit outputs %q", got)
		}
		if got := str(obj("HelmRelease/parity-vertical-pod-autoscaler"), "spec", "values", "recommender", "extraArgs", "storage"); got != "prometheus" {
			t.Errorf("VPA recommender storage %s", got)
		}
	})

	t.Run("CRD releases keep their CRDs", func(t *testing.T) {
		for _, r := range []string{"cert-manager-crds", "prometheus-operator-crds", "vertical-pod-autoscaler-crds", "vsnap-crd"} {
			if got := str(obj("HelmRelease/parity-"+r), "spec", "postRenderers"); !strings.Contains(got, "helm.sh/resource-policy: keep") {
				t.Errorf("%s postRenderers %s", r, got)
			}
		}
	})

	t.Run("instanceType empty and whole-byte ephemeral storage", func(t *testing.T) {
		var md0 *unstructured.Unstructured
		for k, u := range objs {
			if strings.HasPrefix(k, "KubevirtMachineTemplate/parity-md0-") {
				md0 = u
			}
		}
		if md0 == nil {
			t.Fatal("no machine template of md0")
		}
		vm := []string{"spec", "template", "spec", "virtualMachineTemplate", "spec"}
		if got := str(md0, append(vm, "instancetype")...); got != "<nil>" {
			t.Errorf("md0 instancetype %s, want none", got)
		}
		if got := str(md0, append(vm, "template", "spec", "domain", "resources", "requests", "ephemeral-storage")...); got != "53687091" {
			t.Errorf("ephemeral-storage request %s, want 53687091", got)
		}
		a := obj("MachineDeployment/parity-md0").GetAnnotations()
		if _, ok := a["capacity.cluster-autoscaler.kubernetes.io/memory"]; ok {
			t.Errorf("md0 capacity annotations %v", a)
		}
		if got := str(obj("KubeadmConfigTemplate/parity-md0"), "spec", "template", "spec", "diskSetup", "filesystems"); !strings.Contains(got, "partition:none") {
			t.Errorf("filesystems %s", got)
		}
	})
}

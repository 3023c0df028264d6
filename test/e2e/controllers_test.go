//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Pinned upstream controllers (tools/*/go.mod pin the same versions).
const (
	capiModule = "sigs.k8s.io/cluster-api"
	capkModule = "sigs.k8s.io/cluster-api-provider-kubevirt"
)

// controller is one upstream controller manager the test runs out of
// cluster: webhooks (if any) on a loopback port with a certificate of the
// test CA, health probes and diagnostics on loopback, leader election off.
type controller struct {
	name                              string
	bin                               string
	flags                             []string
	webhookPort, healthPort, diagPort int
	// webhooks is the controller's own webhook manifest (config/webhook),
	// served on webhookPort.
	webhooks string
	// kubeconfig is a token of the controller's own ServiceAccount
	// (setupIdentities).
	kubeconfig string
	p          *proc
}

// controllers are the Cluster API managers of one test run.
type controllers struct {
	capiDir, capkDir         string
	capiVersion, capkVersion string
	certDir                  string
	capi, bootstrap          *controller
	capk                     *controller
}

// moduleDir is the directory of module mod in the module cache, as the
// tools module in tools/<tools> resolves it (`make e2e` built from it).
func (e *env) moduleDir(tools, mod string) (dir, version string, err error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", mod)
	cmd.Dir = e.path("tools", tools)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("go list -m %s in tools/%s: %v: %s", mod, tools, err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", fmt.Errorf("module %s is not in the module cache (run make e2e): %q", mod, out)
	}
	return f[0], f[1], nil
}

func (e *env) newControllers() (*controllers, error) {
	for _, b := range []string{"capi-manager", "capi-kubeadm-bootstrap", "capk-manager"} {
		if _, err := os.Stat(e.binary(b)); err != nil {
			return nil, fmt.Errorf("bin/%s is missing: run `make e2e` (it builds the controllers): %w", b, err)
		}
	}
	cs := &controllers{certDir: filepath.Join(e.work, "controllers", "webhook-certs")}
	var err error
	if cs.capiDir, cs.capiVersion, err = e.moduleDir("cluster-api", capiModule); err != nil {
		return nil, err
	}
	if cs.capkDir, cs.capkVersion, err = e.moduleDir("capk", capkModule); err != nil {
		return nil, err
	}
	mk := func(name, bin, webhooks string) (*controller, error) {
		c := &controller{name: name, bin: e.binary(bin), webhooks: webhooks}
		for _, p := range []*int{&c.webhookPort, &c.healthPort, &c.diagPort} {
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	if cs.capi, err = mk("capi-manager", "capi-manager", filepath.Join(cs.capiDir, "config", "webhook", "manifests.yaml")); err != nil {
		return nil, err
	}
	if cs.bootstrap, err = mk("capi-kubeadm-bootstrap", "capi-kubeadm-bootstrap", filepath.Join(cs.capiDir, "bootstrap", "kubeadm", "config", "webhook", "manifests.yaml")); err != nil {
		return nil, err
	}
	if cs.capk, err = mk("capk-manager", "capk-manager", filepath.Join(cs.capkDir, "config", "webhook", "manifests.yaml")); err != nil {
		return nil, err
	}
	// The flags each controller's own Deployment (config/manager) passes,
	// leader election off, feature gates at the defaults written there.
	cs.capi.flags = []string{
		"--feature-gates=MachinePool=true,ClusterTopology=false,RuntimeSDK=false,MachineSetPreflightChecks=true," +
			"MachineWaitForVolumeDetachConsiderVolumeAttachments=true,PriorityQueue=true,ReconcilerRateLimiting=true," +
			"InPlaceUpdates=false,MachineTaintPropagation=false",
	}
	cs.bootstrap.flags = []string{
		"--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=false,PriorityQueue=true,ReconcilerRateLimiting=true",
		"--bootstrap-token-ttl=15m",
	}
	cs.capk.flags = []string{"--feature-gates=MachinePool=false", "--metrics-bind-addr=0"}
	return cs, nil
}

func (cs *controllers) all() []*controller { return []*controller{cs.capi, cs.bootstrap, cs.capk} }

// labelled returns o with extra labels.
func withLabels(o *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	o.SetLabels(l)
	return o
}

// installControllerCRDs installs the CRDs of Cluster API and the KubeVirt
// provider from their own modules (they are newer than or equal to
// ../shared/crds, and include the kinds the controllers create: Machine,
// KubeadmConfig, KubevirtMachine, ...), as their kustomizations
// (config/crd/kustomization.yaml) finish them: the conversion webhook of
// every multi-version CRD pointed at the manager serving it, and the
// contract labels. The KamajiControlPlane CRD from ../shared/crds gets the
// contract label of its status shape (status.initialization: the v1beta2
// contract). KubeVirt's VirtualMachine and VirtualMachineInstance get open
// CRDs: KubeVirt generates its CRDs in code and no module ships them, and
// nothing here runs VMs (kubevirt v1.9.0 pkg/virt-controller/watch/vm/vm.go:2457-2473 never runs).
func (e *env) installControllerCRDs(cs *controllers) error {
	ctx, cancel := ctxT(3 * time.Minute)
	defer cancel()
	type src struct {
		glob   string
		conv   *controller
		labels map[string]string
	}
	srcs := []src{
		{filepath.Join(cs.capiDir, "config", "crd", "bases", "*.yaml"), cs.capi, nil},
		{filepath.Join(cs.capiDir, "bootstrap", "kubeadm", "config", "crd", "bases", "*.yaml"), cs.bootstrap,
			map[string]string{"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}},
		{filepath.Join(cs.capkDir, "config", "crd", "bases", "*.yaml"), nil, map[string]string{
			"cluster.x-k8s.io/provider": "kubevirt", "cluster.x-k8s.io/v1alpha1": "v1alpha1", "cluster.x-k8s.io/v1alpha2": "v1alpha1",
			"cluster.x-k8s.io/v1alpha3": "v1alpha1", "cluster.x-k8s.io/v1alpha4": "v1alpha1", "cluster.x-k8s.io/v1beta1": "v1alpha1",
		}},
		{filepath.Join(e.shared, "crds", "controlplane.cluster.x-k8s.io_kamajicontrolplanes.yaml"), nil,
			map[string]string{"cluster.x-k8s.io/v1beta2": "v1alpha2"}},
	}
	caBundle := base64.StdEncoding.EncodeToString(e.testCA.certPEM)
	var names []string
	for _, s := range srcs {
		files, _ := filepath.Glob(s.glob)
		if len(files) == 0 {
			return fmt.Errorf("no CRDs at %s", s.glob)
		}
		sort.Strings(files)
		for _, f := range files {
			objs, err := decodeFile(f)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			for _, o := range objs {
				if s.labels != nil {
					withLabels(o, s.labels)
				}
				versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
				if s.conv != nil && len(versions) > 1 {
					_ = unstructured.SetNestedField(o.Object, map[string]any{
						"strategy": "Webhook",
						"webhook": map[string]any{
							"conversionReviewVersions": []any{"v1"},
							"clientConfig": map[string]any{
								"url":      fmt.Sprintf("https://127.0.0.1:%d/convert", s.conv.webhookPort),
								"caBundle": caBundle,
							},
						},
					}, "spec", "conversion")
				}
				if err := apply(ctx, e.c, o); err != nil {
					return fmt.Errorf("apply CRD %s: %w", o.GetName(), err)
				}
				names = append(names, o.GetName())
			}
		}
	}
	for _, o := range []*unstructured.Unstructured{
		minimalCRD("kubevirt.io", "v1", "VirtualMachine", "virtualmachines", "Namespaced", true),
		minimalCRD("kubevirt.io", "v1", "VirtualMachineInstance", "virtualmachineinstances", "Namespaced", true),
	} {
		if err := apply(ctx, e.c, o); err != nil {
			return fmt.Errorf("apply CRD %s: %w", o.GetName(), err)
		}
		names = append(names, o.GetName())
	}
	return e.waitEstablished(2*time.Minute, names...)
}

// installWebhooks applies each controller's webhook configurations from its
// module, renamed e2e-<controller>-<name>, each service reference replaced by
// a URL on the controller's loopback port and the test CA as caBundle.
func (e *env) installWebhooks(cs *controllers) error {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	caBundle := base64.StdEncoding.EncodeToString(e.testCA.certPEM)
	for _, c := range cs.all() {
		objs, err := decodeFile(c.webhooks)
		if err != nil {
			return fmt.Errorf("%s: %w", c.webhooks, err)
		}
		for _, o := range objs {
			o.SetName("e2e-" + c.name + "-" + o.GetName())
			unstructured.RemoveNestedField(o.Object, "metadata", "creationTimestamp")
			whs, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for i := range whs {
				w := whs[i].(map[string]any)
				path, _, _ := unstructured.NestedString(w, "clientConfig", "service", "path")
				w["clientConfig"] = map[string]any{
					"url":      fmt.Sprintf("https://127.0.0.1:%d%s", c.webhookPort, path),
					"caBundle": caBundle,
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, whs, "webhooks")
			if err := apply(ctx, e.c, o); err != nil {
				return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	return nil
}

// startControllers starts the Cluster API managers (core, kubeadm bootstrap,
// KubeVirt provider), each under its own ServiceAccount (c.kubeconfig), and
// waits for their readiness probes.
func (e *env) startControllers(cs *controllers) error {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	wh, err := e.testCA.issue("capi-webhooks", nil, []string{"localhost"}, loopback, true, false)
	if err != nil {
		return err
	}
	if err := writeFiles(cs.certDir, map[string][]byte{"tls.crt": wh.certPEM, "tls.key": wh.keyPEM}); err != nil {
		return err
	}
	for _, ns := range []string{"capi-system", "capi-kubeadm-bootstrap-system", "capk-system"} {
		if err := e.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	nsOf := map[string]string{"capi-manager": "capi-system", "capi-kubeadm-bootstrap": "capi-kubeadm-bootstrap-system", "capk-manager": "capk-system"}
	for _, c := range cs.all() {
		args := append([]string{
			"--leader-elect=false",
			fmt.Sprintf("--webhook-port=%d", c.webhookPort), "--webhook-cert-dir=" + cs.certDir,
			fmt.Sprintf("--health-addr=127.0.0.1:%d", c.healthPort),
			fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", c.diagPort), "--insecure-diagnostics=true",
		}, c.flags...)
		c.p = newProc(e.logs, c.name, c.bin, args,
			"KUBECONFIG="+c.kubeconfig, "POD_NAMESPACE="+nsOf[c.name], "POD_NAME="+c.name, "POD_UID=e2e-"+c.name)
		if err := c.p.start(); err != nil {
			return err
		}
	}
	for _, c := range cs.all() {
		if err := e.waitHTTP(c.p, fmt.Sprintf("http://127.0.0.1:%d/readyz", c.healthPort), nil, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

func (cs *controllers) versions() []string {
	return []string{
		"Cluster API core manager " + cs.capiVersion + " (bin/capi-manager; webhooks on 127.0.0.1, runs under its upstream ClusterRole)",
		"Cluster API kubeadm bootstrap manager " + cs.capiVersion + " (bin/capi-kubeadm-bootstrap; webhooks on 127.0.0.1, runs under its upstream ClusterRole)",
		"Cluster API provider KubeVirt " + cs.capkVersion + " (bin/capk-manager; webhooks on 127.0.0.1, runs under its upstream ClusterRole)",
	}
}

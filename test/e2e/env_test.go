//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// functions are the three composition functions, in pipeline order.
var functions = []string{"control-plane", "workers", "addons"}

// fnName is the name Crossplane gives the Function it installs for the
// Configuration's dependency xpkg.tenantkube.io/tenantkube/function-<f>.
func fnName(f string) string { return "tenantkube-function-" + f }

const (
	xpNamespace = "crossplane-system"
	xpkgTag     = "v0.1.0"
)

// env is the live control plane the scenarios run against.
type env struct {
	root, shared, bin, work, logs string

	kubeconfig string
	// xpKubeconfig is Crossplane's: a token of its ServiceAccount
	// (crossplaneIdentity), not the admin's.
	xpKubeconfig string
	cfg          *rest.Config
	c            client.Client

	etcdPort, apiPort, registryPort, webhookPort int
	fnPorts, fnMetricsPorts                      map[string]int
	// flux are the Flux controllers, once started (startFlux).
	flux *fluxControllers

	etcd, apiserver, kcm, registry, core *proc
	fns                                  map[string]*proc

	testCA   *ca
	versions []string

	// apiserverExtra and coreExtra are flags a test adds to kube-apiserver's
	// and Crossplane core's (TestScale: the audit log, the profiler).
	apiserverExtra, coreExtra []string
}

var (
	gvkCRD        = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	gvkNamespace  = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	gvkSecret     = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	gvkFunction   = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	gvkFnRevision = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}
	gvkXRD        = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}
	gvkVWC        = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)

func (e *env) path(parts ...string) string {
	return filepath.Join(append([]string{e.root}, parts...)...)
}
func (e *env) binary(name string) string { return filepath.Join(e.bin, name) }

// newEnv locates the repository, ./bin and ../shared and prepares the work
// and log directories. Nothing is started yet.
func newEnv() (*env, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	e := &env{
		root:           root,
		shared:         filepath.Join(root, "..", "shared"),
		bin:            filepath.Join(root, "bin"),
		logs:           filepath.Join(root, "_output", "e2e", "logs"),
		fnPorts:        map[string]int{},
		fnMetricsPorts: map[string]int{},
		fns:            map[string]*proc{},
	}
	if d := os.Getenv("TENANTKUBE_SHARED"); d != "" {
		e.shared = d
	}
	if d := os.Getenv("E2E_BIN"); d != "" {
		e.bin = d
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "crane", "crossplane-core"} {
		if _, err := os.Stat(e.binary(b)); err != nil {
			return nil, fmt.Errorf("bin/%s is missing: run `make e2e` (it builds the components): %w", b, err)
		}
	}
	for _, f := range functions {
		if _, err := os.Stat(e.binary("function-" + f)); err != nil {
			return nil, fmt.Errorf("bin/function-%s is missing: run `make e2e`: %w", f, err)
		}
	}
	for _, p := range packages {
		if _, err := os.Stat(e.path("_output", "xpkg", p+".xpkg")); err != nil {
			return nil, fmt.Errorf("_output/xpkg/%s.xpkg is missing: run `make e2e`: %w", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.shared, "crds", "crossplane")); err != nil {
		return nil, fmt.Errorf("the shared CRDs are missing (expected ../shared/crds next to the repository): %w", err)
	}
	_ = os.RemoveAll(e.logs)
	if err := os.MkdirAll(e.logs, 0o755); err != nil {
		return nil, err
	}
	if e.work, err = os.MkdirTemp("", "tenantkube-e2e-"); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *env) ports() error {
	var err error
	for _, p := range []*int{&e.etcdPort, &e.apiPort, &e.registryPort, &e.webhookPort} {
		if *p, err = freePort(); err != nil {
			return err
		}
	}
	for _, f := range functions {
		if e.fnPorts[f], err = freePort(); err != nil {
			return err
		}
		if e.fnMetricsPorts[f], err = freePort(); err != nil {
			return err
		}
	}
	return nil
}

// step runs one bring-up step and logs how long it took.
func step(t *testing.T, name string, f func() error) {
	t.Helper()
	start := time.Now()
	if err := f(); err != nil {
		fatalf(t, "bring-up: %s: %v", name, err)
	}
	t.Logf("bring-up: %-44s %6.1fs", name, time.Since(start).Seconds())
}

// up starts the whole stack and installs the packages.
func (e *env) up(t *testing.T) {
	e.collectVersions()
	versions = e.versions
	step(t, "ports and PKI", e.pki)
	step(t, "etcd", e.startEtcd)
	step(t, "kube-apiserver", e.startAPIServer)
	step(t, "kube-controller-manager", e.startKCM)
	step(t, "CRDs (Crossplane, upstream, instancetype)", e.installCRDs)
	step(t, "platform APIs: an APIService per served CRD version", e.platformAPIServices)
	step(t, "Crossplane ServiceAccount, chart ClusterRoles, deploy/ RBAC", e.crossplaneIdentity)
	step(t, "crossplane core init", e.coreInit)
	step(t, "crossplane core start (webhooks on loopback)", e.startCore)
	step(t, "functions serving mTLS", e.startFunctions)
	step(t, "registry + packages pushed", e.pushPackages)
	step(t, "Configuration installed, Functions resolved", e.installConfiguration)
	step(t, "platform settings", e.installPlatformSettings)
	step(t, "instance types", e.installInstancetypes)
}

func (e *env) pki() error {
	if err := e.ports(); err != nil {
		return err
	}
	var err error
	if e.testCA, err = newCA("tenantkube-e2e-ca"); err != nil {
		return err
	}
	serving, err := e.testCA.issue("kube-apiserver", nil,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, loopback, true, false)
	if err != nil {
		return err
	}
	admin, err := e.testCA.issue("tenantkube-e2e-admin", []string{"system:masters"}, nil, nil, false, true)
	if err != nil {
		return err
	}
	saKey, saPub, err := rsaKeyPEM()
	if err != nil {
		return err
	}
	if err := writeFiles(filepath.Join(e.work, "pki"), map[string][]byte{
		"ca.crt": e.testCA.certPEM, "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
		"admin.crt": admin.certPEM, "admin.key": admin.keyPEM, "sa.key": saKey, "sa.pub": saPub,
	}); err != nil {
		return err
	}
	b64 := base64.StdEncoding.EncodeToString
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, e.apiPort, b64(e.testCA.certPEM), b64(admin.certPEM), b64(admin.keyPEM))
	e.kubeconfig = filepath.Join(e.work, "kubeconfig")
	if err := os.WriteFile(e.kubeconfig, []byte(kc), 0o600); err != nil {
		return err
	}
	if e.cfg, err = clientcmd.BuildConfigFromFlags("", e.kubeconfig); err != nil {
		return err
	}
	e.cfg.QPS, e.cfg.Burst = 200, 400
	e.cfg.Timeout = 30 * time.Second
	return nil
}

func (e *env) startEtcd() error {
	peer, err := freePort()
	if err != nil {
		return err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", e.etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	e.etcd = newProc(e.logs, "etcd", e.binary("etcd"), []string{
		"--name=e2e", "--data-dir=" + filepath.Join(e.work, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL, "--unsafe-no-fsync", "--log-level=warn",
	})
	if err := e.etcd.start(); err != nil {
		return err
	}
	return e.waitHTTP(e.etcd, client+"/health", nil, 30*time.Second)
}

func (e *env) apiserverArgs() []string {
	pki := func(f string) string { return filepath.Join(e.work, "pki", f) }
	return append([]string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", e.etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", e.apiPort),
		"--cert-dir=" + filepath.Join(e.work, "apiserver"),
		"--tls-cert-file=" + pki("apiserver.crt"), "--tls-private-key-file=" + pki("apiserver.key"),
		"--client-ca-file=" + pki("ca.crt"),
		"--service-account-key-file=" + pki("sa.pub"), "--service-account-signing-key-file=" + pki("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		// Room for a ClusterIP per tenant cluster at `make scale`'s
		// thousands (a /24 holds 254).
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}, e.apiserverExtra...)
}

func (e *env) startAPIServer() error {
	e.apiserver = newProc(e.logs, "kube-apiserver", e.binary("kube-apiserver"), e.apiserverArgs())
	if err := e.apiserver.start(); err != nil {
		return err
	}
	if err := e.waitAPIServer(60 * time.Second); err != nil {
		return err
	}
	var err error
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	e.c, err = client.New(e.cfg, client.Options{Scheme: s})
	return err
}

func (e *env) waitAPIServer(timeout time.Duration) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.testCA.certPEM)
	cert, err := tls.LoadX509KeyPair(filepath.Join(e.work, "pki", "admin.crt"), filepath.Join(e.work, "pki", "admin.key"))
	if err != nil {
		return err
	}
	return e.waitHTTP(e.apiserver, fmt.Sprintf("https://127.0.0.1:%d/readyz", e.apiPort),
		&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, timeout)
}

// waitHTTP waits for url to answer 200 while p keeps running.
func (e *env) waitHTTP(p *proc, url string, tc *tls.Config, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if p != nil && !p.running() {
			return fmt.Errorf("%s exited (log %s):\n%s", p.name, p.log, tail(p.log, 20))
		}
		resp, err := hc.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %s", url, timeout, last)
}

func (e *env) startKCM() error {
	e.kcm = newProc(e.logs, "kube-controller-manager", e.binary("kube-controller-manager"), []string{
		"--kubeconfig=" + e.kubeconfig,
		// The claim-protection controller lifts the pvc-protection
		// finalizer of a deleted PersistentVolumeClaim no pod uses (the
		// etcd member claims composed for cleanup).
		// The clusterrole-aggregation controller fills Crossplane's
		// aggregated ClusterRole (crossplaneIdentity).
		"--controllers=garbage-collector-controller,namespace-controller,persistentvolumeclaim-protection-controller,clusterrole-aggregation-controller",
		"--leader-elect=false", "--secure-port=0", "--concurrent-gc-syncs=20",
	})
	if err := e.kcm.start(); err != nil {
		return err
	}
	// It has no health endpoint without a secure port: give it a moment and
	// make sure it did not exit on a flag.
	select {
	case <-e.kcm.exited():
		return fmt.Errorf("kube-controller-manager exited:\n%s", tail(e.kcm.log, 20))
	case <-time.After(2 * time.Second):
		return nil
	}
}

// minimalCRD is a CustomResourceDefinition for a namespaced or
// cluster-scoped kind that ../shared/crds does not define but the
// management cluster serves, with an open schema; requireSpec makes spec
// required, as the real CRD does, so an object cannot be created from
// metadata alone.
func minimalCRD(group, version, kind, plural, scope string, requireSpec bool) *unstructured.Unstructured {
	root := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	if requireSpec {
		open := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		root = map[string]any{"type": "object", "required": []any{"spec"},
			"properties": map[string]any{"spec": open, "status": open}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": scope,
			"names": map[string]any{
				"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind),
			},
			"versions": []any{map[string]any{
				"name": version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": root},
			}},
		},
	}}
}

// extraCRDs are the kinds the functions read or compose that
// ../shared/crds has no CRD for: KubeVirt's VirtualMachineClusterInstancetype
// (instance types, read as required resources), CDI's DataVolume (the CSI
// driver's volumes) and Flux's HelmChart (made by helm-controller), both
// asked for to be composed for deletion.
func extraCRDs() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		minimalCRD("instancetype.kubevirt.io", "v1beta1", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes", "Cluster", false),
		minimalCRD("cdi.kubevirt.io", "v1beta1", "DataVolume", "datavolumes", "Namespaced", true),
		minimalCRD("source.toolkit.fluxcd.io", "v1", "HelmChart", "helmcharts", "Namespaced", true),
	}
}

func (e *env) installCRDs() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var objs []*unstructured.Unstructured
	for _, glob := range []string{filepath.Join(e.shared, "crds", "crossplane", "*.yaml"), filepath.Join(e.shared, "crds", "*.yaml")} {
		files, _ := filepath.Glob(glob)
		sort.Strings(files)
		for _, f := range files {
			o, err := decodeFile(f)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			objs = append(objs, o...)
		}
	}
	objs = append(objs, extraCRDs()...)
	return e.applyCRDs(ctx, objs, 2*time.Minute)
}

// applyCRDs applies crds and waits up to timeout for each to be
// Established.
func (e *env) applyCRDs(ctx context.Context, crds []*unstructured.Unstructured, timeout time.Duration) error {
	names := make([]string, 0, len(crds))
	for _, o := range crds {
		if err := apply(ctx, e.c, o); err != nil {
			return fmt.Errorf("apply CRD %s: %w", o.GetName(), err)
		}
		names = append(names, o.GetName())
	}
	return e.waitEstablished(timeout, names...)
}

// waitEstablished waits up to timeout for each named CRD to be
// Established.
func (e *env) waitEstablished(timeout time.Duration, names ...string) error {
	return poll(timeout, func(ctx context.Context) (bool, string, error) {
		for _, n := range names {
			u, err := get(ctx, e.c, gvkCRD, "", n)
			if err != nil {
				return false, "", err
			}
			if s, _, _ := condition(u, "Established"); s != "True" {
				return false, n + " not Established", nil
			}
		}
		return true, "", nil
	})
}

func (e *env) ensureNamespace(ctx context.Context, name string) error {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(gvkNamespace)
	ns.SetName(name)
	return apply(ctx, e.c, ns)
}

func (e *env) coreInit() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.ensureNamespace(ctx, xpNamespace); err != nil {
		return err
	}
	return runOnce(e.logs, "crossplane-core-init", e.binary("crossplane-core"), 2*time.Minute, []string{
		"core", "init", "--namespace=" + xpNamespace, "--enable-webhooks=false",
		"--cr-ds-path=" + filepath.Join(e.shared, "crds", "crossplane"),
		"--tlsca-secret-name=crossplane-root-ca", "--tls-client-secret-name=crossplane-tls-client",
	}, "KUBECONFIG="+e.xpKubeconfig)
}

func (e *env) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := e.c.Get(ctx, client.ObjectKey{Namespace: xpNamespace, Name: name}, s)
	return s, err
}

// crossplaneCA is the root CA `core init` created; Crossplane's client
// certificate is signed by it, and so are the functions' server certificates.
func (e *env) crossplaneCA(ctx context.Context) (*ca, error) {
	s, err := e.secret(ctx, "crossplane-root-ca")
	if err != nil {
		return nil, err
	}
	return parseCA(s.Data["tls.crt"], s.Data["tls.key"])
}

func (e *env) startCore() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := e.secret(ctx, "crossplane-tls-client")
	if err != nil {
		return err
	}
	clientDir := filepath.Join(e.work, "crossplane", "tls-client")
	if err := writeFiles(clientDir, map[string][]byte{
		"ca.crt": cl.Data["ca.crt"], "tls.crt": cl.Data["tls.crt"], "tls.key": cl.Data["tls.key"],
	}); err != nil {
		return err
	}
	// The Usage webhook: served by core on loopback with a certificate of the
	// test CA, which the API server trusts through the caBundle below.
	wh, err := e.testCA.issue("crossplane-webhook", nil, []string{"localhost"}, loopback, true, false)
	if err != nil {
		return err
	}
	whDir := filepath.Join(e.work, "crossplane", "tls-server")
	if err := writeFiles(whDir, map[string][]byte{"tls.crt": wh.certPEM, "tls.key": wh.keyPEM}); err != nil {
		return err
	}
	platformArgs, err := crossplaneValuesArgs(e.path("deploy", "crossplane", "values.yaml"))
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	health, err := freePort()
	if err != nil {
		return err
	}
	e.core = newProc(e.logs, "crossplane-core", e.binary("crossplane-core"), append([]string{
		"core", "start", "--namespace=" + xpNamespace,
		"--package-runtime=External",
		"--enable-webhooks=true", fmt.Sprintf("--webhook-port=%d", e.webhookPort), "--tls-server-certs-dir=" + whDir,
		"--tls-client-certs-dir=" + clientDir,
		"--xpkg-cache-dir=" + filepath.Join(e.work, "crossplane", "xpkg-cache"),
		fmt.Sprintf("--metrics-port=%d", metrics), fmt.Sprintf("--health-probe-port=%d", health),
		// The scenarios drive reconciles much faster than any real user
		// (20 in a row for the steady-state check); with the default
		// breaker (burst 100, 1/s) the XR's watch circuit opens and later
		// scenarios wait minutes for its cool-down. A composition that
		// writes on every reconcile is caught by the steady-state check.
		"--circuit-breaker-burst=2000", "--circuit-breaker-refill-rate=50",
	}, append(append(platformArgs, e.coreExtra...), strings.Fields(os.Getenv("E2E_CORE_ARGS"))...)...), "KUBECONFIG="+e.xpKubeconfig)
	if err := os.MkdirAll(filepath.Join(e.work, "crossplane", "xpkg-cache"), 0o755); err != nil {
		return err
	}
	if err := e.core.start(); err != nil {
		return err
	}
	if err := e.waitHTTP(e.core, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), nil, 90*time.Second); err != nil {
		return err
	}
	vwc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingWebhookConfiguration",
		"metadata":   map[string]any{"name": "crossplane-no-usages"},
		"webhooks": []any{map[string]any{
			"name":                    "nousages.protection.crossplane.io",
			"admissionReviewVersions": []any{"v1"},
			"sideEffects":             "None",
			"failurePolicy":           "Fail",
			"clientConfig": map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d/validate-no-usages", e.webhookPort),
				"caBundle": base64.StdEncoding.EncodeToString(e.testCA.certPEM),
			},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"crossplane.io/in-use": "true"}},
			"rules": []any{map[string]any{
				"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "operations": []any{"DELETE"}, "resources": []any{"*"},
			}},
		}},
	}}
	return apply(ctx, e.c, vwc)
}

// crossplaneValuesArgs reads the args of the platform's Helm values for
// Crossplane's chart (deploy/crossplane/values.yaml).
func crossplaneValuesArgs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v struct {
		Args []string `json:"args"`
	}
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v.Args, nil
}

func (e *env) fnArgs(f string) []string {
	return []string{
		fmt.Sprintf("--address=127.0.0.1:%d", e.fnPorts[f]),
		"--tls-certs-dir=" + filepath.Join(e.work, "functions", f),
		fmt.Sprintf("--metrics-address=127.0.0.1:%d", e.fnMetricsPorts[f]),
	}
}

func (e *env) startFunctions() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := e.crossplaneCA(ctx)
	if err != nil {
		return err
	}
	for _, f := range functions {
		kp, err := root.issue(fnName(f), nil, []string{fnName(f), "localhost"}, loopback, true, false)
		if err != nil {
			return err
		}
		files := map[string][]byte{"tls.crt": kp.certPEM, "tls.key": kp.keyPEM, "ca.crt": root.certPEM}
		if err := writeFiles(filepath.Join(e.work, "functions", f), files); err != nil {
			return err
		}
		// The Secret a package runtime would create for the revision.
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(gvkSecret)
		s.SetNamespace(xpNamespace)
		s.SetName(fnName(f) + "-tls-server")
		data := map[string]any{}
		for k, v := range files {
			data[k] = base64.StdEncoding.EncodeToString(v)
		}
		s.Object["data"] = data
		if err := apply(ctx, e.c, s); err != nil {
			return err
		}
		e.fns[f] = newProc(e.logs, "function-"+f, e.binary("function-"+f), e.fnArgs(f))
		if err := e.fns[f].start(); err != nil {
			return err
		}
	}
	for _, f := range functions {
		if err := e.waitHTTP(e.fns[f], fmt.Sprintf("http://127.0.0.1:%d/metrics", e.fnMetricsPorts[f]), nil, 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) installInstancetypes() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := decodeFile(e.path("examples", "instancetypes.yaml"))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := apply(ctx, e.c, o); err != nil {
			return fmt.Errorf("instance type %s: %w", o.GetName(), err)
		}
	}
	return nil
}

func (e *env) collectVersions() {
	ver := func(name string, args ...string) string {
		out, err := exec.Command(e.binary(name), args...).CombinedOutput()
		if err != nil {
			return "unknown"
		}
		line := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		return line
	}
	e.versions = []string{
		"etcd: " + ver("etcd", "--version"),
		"kube-apiserver: " + ver("kube-apiserver", "--version"),
		"kube-controller-manager: " + ver("kube-controller-manager", "--version"),
		"crossplane core: " + ver("crossplane-core", "--version") + " (package runtime External, Usage webhook on 127.0.0.1)",
		"registry: crane registry serve (go-containerregistry)",
		"packages: the Configuration _output/xpkg/tenantkube.xpkg through an ImageConfig; its Function dependencies (" + strings.Join(functions, ", ") + ") resolved by Crossplane, their runtime played: served over mTLS by the test",
	}
}

// events returns the messages of the latest Warning events about objects
// called name.
func (e *env) events(ctx context.Context, name string) string {
	evs := &corev1.EventList{}
	if err := e.c.List(ctx, evs); err != nil {
		return err.Error()
	}
	seen := map[string]bool{}
	var out []string
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Name != name || ev.Type != corev1.EventTypeWarning || seen[ev.Reason] {
			continue
		}
		seen[ev.Reason] = true
		out = append(out, ev.Reason+": "+ev.Message)
	}
	return strings.Join(out, " | ")
}

// runFunctionCalls is the number of RunFunction calls f has answered, from
// its Prometheus metrics.
func (e *env) runFunctionCalls(f string) (int, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", e.fnMetricsPorts[f]))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "grpc_server_handled_total{") || !strings.Contains(l, `grpc_method="RunFunction"`) {
			continue
		}
		fields := strings.Fields(l)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, err
		}
		n += int(v)
	}
	return n, sc.Err()
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var _ = kerrors.IsNotFound

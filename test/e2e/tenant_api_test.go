//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tenantAPI is the tenant cluster's control plane: a second etcd and
// kube-apiserver on loopback, with a CA of its own, standing where Kamaji's
// pods would serve the tenant's API.
type tenantAPI struct {
	// etcdPort is 0 and etcd nil when the control plane keeps its data in
	// an etcd it shares (tenantAPIOptions.etcdURL).
	etcdPort, apiPort int
	dir               string
	ca                *ca
	admin             keyPair
	// kubeconfig is an admin (system:masters) kubeconfig of the tenant API.
	kubeconfig []byte
	etcd, api  *proc
	c          client.Client
}

// tenantAPIOptions sets a tenant control plane apart from the default one
// (an etcd of its own, a fresh CA and service-account key, its data under
// the kube-apiserver's default prefix, logs tenant-*.log).
type tenantAPIOptions struct {
	// etcdURL is an etcd already serving, which the kube-apiserver shares
	// with others, as Kamaji's control planes share a DataStore.
	etcdURL string
	// etcdPrefix is the kube-apiserver's --etcd-prefix: "/" + the
	// TenantControlPlane's dataStoreSchema, as Kamaji sets it.
	etcdPrefix string
	// ca and saKey, saPub (PEM) are the CA and service-account key pair to
	// serve with, as Kamaji serves with PKI Secrets that exist.
	ca           *ca
	saKey, saPub []byte
	// logName names the processes' logs: <logName>-etcd.log and
	// <logName>-kube-apiserver.log.
	logName string
	// encryptionConfig is the EncryptionConfiguration the API server
	// reads (--encryption-provider-config), as the function's Secret
	// N-encryption-config holds it; nil for none.
	encryptionConfig []byte
}

// etcdMember is a single-member etcd cluster on loopback.
type etcdMember struct {
	name, dataDir        string
	clientPort, peerPort int
}

// newEtcdMember is member name, keeping its data in dataDir, on two free
// ports.
func newEtcdMember(name, dataDir string) (etcdMember, error) {
	m := etcdMember{name: name, dataDir: dataDir}
	var err error
	if m.clientPort, err = freePort(); err != nil {
		return m, err
	}
	m.peerPort, err = freePort()
	return m, err
}

func (m etcdMember) clientURL() string { return fmt.Sprintf("http://127.0.0.1:%d", m.clientPort) }
func (m etcdMember) peerURL() string   { return fmt.Sprintf("http://127.0.0.1:%d", m.peerPort) }

// startEtcdMember starts m, logged as <logName>-etcd.log, and waits until
// it is healthy. A data directory that holds a member already (a restored
// one) is served as it is.
func (e *env) startEtcdMember(logName string, m etcdMember) (*proc, error) {
	p := newProc(e.logs, logName+"-etcd", e.binary("etcd"), []string{
		"--name=" + m.name, "--data-dir=" + m.dataDir,
		"--listen-client-urls=" + m.clientURL(), "--advertise-client-urls=" + m.clientURL(),
		"--listen-peer-urls=" + m.peerURL(), "--initial-advertise-peer-urls=" + m.peerURL(),
		"--initial-cluster=" + m.name + "=" + m.peerURL(), "--initial-cluster-token=" + m.name,
		"--unsafe-no-fsync", "--log-level=warn",
	})
	if err := p.start(); err != nil {
		return nil, err
	}
	if err := e.waitHTTP(p, m.clientURL()+"/health", nil, 30*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// startTenantAPI starts the tenant cluster's etcd and kube-apiserver.
func (e *env) startTenantAPI(name string) (*tenantAPI, error) {
	return e.startTenantAPIWith(name, tenantAPIOptions{})
}

// startTenantAPIWith starts the tenant cluster's kube-apiserver, and its
// etcd unless o.etcdURL names one.
func (e *env) startTenantAPIWith(name string, o tenantAPIOptions) (*tenantAPI, error) {
	ta := &tenantAPI{dir: filepath.Join(e.work, "tenant-"+name), ca: o.ca}
	logName := cmp.Or(o.logName, "tenant")
	var err error
	if ta.apiPort, err = freePort(); err != nil {
		return nil, err
	}
	if ta.ca == nil {
		if ta.ca, err = newCA(name + "-ca"); err != nil {
			return nil, err
		}
	}
	serving, err := ta.ca.issue("kube-apiserver", nil,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, loopback, true, false)
	if err != nil {
		return nil, err
	}
	if ta.admin, err = ta.ca.issue("kubernetes-super-admin", []string{"system:masters"}, nil, nil, false, true); err != nil {
		return nil, err
	}
	saKey, saPub := o.saKey, o.saPub
	if saKey == nil {
		if saKey, saPub, err = rsaKeyPEM(); err != nil {
			return nil, err
		}
	}
	pki := filepath.Join(ta.dir, "pki")
	if err := writeFiles(pki, map[string][]byte{
		"ca.crt": ta.ca.certPEM, "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
		"sa.key": saKey, "sa.pub": saPub,
	}); err != nil {
		return nil, err
	}
	ta.kubeconfig = kubeconfigFor(fmt.Sprintf("https://127.0.0.1:%d", ta.apiPort), ta.ca.certPEM, ta.admin, name)

	etcdURL := o.etcdURL
	if etcdURL == "" {
		m, err := newEtcdMember("tenant", filepath.Join(ta.dir, "etcd"))
		if err != nil {
			return nil, err
		}
		if ta.etcd, err = e.startEtcdMember(logName, m); err != nil {
			return nil, err
		}
		ta.etcdPort, etcdURL = m.clientPort, m.clientURL()
	}
	p := func(f string) string { return filepath.Join(pki, f) }
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ta.apiPort),
		"--cert-dir=" + filepath.Join(ta.dir, "apiserver"),
		"--tls-cert-file=" + p("apiserver.crt"), "--tls-private-key-file=" + p("apiserver.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--service-account-key-file=" + p("sa.pub"), "--service-account-signing-key-file=" + p("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.95.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	if o.etcdPrefix != "" {
		args = append(args, "--etcd-prefix="+o.etcdPrefix)
	}
	if o.encryptionConfig != nil {
		f := encryptionConfigPath(ta.dir)
		if err := writeFiles(filepath.Dir(f), map[string][]byte{filepath.Base(f): o.encryptionConfig}); err != nil {
			return nil, err
		}
		args = append(args, "--encryption-provider-config="+f)
	}
	ta.api = newProc(e.logs, logName+"-kube-apiserver", e.binary("kube-apiserver"), args)
	if err := ta.api.start(); err != nil {
		return nil, err
	}
	kcPath := filepath.Join(ta.dir, "admin.kubeconfig")
	if err := os.WriteFile(kcPath, ta.kubeconfig, 0o600); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kcPath)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 20 * time.Second
	if err := poll(60*time.Second, func(ctx context.Context) (bool, string, error) {
		if !ta.api.running() {
			return false, "", fmt.Errorf("tenant kube-apiserver exited:\n%s", tail(ta.api.log, 20))
		}
		s := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			return false, "", err
		}
		c, err := client.New(cfg, client.Options{Scheme: s})
		if err != nil {
			return false, err.Error(), nil
		}
		// The API server creates kube-system itself once it is up.
		if _, err := get(ctx, c, gvkNamespace, "", "kube-system"); err != nil {
			return false, err.Error(), nil
		}
		ta.c = c
		return true, "", nil
	}); err != nil {
		return nil, err
	}
	return ta, nil
}

// encryptionConfigPath is where the kube-apiserver of the control plane in
// dir reads its EncryptionConfiguration.
func encryptionConfigPath(dir string) string {
	return filepath.Join(dir, "encryption", "encryption-configuration.yaml")
}

// kubeconfigFor is an admin kubeconfig for server, with the client
// certificate kp.
func kubeconfigFor(server string, caPEM []byte, kp keyPair, name string) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: %[1]s-admin
  user:
    client-certificate-data: %[4]s
    client-key-data: %[5]s
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s-admin}
current-context: %[1]s
`, name, server, b64(caPEM), b64(kp.certPEM), b64(kp.keyPEM)))
}

// kamajiLabels are the labels Kamaji puts on the Secret of its resource
// component of TenantControlPlane n (Kamaji e51909fa
// internal/utilities/utilities.go:21-27, internal/constants/labels.go:7-12).
func kamajiLabels(n, component string) map[string]any {
	return map[string]any{"kamaji.clastix.io/project": "kamaji", "kamaji.clastix.io/name": n, "kamaji.clastix.io/component": component}
}

// playKamaji does for the cluster ns/n what Kamaji (and its Cluster API
// control-plane provider) would do once the KamajiControlPlane exists and
// the tenant control plane answers, in the provider's order, and nothing
// more (doc.go, Played components, has the sources):
//   - Kamaji: Secret N-admin-kubeconfig (keys admin.conf, admin.svc,
//     super-admin.conf, super-admin.svc) and its CA Secret N-ca (ca.crt,
//     ca.key and, for Cluster API, tls.crt, tls.key), with Kamaji's labels;
//   - the provider: KamajiControlPlane spec.controlPlaneEndpoint; the
//     KubevirtCluster's spec.controlPlaneEndpoint and status.ready (the
//     KubevirtCluster is annotated cluster.x-k8s.io/managed-by: kamaji, so
//     the KubeVirt provider leaves it to Kamaji); KamajiControlPlane status
//     replicas, selector and version, then
//     initialization.controlPlaneInitialized; Secret N-kubeconfig (key
//     value: admin.conf, type cluster.x-k8s.io/secret), N-ca left as Kamaji
//     wrote it; last status.ready.
//
// Every kubeconfig, .svc keys included, and the endpoint point at the
// tenant API server on loopback, where the test runs it.
func (e *env) playKamaji(ctx context.Context, ta *tenantAPI, ns, n string) error {
	kc := string(ta.kubeconfig)
	const kamaji = "kamaji-played-by-e2e"
	put := func(s *unstructured.Unstructured) error {
		if err := apply(ctx, e.c, s); err != nil {
			return fmt.Errorf("Secret %s: %w", s.GetName(), err)
		}
		return nil
	}
	// Kamaji e51909fa internal/resources/kubeconfig.go:70-83, 174-180, 226-243.
	adminLabels := kamajiLabels(n, "admin-kubeconfig")
	adminLabels["kamaji.clastix.io/certificate_lifecycle_controller"] = "kubeconfig"
	if err := put(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": n + "-admin-kubeconfig", "namespace": ns, "labels": adminLabels},
		"stringData": map[string]any{"admin.conf": kc, "admin.svc": kc, "super-admin.conf": kc, "super-admin.svc": kc},
	}}); err != nil {
		return err
	}
	// Kamaji e51909fa internal/resources/ca_certificate.go:55-68, 146-160.
	caCrt, caKey := string(ta.ca.certPEM), string(ta.ca.keyPEM())
	if err := put(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": n + "-ca", "namespace": ns, "labels": kamajiLabels(n, "ca")},
		"stringData": map[string]any{"ca.crt": caCrt, "ca.key": caKey, "tls.crt": caCrt, "tls.key": caKey},
	}}); err != nil {
		return err
	}
	endpoint := map[string]any{"host": "127.0.0.1", "port": int64(ta.apiPort)}
	kcp, err := get(ctx, e.c, gvkKCP, ns, n)
	if err != nil {
		return err
	}
	version, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
	if !strings.HasPrefix(version, "v") { // provider v0.20.0 controllers/kamajicontrolplane_controller_tcp.go:84-88
		version = "v" + version
	}
	replicas, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas")
	// Provider v0.20.0 controllers/kamajicontrolplane_controller.go:205-209, _cluster_patch.go:58-80.
	if err := patchAs(ctx, e.c, kamaji, gvkKCP, ns, n, "", map[string]any{"spec": map[string]any{"controlPlaneEndpoint": endpoint}}); err != nil {
		return fmt.Errorf("KamajiControlPlane endpoint: %w", err)
	}
	// Provider v0.20.0 controllers/kamajicontrolplane_controller_cluster_patch.go:124-125, 169-198.
	if err := patchAs(ctx, e.c, kamaji, gvkKVCluster, ns, n, "", map[string]any{"spec": map[string]any{"controlPlaneEndpoint": endpoint}}); err != nil {
		return fmt.Errorf("KubevirtCluster endpoint: %w", err)
	}
	if err := patchAs(ctx, e.c, kamaji, gvkKVCluster, ns, n, "status", map[string]any{"status": map[string]any{"ready": true}}); err != nil {
		return fmt.Errorf("KubevirtCluster status: %w", err)
	}
	// Provider v0.20.0 controllers/kamajicontrolplane_controller.go:294-319
	// (ready is false until 341-344; the selector: Kamaji e51909fa
	// internal/resources/k8s_deployment_resource.go:111-117).
	if err := patchAs(ctx, e.c, kamaji, gvkKCP, ns, n, "status", map[string]any{"status": map[string]any{
		"ready": false, "externalManagedControlPlane": true, "version": version, "selector": "kamaji.clastix.io/name=" + n,
		"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
	}}); err != nil {
		return fmt.Errorf("KamajiControlPlane status: %w", err)
	}
	if err := patchAs(ctx, e.c, kamaji, gvkKCP, ns, n, "status", map[string]any{"status": map[string]any{
		"initialization": map[string]any{"controlPlaneInitialized": true},
	}}); err != nil {
		return fmt.Errorf("KamajiControlPlane initialized: %w", err)
	}
	// Provider v0.20.0 controllers/kamajicontrolplane_controller_resources.go:130-176 (N-ca: 78-83).
	if err := put(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
		"metadata": map[string]any{"name": n + "-kubeconfig", "namespace": ns, "labels": map[string]any{
			"cluster.x-k8s.io/cluster-name": n, "kamaji.clastix.io/component": "capi", "kamaji.clastix.io/secret": "kubeconfig",
			"kamaji.clastix.io/cluster": n, "kamaji.clastix.io/tcp": n}},
		"stringData": map[string]any{"value": kc},
	}}); err != nil {
		return err
	}
	// Provider v0.20.0 controllers/kamajicontrolplane_controller.go:341-344.
	if err := patchAs(ctx, e.c, kamaji, gvkKCP, ns, n, "status", map[string]any{"status": map[string]any{"ready": true}}); err != nil {
		return fmt.Errorf("KamajiControlPlane ready: %w", err)
	}
	return nil
}

// patchAs merge-patches (sub: "" or "status") an object as field manager
// owner.
func patchAs(ctx context.Context, c client.Client, owner string, gvk schema.GroupVersionKind, ns, name, sub string, patch map[string]any) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	p := client.RawPatch(types.MergePatchType, b)
	if sub == "status" {
		return c.Status().Patch(ctx, u, p, client.FieldOwner(owner))
	}
	return c.Patch(ctx, u, p, client.FieldOwner(owner))
}

// keyPEM is the CA's private key as PKCS#8 PEM.
func (c *ca) keyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

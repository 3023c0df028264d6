//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestBackupRestore plays what the etcd-operator.cozystack.io/v1alpha2
// operator does for an EtcdSnapshot and an EtcdCluster's
// spec.bootstrap.restore, and what Kamaji does with the restored PKI
// Secrets, on a real etcd and kube-apiserver (no Crossplane, no operator:
// neither runs here):
//
//   - a tenant control plane (etcd + kube-apiserver with a CA and
//     service-account key of its own) holds a namespace, a ConfigMap and a
//     ServiceAccount, and issues that ServiceAccount a token (TokenRequest);
//   - the backup: a snapshot taken with etcd's own client
//     (clientv3/snapshot.SaveWithVersion, as the operator's snapshot agent
//     streams clientv3's Snapshot), and the PKI the function carries (cluster
//     CA, service-account key pair) encrypted with age to a platform key, as
//     the backup's EnvironmentConfig holds it; then the source etcd and
//     kube-apiserver are stopped and their directories removed;
//   - the restore: the PKI decrypted with the platform's identity; the
//     snapshot restored into a new data directory with etcdutl's
//     snapshot.Restore (etcd's own restore: a new member and cluster ID),
//     a new etcd started on it, and a new
//     kube-apiserver on new ports with the restored CA and service-account
//     key (a new serving certificate signed by the restored CA, as Kamaji
//     issues one);
//   - checks: the admin kubeconfig issued before the backup (its server
//     pointed at the new address) lists the namespace and reads the
//     ConfigMap's data; the token issued before the backup authenticates
//     as its ServiceAccount, with the UID it had before (a TokenReview of the
//     restored API server), while the same token with a broken signature
//     is refused.
func TestBackupRestore(t *testing.T) {
	e := newBackupEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	src, err := e.startTenantAPI("backup-src")
	if err != nil {
		fatal(t, err)
	}
	cs := clientFor(t, src.kubeconfig)
	const ns, sa = "workload", "app"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}, Data: map[string]string{"answer": "42"}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	acct, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil {
		fatal(t, err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		fatal(t, err)
	}

	// The backup.
	dbPath := filepath.Join(e.work, "backup-src.db")
	if _, err := clientsnapshot.SaveWithVersion(ctx, zap.NewNop(), clientv3.Config{
		Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", src.etcdPort)}, DialTimeout: 10 * time.Second,
	}, dbPath); err != nil {
		fatalf(t, "etcd snapshot: %v", err)
	}
	platform, err := age.GenerateX25519Identity()
	if err != nil {
		fatal(t, err)
	}
	srcPKI := filepath.Join(src.dir, "pki")
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(srcPKI, f))
		if err != nil {
			fatal(t, err)
		}
		return b
	}
	bundle := sealPKI(t, platform.Recipient(), map[string]map[string][]byte{
		"ca":             {"ca.crt": src.ca.certPEM, "ca.key": src.ca.keyPEM()},
		"sa-certificate": {"sa.pub": read("sa.pub"), "sa.key": read("sa.key")},
	})
	if bytes.Contains([]byte(bundle), src.ca.keyPEM()) {
		fatal(t, "the PKI bundle holds the CA key in clear")
	}
	oldKubeconfig := src.kubeconfig
	if !src.api.stop() || !src.etcd.stop() {
		fatal(t, "the source control plane did not stop")
	}
	if err := os.RemoveAll(src.dir); err != nil {
		fatal(t, err)
	}

	// The restore.
	pki := openPKI(t, platform, bundle)
	restoredCA, err := parseCA(pki["ca"]["ca.crt"], pki["ca"]["ca.key"])
	if err != nil {
		fatal(t, err)
	}
	dir := filepath.Join(e.work, "restored")
	etcdPort, apiPort, peer := mustPort(t), mustPort(t), mustPort(t)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	if err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath: dbPath, Name: "restored", OutputDataDir: filepath.Join(dir, "etcd"),
		PeerURLs: []string{peerURL}, InitialCluster: "restored=" + peerURL, InitialClusterToken: "restored",
	}); err != nil {
		fatalf(t, "etcdutl snapshot restore: %v", err)
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	etcd := newProc(e.logs, "restored-etcd", e.binary("etcd"), []string{
		"--name=restored", "--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=restored=" + peerURL, "--initial-cluster-token=restored", "--unsafe-no-fsync", "--log-level=warn",
	})
	if err := etcd.start(); err != nil {
		fatal(t, err)
	}
	defer etcd.stop()
	if err := e.waitHTTP(etcd, etcdURL+"/health", nil, 30*time.Second); err != nil {
		fatal(t, err)
	}
	serving, err := restoredCA.issue("kube-apiserver", nil, []string{"localhost"}, loopback, true, false)
	if err != nil {
		fatal(t, err)
	}
	if err := writeFiles(filepath.Join(dir, "pki"), map[string][]byte{
		"ca.crt": pki["ca"]["ca.crt"], "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
		"sa.pub": pki["sa-certificate"]["sa.pub"], "sa.key": pki["sa-certificate"]["sa.key"],
	}); err != nil {
		fatal(t, err)
	}
	p := func(f string) string { return filepath.Join(dir, "pki", f) }
	api := newProc(e.logs, "restored-kube-apiserver", e.binary("kube-apiserver"), []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir=" + filepath.Join(dir, "apiserver"),
		"--tls-cert-file=" + p("apiserver.crt"), "--tls-private-key-file=" + p("apiserver.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--service-account-key-file=" + p("sa.pub"), "--service-account-signing-key-file=" + p("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.95.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	})
	if err := api.start(); err != nil {
		fatal(t, err)
	}
	defer api.stop()

	// The kubeconfig issued before the backup, pointed at the restored
	// control plane's address.
	kc := bytes.Replace(oldKubeconfig, fmt.Appendf(nil, "https://127.0.0.1:%d", src.apiPort), fmt.Appendf(nil, "https://127.0.0.1:%d", apiPort), 1)
	restored := clientFor(t, kc)
	if err := poll(90*time.Second, func(ctx context.Context) (bool, string, error) {
		if !api.running() {
			return false, "", fmt.Errorf("restored kube-apiserver exited:\n%s", tail(api.log, 20))
		}
		cm, err := restored.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if cm.Data["answer"] != "42" {
			return false, "", fmt.Errorf("restored ConfigMap data %v, want answer: 42", cm.Data)
		}
		return true, "", nil
	}); err != nil {
		fatalf(t, "the admin kubeconfig issued before the backup on the restored cluster: %v", err)
	}
	if _, err := restored.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		errorf(t, "namespace %s after the restore: %v", ns, err)
	}

	// The token issued before the backup, reviewed by the restored API
	// server (TokenReview: its service-account key verifies the signature,
	// and the ServiceAccount it names must exist with the token's UID).
	review := func(token string) *authenticationv1.TokenReview {
		tr, err := restored.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			fatalf(t, "TokenReview: %v", err)
		}
		return tr
	}
	tr := review(tok.Status.Token)
	if !tr.Status.Authenticated {
		fatalf(t, "the ServiceAccount token issued before the backup is not authenticated: %q", tr.Status.Error)
	}
	if got, want := tr.Status.User.Username, "system:serviceaccount:"+ns+":"+sa; got != want {
		errorf(t, "token authenticates as %q, want %q", got, want)
	}
	if got := tr.Status.User.UID; got != string(acct.UID) {
		errorf(t, "token's ServiceAccount UID %q, want the one created before the backup, %q", got, acct.UID)
	}
	// A token the restored key did not sign is refused: the check above
	// can fail.
	forged := tok.Status.Token[:len(tok.Status.Token)-4] + "AAAA"
	if forged == tok.Status.Token {
		forged = tok.Status.Token[:len(tok.Status.Token)-4] + "BBBB"
	}
	if review(forged).Status.Authenticated {
		t.Error("a token with a broken signature authenticated")
	}
}

func newBackupEnv(t *testing.T) *env {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fatal(t, err)
	}
	e := &env{root: root, bin: filepath.Join(root, "bin"), logs: filepath.Join(root, "_output", "e2e", "logs", "backup")}
	if d := os.Getenv("E2E_BIN"); d != "" {
		e.bin = d
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(e.binary(b)); err != nil {
			fatalf(t, "bin/%s is missing: run make e2e-tools: %v", b, err)
		}
	}
	if err := os.MkdirAll(e.logs, 0o755); err != nil {
		fatal(t, err)
	}
	if e.work, err = os.MkdirTemp("", "tenantkube-e2e-backup-"); err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(e.work)
		}
	})
	return e
}

func mustPort(t *testing.T) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		fatal(t, err)
	}
	return p
}

func clientFor(t *testing.T, kubeconfig []byte) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		fatal(t, err)
	}
	cfg.Timeout = 20 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fatal(t, err)
	}
	return cs
}

// sealPKI is the JSON of pki encrypted to to, armored: the "pki" of a
// backup's EnvironmentConfig.
func sealPKI(t *testing.T, to age.Recipient, pki map[string]map[string][]byte) string {
	t.Helper()
	plain, err := json.Marshal(pki)
	if err != nil {
		fatal(t, err)
	}
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, to)
	if err != nil {
		fatal(t, err)
	}
	if _, err := w.Write(plain); err != nil {
		fatal(t, err)
	}
	if err := w.Close(); err != nil {
		fatal(t, err)
	}
	if err := aw.Close(); err != nil {
		fatal(t, err)
	}
	return buf.String()
}

func openPKI(t *testing.T, id age.Identity, armored string) map[string]map[string][]byte {
	t.Helper()
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), id)
	if err != nil {
		fatal(t, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		fatal(t, err)
	}
	var out map[string]map[string][]byte
	if err := json.Unmarshal(plain, &out); err != nil {
		fatal(t, err)
	}
	return out
}

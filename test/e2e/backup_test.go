//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tenantkube/tenantkube/internal/encryption"
)

// TestBackupRestore plays what the etcd-operator.cozystack.io/v1alpha2
// operator does for an EtcdSnapshot and an EtcdCluster's
// spec.bootstrap.restore, and what Kamaji does with the restored PKI
// Secrets, on a real etcd and kube-apiserver (no Crossplane, no operator:
// neither runs here):
//
//   - a tenant control plane (etcd + kube-apiserver with a CA and
//     service-account key of its own, and the EncryptionConfiguration the
//     control-plane function composes, read from the render golden
//     "encryption") holds a namespace, a ConfigMap, a Secret of a random
//     value (stored in etcd under the secretbox prefix, not in clear) and
//     a ServiceAccount, and issues that ServiceAccount a token
//     (TokenRequest);
//   - the backup: a snapshot taken as the operator's snapshot agent takes
//     it (clientv3's Snapshot stream into a file), and the PKI the
//     function carries (cluster CA, service-account key pair) encrypted
//     with age to a platform key, as
//     the backup's EnvironmentConfig holds it, with the cluster's
//     encryption Secret; then the source etcd and kube-apiserver are
//     stopped and their directories removed, and the raw snapshot file is
//     searched: the Secret's value is not in it (the ConfigMap's key is);
//   - the restore: the PKI decrypted with the platform's identity; the
//     snapshot restored into a new data directory with etcdutl's
//     snapshot.Restore (etcd's own restore: a new member and cluster ID;
//     the hash check skipped, as the operator's restore agent does),
//     a new etcd started on it, and a new
//     kube-apiserver on new ports with the restored CA and service-account
//     key (a new serving certificate signed by the restored CA, as Kamaji
//     issues one);
//   - checks: the admin kubeconfig issued before the backup (its server
//     pointed at the new address) lists the namespace and reads the
//     ConfigMap's data and the Secret's, through the EncryptionConfiguration
//     composed from the keys the backup carried; the token issued before the backup authenticates
//     as its ServiceAccount, with the UID it had before (a TokenReview of the
//     restored API server), while the same token with a broken signature
//     is refused;
//   - then a key rotation from generation 1 to 2 on an etcd and
//     kube-apiserver of their own, with the configurations of each phase
//     the function composes and its rewrite Job played (keyRotation).
func TestBackupRestore(t *testing.T) {
	e := newBackupEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	keys := renderedEncryption(t, e, "encryption")
	src, err := e.startTenantAPIWith("backup-src", tenantAPIOptions{encryptionConfig: keys[encryption.ConfigKey]})
	if err != nil {
		fatal(t, err)
	}
	w := &workload{ns: "workload", configMap: "keep", data: map[string]string{"answer": "42"}, sa: "app",
		secret: "known", secretData: map[string][]byte{"value": []byte("tenantkube-e2e-secret-" + randomHex(t))}}
	w.create(ctx, t, clientFor(t, src.kubeconfig))
	w.checkEncrypted(ctx, t, fmt.Sprintf("http://127.0.0.1:%d", src.etcdPort))

	// The backup: the cluster's encryption Secret travels with its PKI,
	// under its role (backup.EncryptionRole).
	platform := platformKey(t)
	pki := clusterPKI(t, src)
	pki[encryptionRole] = keys
	db, sealed := e.backup(ctx, t, "backup-src", fmt.Sprintf("http://127.0.0.1:%d", src.etcdPort),
		platform.Recipient(), map[string]pkiSecrets{"backup-src": pki}, src.ca)
	discard(t, []*proc{src.api, src.etcd}, src.dir)
	w.checkSnapshot(t, db)

	// The restore: the keys opened with the PKI make the restored API
	// server's configuration, as the function composes it from them.
	opened := openPKI[pkiSecrets](t, platform, sealed["backup-src"])
	ks, err := encryption.ReadKeySet(opened[encryptionRole])
	if err != nil || ks == nil {
		fatalf(t, "the backup carries no encryption keys: %v", err)
	}
	cfg, err := ks.Data()
	if err != nil {
		fatal(t, err)
	}
	restored := e.restoreControlPlane(t, "restored", db, opened, "", cfg[encryption.ConfigKey])
	w.checkRestored(ctx, t, restored, restoredClient(t, src, restored))

	t.Run("key rotation", func(t *testing.T) { keyRotation(ctx, t, e) })
}

// encryptionRole is the role of the cluster's encryption Secret in a
// backup's PKI (the control-plane function's backup.EncryptionRole).
const encryptionRole = "encryption-config"

// renderedEncryption is the data of the Secret demo-encryption-config of
// the render golden golden ("encryption": the EncryptionConfiguration and
// key set the control-plane function composes for a new cluster).
func renderedEncryption(t *testing.T, e *env, golden string) map[string][]byte {
	t.Helper()
	objs, err := decodeFile(e.path("test", "testdata", "control-plane", golden+".golden.yaml"))
	if err != nil {
		fatalf(t, "read the render golden: %v", err)
	}
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetName() != "demo-encryption-config" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		out := map[string][]byte{}
		for k, v := range data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				fatal(t, err)
			}
			out[k] = b
		}
		return out
	}
	fatalf(t, "the render golden holds no Secret demo-encryption-config")
	return nil
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		fatal(t, err)
	}
	return hex.EncodeToString(b)
}

// checkEncrypted checks that the etcd at etcdURL holds w's Secret as
// kube-apiserver's secretbox provider writes it, prefixed
// k8s:enc:secretbox:v1:<key name>: (k8s.io/apiserver v0.36.4
// pkg/server/options/encryptionconfig/config.go:63,699,710), its value
// nowhere in clear.
func (w *workload) checkEncrypted(ctx context.Context, t *testing.T, etcdURL string) {
	t.Helper()
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	r, err := ec.Get(ctx, "/registry/secrets/"+w.ns+"/"+w.secret)
	if err != nil || len(r.Kvs) != 1 {
		fatalf(t, "etcd holds no Secret %s/%s: %v", w.ns, w.secret, err)
	}
	v := r.Kvs[0].Value
	if !bytes.HasPrefix(v, []byte("k8s:enc:secretbox:v1:generation-1:")) || bytes.Contains(v, w.secretData["value"]) {
		errorf(t, "the Secret is stored as %q..., want secretbox with key generation-1 and no clear value", v[:min(len(v), 40)])
	}
}

// checkSnapshot checks the raw snapshot file db: w's Secret value is not
// in it, while its ConfigMap's data, which is not encrypted, is (the
// search finds what is there).
func (w *workload) checkSnapshot(t *testing.T, db string) {
	t.Helper()
	raw, err := os.ReadFile(db)
	if err != nil {
		fatal(t, err)
	}
	if bytes.Contains(raw, w.secretData["value"]) {
		errorf(t, "the snapshot %s holds the Secret's value in clear", db)
	}
	if !bytes.Contains(raw, []byte("/registry/configmaps/"+w.ns+"/"+w.configMap)) {
		errorf(t, "the snapshot %s does not hold the ConfigMap's key: the search proves nothing", db)
	}
}

// TestTenantBackupRestore plays the same for a Tenant's etcd, again on a
// real etcd and real kube-apiservers (no Crossplane, no operator, no
// Kamaji): the control planes of a namespace's TenantClusters share one
// etcd, each under the key prefix Kamaji derives from its dataStoreSchema
// (--etcd-prefix=/<dataStoreSchema>).
//
//   - one etcd and two kube-apiservers on it, cluster-a and cluster-b, each
//     with a CA and service-account key of its own and
//     --etcd-prefix=/<schema> (dataStoreSchema of the cluster in the
//     namespace, two values); cluster-a holds a namespace, a ConfigMap and a
//     ServiceAccount with a token, cluster-b a ConfigMap of another name in
//     a namespace of the same name;
//   - the backup: one snapshot of the etcd, taken as above, and each
//     cluster's PKI sealed on its own, as the function's PKI objects hold
//     it; then both kube-apiservers and the etcd are stopped and their
//     directories removed;
//   - the restore of cluster-a alone: its PKI opened, the snapshot
//     restored with etcdutl into a new etcd of cluster-a's own (it holds
//     both clusters' keys), and a new kube-apiserver with cluster-a's
//     restored CA and service-account key and cluster-a's prefix;
//   - checks: those of TestBackupRestore, for cluster-a; cluster-b's
//     ConfigMap is not found through the restored API server, while the
//     restored etcd holds that ConfigMap's key and others under cluster-b's
//     prefix, and none under the default prefix, /registry.
func TestTenantBackupRestore(t *testing.T) {
	e := newBackupEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	shared, err := newEtcdMember("tenant", filepath.Join(e.work, "tenant-etcd"))
	if err != nil {
		fatal(t, err)
	}
	etcd, err := e.startEtcdMember("tenant-shared", shared)
	if err != nil {
		fatal(t, err)
	}
	schemaA, schemaB := dataStoreSchema("tenant-backup", "cluster-a"), dataStoreSchema("tenant-backup", "cluster-b")
	start := func(name, schema string) *tenantAPI {
		// Kamaji e51909fa internal/builders/controlplane/deployment.go:766.
		ta, err := e.startTenantAPIWith(name, tenantAPIOptions{etcdURL: shared.clientURL(), etcdPrefix: "/" + schema, logName: name})
		if err != nil {
			fatal(t, err)
		}
		return ta
	}
	a, b := start("cluster-a", schemaA), start("cluster-b", schemaB)
	wa := &workload{ns: "workload", configMap: "keep", data: map[string]string{"answer": "42"}, sa: "app"}
	wa.create(ctx, t, clientFor(t, a.kubeconfig))
	wb := &workload{ns: "workload", configMap: "other-cluster", data: map[string]string{"cluster": "b"}}
	wb.create(ctx, t, clientFor(t, b.kubeconfig))

	// The backup.
	platform := platformKey(t)
	db, sealed := e.backup(ctx, t, "tenant", shared.clientURL(), platform.Recipient(),
		map[string]pkiSecrets{"cluster-a": clusterPKI(t, a), "cluster-b": clusterPKI(t, b)}, a.ca, b.ca)
	discard(t, []*proc{a.api, b.api, etcd}, a.dir, b.dir, shared.dataDir)

	// The restore of cluster-a.
	if got := openPKI[pkiSecrets](t, platform, sealed["cluster-b"])["ca"]["ca.crt"]; !bytes.Equal(got, b.ca.certPEM) {
		errorf(t, "the sealed cluster-b CA certificate is not cluster-b's:\n%s", got)
	}
	restored := e.restoreControlPlane(t, "cluster-a-restored", db, openPKI[pkiSecrets](t, platform, sealed["cluster-a"]), "/"+schemaA, nil)
	cs := restoredClient(t, a, restored)
	wa.checkRestored(ctx, t, restored, cs)

	// cluster-b's objects sit in the restored etcd, unserved.
	if _, err := cs.CoreV1().ConfigMaps(wb.ns).Get(ctx, wb.configMap, metav1.GetOptions{}); !kerrors.IsNotFound(err) {
		errorf(t, "cluster-b's ConfigMap %s/%s through the restored cluster-a: %v, want NotFound", wb.ns, wb.configMap, err)
	}
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", restored.etcdPort)}, DialTimeout: 10 * time.Second})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	keys := func(key string, opts ...clientv3.OpOption) int64 {
		r, err := ec.Get(ctx, key, append(opts, clientv3.WithCountOnly())...)
		if err != nil {
			fatalf(t, "etcd get %s: %v", key, err)
		}
		return r.Count
	}
	for _, p := range []string{"/" + schemaA + "/", "/" + schemaB + "/"} {
		if keys(p, clientv3.WithPrefix()) == 0 {
			errorf(t, "the restored etcd holds no keys under %s", p)
		}
	}
	if k := "/" + schemaB + "/configmaps/" + wb.ns + "/" + wb.configMap; keys(k) != 1 {
		errorf(t, "the restored etcd does not hold cluster-b's ConfigMap at %s", k)
	}
	if n := keys("/registry/", clientv3.WithPrefix()); n != 0 {
		errorf(t, "the restored etcd holds %d keys under the default prefix /registry/", n)
	}
}

// workload is what a test leaves in a tenant cluster before the backup: a
// namespace holding a ConfigMap and, when sa is set, a ServiceAccount with
// a token (TokenRequest).
type workload struct {
	ns, configMap string
	data          map[string]string
	sa            string
	// secret, when set, is a Secret of ns holding secretData.
	secret     string
	secretData map[string][]byte
	// acct and token are the ServiceAccount and its token, once created.
	acct  *corev1.ServiceAccount
	token string
}

func (w *workload) create(ctx context.Context, t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	if _, err := cs.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.configMap}, Data: w.data}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	if w.secret != "" {
		if _, err := cs.CoreV1().Secrets(w.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.secret}, Data: w.secretData}, metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
	}
	if w.sa == "" {
		return
	}
	var err error
	if w.acct, err = cs.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: w.sa}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, w.sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		fatal(t, err)
	}
	w.token = tok.Status.Token
}

// checkRestored checks w on the restored control plane through restored,
// the admin kubeconfig issued before the backup (restoredClient): it lists
// the namespace and reads the ConfigMap's data; the token issued before the
// backup authenticates as its ServiceAccount, with the UID it had before (a
// TokenReview of the restored API server: its service-account key verifies
// the signature, and the ServiceAccount it names must exist with the
// token's UID), while the same token with a broken signature is refused.
func (w *workload) checkRestored(ctx context.Context, t *testing.T, ta *tenantAPI, restored *kubernetes.Clientset) {
	t.Helper()
	if err := poll(90*time.Second, func(ctx context.Context) (bool, string, error) {
		if !ta.api.running() {
			return false, "", fmt.Errorf("restored kube-apiserver exited:\n%s", tail(ta.api.log, 20))
		}
		cm, err := restored.CoreV1().ConfigMaps(w.ns).Get(ctx, w.configMap, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if !maps.Equal(cm.Data, w.data) {
			return false, "", fmt.Errorf("restored ConfigMap data %v, want %v", cm.Data, w.data)
		}
		return true, "", nil
	}); err != nil {
		fatalf(t, "the admin kubeconfig issued before the backup on the restored cluster: %v", err)
	}
	if _, err := restored.CoreV1().Namespaces().Get(ctx, w.ns, metav1.GetOptions{}); err != nil {
		errorf(t, "namespace %s after the restore: %v", w.ns, err)
	}
	if w.secret != "" {
		s, err := restored.CoreV1().Secrets(w.ns).Get(ctx, w.secret, metav1.GetOptions{})
		if err != nil || !bytes.Equal(s.Data["value"], w.secretData["value"]) {
			errorf(t, "the encrypted Secret %s/%s after the restore: %v", w.ns, w.secret, err)
		}
	}
	if w.sa == "" {
		return
	}
	review := func(token string) *authenticationv1.TokenReview {
		tr, err := restored.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			fatalf(t, "TokenReview: %v", err)
		}
		return tr
	}
	tr := review(w.token)
	if !tr.Status.Authenticated {
		fatalf(t, "the ServiceAccount token issued before the backup is not authenticated: %q", tr.Status.Error)
	}
	if got, want := tr.Status.User.Username, "system:serviceaccount:"+w.ns+":"+w.sa; got != want {
		errorf(t, "token authenticates as %q, want %q", got, want)
	}
	if got := tr.Status.User.UID; got != string(w.acct.UID) {
		errorf(t, "token's ServiceAccount UID %q, want the one created before the backup, %q", got, w.acct.UID)
	}
	// A token the restored key did not sign is refused: the check above
	// can fail.
	forged := w.token[:len(w.token)-4] + "AAAA"
	if forged == w.token {
		forged = w.token[:len(w.token)-4] + "BBBB"
	}
	if review(forged).Status.Authenticated {
		t.Error("a token with a broken signature authenticated")
	}
}

// pkiSecrets is one cluster's PKI as a backup carries it: Secret ("ca",
// "sa-certificate"), key, value.
type pkiSecrets = map[string]map[string][]byte

// clusterPKI is the PKI the function carries for ta: its cluster CA and
// service-account key pair.
func clusterPKI(t *testing.T, ta *tenantAPI) pkiSecrets {
	t.Helper()
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(ta.dir, "pki", f))
		if err != nil {
			fatal(t, err)
		}
		return b
	}
	return pkiSecrets{
		"ca":             {"ca.crt": ta.ca.certPEM, "ca.key": ta.ca.keyPEM()},
		"sa-certificate": {"sa.pub": read("sa.pub"), "sa.key": read("sa.key")},
	}
}

func platformKey(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		fatal(t, err)
	}
	return id
}

// backup takes a snapshot of the etcd at etcdURL as the operator's snapshot
// agent does (clientv3's Snapshot stream written to a file) into the work
// directory as name.db, and
// seals each cluster's pki to to (sealPKI), as the function's PKI objects
// hold it. It returns the snapshot's path and the sealed PKI by cluster,
// none of which may hold the key of any of cas in clear.
func (e *env) backup(ctx context.Context, t *testing.T, name, etcdURL string, to age.Recipient, pki map[string]pkiSecrets, cas ...*ca) (db string, sealed map[string]string) {
	t.Helper()
	db = filepath.Join(e.work, name+".db")
	// Cozystack etcd-operator v0.5.4 internal/agent/snapshot.go:121-148, 180-195.
	if err := func() error {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		defer cli.Close()
		rc, err := cli.Snapshot(ctx)
		if err != nil {
			return err
		}
		defer rc.Close()
		f, err := os.Create(db)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, rc); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}(); err != nil {
		fatalf(t, "etcd snapshot: %v", err)
	}
	sealed = map[string]string{}
	for cluster, p := range pki {
		sealed[cluster] = sealPKI(t, to, p)
		for _, c := range cas {
			if bytes.Contains([]byte(sealed[cluster]), c.keyPEM()) {
				fatalf(t, "the sealed PKI of %s holds a CA key in clear", cluster)
			}
		}
	}
	return db, sealed
}

// discard stops ps and removes dirs: the source is gone.
func discard(t *testing.T, ps []*proc, dirs ...string) {
	t.Helper()
	for _, p := range ps {
		if !p.stop() {
			fatalf(t, "%s did not stop", p.name)
		}
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			fatal(t, err)
		}
	}
}

// restoreControlPlane is what the operator and Kamaji make of a backup for
// one cluster: the snapshot db restored with etcdutl's snapshot.Restore
// (etcd's own restore: a new member and cluster ID) into a new data
// directory, a new etcd started on it, and a new kube-apiserver on new
// ports with the cluster's restored CA and service-account key (pki) and
// --etcd-prefix etcdPrefix ("": the default) (startTenantAPIWith: a new
// serving certificate signed by the restored CA, as Kamaji issues one).
func (e *env) restoreControlPlane(t *testing.T, name, db string, pki pkiSecrets, etcdPrefix string, encryptionConfig []byte) *tenantAPI {
	t.Helper()
	restoredCA, err := parseCA(pki["ca"]["ca.crt"], pki["ca"]["ca.key"])
	if err != nil {
		fatal(t, err)
	}
	m, err := newEtcdMember(name, filepath.Join(e.work, "tenant-"+name, "etcd"))
	if err != nil {
		fatal(t, err)
	}
	// Cozystack etcd-operator v0.5.4 internal/agent/restore.go:139-150.
	if err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath: db, Name: m.name, OutputDataDir: m.dataDir,
		PeerURLs: []string{m.peerURL()}, InitialCluster: m.name + "=" + m.peerURL(), InitialClusterToken: m.name,
		SkipHashCheck: true,
	}); err != nil {
		fatalf(t, "etcdutl snapshot restore: %v", err)
	}
	etcd, err := e.startEtcdMember(name, m)
	if err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { etcd.stop() })
	ta, err := e.startTenantAPIWith(name, tenantAPIOptions{
		etcdURL: m.clientURL(), etcdPrefix: etcdPrefix, logName: name,
		ca: restoredCA, saKey: pki["sa-certificate"]["sa.key"], saPub: pki["sa-certificate"]["sa.pub"],
		encryptionConfig: encryptionConfig,
	})
	if err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { ta.api.stop() })
	ta.etcd, ta.etcdPort = etcd, m.clientPort
	return ta
}

// restoredClient is a client of after with the admin kubeconfig issued for
// before, its server pointed at after's address.
func restoredClient(t *testing.T, before, after *tenantAPI) *kubernetes.Clientset {
	t.Helper()
	return clientFor(t, bytes.Replace(before.kubeconfig,
		fmt.Appendf(nil, "https://127.0.0.1:%d", before.apiPort), fmt.Appendf(nil, "https://127.0.0.1:%d", after.apiPort), 1))
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
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl"} {
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
// backup's EnvironmentConfig (a cluster's pkiSecrets, or a Tenant's: cluster
// name to pkiSecrets).
func sealPKI(t *testing.T, to age.Recipient, pki any) string {
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

// openPKI is the PKI sealPKI sealed, decrypted with id.
func openPKI[T any](t *testing.T, id age.Identity, armored string) T {
	t.Helper()
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), id)
	if err != nil {
		fatal(t, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		fatal(t, err)
	}
	var out T
	if err := json.Unmarshal(plain, &out); err != nil {
		fatal(t, err)
	}
	return out
}

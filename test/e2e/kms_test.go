//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kms/pkg/service"

	"github.com/tenantkube/tenantkube/internal/encryption"
)

// kmsGolden is the render golden of a cluster encrypting with the
// platform's KMS v2 plugin; kmsEndpoint its endpoint there, and
// kmsPrefix what kube-apiserver prefixes each value it stores with
// (k8s:enc:kms:v2:<provider name>:, k8s.io/apiserver v0.36.4
// pkg/server/options/encryptionconfig/config.go:65,793).
const (
	kmsGolden   = "encryption-kms"
	kmsEndpoint = "unix:///var/run/tenantkube-kms/plugin.sock"
	kmsPrefix   = "k8s:enc:kms:v2:platform-kms-generation-1:"
)

// aesPlugin is a minimal KMS v2 plugin: it wraps each data key
// kube-apiserver hands it with AES-256-GCM under a key of its own
// (random nonce before the ciphertext), as a KMS holding the key
// encryption key would; k8s.io/kms/pkg/service serves it over gRPC.
type aesPlugin struct {
	aead  cipher.AEAD
	keyID string
}

func newAESPlugin(t *testing.T) *aesPlugin {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		fatal(t, err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		fatal(t, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		fatal(t, err)
	}
	return &aesPlugin{aead: aead, keyID: "e2e-key-1"}
}

func (p *aesPlugin) Encrypt(_ context.Context, _ string, data []byte) (*service.EncryptResponse, error) {
	nonce := make([]byte, p.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &service.EncryptResponse{Ciphertext: p.aead.Seal(nonce, nonce, data, nil), KeyID: p.keyID}, nil
}

func (p *aesPlugin) Decrypt(_ context.Context, _ string, req *service.DecryptRequest) ([]byte, error) {
	n := p.aead.NonceSize()
	if req.KeyID != p.keyID || len(req.Ciphertext) < n {
		return nil, errors.New("not this plugin's key")
	}
	return p.aead.Open(nil, req.Ciphertext[:n], req.Ciphertext[n:], nil)
}

// Status reports healthy under its key id, as kube-apiserver requires
// (healthz "ok", version "v2": k8s.io/apiserver v0.36.4
// pkg/server/options/encryptionconfig/config.go:486-491).
func (p *aesPlugin) Status(context.Context) (*service.StatusResponse, error) {
	return &service.StatusResponse{Version: "v2", Healthz: "ok", KeyID: p.keyID}, nil
}

// kmsWrite drills a cluster on the platform's KMS v2 plugin: the plugin
// serves on a unix socket (the node's socket directory the API server
// pod mounts with hostPath, played by a directory of the test's at the
// same place in the endpoint); ta's API server restarts with the
// configuration of render golden kmsGolden; a Secret written is stored
// under kmsPrefix without its value in clear, and reads back.
func (e *env) kmsWrite(ctx context.Context, t *testing.T, ta *tenantAPI) {
	t.Helper()
	dir, err := os.MkdirTemp("", "kms") // a unix socket path is at most 107 bytes
	if err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "plugin.sock")
	svc := service.NewGRPCService(sock, 10*time.Second, newAESPlugin(t))
	served := make(chan error, 1)
	go func() { served <- svc.ListenAndServe() }()
	t.Cleanup(svc.Close)
	cfg := renderedEncryption(t, e, kmsGolden)[encryption.ConfigKey]
	if !bytes.Contains(cfg, []byte("endpoint: "+kmsEndpoint+"\n")) {
		fatalf(t, "the golden %s has no KMS endpoint %s:\n%s", kmsGolden, kmsEndpoint, cfg)
	}
	e.restartTenantAPI(t, ta, bytes.Replace(cfg, []byte(kmsEndpoint), []byte("unix://"+sock), 1))
	select {
	case err := <-served:
		fatalf(t, "the KMS plugin stopped: %v", err)
	default:
	}
	cs := clientFor(t, ta.kubeconfig)
	v := []byte("tenantkube-e2e-kms-" + randomHex(t))
	if _, err := cs.CoreV1().Secrets("rotation-a").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kms"}, Data: map[string][]byte{"value": v}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", ta.etcdPort)}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	r, err := ec.Get(ctx, "/registry/secrets/rotation-a/kms")
	if err != nil || len(r.Kvs) != 1 {
		fatalf(t, "etcd holds no Secret rotation-a/kms: %v", err)
	}
	if raw := r.Kvs[0].Value; !bytes.HasPrefix(raw, []byte(kmsPrefix)) || bytes.Contains(raw, v) {
		errorf(t, "the Secret is stored as %q..., want the prefix %s and no clear text", raw[:min(len(raw), 48)], strings.TrimSuffix(kmsPrefix, ":"))
	}
	got, err := cs.CoreV1().Secrets("rotation-a").Get(ctx, "kms", metav1.GetOptions{})
	if err != nil || !bytes.Equal(got.Data["value"], v) {
		errorf(t, "the Secret reads back %v (%v), want its value", got, err)
	}
}

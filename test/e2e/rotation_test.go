//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/encryption"
)

// rotationStep is one EncryptionConfiguration of a rotation from key
// generation 1 to 2 as the control-plane function composes it: the Secret
// demo-encryption-config of render golden golden. keys are the secretbox
// key names it must hold, the one that writes first (docs/architecture.md,
// Rotation in two phases: 1. {write G, read T}, 2. {write T, read G},
// 3. {write T}).
type rotationStep struct {
	name, golden string
	keys         []string
}

var rotationSteps = []rotationStep{
	{"generation 1", "encryption", []string{"generation-1"}},
	{"phase 1", "encryption-read-key", []string{"generation-1", "generation-2"}},
	{"phase 2", "encryption-rewrite", []string{"generation-2", "generation-1"}},
	{"phase 3", "encryption-rotated", []string{"generation-2"}},
}

// rewriteJobGolden and rewriteJobName are the render golden holding the
// rewrite Job of the rotation to generation 2, and its name;
// moveJobGolden and moveJobName the same of the move that follows
// configmaps removed from the encrypted resources (its name's id: 8 hex
// digits of SHA-256("secrets\x00configmaps")).
const (
	rewriteJobGolden = "encryption-rewrite"
	rewriteJobName   = "demo-encryption-rewrite-2"
	moveJobGolden    = "encryption-move"
	moveJobName      = "demo-encryption-move-303f8b1e"
)

// keyRotation drills a rotation from key generation 1 to 2 on a real etcd
// and kube-apiserver: the API server starts with generation 1's
// configuration and Secrets of random values are written; it is restarted
// (same etcd, port and certificates, as a control-plane pod rolls onto the
// configuration its Secret holds) with phase 1's and phase 2's; the
// rewrite Job is played (playRewriteJob); then phase 3's. The raw etcd
// values are checked at each step: every Secret under the secretbox key
// that wrote it last, none in clear; after the rewrite, every one under
// generation-2; with phase 3 (generation 1 gone) every Secret reads back
// its value.
func keyRotation(ctx context.Context, t *testing.T, e *env) {
	cfgs := make([][]byte, len(rotationSteps))
	for i, s := range rotationSteps {
		cfgs[i] = renderedEncryption(t, e, s.golden)[encryption.ConfigKey]
		if got := secretboxKeys(t, cfgs[i]); !slices.Equal(got, s.keys) {
			fatalf(t, "%s (golden %s): secretbox keys %v, want %v", s.name, s.golden, got, s.keys)
		}
	}
	ta, err := e.startTenantAPIWith("rotation", tenantAPIOptions{encryptionConfig: cfgs[0], logName: "rotation"})
	if err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { ta.api.stop(); ta.etcd.stop() })
	s := &rotationSecrets{cs: clientFor(t, ta.kubeconfig), etcdURL: fmt.Sprintf("http://127.0.0.1:%d", ta.etcdPort),
		value: map[string][]byte{}, key: map[string]string{}}

	// Generation 1.
	s.write(ctx, t, "rotation-a", "one", "generation-1")
	s.write(ctx, t, "rotation-a", "two", "generation-1")
	s.write(ctx, t, "rotation-b", "three", "generation-1")
	s.checkStored(ctx, t, "generation 1")
	cms := e.resourceMove(ctx, t, ta)

	// Phase 1: generation 2 only reads; what is written still goes under
	// generation 1, which a replica not yet rolled reads.
	e.restartTenantAPI(t, ta, cfgs[1])
	s.readAll(ctx, t, "phase 1")
	cms.readAll(ctx, t, "phase 1, configmaps no longer listed")
	s.write(ctx, t, "rotation-b", "four", "generation-1")
	s.checkStored(ctx, t, "phase 1")

	// Phase 2: generation 2 writes; then the rewrite.
	e.restartTenantAPI(t, ta, cfgs[2])
	s.readAll(ctx, t, "phase 2")
	s.write(ctx, t, "rotation-b", "five", "generation-2")
	s.checkStored(ctx, t, "phase 2")
	e.playRewriteJob(t, ta, rewriteJobGolden, rewriteJobName)
	for k := range s.key {
		s.key[k] = "generation-2"
	}
	s.checkStored(ctx, t, "after the rewrite")

	// Phase 3: generation 1 is gone.
	e.restartTenantAPI(t, ta, cfgs[3])
	s.readAll(ctx, t, "phase 3")
	s.checkStored(ctx, t, "phase 3")
	s.checkRaw(ctx, t)

	// The platform's KMS v2 plugin, on a new key set: a Secret written is
	// stored by it.
	e.kmsWrite(ctx, t, ta)
}

// secretboxKeys are the names of the secretbox keys of an
// EncryptionConfiguration of one resource list whose providers are
// secretbox, then identity (objects stored in clear stay readable).
func secretboxKeys(t *testing.T, cfg []byte) []string {
	t.Helper()
	var c apiserverv1.EncryptionConfiguration
	if err := yaml.UnmarshalStrict(cfg, &c); err != nil {
		fatal(t, err)
	}
	if len(c.Resources) != 1 || len(c.Resources[0].Providers) != 2 || c.Resources[0].Providers[0].Secretbox == nil || c.Resources[0].Providers[1].Identity == nil {
		fatalf(t, "want a secretbox provider, then identity, for one resource list:\n%s", cfg)
	}
	var names []string
	for _, k := range c.Resources[0].Providers[0].Secretbox.Keys {
		names = append(names, k.Name)
	}
	return names
}

// rotationSecrets are the Secrets the drill wrote ("ns/name"): their
// values, and the secretbox key each must be stored under.
type rotationSecrets struct {
	cs      *kubernetes.Clientset
	etcdURL string
	value   map[string][]byte
	key     map[string]string
}

// write creates Secret ns/name of a random value, to be stored under
// secretbox key key.
func (s *rotationSecrets) write(ctx context.Context, t *testing.T, ns, name, key string) {
	t.Helper()
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		fatal(t, err)
	}
	v := []byte("tenantkube-e2e-rotation-" + randomHex(t))
	if _, err := s.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"value": v}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	s.value[ns+"/"+name], s.key[ns+"/"+name] = v, key
}

// readAll reads every Secret through the API server: each holds its value.
func (s *rotationSecrets) readAll(ctx context.Context, t *testing.T, step string) {
	t.Helper()
	for k, v := range s.value {
		ns, name, _ := strings.Cut(k, "/")
		got, err := s.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errorf(t, "%s: Secret %s: %v", step, k, err)
			continue
		}
		if !bytes.Equal(got.Data["value"], v) {
			errorf(t, "%s: Secret %s holds %q, want %q", step, k, got.Data["value"], v)
		}
	}
}

// checkStored reads every Secret's raw value in etcd: each is
// kube-apiserver's secretbox output under the key it must be stored with,
// prefixed k8s:enc:secretbox:v1:<key name>: (k8s.io/apiserver v0.36.4
// pkg/server/options/encryptionconfig/config.go:63,699,710), and none holds
// any value written in clear; etcd holds no Secret the drill did not write.
func (s *rotationSecrets) checkStored(ctx context.Context, t *testing.T, step string) {
	t.Helper()
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{s.etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	r, err := ec.Get(ctx, "/registry/secrets/", clientv3.WithPrefix())
	if err != nil {
		fatal(t, err)
	}
	seen := map[string]bool{}
	for _, kv := range r.Kvs {
		k := strings.TrimPrefix(string(kv.Key), "/registry/secrets/")
		want, ok := s.key[k]
		if !ok {
			errorf(t, "%s: etcd holds a Secret %s the drill did not write", step, k)
			continue
		}
		seen[k] = true
		if p := "k8s:enc:secretbox:v1:" + want + ":"; !bytes.HasPrefix(kv.Value, []byte(p)) {
			errorf(t, "%s: Secret %s is stored as %q..., want the prefix %s", step, k, kv.Value[:min(len(kv.Value), 40)], p)
		}
		for o, v := range s.value {
			if bytes.Contains(kv.Value, v) {
				errorf(t, "%s: Secret %s is stored with the value of %s in clear", step, k, o)
			}
		}
	}
	for k := range s.key {
		if !seen[k] {
			errorf(t, "%s: etcd holds no Secret %s", step, k)
		}
	}
}

// checkRaw searches a snapshot of the whole etcd database (every revision
// it keeps, each step's writes included) for the values written: none is
// there in clear, while the Secrets' keys are (the search finds what is
// there).
func (s *rotationSecrets) checkRaw(ctx context.Context, t *testing.T) {
	t.Helper()
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{s.etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	rc, err := ec.Snapshot(ctx)
	if err != nil {
		fatal(t, err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		fatal(t, err)
	}
	for k, v := range s.value {
		if !bytes.Contains(raw, []byte("/registry/secrets/"+k)) {
			errorf(t, "the etcd database does not hold the key of Secret %s: the search proves nothing", k)
		}
		if bytes.Contains(raw, v) {
			errorf(t, "the etcd database holds the value of Secret %s in clear", k)
		}
	}
}

// restartTenantAPI stops ta's kube-apiserver and starts it again with the
// EncryptionConfiguration cfg, the same etcd, port and certificates, as a
// control-plane pod rolls onto the configuration its Secret holds.
func (e *env) restartTenantAPI(t *testing.T, ta *tenantAPI, cfg []byte) {
	t.Helper()
	if !ta.api.stop() {
		fatalf(t, "%s did not stop", ta.api.name)
	}
	if err := os.WriteFile(encryptionConfigPath(ta.dir), cfg, 0o600); err != nil {
		fatal(t, err)
	}
	if err := ta.api.start(); err != nil {
		fatal(t, err)
	}
	cs := clientFor(t, ta.kubeconfig)
	if err := poll(60*time.Second, func(ctx context.Context) (bool, string, error) {
		if !ta.api.running() {
			return false, "", fmt.Errorf("tenant kube-apiserver exited:\n%s", tail(ta.api.log, 20))
		}
		if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	}); err != nil {
		fatal(t, err)
	}
}

// playRewriteJob runs the rewrite Job name of render golden golden as
// its pod would run, against ta (doc.go, Played components): its one
// container's args to the image's entrypoint, /bin/kubectl (the container
// sets no command; kubernetes/kubernetes 109cf682
// build/server-image/kubectl/Dockerfile:34), here bin/kubectl; its env,
// KUBECONFIG pointing into the mount of its Secret volume, here a
// directory holding the Secret's item as Kamaji writes it (the admin
// kubeconfig, playKamaji). It must succeed, as the function waits for a
// succeeded pod.
func (e *env) playRewriteJob(t *testing.T, ta *tenantAPI, golden, name string) {
	t.Helper()
	objs, err := decodeFile(e.path("test", "testdata", "control-plane", golden+".golden.yaml"))
	if err != nil {
		fatal(t, err)
	}
	var job batchv1.Job
	found := false
	for _, o := range objs {
		if o.GetKind() == "Job" && o.GetName() == name {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &job); err != nil {
				fatal(t, err)
			}
			found = true
		}
	}
	pod := job.Spec.Template.Spec
	if !found || len(pod.Containers) != 1 || len(pod.Containers[0].Command) != 0 {
		fatalf(t, "the golden %s holds no Job %s of one container running the image's entrypoint", golden, name)
	}
	c := pod.Containers[0]
	local := filepath.Join(ta.dir, name)
	mounts := map[string]string{} // mount path → local directory
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || pod.Volumes[i].Secret == nil {
			fatalf(t, "the Job's mount %s is not of a Secret volume", m.MountPath)
		}
		dir := filepath.Join(local, m.MountPath)
		files := map[string][]byte{}
		for _, item := range pod.Volumes[i].Secret.Items {
			// Every key of N-admin-kubeconfig is the admin kubeconfig (playKamaji).
			files[item.Path] = ta.kubeconfig
		}
		if err := writeFiles(dir, files); err != nil {
			fatal(t, err)
		}
		mounts[m.MountPath] = dir
	}
	var env []string
	for _, v := range c.Env {
		val := v.Value
		for m, dir := range mounts {
			if rest, ok := strings.CutPrefix(val, m+"/"); ok {
				val = filepath.Join(dir, rest)
			}
		}
		env = append(env, v.Name+"="+val)
	}
	if err := runOnce(e.logs, "rotation-"+name, e.binary("kubectl"), 60*time.Second, c.Args, env...); err != nil {
		fatalf(t, "the Job %s: %v\n%s", name, err, tail(filepath.Join(e.logs, "rotation-"+name+".log"), 20))
	}
}

// storedConfigMaps are ConfigMaps the drill wrote in namespace
// rotation-a: their values by name.
type storedConfigMaps struct {
	cs      *kubernetes.Clientset
	etcdURL string
	value   map[string]string
}

// resourceMove drills encryption.resources changing under ta's API server
// at generation 1 (docs/architecture.md, Secrets encrypted at rest): a
// ConfigMap stored in clear; the configuration of configmaps added
// (render golden encryption-added: identity after the key) reads it and
// encrypts the next one; the configuration of configmaps removed (golden
// encryption-move: identity first, the key after it) reads both, and its
// move Job, played, stores both in clear again.
func (e *env) resourceMove(ctx context.Context, t *testing.T, ta *tenantAPI) *storedConfigMaps {
	t.Helper()
	c := &storedConfigMaps{cs: clientFor(t, ta.kubeconfig), etcdURL: fmt.Sprintf("http://127.0.0.1:%d", ta.etcdPort), value: map[string]string{}}
	const enc = "k8s:enc:secretbox:v1:generation-1:"
	c.write(ctx, t, "clear")
	c.checkStored(ctx, t, "before configmaps are listed", "clear", "")
	e.restartTenantAPI(t, ta, renderedEncryption(t, e, "encryption-added")[encryption.ConfigKey])
	c.readAll(ctx, t, "configmaps added")
	c.write(ctx, t, "encrypted")
	c.checkStored(ctx, t, "configmaps added", "encrypted", enc)
	c.checkStored(ctx, t, "configmaps added", "clear", "")
	e.restartTenantAPI(t, ta, renderedEncryption(t, e, moveJobGolden)[encryption.ConfigKey])
	c.readAll(ctx, t, "configmaps removed")
	e.playRewriteJob(t, ta, moveJobGolden, moveJobName)
	c.checkStored(ctx, t, "after the move", "encrypted", "")
	c.checkStored(ctx, t, "after the move", "clear", "")
	return c
}

func (c *storedConfigMaps) write(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	v := "tenantkube-e2e-move-" + randomHex(t)
	if _, err := c.cs.CoreV1().ConfigMaps("rotation-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"value": v}}, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	c.value[name] = v
}

func (c *storedConfigMaps) readAll(ctx context.Context, t *testing.T, step string) {
	t.Helper()
	for name, v := range c.value {
		got, err := c.cs.CoreV1().ConfigMaps("rotation-a").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errorf(t, "%s: ConfigMap %s: %v", step, name, err)
		} else if got.Data["value"] != v {
			errorf(t, "%s: ConfigMap %s holds %q, want %q", step, name, got.Data["value"], v)
		}
	}
}

// checkStored reads ConfigMap name's raw value in etcd: with prefix
// encrypted under that prefix and without its value in clear; with ""
// not under any k8s:enc: prefix and holding its value.
func (c *storedConfigMaps) checkStored(ctx context.Context, t *testing.T, step, name, prefix string) {
	t.Helper()
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{c.etcdURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fatal(t, err)
	}
	defer ec.Close()
	r, err := ec.Get(ctx, "/registry/configmaps/rotation-a/"+name)
	if err != nil || len(r.Kvs) != 1 {
		fatalf(t, "%s: etcd holds no ConfigMap %s: %v", step, name, err)
	}
	raw := r.Kvs[0].Value
	clear := bytes.Contains(raw, []byte(c.value[name]))
	switch {
	case prefix != "" && (!bytes.HasPrefix(raw, []byte(prefix)) || clear):
		errorf(t, "%s: ConfigMap %s is stored as %q..., want the prefix %s and no clear text", step, name, raw[:min(len(raw), 40)], prefix)
	case prefix == "" && (bytes.HasPrefix(raw, []byte("k8s:enc:")) || !clear):
		errorf(t, "%s: ConfigMap %s is stored as %q..., want it in clear", step, name, raw[:min(len(raw), 40)])
	}
}

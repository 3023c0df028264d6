package encryption

import (
	"fmt"
	"path"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

// KMS is a KMS v2 plugin a generation encrypts with (docs/architecture.md,
// KMS v2): kube-apiserver asks it over gRPC on a unix socket to wrap its
// data keys; the key that wraps them stays in the KMS.
type KMS struct {
	// Name is the platform's name of the plugin; the provider of
	// generation G is named "<Name>-generation-<G>" (KMS v2 names are
	// unique in a configuration, and stored values carry it).
	Name string `json:"name"`
	// Endpoint is unix:///<absolute socket path>.
	Endpoint string `json:"endpoint"`
	// Timeout of a call, a Go duration.
	Timeout string `json:"timeout"`
}

// SocketDir is the directory of k's socket, mounted into the API server.
func (k KMS) SocketDir() string { return path.Dir(strings.TrimPrefix(k.Endpoint, "unix://")) }

// bytes are what seals and fingerprints k.
func (k KMS) bytes() []byte {
	return []byte("kms\x00" + k.Name + "\x00" + k.Endpoint + "\x00" + k.Timeout)
}

// Fingerprint of k (status.encryption names a KMS generation by it).
func (k KMS) Fingerprint() string { return Fingerprint(k.bytes()) }

// NewKMSKey is generation gen's KMS provider k, sealed for the cluster uid.
func NewKMSKey(root []byte, uid string, gen int32, k KMS) Key {
	return Key{Generation: gen, KMS: &k, Seal: Seal(root, uid, gen, k.bytes())}
}

// provider is kube-apiserver's provider of k for generation gen: KMS API
// v2 (k8s.io/apiserver v0.36.4 pkg/apis/apiserver/v1/types_encryption.go,
// KMSConfiguration).
func (k KMS) provider(gen int32) apiserverv1.ProviderConfiguration {
	d, err := time.ParseDuration(k.Timeout)
	if err != nil {
		d = 0 // refused by Validate: a timeout must be positive
	}
	return apiserverv1.ProviderConfiguration{KMS: &apiserverv1.KMSConfiguration{
		APIVersion: "v2", Name: fmt.Sprintf("%s-generation-%d", k.Name, gen), Endpoint: k.Endpoint, Timeout: &metav1.Duration{Duration: d},
	}}
}

// UsesKMS says whether a generation of ks encrypts with a KMS plugin.
func (ks KeySet) UsesKMS() bool {
	for _, k := range ks.Keys {
		if k.KMS != nil {
			return true
		}
	}
	return false
}

// WritesKMS says whether ks's write generation encrypts with a KMS plugin.
func (ks KeySet) WritesKMS() bool {
	k, ok := ks.Key(ks.Write)
	return ok && k.KMS != nil
}

// SocketDirs are the socket directories of ks's KMS generations, each once.
func (ks KeySet) SocketDirs() []string {
	var out []string
	for _, k := range ks.Keys {
		if k.KMS != nil {
			out = append(out, k.KMS.SocketDir())
		}
	}
	return sorted(out)
}

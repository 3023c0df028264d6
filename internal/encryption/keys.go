// Package encryption composes a tenant API server's encryption at rest
// (docs/architecture.md, Secrets encrypted at rest): keys derived from the
// platform's root key, the EncryptionConfiguration that reads and writes
// with them, and the two-phase rotation between key generations.
package encryption

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"golang.org/x/crypto/hkdf"
)

// KeyBytes is the length of a secretbox key: 32 bytes
// (https://kubernetes.io/docs/tasks/administer-cluster/encrypt-data/,
// Providers table).
const KeyBytes = 32

// MinRootKeyBytes is the least length of the platform's root key, the
// HKDF input keying material: as long as the keys derived from it.
const MinRootKeyBytes = KeyBytes

// MaxGeneration bounds a key generation (spec.encryption.keyGeneration
// and the platform's minimum); generation 0 is no encryption (identity).
const MaxGeneration = 1000

// HKDF info strings; each use of the root key has its own.
const (
	infoKey  = "tenantkube.io/encryption-key/v1"
	infoSeal = "tenantkube.io/encryption-seal/v1"
	infoFP   = "tenantkube.io/encryption-fingerprint/v1"
)

// Derive is the key of generation gen of the cluster whose XR has UID
// uid: HKDF-SHA256 (RFC 5869) of root, no salt, info
// "<infoKey>\x00<uid>\x00<gen>", KeyBytes long. A new XR (a cluster
// created again under its name, or a restore) has a new UID and so new
// keys.
func Derive(root []byte, uid string, gen int32) []byte {
	return expand(root, fmt.Sprintf("%s\x00%s\x00%d", infoKey, uid, gen))
}

// expand is KeyBytes of HKDF-SHA256 of root with info.
func expand(root []byte, info string) []byte {
	out := make([]byte, KeyBytes)
	if _, err := io.ReadFull(hkdf.New(sha256.New, root, nil, []byte(info)), out); err != nil {
		panic(err) // HKDF-SHA256 yields up to 255*32 bytes
	}
	return out
}

// Seal is the platform's mark on key secret of generation gen of the
// cluster of UID uid: HMAC-SHA256 under a key derived from root
// (infoSeal), in hex. Only the holder of the root key makes it; the
// function keeps an observed key only with a seal that verifies
// (Key.Verify).
func Seal(root []byte, uid string, gen int32, secret []byte) string {
	m := hmac.New(sha256.New, expand(root, infoSeal))
	fmt.Fprintf(m, "%s\x00%d\x00", uid, gen)
	m.Write(secret)
	return hex.EncodeToString(m.Sum(nil))
}

// Fingerprint names a key without revealing it: 16 hex digits of the
// SHA-256 of infoFP and the key.
func Fingerprint(secret []byte) string {
	sum := sha256.Sum256(append([]byte(infoFP+"\x00"), secret...))
	return hex.EncodeToString(sum[:8])
}

// Key is one generation's key as the cluster's encryption Secret holds
// it: a secretbox key (Secret), or a KMS v2 plugin (KMS) holding it.
type Key struct {
	Generation int32  `json:"generation"`
	Secret     []byte `json:"secret,omitempty"`
	KMS        *KMS   `json:"kms,omitempty"`
	Seal       string `json:"seal"`
}

// NewKey is generation gen's key secret, sealed for the cluster uid.
func NewKey(root []byte, uid string, gen int32, secret []byte) Key {
	return Key{Generation: gen, Secret: secret, Seal: Seal(root, uid, gen, secret)}
}

// Verify says whether k is a KeyBytes long secret or a KMS plugin (not
// both), sealed under root for the cluster uid.
func (k Key) Verify(root []byte, uid string) bool {
	if k.KMS != nil {
		return len(k.Secret) == 0 && hmac.Equal([]byte(k.Seal), []byte(Seal(root, uid, k.Generation, k.KMS.bytes())))
	}
	return len(k.Secret) == KeyBytes && hmac.Equal([]byte(k.Seal), []byte(Seal(root, uid, k.Generation, k.Secret)))
}

// Fingerprint names k without revealing it (Fingerprint of the secret, or
// of the KMS plugin).
func (k Key) Fingerprint() string {
	if k.KMS != nil {
		return k.KMS.Fingerprint()
	}
	return Fingerprint(k.Secret)
}

// Name is the key's name in the EncryptionConfiguration; kube-apiserver
// prefixes each stored value with k8s:enc:secretbox:v1:<name>:.
func (k Key) Name() string { return fmt.Sprintf("generation-%d", k.Generation) }

package encryption

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// Keys of the cluster's encryption Secret: the EncryptionConfiguration
// kube-apiserver reads (--encryption-provider-config) and the key set it
// was made of (KeySet, JSON).
const (
	ConfigKey = "encryption-configuration.yaml"
	KeySetKey = "keys.json"
)

// KeySet is a cluster's encryption state and the key of each of its
// generations but 0.
type KeySet struct {
	State
	Keys []Key `json:"keys,omitempty"`
}

// Key is generation gen's key of ks (ok false when ks holds none).
func (ks KeySet) Key(gen int32) (Key, bool) {
	i := slices.IndexFunc(ks.Keys, func(k Key) bool { return k.Generation == gen })
	if i < 0 {
		return Key{}, false
	}
	return ks.Keys[i], true
}

// Check returns why ks is not one the platform's root key vouches for,
// for the cluster uid: every generation within 0..MaxGeneration and held
// once, one key (none for 0) per generation, each sealed under root
// (Key.Verify). nil: ks is sound.
func (ks KeySet) Check(root []byte, uid string) error {
	gens := ks.Generations()
	if len(gens) > 2 {
		return fmt.Errorf("it reads %d generations, at most 2", len(gens))
	}
	seen := map[int32]bool{}
	for _, g := range gens {
		if g < 0 || g > MaxGeneration || seen[g] {
			return fmt.Errorf("generation %d is out of 0..%d or repeated", g, MaxGeneration)
		}
		seen[g] = true
	}
	want := len(gens)
	if seen[0] {
		want--
	}
	if len(ks.Keys) != want {
		return fmt.Errorf("it holds %d keys for generations %v", len(ks.Keys), gens)
	}
	for _, k := range ks.Keys {
		if !seen[k.Generation] || k.Generation == 0 {
			return fmt.Errorf("it holds a key of generation %d, which it does not use", k.Generation)
		}
		if !k.Verify(root, uid) {
			return fmt.Errorf("the key of generation %d (fingerprint %s) is not sealed by the platform's root key for this cluster", k.Generation, Fingerprint(k.Secret))
		}
	}
	return nil
}

// Config is the EncryptionConfiguration (apiserver.config.k8s.io/v1) of
// ks for resources: one provider list, the write generation's provider
// first (kube-apiserver encrypts with the first and decrypts with any,
// https://kubernetes.io/docs/tasks/administer-cluster/encrypt-data/).
// A secretbox provider holds the generations' keys, the write one first;
// generation 0 is the identity provider, before it when 0 writes and
// after it when 0 only reads.
func (ks KeySet) Config(resources []string) *apiserverv1.EncryptionConfiguration {
	var box []apiserverv1.Key
	identity := false
	for _, g := range ks.Generations() {
		if g == 0 {
			identity = true
			continue
		}
		k, _ := ks.Key(g)
		box = append(box, apiserverv1.Key{Name: k.Name(), Secret: base64.StdEncoding.EncodeToString(k.Secret)})
	}
	var providers []apiserverv1.ProviderConfiguration
	if len(box) > 0 {
		providers = append(providers, apiserverv1.ProviderConfiguration{Secretbox: &apiserverv1.SecretboxConfiguration{Keys: box}})
	}
	if identity {
		id := apiserverv1.ProviderConfiguration{Identity: &apiserverv1.IdentityConfiguration{}}
		if ks.Write == 0 {
			providers = append([]apiserverv1.ProviderConfiguration{id}, providers...)
		} else {
			providers = append(providers, id)
		}
	}
	return &apiserverv1.EncryptionConfiguration{
		TypeMeta:  metav1.TypeMeta{APIVersion: apiserverv1.SchemeGroupVersion.String(), Kind: "EncryptionConfiguration"},
		Resources: []apiserverv1.ResourceConfiguration{{Resources: slices.Clone(resources), Providers: providers}},
	}
}

// Data is the encryption Secret's data of ks for resources: the
// configuration in YAML and the key set in JSON.
func (ks KeySet) Data(resources []string) (map[string][]byte, error) {
	cfg, err := yaml.Marshal(ks.Config(resources))
	if err != nil {
		return nil, err
	}
	set, err := json.Marshal(ks)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{ConfigKey: cfg, KeySetKey: set}, nil
}

// Digest is 16 hex digits of the SHA-256 of a configuration's bytes: the
// control-plane pods carry it, so that a new configuration rolls them.
func Digest(config []byte) string {
	sum := sha256.Sum256(config)
	return hex.EncodeToString(sum[:8])
}

// ReadKeySet is the key set of an encryption Secret's data (nil, nil for
// data without one).
func ReadKeySet(data map[string][]byte) (*KeySet, error) {
	raw, ok := data[KeySetKey]
	if !ok {
		return nil, nil
	}
	ks := &KeySet{}
	if err := json.Unmarshal(raw, ks); err != nil {
		return nil, fmt.Errorf("key %s does not decode: %w", KeySetKey, err)
	}
	return ks, nil
}

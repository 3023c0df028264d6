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

// KeySet is a cluster's encryption state, the key of each of its
// generations but 0, and the resources its configuration lists
// (resources.go).
type KeySet struct {
	State
	Keys []Key `json:"keys,omitempty"`
	// Resources are encrypted: written with the write generation.
	Resources []string `json:"resources,omitempty"`
	// Rewrite are the resources whose stored objects may be in the other
	// form than Resources says (added: some in clear; removed: some
	// encrypted) until the Job of the move wrote them again.
	Rewrite []string `json:"rewrite,omitempty"`
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
// (Key.Verify), and its configuration one kube-apiserver accepts
// (Validate; a set recording no resources, none). nil: ks is sound.
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
			return fmt.Errorf("the key of generation %d (fingerprint %s) is not sealed by the platform's root key for this cluster", k.Generation, k.Fingerprint())
		}
	}
	if len(ks.Resources) == 0 && len(ks.Rewrite) > 0 {
		return fmt.Errorf("it rewrites %v and lists no resources", ks.Rewrite)
	}
	if len(ks.Resources) > 0 {
		cfg, err := yaml.Marshal(ks.Config())
		if err != nil {
			return err
		}
		if errs := Validate(cfg); len(errs) > 0 {
			return fmt.Errorf("kube-apiserver refuses its configuration: %v", errs.ToAggregate())
		}
	}
	return nil
}

// Config is the EncryptionConfiguration (apiserver.config.k8s.io/v1) of
// ks. kube-apiserver encrypts with a resource's first provider and
// decrypts with any (https://kubernetes.io/docs/tasks/administer-cluster/encrypt-data/).
// The entry of ks.Resources: the write generation's provider first; a
// secretbox provider holds the generations' keys, the write one first;
// identity (generation 0, clear text) first when 0 writes, else last, so
// objects stored in clear before a resource was listed stay readable. An
// entry of the resources removed but not yet rewritten (Removed), where
// there are secretbox keys: identity first (they are written in clear),
// the keys after it (what was stored encrypted stays readable). A KMS
// generation is a kms provider of its own, where its generation stands.
func (ks KeySet) Config() *apiserverv1.EncryptionConfiguration {
	var readers []apiserverv1.ProviderConfiguration
	box := -1 // index of the secretbox provider in readers
	for _, g := range ks.Generations() {
		k, ok := ks.Key(g)
		switch {
		case !ok || g == 0:
		case k.KMS != nil:
			readers = append(readers, k.KMS.provider(g))
		default:
			if box < 0 {
				box = len(readers)
				readers = append(readers, apiserverv1.ProviderConfiguration{Secretbox: &apiserverv1.SecretboxConfiguration{}})
			}
			sb := readers[box].Secretbox
			sb.Keys = append(sb.Keys, apiserverv1.Key{Name: k.Name(), Secret: base64.StdEncoding.EncodeToString(k.Secret)})
		}
	}
	id := apiserverv1.ProviderConfiguration{Identity: &apiserverv1.IdentityConfiguration{}}
	listed := append(slices.Clone(readers), id)
	if ks.Write == 0 {
		listed = append([]apiserverv1.ProviderConfiguration{id}, readers...)
	}
	entries := []apiserverv1.ResourceConfiguration{{Resources: slices.Clone(ks.Resources), Providers: listed}}
	if removed := ks.Removed(); len(removed) > 0 && box >= 0 {
		// KMS v2 names are unique in a configuration: the entry reads
		// with the secretbox keys alone (Step holds a removal under KMS).
		entries = append(entries, apiserverv1.ResourceConfiguration{Resources: removed, Providers: []apiserverv1.ProviderConfiguration{id, readers[box]}})
	}
	return &apiserverv1.EncryptionConfiguration{
		TypeMeta:  metav1.TypeMeta{APIVersion: apiserverv1.SchemeGroupVersion.String(), Kind: "EncryptionConfiguration"},
		Resources: entries,
	}
}

// Data is the encryption Secret's data of ks: the configuration in YAML
// and the key set in JSON.
func (ks KeySet) Data() (map[string][]byte, error) {
	cfg, err := yaml.Marshal(ks.Config())
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

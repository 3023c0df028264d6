package v1alpha1

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxKeyGeneration bounds spec.encryption.keyGeneration (the XRD's
// maximum carries the same).
const MaxKeyGeneration = 1000

// Encryption is the tenant's side of its Secrets' encryption at rest,
// where the platform encrypts them (docs/tenant-guide.md, Secrets
// encrypted at rest).
type Encryption struct {
	// KeyGeneration asks for the cluster's key of that generation: raising
	// it rotates the key in two phases (the new key is first added for
	// reads on every API server, then writes, every encrypted object is
	// written again, and the old key is dropped). It only increases;
	// 0 leaves the generation to the platform (at least 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	KeyGeneration int32 `json:"keyGeneration,omitempty"`
}

// Validate returns every problem of e at path (spec.encryption).
func (e Encryption) Validate(path *field.Path) field.ErrorList {
	if g := e.KeyGeneration; g < 0 || g > MaxKeyGeneration {
		return field.ErrorList{field.Invalid(path.Child("keyGeneration"), g, fmt.Sprintf("must be between 0 and %d", MaxKeyGeneration))}
	}
	return nil
}

// encryptionRules are the rules of spec.encryption: the key generation
// never goes down (the control-plane function checks it against the
// generation the cluster writes with, encryptionTarget).
var encryptionRules = ruleTable[Encryption]{{
	RuleDoc: RuleDoc{ID: "encryption.keyGeneration.forward", Object: "encryption", Field: "keyGeneration",
		Go: "control-plane function (encryptionTarget), against the observed encryption Secret"},
	CEL: func() apiextensionsv1.ValidationRule {
		return apiextensionsv1.ValidationRule{
			Rule:      "!has(oldSelf.keyGeneration) || (has(self.keyGeneration) && self.keyGeneration >= oldSelf.keyGeneration)",
			Message:   "keyGeneration only increases",
			FieldPath: ".keyGeneration",
		}
	},
}}

// EncryptionStatus is how the cluster's API servers encrypt at rest.
type EncryptionStatus struct {
	// Resources are the resources encrypted.
	// +optional
	Resources []string `json:"resources,omitempty"`
	// Phase is Stable, AddingReadKey (phase 1 of a rotation: the new key
	// reads on every API server replica) or Rewriting (phase 2: the new
	// key writes, every encrypted object is written again); then the old
	// key is dropped.
	// +optional
	Phase string `json:"phase,omitempty"`
	// WriteKey is the key new data is written with; generation 0 is no
	// encryption.
	// +optional
	WriteKey *EncryptionKeyStatus `json:"writeKey,omitempty"`
	// ReadKeys are the other keys the API servers read with.
	// +optional
	ReadKeys []EncryptionKeyStatus `json:"readKeys,omitempty"`
	// TargetGeneration is the generation the cluster rotates to: the
	// larger of spec.encryption.keyGeneration and the platform's minimum.
	// +optional
	TargetGeneration int32 `json:"targetGeneration,omitempty"`
	// Rewrite are the resources added to or removed from the encrypted
	// ones whose stored objects a Job writes again; until it succeeded the
	// API servers read them both in clear and encrypted.
	// +optional
	Rewrite []string `json:"rewrite,omitempty"`
}

// EncryptionKeyStatus names a key without revealing it.
type EncryptionKeyStatus struct {
	// Generation of the key.
	Generation int32 `json:"generation"`
	// Fingerprint is 16 hex digits of a hash of the key; "" for generation
	// 0.
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
}

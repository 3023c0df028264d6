package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/encryption"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// currentKeys is the key set the cluster's API servers run with, which
// nothing replaces (docs/architecture.md, Secrets encrypted at rest):
//
//   - the observed encryption Secret's, when every key of it carries the
//     root key's seal for this XR; any other is refused, nothing changed
//     (the root key was replaced, or the Secret edited: data written with
//     its keys is read only with them);
//   - else a restore's, the keys its backup carried, sealed now for this XR;
//   - else, for a control plane that runs, the generations
//     status.encryption names, derived again: each must match its
//     fingerprint there, or the key is lost and the call refused; none
//     named: generation 0, Secrets in clear, from which a rotation starts;
//   - else (a new cluster) generation target alone, derived when composed.
func (s *scope) currentKeys(root []byte, uid string) (encryption.KeySet, field.ErrorList) {
	path := field.NewPath("input", "encryption", "rootKeySecret")
	data, ok, err := observedEncryptionData(s.r)
	if err != nil {
		return encryption.KeySet{}, field.ErrorList{field.InternalError(path, err)}
	}
	name := s.t.ID.Namespace + "/" + EncryptionSecretName(s.t.ID)
	if ok {
		ks, err := encryption.ReadKeySet(data)
		if err == nil && ks == nil {
			err = fmt.Errorf("it holds no %s", encryption.KeySetKey)
		}
		if err == nil {
			err = ks.Check(root, uid)
		}
		if err != nil {
			return encryption.KeySet{}, field.ErrorList{field.Forbidden(path, fmt.Sprintf(
				"the cluster's encryption Secret %s is refused: %v; nothing is changed: a key data was written with is never replaced. "+
					"Put back the root key the cluster's keys were sealed with, or the Secret as it was", name, err))}
		}
		return *ks, nil
	}
	if s.restore != nil && s.restore.Encryption != nil {
		return resealed(root, uid, s.restore.Encryption, s.restore.Backup)
	}
	if !s.observed.Exists {
		if s.restore != nil {
			return encryption.KeySet{}, nil // a backup without keys: its Secrets are in clear
		}
		g := max(s.spec.Encryption.KeyGeneration, s.in.Encryption.MinimumKeyGeneration, 1)
		return encryption.KeySet{State: encryption.Stable(g), Keys: []encryption.Key{encryption.NewKey(root, uid, g, encryption.Derive(root, uid, g))}}, nil
	}
	return s.keysFromStatus(root, uid, name)
}

// resealed is the key set a restore's backup carried (the data of the
// source cluster's encryption Secret), each key sealed for the XR uid.
func resealed(root []byte, uid string, data map[string][]byte, backup string) (encryption.KeySet, field.ErrorList) {
	path := field.NewPath("spec", "restore", "backup")
	ks, err := encryption.ReadKeySet(data)
	if err == nil && ks == nil {
		err = fmt.Errorf("no %s", encryption.KeySetKey)
	}
	if err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, backup, "the backup's encryption keys do not decode: "+err.Error())}
	}
	for i, k := range ks.Keys {
		ks.Keys[i] = encryption.NewKey(root, uid, k.Generation, k.Secret)
	}
	if err := ks.Check(root, uid); err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, backup, "the backup's encryption keys are unusable: "+err.Error())}
	}
	return *ks, nil
}

// keysFromStatus is the key set status.encryption names, for a running
// control plane whose encryption Secret is gone: each generation derived
// again and checked against its fingerprint.
func (s *scope) keysFromStatus(root []byte, uid, name string) (encryption.KeySet, field.ErrorList) {
	var st tkv1alpha1.EncryptionStatus
	found, err := s.r.CompositeInto(&st, "status", "encryption")
	path := field.NewPath("status", "encryption")
	if err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, "<undecodable>", err.Error())}
	}
	if !found || st.WriteKey == nil {
		return encryption.KeySet{}, nil
	}
	ks := encryption.KeySet{State: encryption.State{Write: st.WriteKey.Generation}}
	named := append([]tkv1alpha1.EncryptionKeyStatus{*st.WriteKey}, st.ReadKeys...)
	for i, k := range named {
		if i > 0 {
			ks.Read = append(ks.Read, k.Generation)
		}
		if k.Generation == 0 {
			continue
		}
		if k.Generation < 0 || k.Generation > encryption.MaxGeneration {
			return encryption.KeySet{}, field.ErrorList{field.Invalid(path, k.Generation, "names a generation out of range")}
		}
		secret := encryption.Derive(root, uid, k.Generation)
		if encryption.Fingerprint(secret) != k.Fingerprint {
			return encryption.KeySet{}, field.ErrorList{field.Forbidden(path, fmt.Sprintf(
				"the cluster's encryption Secret %s is gone and its key of generation %d (fingerprint %s) is not this cluster's derived key "+
					"(a restored key, or the root key was replaced): nothing is changed; restore the Secret or the root key", name, k.Generation, k.Fingerprint))}
		}
		ks.Keys = append(ks.Keys, encryption.NewKey(root, uid, k.Generation, secret))
	}
	if err := ks.Check(root, uid); err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, st.WriteKey.Generation, err.Error())}
	}
	return ks, nil
}

// observeEncryption is what drives cur's rotation: RolledOut once the
// observed Secret holds cur's configuration and every control-plane pod
// was started with it (rolledOut); Rewritten once the rewrite of cur's
// write generation succeeded (rewritten).
func (s *scope) observeEncryption(cur encryption.KeySet, resources []string) encryption.Observation {
	data, ok, err := observedEncryptionData(s.r)
	if err != nil || !ok {
		return encryption.Observation{}
	}
	want, err := cur.Data(resources)
	if err != nil || string(want[encryption.ConfigKey]) != string(data[encryption.ConfigKey]) {
		return encryption.Observation{}
	}
	digest := encryption.Digest(data[encryption.ConfigKey])
	kcp, ok, err := observedKCP(s)
	if err != nil || !ok {
		return encryption.Observation{}
	}
	o := encryption.Observation{RolledOut: rolledOut(kcp, digest)}
	o.Rewritten = o.RolledOut && s.rewritten(cur.Write)
	return o
}

// rolledOut says whether every pod of kcp runs with the configuration of
// digest: its pods carry the digest, and the provider reports, for the
// KamajiControlPlane's current generation (the KamajiControlPlaneIsInitialized
// condition's observedGeneration, provider v0.20.0
// controllers/kamajicontrolplane_controller.go:293-304), as many
// up-to-date and ready replicas as it asks for (the CRD's default 2), at
// least one.
func rolledOut(kcp *kamajiv1alpha2.KamajiControlPlane, digest string) bool {
	d := kcp.Spec.Deployment
	if d == nil || d.PodAdditionalMetadata == nil || d.PodAdditionalMetadata.Annotations[AnnotationEncryptionConfig] != digest {
		return false
	}
	fresh := false
	for _, c := range kcp.Status.Conditions {
		if c.Type == kcpInitializedCondition && c.ObservedGeneration == kcp.Generation && kcp.Generation > 0 {
			fresh = true
		}
	}
	want := int32(2)
	if kcp.Spec.Replicas != nil {
		want = *kcp.Spec.Replicas
	}
	st := kcp.Status
	// A control plane at zero replicas (hibernating) confirms nothing.
	return fresh && want > 0 && st.Replicas == want && st.UpToDateReplicas == want && st.ReadyReplicas == want
}

// kcpInitializedCondition is the provider's condition whose
// observedGeneration it sets with the replica counts (provider v0.20.0
// api/v1alpha2/kamajicontrolplane_conditions.go:14).
const kcpInitializedCondition = "KamajiControlPlaneIsInitialized"

// observedKCP is the observed KamajiControlPlane.
func observedKCP(s *scope) (*kamajiv1alpha2.KamajiControlPlane, bool, error) {
	return function.Observed[kamajiv1alpha2.KamajiControlPlane](s.r, nameKamajiControlPlane)
}

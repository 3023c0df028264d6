package main

import (
	"fmt"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	settingsv1alpha1 "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/encryption"
	"github.com/tenantkube/tenantkube/internal/function"
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
		return encryption.KeySet{State: encryption.Stable(g), Keys: []encryption.Key{newKey(root, uid, g, &s.in.Encryption)}}, nil
	}
	return s.keysFromStatus(root, uid, name)
}

// resealed is the key set a restore's backup carried (the data of the
// source cluster's encryption Secret), each key (or KMS plugin) sealed
// for the XR uid.
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
		if k.KMS != nil {
			ks.Keys[i] = encryption.NewKMSKey(root, uid, k.Generation, *k.KMS)
			continue
		}
		ks.Keys[i] = encryption.NewKey(root, uid, k.Generation, k.Secret)
	}
	if err := ks.Check(root, uid); err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, backup, "the backup's encryption keys are unusable: "+err.Error())}
	}
	return *ks, nil
}

// keysFromStatus is the key set status.encryption names, for a running
// control plane whose encryption Secret is gone: each generation derived
// again and checked against its fingerprint, its resources rebuilt
// (KeySet.Rebuilt).
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
		if kms := s.in.Encryption.KMS; kms != nil {
			if key := newKey(root, uid, k.Generation, &s.in.Encryption); key.Fingerprint() == k.Fingerprint {
				ks.Keys = append(ks.Keys, key) // the platform's plugin, as it is set
				continue
			}
		}
		secret := encryption.Derive(root, uid, k.Generation)
		if encryption.Fingerprint(secret) != k.Fingerprint {
			return encryption.KeySet{}, field.ErrorList{field.Forbidden(path, fmt.Sprintf(
				"the cluster's encryption Secret %s is gone and its key of generation %d (fingerprint %s) is not this cluster's derived key "+
					"(a restored key, or the root key was replaced): nothing is changed; restore the Secret or the root key", name, k.Generation, k.Fingerprint))}
		}
		ks.Keys = append(ks.Keys, encryption.NewKey(root, uid, k.Generation, secret))
	}
	// The move record went with the Secret: every resource status or the
	// settings name stays readable until a move wrote it again.
	ks = ks.Rebuilt(s.in.Encryption.Resources, append(slices.Clone(st.Resources), st.Rewrite...), settingsv1alpha1.EncryptableResources)
	if err := ks.Check(root, uid); err != nil {
		return encryption.KeySet{}, field.ErrorList{field.Invalid(path, st.WriteKey.Generation, err.Error())}
	}
	return ks, nil
}

// observeEncryption is what drives cur's rotation and move: RolledOut
// once the observed Secret holds cur's configuration and every
// control-plane pod was started with it (rolledOut); Rewritten once the
// rewrite of cur's write generation succeeded, Moved once the Job of
// cur's move did (jobSucceeded).
func (s *scope) observeEncryption(cur encryption.KeySet) encryption.Observation {
	data, ok, err := observedEncryptionData(s.r)
	if err != nil || !ok {
		return encryption.Observation{}
	}
	want, err := cur.Data()
	if err != nil || string(want[encryption.ConfigKey]) != string(data[encryption.ConfigKey]) {
		return encryption.Observation{}
	}
	digest := encryption.Digest(data[encryption.ConfigKey])
	deps, _, err := function.Required[appsv1.Deployment](s.r, requiredControlPlaneDeployment)
	if err != nil || len(deps) != 1 {
		return encryption.Observation{} // not observed: the rotation waits
	}
	o := encryption.Observation{RolledOut: rolledOut(deps[0], digest)}
	o.Rewritten = o.RolledOut && s.jobSucceeded(rewriteJobKey(cur.Write))
	o.Moved = o.RolledOut && len(cur.Rewrite) > 0 && s.jobSucceeded(moveJobKey(cur))
	return o
}

// requiredControlPlaneDeployment is Kamaji's Deployment of the control
// plane: named as the TenantControlPlane (the KamajiControlPlane's name),
// in its namespace (Kamaji e51909fa
// internal/resources/k8s_deployment_resource.go:54-59).
const requiredControlPlaneDeployment = "encryption-control-plane-deployment"

// requireControlPlaneDeployment asks Crossplane for that Deployment.
func (s *scope) requireControlPlaneDeployment(p *function.Plan) {
	p.Require(requiredControlPlaneDeployment, &fnv1.ResourceSelector{
		ApiVersion: "apps/v1", Kind: "Deployment",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: s.t.ID.Name},
		Namespace: proto.String(s.t.ID.Namespace),
	})
}

// rolledOut says whether every pod of the control plane's Deployment d
// runs with the configuration of digest. The KamajiControlPlane's status
// does not say it: the provider copies the TenantControlPlane's counts
// and stamps the new generation in one reconcile (provider v0.20.0
// controllers/kamajicontrolplane_controller.go:170-174, 293-305), and
// Kamaji copies the status of a Deployment it has just updated (Kamaji
// e51909fa internal/resources/k8s_deployment_resource.go:111-117). So d
// itself must have observed its spec (status.observedGeneration ==
// metadata.generation), its pod template carry the digest (Kamaji puts
// podAdditionalMetadata.annotations there, e51909fa
// internal/builders/controlplane/deployment.go:84), and every replica it
// asks for (at least one: a control plane at zero, hibernating, confirms
// nothing) be updated, ready and available, none terminating.
func rolledOut(d *appsv1.Deployment, digest string) bool {
	if d.Generation == 0 || d.Status.ObservedGeneration != d.Generation || d.Spec.Template.Annotations[AnnotationEncryptionConfig] != digest {
		return false
	}
	want := int32(1) // the Deployment's default replicas (k8s.io/api apps/v1 DeploymentSpec.Replicas)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return want > 0 && st.Replicas == want && st.UpdatedReplicas == want && st.ReadyReplicas == want &&
		st.AvailableReplicas == want && ptr.Deref(st.TerminatingReplicas, 0) == 0
}

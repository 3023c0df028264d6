package main

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	settingsv1alpha1 "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/encryption"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// Encryption at rest of the tenant API server (docs/architecture.md,
// Secrets encrypted at rest): the Secret N-encryption-config holding the
// EncryptionConfiguration, mounted at EncryptionConfigDir.
const (
	nameEncryptionConfig      = "encryption-config"
	requiredEncryptionRootKey = "encryption-root-key"
	// RootKeyKey is the key of the platform's root key Secret.
	RootKeyKey = "rootKey"
	// EncryptionConfigDir is where the API server reads the configuration.
	EncryptionConfigDir = "/etc/kubernetes/encryption"
	// AnnotationEncryptionConfig on the control-plane pods is the digest
	// of the configuration they were started with: a new one rolls them.
	AnnotationEncryptionConfig = "tenantkube.io/encryption-config"
)

// EncryptionSecretName is cluster id's encryption Secret, N-encryption-config.
func EncryptionSecretName(id function.Identity) string { return backup.EncryptionRole.Secret(id) }

// encryptionPlan is what the cluster's API servers encrypt with: the key
// set composed (keys), its Secret data, and the configuration digest the
// control-plane pods carry (podDigest). nil: the cluster does not encrypt.
type encryptionPlan struct {
	keys      encryption.KeySet
	data      map[string][]byte
	podDigest string
}

// encryption composes the cluster's encryption Secret, where the platform
// encrypts (settings encryption.rootKeySecret): the key set that follows
// the observed one towards the target generation (encryption.Next), each
// key derived from the root key or kept as observed once its seal
// verifies. Without the root key nothing is changed: an observed Secret
// is kept as it is, and none is made.
func (s *scope) encryption(p *function.Plan) field.ErrorList {
	e := &s.in.Encryption
	if !e.Enabled() {
		return s.holdEncryption(p, "the platform sets no encryption.rootKeySecret")
	}
	p.Require(requiredEncryptionRootKey, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: e.RootKeySecret.Name},
		Namespace: proto.String(e.RootKeySecret.Namespace),
	})
	root, ferr := rootKey(s.r, e.RootKeySecret)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	if root == nil {
		return s.holdEncryption(p, "the platform's root key Secret "+e.RootKeySecret.Namespace+"/"+e.RootKeySecret.Name+" has not arrived")
	}
	if s.restorePending && s.restore.Encryption == nil && !s.r.ObservedExists(nameEncryptionConfig) {
		// A restore's keys come with its PKI; no control plane runs yet.
		return nil
	}
	uid := s.r.CompositeString("metadata", "uid")
	if uid == "" {
		return field.ErrorList{field.Required(field.NewPath("metadata", "uid"), "a cluster's keys derive from its XR's UID, which Crossplane's XRs always have")}
	}
	cur, errs := s.currentKeys(root, uid)
	if len(errs) > 0 {
		return errs
	}
	target, ferr := encryptionTarget(s.spec.Encryption, e, cur)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	s.requireControlPlaneDeployment(p)
	obs := s.observeEncryption(cur)
	keys := cur.Step(e.Resources, target, obs)
	for _, g := range keys.Generations() {
		if g == 0 {
			continue
		}
		k, ok := cur.Key(g)
		if !ok {
			k = newKey(root, uid, g, e)
		}
		keys.Keys = append(keys.Keys, k)
	}
	if errs := s.composeEncryption(p, keys, target); len(errs) > 0 {
		return errs
	}
	image := e.RewriteImageRepository + ":" + s.version.Patch
	// A rewrite runs once every API server writes as it is to, and stays
	// composed until it is confirmed.
	if cur.Phase() == encryption.PhaseRewriting && keys.Phase() == encryption.PhaseRewriting && (obs.RolledOut || s.r.ObservedExists(rewriteJobKey(keys.Write))) {
		p.Add(rewriteJobKey(keys.Write), rewriteJob(s.t.ID, rewriteJobKey(keys.Write), image, keys.Resources,
			AnnotationKeyGeneration, fmt.Sprint(keys.Write)), function.ReadyOnceObserved)
	}
	if move := moveJobKey(keys); len(cur.Rewrite) > 0 && len(keys.Rewrite) > 0 && move == moveJobKey(cur) && (obs.RolledOut || s.r.ObservedExists(move)) {
		p.Add(move, rewriteJob(s.t.ID, move, image, keys.Rewrite, AnnotationMove, keys.MoveID()), function.ReadyOnceObserved)
	}
	return nil
}

// rootKey is the platform's root key once its Secret arrived (nil
// before); a Secret missing or holding fewer than MinRootKeyBytes is an
// error naming the setting.
func rootKey(r *function.Request, ref *settingsv1alpha1.SecretRef) ([]byte, *field.Error) {
	path := field.NewPath("input", "encryption", "rootKeySecret")
	secrets, arrived, err := function.Required[corev1.Secret](r, requiredEncryptionRootKey)
	if err != nil {
		return nil, field.InternalError(path, err)
	}
	if !arrived {
		return nil, nil
	}
	if len(secrets) != 1 {
		return nil, field.Invalid(path, ref.Namespace+"/"+ref.Name, "no such Secret: create the root key once (docs/platform-guide.md, Secrets encrypted at rest)")
	}
	root := secrets[0].Data[RootKeyKey]
	if len(root) < encryption.MinRootKeyBytes {
		return nil, field.Invalid(path, ref.Namespace+"/"+ref.Name, fmt.Sprintf("key %q holds %d bytes, fewer than %d", RootKeyKey, len(root), encryption.MinRootKeyBytes))
	}
	return root, nil
}

// encryptionTarget is the generation the cluster rotates to: the larger
// of spec.encryption.keyGeneration and the platform's minimum, at least
// 1; where the platform sets a KMS plugin and cur does not write with
// one, at least the next generation (a rotation to the plugin). A
// keyGeneration below the generation cur writes with is refused:
// generations only move forward.
func encryptionTarget(spec tkv1alpha1.Encryption, e *settingsv1alpha1.Encryption, cur encryption.KeySet) (int32, *field.Error) {
	if g := spec.KeyGeneration; g != 0 && g < cur.Write {
		return 0, field.Invalid(field.NewPath("spec", "encryption", "keyGeneration"), g,
			fmt.Sprintf("keyGeneration only increases: the cluster writes with generation %d", cur.Write))
	}
	target := max(spec.KeyGeneration, e.MinimumKeyGeneration, 1)
	if e.KMS != nil && !cur.WritesKMS() {
		target = max(target, cur.Write+1)
	}
	return target, nil
}

// newKey is generation gen's key: the platform's KMS plugin where it sets
// one, else derived from the root key.
func newKey(root []byte, uid string, gen int32, e *settingsv1alpha1.Encryption) encryption.Key {
	if k := e.KMS; k != nil {
		return encryption.NewKMSKey(root, uid, gen, encryption.KMS{Name: k.Name, Endpoint: k.Endpoint, Timeout: k.Timeout})
	}
	return encryption.NewKey(root, uid, gen, encryption.Derive(root, uid, gen))
}

// holdEncryption keeps an observed encryption Secret and the API server's
// use of it as they are, and says why nothing more is done; without one
// the cluster does not encrypt.
func (s *scope) holdEncryption(p *function.Plan, why string) field.ErrorList {
	data, ok, err := observedEncryptionData(s.r)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("observed", nameEncryptionConfig), err)}
	}
	if !ok {
		var st tkv1alpha1.EncryptionStatus
		if found, _ := s.r.CompositeInto(&st, "status", "encryption"); found && s.observed.Exists && st.WriteKey != nil && (st.WriteKey.Generation > 0 || len(st.ReadKeys) > 0) {
			// An API server without its keys would not read what it wrote.
			return field.ErrorList{field.Forbidden(field.NewPath("input", "encryption", "rootKeySecret"), fmt.Sprintf(
				"the cluster's API servers encrypt with key generation %d (status.encryption), its Secret %s is gone and %s: nothing is changed",
				st.WriteKey.Generation, EncryptionSecretName(s.t.ID), why))}
		}
		if s.in.Encryption.Enabled() {
			p.SetCondition(tkv1alpha1.ConditionSecretsEncrypted, false, tkv1alpha1.ReasonWaitingForRootKey, why+": Secrets are not encrypted yet")
		}
		return nil
	}
	p.Kept = append(p.Kept, function.Kept{Name: nameEncryptionConfig, Ready: fnv1.Ready_READY_TRUE})
	s.enc = &encryptionPlan{data: data, podDigest: encryption.Digest(data[encryption.ConfigKey])}
	if ks, err := encryption.ReadKeySet(data); err == nil && ks != nil {
		s.enc.keys = *ks
	}
	p.Warn(tkv1alpha1.ReasonWaitingForRootKey, why+": the cluster keeps its encryption keys as they are and no rotation moves")
	return nil
}

// observedEncryptionData is the data of the observed encryption Secret.
func observedEncryptionData(r *function.Request) (map[string][]byte, bool, error) {
	sec, ok, err := function.Observed[corev1.Secret](r, nameEncryptionConfig)
	if err != nil || !ok {
		return nil, ok, err
	}
	return sec.Data, true, nil
}

// composeEncryption adds the encryption Secret of keys, the status and
// the SecretsEncrypted condition, and plans the mount (s.enc). The pods
// carry the digest of the observed configuration: they roll only once
// the Secret they mount holds the new one. A cluster whose Secret is not
// observed yet carries the composed one's.
func (s *scope) composeEncryption(p *function.Plan, keys encryption.KeySet, target int32) field.ErrorList {
	resources := keys.Resources
	data, err := keys.Data()
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("input", "encryption"), err)}
	}
	id := s.t.ID
	p.Add(nameEncryptionConfig, &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: EncryptionSecretName(id), Namespace: id.Namespace, Labels: id.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, function.ReadyOnceObserved)
	digest := encryption.Digest(data[encryption.ConfigKey])
	if observed, ok, err := observedEncryptionData(s.r); err == nil && ok && len(observed[encryption.ConfigKey]) > 0 {
		digest = encryption.Digest(observed[encryption.ConfigKey])
	}
	s.enc = &encryptionPlan{keys: keys, data: data, podDigest: digest}
	if p.Status == nil {
		p.Status = map[string]any{}
	}
	p.Status["encryption"] = encryptionStatus(keys, resources, target)
	phase := keys.Phase()
	switch {
	case phase == encryption.PhaseStable && len(keys.Rewrite) > 0:
		p.SetCondition(tkv1alpha1.ConditionSecretsEncrypted, keys.Write != 0, tkv1alpha1.ReasonRewritingResources,
			fmt.Sprintf("%v are encrypted with key generation %d; the objects of %v are written again", resources, keys.Write, keys.Rewrite))
	case phase == encryption.PhaseStable:
		p.SetCondition(tkv1alpha1.ConditionSecretsEncrypted, true, tkv1alpha1.ReasonEncrypted,
			fmt.Sprintf("%v are encrypted with key generation %d", resources, keys.Write))
	default:
		p.SetCondition(tkv1alpha1.ConditionSecretsEncrypted, keys.Write != 0, tkv1alpha1.ReasonRotatingKey,
			fmt.Sprintf("rotating from key generation %d to %d: phase %s", min(keys.Write, keys.Read[0]), max(keys.Write, keys.Read[0]), phase))
	}
	return nil
}

// encryptionStatus is status.encryption of keys.
func encryptionStatus(keys encryption.KeySet, resources []string, target int32) tkv1alpha1.EncryptionStatus {
	st := func(g int32) tkv1alpha1.EncryptionKeyStatus {
		k, _ := keys.Key(g)
		out := tkv1alpha1.EncryptionKeyStatus{Generation: g}
		if g != 0 {
			out.Fingerprint = k.Fingerprint()
		}
		return out
	}
	w := st(keys.Write)
	out := tkv1alpha1.EncryptionStatus{Resources: slices.Clone(resources), Phase: string(keys.Phase()), WriteKey: &w, TargetGeneration: max(target, keys.Write), Rewrite: slices.Clone(keys.Rewrite)}
	for _, g := range keys.Read {
		out.ReadKeys = append(out.ReadKeys, st(g))
	}
	return out
}

// mountEncryption adds s.enc's configuration to kcp: the flag, the
// Secret's volume and mount, and the pods' digest annotation.
func (s *scope) mountEncryption(kcp *kamajiv1alpha2.KamajiControlPlane) {
	if s.enc == nil {
		return
	}
	a := kcp.Spec.APIServer
	a.ExtraArgs = append(a.ExtraArgs, "--encryption-provider-config="+EncryptionConfigDir+"/"+encryption.ConfigKey)
	slices.SortStableFunc(a.ExtraArgs, func(x, y string) int {
		return strings.Compare(tkv1alpha1.APIServerArg(x).Flag(), tkv1alpha1.APIServerArg(y).Flag())
	})
	a.ExtraVolumeMounts = append(a.ExtraVolumeMounts, corev1.VolumeMount{Name: tkv1alpha1.EncryptionConfigVolume, MountPath: EncryptionConfigDir, ReadOnly: true})
	slices.SortStableFunc(a.ExtraVolumeMounts, func(x, y corev1.VolumeMount) int { return strings.Compare(x.MountPath, y.MountPath) })
	if kcp.Spec.Deployment == nil {
		kcp.Spec.Deployment = &kamajiv1alpha2.DeploymentSpec{}
	}
	d := kcp.Spec.Deployment
	d.ExtraVolumes = append(d.ExtraVolumes, corev1.Volume{Name: tkv1alpha1.EncryptionConfigVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: EncryptionSecretName(s.t.ID), Items: []corev1.KeyToPath{{Key: encryption.ConfigKey, Path: encryption.ConfigKey}}},
	}})
	// A KMS plugin's socket directory, from the node, at the same path.
	for i, dir := range s.enc.keys.SocketDirs() {
		name := tkv1alpha1.EncryptionKMSVolumes[i]
		a.ExtraVolumeMounts = append(a.ExtraVolumeMounts, corev1.VolumeMount{Name: name, MountPath: dir})
		d.ExtraVolumes = append(d.ExtraVolumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)},
		}})
	}
	slices.SortStableFunc(a.ExtraVolumeMounts, func(x, y corev1.VolumeMount) int { return strings.Compare(x.MountPath, y.MountPath) })
	slices.SortStableFunc(d.ExtraVolumes, func(x, y corev1.Volume) int { return strings.Compare(x.Name, y.Name) })
	if d.PodAdditionalMetadata == nil {
		d.PodAdditionalMetadata = &kamajiv1alpha2.AdditionalMetadata{}
	}
	if d.PodAdditionalMetadata.Annotations == nil {
		d.PodAdditionalMetadata.Annotations = map[string]string{}
	}
	d.PodAdditionalMetadata.Annotations[AnnotationEncryptionConfig] = s.enc.podDigest
}

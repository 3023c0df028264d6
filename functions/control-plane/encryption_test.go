package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/encryption"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

const encInput = `{encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}}}`

var (
	encRoot  = bytes.Repeat([]byte{0x11}, 32)
	encOther = bytes.Repeat([]byte{0x22}, 32)
)

// rootRequired is the root key Secret holding root, as Crossplane sends it.
func rootRequired(root []byte) map[string][]string {
	return map[string][]string{requiredEncryptionRootKey: {fmt.Sprintf(`{apiVersion: v1, kind: Secret, metadata: {name: tenantkube-encryption-root, namespace: tenantkube-system}, data: {rootKey: %s}}`,
		base64.StdEncoding.EncodeToString(root))}}
}

// keysOf is the key set of s with keys derived from root for the test XR.
func keysOf(root []byte, s encryption.State) encryption.KeySet {
	ks := encryption.KeySet{State: s, Resources: []string{"secrets"}}
	for _, g := range s.Generations() {
		if g != 0 {
			ks.Keys = append(ks.Keys, encryption.NewKey(root, fntest.XRUID, g, encryption.Derive(root, fntest.XRUID, g)))
		}
	}
	return ks
}

// observedSecret is the observed encryption Secret of ks.
func observedSecret(t *testing.T, ks encryption.KeySet) string {
	t.Helper()
	data, err := ks.Data()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{apiVersion: v1, kind: Secret, metadata: {name: demo-encryption-config, namespace: tenant-demo}, data: {%q: %s, %q: %s}}`,
		encryption.ConfigKey, base64.StdEncoding.EncodeToString(data[encryption.ConfigKey]),
		encryption.KeySetKey, base64.StdEncoding.EncodeToString(data[encryption.KeySetKey]))
}

// digestOf is the configuration digest of ks.
func digestOf(t *testing.T, ks encryption.KeySet) string {
	t.Helper()
	data, err := ks.Data()
	if err != nil {
		t.Fatal(err)
	}
	return encryption.Digest(data[encryption.ConfigKey])
}

// observedKCPWith is a KamajiControlPlane of 2 replicas whose pods carry
// digest, at generation gen, the provider's status for observed
// generation seen with ready up-to-date replicas.
func observedKCPWith(digest string, gen, seen int64, upToDate int) string {
	return fmt.Sprintf(`{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane,
  metadata: {name: demo, namespace: tenant-demo, generation: %d},
  spec: {replicas: 2, version: v1.35.6, deployment: {podAdditionalMetadata: {annotations: {%q: %q}}}},
  status: {ready: true, version: v1.35.6, replicas: 2, readyReplicas: 2, upToDateReplicas: %d,
    conditions: [{type: KamajiControlPlaneIsInitialized, status: "True", observedGeneration: %d, reason: Ok, lastTransitionTime: "2026-12-01T00:00:00Z"}]}}`,
		gen, AnnotationEncryptionConfig, digest, upToDate, seen)
}

func planEnc(t *testing.T, c fntest.Call) (*function.Plan, field.ErrorList) {
	t.Helper()
	return planEncWith(t, encInput, c)
}

// planEncWith plans c under the settings input.
func planEncWith(t *testing.T, input string, c fntest.Call) (*function.Plan, field.ErrorList) {
	t.Helper()
	r, tenant := c.Read(t)
	return plan(tenant, inputOf(t, input), function.HostPolicy{TenantHost: tenantHost}, r, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
}

// composedKeys is the key set of the composed encryption Secret.
func composedKeys(t *testing.T, p *function.Plan) encryption.KeySet {
	t.Helper()
	sec := composedObject[corev1.Secret](t, p, nameEncryptionConfig)
	ks, err := encryption.ReadKeySet(sec.Data)
	if err != nil || ks == nil {
		t.Fatalf("composed Secret has no key set: %v", err)
	}
	return *ks
}

func TestEncryptionNewCluster(t *testing.T) {
	p, errs := planEnc(t, fntest.Call{Spec: `{}`, Required: rootRequired(encRoot)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ks := composedKeys(t, p)
	want := encryption.Derive(encRoot, fntest.XRUID, 1)
	if ks.Write != 1 || len(ks.Read) != 0 || len(ks.Keys) != 1 || !bytes.Equal(ks.Keys[0].Secret, want) {
		t.Errorf("a new cluster's keys: %+v, want generation 1 alone, derived", ks)
	}
	kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
	if !slices.Contains(kcp.Spec.APIServer.ExtraArgs, "--encryption-provider-config=/etc/kubernetes/encryption/encryption-configuration.yaml") {
		t.Errorf("API server flags %v", kcp.Spec.APIServer.ExtraArgs)
	}
	if !slices.Contains(kcp.Spec.APIServer.ExtraVolumeMounts, corev1.VolumeMount{Name: "encryption-config", MountPath: "/etc/kubernetes/encryption", ReadOnly: true}) {
		t.Errorf("API server mounts %v", kcp.Spec.APIServer.ExtraVolumeMounts)
	}
	i := slices.IndexFunc(kcp.Spec.Deployment.ExtraVolumes, func(v corev1.Volume) bool { return v.Name == "encryption-config" })
	if i < 0 || kcp.Spec.Deployment.ExtraVolumes[i].Secret == nil || kcp.Spec.Deployment.ExtraVolumes[i].Secret.SecretName != "demo-encryption-config" {
		t.Errorf("volumes %v", kcp.Spec.Deployment.ExtraVolumes)
	}
	if got := kcp.Spec.Deployment.PodAdditionalMetadata.Annotations[AnnotationEncryptionConfig]; got != digestOf(t, keysOf(encRoot, encryption.Stable(1))) {
		t.Errorf("pods carry digest %q", got)
	}
	if c, _ := planCondition(p, tkv1alpha1.ConditionSecretsEncrypted); !c.True || c.Reason != tkv1alpha1.ReasonEncrypted {
		t.Errorf("condition %+v", c)
	}
	st := p.Status["encryption"].(tkv1alpha1.EncryptionStatus)
	if st.WriteKey.Generation != 1 || st.WriteKey.Fingerprint != encryption.Fingerprint(want) || st.Phase != "Stable" {
		t.Errorf("status %+v", st)
	}
}

// Same input, same Secret: a second call composes the same bytes.
func TestEncryptionDeterministic(t *testing.T) {
	c := fntest.Call{Spec: `{}`, Required: rootRequired(encRoot)}
	a, _ := planEnc(t, c)
	b, _ := planEnc(t, c)
	if !bytes.Equal(composedObject[corev1.Secret](t, a, nameEncryptionConfig).Data[encryption.ConfigKey], composedObject[corev1.Secret](t, b, nameEncryptionConfig).Data[encryption.ConfigKey]) {
		t.Error("two calls of one input compose different configurations")
	}
}

// A root key that no longer seals the observed keys, and an edited
// Secret, are refused: a Fatal, nothing applied.
func TestEncryptionRefusesUnsealedKeys(t *testing.T) {
	forged := keysOf(encRoot, encryption.Stable(1))
	forged.Keys[0].Secret = bytes.Repeat([]byte{9}, 32)
	for name, c := range map[string]fntest.Call{
		"root key changed": {Spec: `{}`, Required: rootRequired(encOther), Observed: map[string]string{nameEncryptionConfig: observedSecret(t, keysOf(encRoot, encryption.Stable(1)))}},
		"Secret edited":    {Spec: `{}`, Required: rootRequired(encRoot), Observed: map[string]string{nameEncryptionConfig: observedSecret(t, forged)}},
	} {
		_, errs := planEnc(t, c)
		if len(errs) != 1 || errs[0].Field != "input.encryption.rootKeySecret" || !strings.Contains(errs[0].Detail, "nothing is changed") {
			t.Errorf("%s: %v", name, errs)
		}
	}
}

// A running cluster whose platform turns encryption on starts in clear:
// phase 1 adds key 1 for reads, identity still writes.
func TestEncryptionRunningClusterStartsInClear(t *testing.T) {
	p, errs := planEnc(t, fntest.Call{Spec: `{}`, Required: rootRequired(encRoot), Observed: map[string]string{nameKamajiControlPlane: observedKCPWith("", 1, 1, 2)}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ks := composedKeys(t, p)
	if !slices.Equal(ks.Generations(), []int32{0, 1}) {
		t.Errorf("generations %v, want [0 1]", ks.Generations())
	}
	if c, _ := planCondition(p, tkv1alpha1.ConditionSecretsEncrypted); c.True || c.Reason != tkv1alpha1.ReasonRotatingKey {
		t.Errorf("condition %+v", c)
	}
}

// dep is Kamaji's Deployment demo of the control plane (apps/v1): pod
// template annotated with digest, at generation gen, status observing
// seen, with spec replicas want and status counts replicas, updated,
// ready, available, terminating.
type dep struct {
	digest                                                 string
	gen, seen                                              int64
	want, replicas, updated, ready, available, terminating int
}

func (d dep) String() string {
	return fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: demo, namespace: tenant-demo, generation: %d},
  spec: {replicas: %d, selector: {matchLabels: {kamaji.clastix.io/name: demo}}, template: {metadata: {annotations: {%q: %q}}}},
  status: {observedGeneration: %d, replicas: %d, updatedReplicas: %d, readyReplicas: %d, availableReplicas: %d, terminatingReplicas: %d}}`,
		d.gen, d.want, AnnotationEncryptionConfig, d.digest, d.seen, d.replicas, d.updated, d.ready, d.available, d.terminating)
}

// rolled is a Deployment of 2 replicas at generation gen, every replica
// started from the template annotated with digest.
func rolled(digest string, gen int64) dep {
	return dep{digest: digest, gen: gen, seen: gen, want: 2, replicas: 2, updated: 2, ready: 2, available: 2}
}

// TestEncryptionRotation walks spec.encryption.keyGeneration 1 → 2 over
// observed states. The KamajiControlPlane always reports a finished
// rollout (the provider's status right after a spec change, provider
// v0.20.0 controllers/kamajicontrolplane_controller.go:170-174): only
// Kamaji's Deployment says whether the pods run the configuration.
func TestEncryptionRotation(t *testing.T) {
	spec := `{encryption: {keyGeneration: 2}}`
	phase1 := keysOf(encRoot, encryption.State{Write: 1, Read: []int32{2}})
	phase2 := keysOf(encRoot, encryption.State{Write: 2, Read: []int32{1}})
	stable1 := keysOf(encRoot, encryption.Stable(1))
	d1, dp1, dp2 := digestOf(t, stable1), digestOf(t, phase1), digestOf(t, phase2)
	obs := func(ks encryption.KeySet, more ...string) map[string]string {
		m := map[string]string{nameEncryptionConfig: observedSecret(t, ks), nameKamajiControlPlane: observedKCPWith(digestOf(t, ks), 4, 4, 2)}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i]] = more[i+1]
		}
		return m
	}
	job := func(succeeded int) string {
		return fmt.Sprintf(`{apiVersion: batch/v1, kind: Job, metadata: {name: demo-encryption-rewrite-2, namespace: tenant-demo}, status: {succeeded: %d}}`, succeeded)
	}
	with := func(d dep, f func(*dep)) dep { f(&d); return d }
	for _, c := range []struct {
		name     string
		observed map[string]string
		dep      *dep
		want     []int32
		job      bool
	}{
		{"phase 1 starts", obs(stable1), &dep{}, []int32{1, 2}, false},
		{"phase 1: no Deployment observed", obs(phase1), nil, []int32{1, 2}, false},
		{"phase 1: pods not rolled", obs(phase1), refOf(rolled(d1, 3)), []int32{1, 2}, false},
		{"phase 1: Deployment status stale", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.seen = 3 })), []int32{1, 2}, false},
		{"phase 1: a replica not updated", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.updated = 1 })), []int32{1, 2}, false},
		{"phase 1: a replica not ready", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.ready = 1 })), []int32{1, 2}, false},
		{"phase 1: a replica not available", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.available = 1 })), []int32{1, 2}, false},
		{"phase 1: an old pod terminating", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.terminating = 1 })), []int32{1, 2}, false},
		{"phase 1: a surge pod beyond spec", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.replicas = 3 })), []int32{1, 2}, false},
		{"phase 1: spec asks for more", obs(phase1), refOf(with(rolled(dp1, 4), func(d *dep) { d.want = 3 })), []int32{1, 2}, false},
		{"phase 1: control plane asleep", obs(phase1), &dep{digest: dp1, gen: 4, seen: 4}, []int32{1, 2}, false},
		{"phase 2 starts", obs(phase1), refOf(rolled(dp1, 4)), []int32{2, 1}, false},
		{"phase 2: pods not rolled, no rewrite yet", obs(phase2), refOf(rolled(dp1, 4)), []int32{2, 1}, false},
		{"phase 2: Deployment status stale, no rewrite yet", obs(phase2), refOf(with(rolled(dp2, 5), func(d *dep) { d.seen = 4 })), []int32{2, 1}, false},
		{"phase 2: rewrite", obs(phase2), refOf(rolled(dp2, 5)), []int32{2, 1}, true},
		{"phase 2: rewrite kept while running", obs(phase2, rewriteJobKey(2), job(0)), refOf(with(rolled(dp2, 5), func(d *dep) { d.ready = 1 })), []int32{2, 1}, true},
		{"phase 2: old key kept while the Deployment rolls", obs(phase2, rewriteJobKey(2), job(1)), refOf(with(rolled(dp2, 5), func(d *dep) { d.terminating = 1 })), []int32{2, 1}, true},
		{"phase 3: old key dropped", obs(phase2, rewriteJobKey(2), job(1)), refOf(rolled(dp2, 5)), []int32{2}, false},
	} {
		req := rootRequired(encRoot)
		req[requiredControlPlaneDeployment] = nil
		if c.dep != nil {
			req[requiredControlPlaneDeployment] = []string{c.dep.String()}
		}
		p, errs := planEnc(t, fntest.Call{Spec: spec, Required: req, Observed: c.observed})
		if len(errs) > 0 {
			t.Fatalf("%s: %v", c.name, errs)
		}
		if got := composedKeys(t, p).Generations(); !slices.Equal(got, c.want) {
			t.Errorf("%s: generations %v, want %v", c.name, got, c.want)
		}
		hasJob := slices.ContainsFunc(p.Composed, func(x function.Composed) bool { return x.Name == rewriteJobKey(2) })
		if hasJob != c.job {
			t.Errorf("%s: rewrite Job composed %v, want %v", c.name, hasJob, c.job)
		}
	}
}

// TestEncryptionRequiresControlPlaneDeployment: the Deployment asked for
// is Kamaji's, named as the TenantControlPlane in the cluster's namespace
// (Kamaji e51909fa internal/resources/k8s_deployment_resource.go:54-59).
func TestEncryptionRequiresControlPlaneDeployment(t *testing.T) {
	p, errs := planEnc(t, fntest.Call{Spec: `{}`, Required: rootRequired(encRoot), Observed: map[string]string{nameKamajiControlPlane: observedKCPWith("", 1, 1, 2)}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sel := p.Requirements[requiredControlPlaneDeployment]
	if sel.GetApiVersion() != "apps/v1" || sel.GetKind() != "Deployment" || sel.GetMatchName() != "demo" || sel.GetNamespace() != "tenant-demo" {
		t.Errorf("requirement %v", sel)
	}
}

func refOf[T any](v T) *T { return &v }

func TestRewriteJob(t *testing.T) {
	j := rewriteJob(function.Identity{Namespace: "tenant-demo", Name: "demo"}, rewriteJobKey(2), "registry.k8s.io/kubectl:v1.35.6", []string{"secrets", "configmaps"},
		AnnotationKeyGeneration, "2")
	c := j.Spec.Template.Spec.Containers[0]
	want := []string{"annotate", "secrets,configmaps", "--all", "--all-namespaces", "--overwrite", "encryption.tenantkube.io/key-generation=2"}
	if j.Name != "demo-encryption-rewrite-2" || !slices.Equal(c.Args, want) || c.Env[0].Value != "/etc/tenantkube/kubeconfig/super-admin.svc" {
		t.Errorf("Job %s: args %v env %v", j.Name, c.Args, c.Env)
	}
	if j.Spec.Template.Spec.Volumes[0].Secret.SecretName != "demo-admin-kubeconfig" || *j.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Errorf("Job volumes %+v", j.Spec.Template.Spec.Volumes)
	}
	var _ batchv1.Job = *j
	// 1 GiB limit: 256 MiB of listed objects (256 Secrets at their 1 MiB
	// cap) at 4x decoding overhead; the request stays 128 MiB.
	res := c.Resources
	if res.Limits.Memory().Value() != 256*1<<20*4 || res.Requests.Memory().Value() != 128<<20 {
		t.Errorf("Job memory request %v limit %v, want 128Mi and 1Gi", res.Requests.Memory(), res.Limits.Memory())
	}
}

func TestEncryptionKeyGenerationOnlyIncreases(t *testing.T) {
	_, errs := planEnc(t, fntest.Call{Spec: `{encryption: {keyGeneration: 1}}`, Required: rootRequired(encRoot),
		Observed: map[string]string{nameEncryptionConfig: observedSecret(t, keysOf(encRoot, encryption.Stable(3)))}})
	if len(errs) != 1 || errs[0].Field != "spec.encryption.keyGeneration" || errs[0].BadValue != int32(1) {
		t.Errorf("errors %v", errs)
	}
}

func TestEncryptionPlatformMinimum(t *testing.T) {
	r, tenant := fntest.Call{Spec: `{}`, Required: rootRequired(encRoot)}.Read(t)
	in := inputOf(t, `{encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}, minimumKeyGeneration: 3}}`)
	p, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := composedKeys(t, p).Generations(); !slices.Equal(got, []int32{3}) {
		t.Errorf("generations %v, want [3]", got)
	}
}

// A running cluster whose Secret is gone gets the keys its status names
// back, derived again, when they match their fingerprints; a key that is
// not derived (a restored one) is refused.
// TestEncryptionSecretGone: the Secret deleted, the keys are derived again
// from status.encryption; the record of resources is rebuilt so that
// every accepted resource status or settings name stays readable and is
// moved (configmaps, removed mid-move, keeps its reading entry; a name
// the platform does not accept is left out).
func TestEncryptionSecretGone(t *testing.T) {
	derived := encryption.Fingerprint(encryption.Derive(encRoot, fntest.XRUID, 2))
	status := func(fp, extra string) string {
		return fmt.Sprintf(`{encryption: {phase: Stable, writeKey: {generation: 2, fingerprint: %q}%s}}`, fp, extra)
	}
	for name, c := range map[string]struct {
		fp, extra          string
		fail               bool
		resources, rewrite []string
	}{
		"derived":  {derived, "", false, []string{"secrets"}, []string{"secrets"}},
		"restored": {encryption.Fingerprint(bytes.Repeat([]byte{5}, 32)), "", true, nil, nil},
		"mid-move": {derived, ", resources: [secrets], rewrite: [configmaps, widgets.example.com]", false, []string{"secrets"}, []string{"configmaps", "secrets"}},
	} {
		status := func(fp string) string { return status(fp, c.extra) }
		call := fntest.Call{Spec: `{}`, Required: rootRequired(encRoot), Observed: map[string]string{nameKamajiControlPlane: observedKCPWith("x", 1, 1, 2)}}
		req := call.Request(t)
		xr := req.Observed.Composite.Resource.AsMap()
		xr["status"] = fntest.YAMLStruct(t, status(c.fp)).AsMap()
		s, err := fntest.Struct(xr)
		if err != nil {
			t.Fatal(err)
		}
		req.Observed.Composite.Resource = s
		r := function.NewRequest(req)
		tenant, err := r.Cluster()
		if err != nil {
			t.Fatal(err)
		}
		p, errs := plan(tenant, inputOf(t, encInput), function.HostPolicy{TenantHost: tenantHost}, r, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
		if c.fail {
			if len(errs) != 1 || errs[0].Field != "status.encryption" {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		got := composedKeys(t, p)
		if !slices.Equal(got.Generations(), []int32{2}) || !bytes.Equal(got.Keys[0].Secret, encryption.Derive(encRoot, fntest.XRUID, 2)) {
			t.Errorf("%s: keys %+v", name, got)
		}
		if !slices.Equal(got.Resources, c.resources) || !slices.Equal(got.Rewrite, c.rewrite) {
			t.Errorf("%s: resources %v, rewrite %v, want %v, %v", name, got.Resources, got.Rewrite, c.resources, c.rewrite)
		}
	}
}

// Without the root key nothing changes: the observed Secret is kept and
// still mounted.
func TestEncryptionHeldWithoutRootKey(t *testing.T) {
	ks := keysOf(encRoot, encryption.Stable(1))
	p, errs := planEnc(t, fntest.Call{Spec: `{}`, Observed: map[string]string{nameEncryptionConfig: observedSecret(t, ks)}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !slices.ContainsFunc(p.Kept, func(k function.Kept) bool { return k.Name == nameEncryptionConfig }) {
		t.Error("the observed Secret is not kept")
	}
	kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
	if kcp.Spec.Deployment.PodAdditionalMetadata.Annotations[AnnotationEncryptionConfig] != digestOf(t, ks) {
		t.Error("the API server no longer reads the observed configuration")
	}
}

// A restore's keys come from its backup, sealed for the new XR.
func TestResealed(t *testing.T) {
	src := encryption.KeySet{State: encryption.Stable(2), Resources: []string{"secrets"}, Keys: []encryption.Key{encryption.NewKey(encRoot, "source-uid", 2, encryption.Derive(encRoot, "source-uid", 2))}}
	data, err := src.Data()
	if err != nil {
		t.Fatal(err)
	}
	ks, errs := resealed(encRoot, fntest.XRUID, data, "demo-backup-20261202183044-c62685")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !bytes.Equal(ks.Keys[0].Secret, encryption.Derive(encRoot, "source-uid", 2)) || ks.Check(encRoot, fntest.XRUID) != nil {
		t.Errorf("resealed keys %+v", ks)
	}
	if _, errs := resealed(encRoot, fntest.XRUID, map[string][]byte{encryption.KeySetKey: []byte(`{"write":1}`)}, "b"); len(errs) != 1 {
		t.Errorf("a key set without its key: %v", errs)
	}
}

// TestEncryptionBackupRestore: demo's backup carries its encryption
// Secret sealed with its PKI; demo2 restoring it composes its own Secret
// with demo's keys (the data in the snapshot was written with them),
// sealed for demo2's XR.
func TestEncryptionBackupRestore(t *testing.T) {
	key, _ := age.GenerateX25519Identity()
	input := strings.TrimSuffix(backupInput, "}") + `, encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}}}`
	demoKeys := keysOf(encRoot, encryption.Stable(1))
	req := backupRequired(key)
	maps.Copy(req, rootRequired(encRoot))
	req[backup.RequiredBackupSourcePrefix+backup.EncryptionRole.Role] = []string{observedSecret(t, demoKeys)}
	p, err := planBackupsAt(t, fntest.Call{Spec: `{}`, Required: req, Observed: map[string]string{nameEncryptionConfig: observedSecret(t, demoKeys)}}, input, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	env := composedObject[xpextv1beta1.EnvironmentConfig](t, p, "backup-pki-"+slot24h)
	pkiObj := composedObject[xpextv1beta1.EnvironmentConfig](t, p, pkiObjectKey(t, p, "demo"))
	if raw, _ := json.Marshal(pkiObj); bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(demoKeys.Keys[0].Secret))) {
		t.Fatal("the PKI object holds the encryption key in clear")
	}
	envJSON, _ := json.Marshal(env)
	pkiJSON, _ := json.Marshal(pkiObj)
	identity := `{apiVersion: v1, kind: Secret, metadata: {name: etcd-backup-identity, namespace: tenantkube-system}, data: {identity: ` +
		base64.StdEncoding.EncodeToString([]byte(key.String())) + `}}`
	restore := map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)},
		backup.RequiredRestorePKIObject: {string(pkiJSON)}, backup.RequiredRestoreIdentity: {identity}}
	maps.Copy(restore, rootRequired(encRoot))
	const uid2 = "9a0b1c2d-0000-4000-8000-000000000002"
	spec := `{restore: {backup: demo-` + slot24h + `-` + digestDemo + `}}`
	// Before the backup's PKI is opened, no keys: none composed.
	early := map[string][]string{function.RequirementNamespace: {tenantNamespace}, backup.RequiredRestoreBundle: {string(envJSON)}}
	maps.Copy(early, rootRequired(encRoot))
	p, err = planBackupsAt(t, fntest.Call{Name: "demo2", UID: uid2, Spec: spec, Required: early}, input, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(p.Composed, func(c function.Composed) bool { return c.Name == nameEncryptionConfig }) {
		t.Error("an encryption Secret composed before the backup's keys were read")
	}
	p, err = planBackupsAt(t, fntest.Call{Name: "demo2", UID: uid2, Spec: spec, Required: restore}, input, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	got := composedKeys(t, p)
	if !slices.Equal(got.Generations(), []int32{1}) || !bytes.Equal(got.Keys[0].Secret, demoKeys.Keys[0].Secret) {
		t.Errorf("demo2's keys %+v, want demo's generation 1", got)
	}
	if got.Check(encRoot, uid2) != nil || bytes.Equal(got.Keys[0].Secret, encryption.Derive(encRoot, uid2, 1)) {
		t.Error("demo2's key is not demo's, sealed for demo2")
	}
}

// Without root key and Secret, a cluster whose status says it encrypts
// is refused: its API servers would lose their keys.
func TestEncryptionKeysGoneWithoutRootKey(t *testing.T) {
	call := fntest.Call{Spec: `{}`, Observed: map[string]string{nameKamajiControlPlane: observedKCPWith("x", 1, 1, 2)}}
	req := call.Request(t)
	xr := req.Observed.Composite.Resource.AsMap()
	xr["status"] = fntest.YAMLStruct(t, `{encryption: {phase: Stable, writeKey: {generation: 1, fingerprint: "0011223344556677"}}}`).AsMap()
	s, err := fntest.Struct(xr)
	if err != nil {
		t.Fatal(err)
	}
	req.Observed.Composite.Resource = s
	r := function.NewRequest(req)
	tenant, err := r.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	_, errs := plan(tenant, inputOf(t, `{}`), function.HostPolicy{TenantHost: tenantHost}, r, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	if len(errs) != 1 || errs[0].Field != "input.encryption.rootKeySecret" {
		t.Errorf("errors %v", errs)
	}
}

// TestEncryptionResourcesMove walks encryption.resources [secrets] →
// [secrets, configmaps] → back, on a cluster at generation 1: the
// configuration lists the new resources at once (identity last, so
// configmaps stored in clear stay readable), the move's Job runs once it
// rolled out and the record empties once the Job succeeded; a removed
// resource keeps an entry that writes in clear and reads with the key; a
// change mid-move starts its own move only once its configuration rolled
// out.
func TestEncryptionResourcesMove(t *testing.T) {
	both := `{encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}, resources: [secrets, configmaps]}}`
	rotate := `{encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}, minimumKeyGeneration: 2}}`
	stable := keysOf(encRoot, encryption.Stable(1))
	added := stable
	added.Resources, added.Rewrite = []string{"secrets", "configmaps"}, []string{"configmaps"}
	removed := stable
	removed.Rewrite = []string{"configmaps"}
	bothDone := added
	bothDone.Rewrite = nil
	with := func(d dep, f func(*dep)) dep { f(&d); return d }
	moveJob := func(ks encryption.KeySet, succeeded int) []string {
		return []string{moveJobKey(ks), fmt.Sprintf(`{apiVersion: batch/v1, kind: Job, metadata: {name: demo-%s, namespace: tenant-demo}, status: {succeeded: %d}}`, moveJobKey(ks), succeeded)}
	}
	obs := func(ks encryption.KeySet, job ...[]string) map[string]string {
		m := map[string]string{nameEncryptionConfig: observedSecret(t, ks), nameKamajiControlPlane: observedKCPWith(digestOf(t, ks), 4, 4, 2)}
		for _, job := range job {
			m[job[0]] = job[1]
		}
		return m
	}
	for _, c := range []struct {
		name     string
		input    string
		observed map[string]string
		dep      *dep
		want     encryption.KeySet
		job      string
	}{
		{"added: listed at once", both, obs(stable), refOf(rolled(digestOf(t, stable), 4)), added, ""},
		{"added: move waits for the rollout", both, obs(added), refOf(rolled(digestOf(t, stable), 4)), added, ""},
		{"added: move", both, obs(added), refOf(rolled(digestOf(t, added), 5)), added, moveJobKey(added)},
		{"added: move running", both, obs(added, moveJob(added, 0)), refOf(rolled(digestOf(t, added), 5)), added, moveJobKey(added)},
		{"added: move kept while the Deployment rolls", both, obs(added, moveJob(added, 0)), refOf(with(rolled(digestOf(t, added), 5), func(d *dep) { d.ready = 1 })), added, moveJobKey(added)},
		{"added: moved", both, obs(added, moveJob(added, 1)), refOf(rolled(digestOf(t, added), 5)), bothDone, ""},
		// A second change mid-move: the API servers run the first move's
		// configuration, not yet the second's; its Job waits for it.
		{"changed mid-move: the next move waits for its rollout", encInput, obs(added, moveJob(added, 0)), refOf(rolled(digestOf(t, added), 5)), removed, ""},
		{"changed mid-move: the next move", encInput, obs(removed), refOf(rolled(digestOf(t, removed), 6)), removed, moveJobKey(removed)},
		{"removed: read with the key, written in clear", encInput, obs(bothDone), refOf(rolled(digestOf(t, bothDone), 6)), removed, ""},
		{"removed: move", encInput, obs(removed), refOf(rolled(digestOf(t, removed), 7)), removed, moveJobKey(removed)},
		{"removed: rotation waits for the move", rotate, obs(removed), refOf(rolled(digestOf(t, removed), 7)), removed, moveJobKey(removed)},
		{"removed: moved", encInput, obs(removed, moveJob(removed, 1)), refOf(rolled(digestOf(t, removed), 7)), stable, ""},
	} {
		req := rootRequired(encRoot)
		req[requiredControlPlaneDeployment] = []string{c.dep.String()}
		p, errs := planEncWith(t, c.input, fntest.Call{Spec: `{}`, Required: req, Observed: c.observed})
		if len(errs) > 0 {
			t.Fatalf("%s: %v", c.name, errs)
		}
		if got := composedKeys(t, p); !equality.Semantic.DeepEqual(got, c.want) {
			t.Errorf("%s: key set %+v, want %+v", c.name, got, c.want)
		}
		var jobs []string
		for _, x := range p.Composed {
			if strings.HasPrefix(x.Name, namePrefixMoveJob) || strings.HasPrefix(x.Name, namePrefixRewriteJob) {
				jobs = append(jobs, x.Name)
			}
		}
		if want := []string{c.job}; (c.job == "" && len(jobs) > 0) || (c.job != "" && !slices.Equal(jobs, want)) {
			t.Errorf("%s: Jobs %v, want %q", c.name, jobs, c.job)
		}
	}
}

// TestMoveJob: the move's Job writes the resources added or removed again
// with the move's annotation.
func TestMoveJob(t *testing.T) {
	ks := encryption.KeySet{Resources: []string{"secrets"}, Rewrite: []string{"configmaps"}}
	j := rewriteJob(function.Identity{Namespace: "tenant-demo", Name: "demo"}, moveJobKey(ks), "registry.k8s.io/kubectl:v1.35.6", ks.Rewrite, AnnotationMove, ks.MoveID())
	want := []string{"annotate", "configmaps", "--all", "--all-namespaces", "--overwrite", "encryption.tenantkube.io/move=" + ks.MoveID()}
	if j.Name != "demo-encryption-move-"+ks.MoveID() || !slices.Equal(j.Spec.Template.Spec.Containers[0].Args, want) {
		t.Errorf("Job %s: args %v", j.Name, j.Spec.Template.Spec.Containers[0].Args)
	}
}

const kmsInput = `{encryption: {rootKeySecret: {namespace: tenantkube-system, name: tenantkube-encryption-root}, kms: {name: vault, endpoint: "unix:///var/run/kms/vault.sock", timeout: 3s}}}`

// TestEncryptionKMSNewCluster: a new cluster writes with the platform's
// plugin from its first generation; the API server pod mounts the
// socket's directory from the node at the same path.
func TestEncryptionKMSNewCluster(t *testing.T) {
	p, errs := planEncWith(t, kmsInput, fntest.Call{Spec: `{}`, Required: rootRequired(encRoot)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ks := composedKeys(t, p)
	if ks.Write != 1 || len(ks.Keys) != 1 || ks.Keys[0].KMS == nil || ks.Keys[0].KMS.Endpoint != "unix:///var/run/kms/vault.sock" || len(ks.Keys[0].Secret) != 0 {
		t.Errorf("keys %+v, want generation 1 on the plugin", ks)
	}
	kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
	if !slices.Contains(kcp.Spec.APIServer.ExtraVolumeMounts, corev1.VolumeMount{Name: "encryption-kms-0", MountPath: "/var/run/kms"}) {
		t.Errorf("API server mounts %v", kcp.Spec.APIServer.ExtraVolumeMounts)
	}
	i := slices.IndexFunc(kcp.Spec.Deployment.ExtraVolumes, func(v corev1.Volume) bool { return v.Name == "encryption-kms-0" })
	if i < 0 || kcp.Spec.Deployment.ExtraVolumes[i].HostPath == nil || kcp.Spec.Deployment.ExtraVolumes[i].HostPath.Path != "/var/run/kms" ||
		*kcp.Spec.Deployment.ExtraVolumes[i].HostPath.Type != corev1.HostPathDirectory {
		t.Errorf("volumes %v", kcp.Spec.Deployment.ExtraVolumes)
	}
}

// TestEncryptionKMSRotation: a cluster on secretbox generation 1, the
// platform sets a plugin: a rotation to generation 2 on the plugin
// starts (phase 1: it reads), the secretbox key kept.
func TestEncryptionKMSRotation(t *testing.T) {
	stable1 := keysOf(encRoot, encryption.Stable(1))
	req := rootRequired(encRoot)
	req[requiredControlPlaneDeployment] = []string{rolled(digestOf(t, stable1), 4).String()}
	p, errs := planEncWith(t, kmsInput, fntest.Call{Spec: `{}`, Required: req, Observed: map[string]string{
		nameEncryptionConfig: observedSecret(t, stable1), nameKamajiControlPlane: observedKCPWith(digestOf(t, stable1), 4, 4, 2)}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ks := composedKeys(t, p)
	k2, ok := ks.Key(2)
	if !slices.Equal(ks.Generations(), []int32{1, 2}) || !ok || k2.KMS == nil || ks.WritesKMS() {
		t.Errorf("keys %+v, want phase 1: secretbox 1 writes, the plugin's generation 2 reads", ks)
	}
	if st := p.Status["encryption"].(tkv1alpha1.EncryptionStatus); st.TargetGeneration != 2 {
		t.Errorf("target %d, want 2", st.TargetGeneration)
	}
}

// TestResealedKMS: a backup's plugin generation is sealed for the new XR
// as the plugin, with no secret.
func TestResealedKMS(t *testing.T) {
	plugin := encryption.KMS{Name: "vault", Endpoint: "unix:///var/run/kms/vault.sock", Timeout: "3s"}
	src := encryption.KeySet{State: encryption.Stable(2), Resources: []string{"secrets"}, Keys: []encryption.Key{encryption.NewKMSKey(encRoot, "source-uid", 2, plugin)}}
	data, err := src.Data()
	if err != nil {
		t.Fatal(err)
	}
	ks, errs := resealed(encRoot, fntest.XRUID, data, "demo-backup-20261202183044-c62685")
	if len(errs) > 0 || len(ks.Keys) != 1 || ks.Keys[0].KMS == nil || *ks.Keys[0].KMS != plugin || !ks.Keys[0].Verify(encRoot, fntest.XRUID) {
		t.Errorf("resealed %+v %v", ks, errs)
	}
}

// TestKeysFromStatusKMS: with the Secret gone, a plugin generation named
// in status.encryption by the plugin's fingerprint is taken again from
// the settings.
func TestKeysFromStatusKMS(t *testing.T) {
	fp := encryption.KMS{Name: "vault", Endpoint: "unix:///var/run/kms/vault.sock", Timeout: "3s"}.Fingerprint()
	p, errs := planEncWith(t, kmsInput, fntest.Call{Spec: `{}`, Required: rootRequired(encRoot),
		XRStatus: fmt.Sprintf(`{encryption: {writeKey: {generation: 1, fingerprint: %s}}}`, fp),
		Observed: map[string]string{nameKamajiControlPlane: observedKCPWith("", 1, 1, 2)}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ks := composedKeys(t, p); !ks.WritesKMS() || ks.Write != 1 || len(ks.Read) != 0 {
		t.Errorf("keys %+v, want generation 1 on the plugin", ks)
	}
}

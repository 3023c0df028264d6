package encryption

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// hkdfByHand is HKDF-SHA256 with an empty salt and 32 bytes of output,
// written from RFC 5869 section 2: PRK = HMAC(salt = HashLen zeros, IKM),
// T(1) = HMAC(PRK, info | 0x01).
func hkdfByHand(ikm []byte, info string) []byte {
	ext := hmac.New(sha256.New, make([]byte, sha256.Size))
	ext.Write(ikm)
	prk := ext.Sum(nil)
	exp := hmac.New(sha256.New, prk)
	exp.Write([]byte(info))
	exp.Write([]byte{1})
	return exp.Sum(nil)
}

var (
	root  = bytes.Repeat([]byte{0x42}, 32)
	other = bytes.Repeat([]byte{0x43}, 32)
)

const uid = "5d6f2a7e-3b1c-4e8a-9f04-c2b7d1e0a913"

func TestDeriveIsRFC5869(t *testing.T) {
	want := hkdfByHand(root, "tenantkube.io/encryption-key/v1\x00"+uid+"\x001")
	if got := Derive(root, uid, 1); !bytes.Equal(got, want) {
		t.Errorf("Derive = %x, want HKDF-SHA256 %x", got, want)
	}
}

func TestDeriveSameInputSameKey(t *testing.T) {
	a, b := Derive(root, uid, 3), Derive(slices.Clone(root), strings.Clone(uid), 3)
	if !bytes.Equal(a, b) || len(a) != 32 {
		t.Errorf("two derivations of one input differ or are not 32 bytes: %x %x", a, b)
	}
}

func TestDeriveDiffers(t *testing.T) {
	base := Derive(root, uid, 1)
	for name, k := range map[string][]byte{
		"another cluster (UID)": Derive(root, "0e8a5f1c-0000-4000-8000-000000000001", 1),
		"another generation":    Derive(root, uid, 2),
		"another root key":      Derive(other, uid, 1),
	} {
		if bytes.Equal(k, base) {
			t.Errorf("%s derives the same key", name)
		}
	}
}

func TestSealVerifies(t *testing.T) {
	k := NewKey(root, uid, 1, Derive(root, uid, 1))
	if !k.Verify(root, uid) {
		t.Fatal("a key sealed under the root key does not verify")
	}
	forged := k
	forged.Secret = bytes.Repeat([]byte{1}, 32)
	moved := k
	moved.Generation = 2
	short := NewKey(root, uid, 1, []byte("short"))
	for name, c := range map[string]struct {
		k    Key
		root []byte
		uid  string
	}{
		"key replaced":         {forged, root, uid},
		"generation changed":   {moved, root, uid},
		"root key changed":     {k, other, uid},
		"another cluster":      {k, root, "other-uid"},
		"not 32 bytes, sealed": {short, root, uid},
	} {
		if c.k.Verify(c.root, c.uid) {
			t.Errorf("%s: verifies", name)
		}
	}
}

func TestFingerprintHidesKey(t *testing.T) {
	k := Derive(root, uid, 1)
	fp := Fingerprint(k)
	if len(fp) != 16 || strings.Contains(fmt.Sprintf("%x", k), fp) || fp == Fingerprint(Derive(root, uid, 2)) {
		t.Errorf("fingerprint %q", fp)
	}
}

// TestNext walks a rotation from generation 1 to 2, and the start from
// generation 0 (Secrets in clear), step by step.
func TestNext(t *testing.T) {
	done := Observation{RolledOut: true, Rewritten: true}
	for _, c := range []struct {
		name   string
		cur    State
		target int32
		o      Observation
		want   State
	}{
		{"stable at target", Stable(1), 1, done, Stable(1)},
		{"target below: nothing", Stable(3), 2, done, Stable(3)},
		{"phase 1: new key reads", Stable(1), 2, Observation{}, State{Write: 1, Read: []int32{2}}},
		{"phase 1 waits for the rollout", State{Write: 1, Read: []int32{2}}, 2, Observation{Rewritten: true}, State{Write: 1, Read: []int32{2}}},
		{"phase 2: new key writes", State{Write: 1, Read: []int32{2}}, 2, Observation{RolledOut: true}, State{Write: 2, Read: []int32{1}}},
		{"phase 2 waits for the rewrite", State{Write: 2, Read: []int32{1}}, 2, Observation{RolledOut: true}, State{Write: 2, Read: []int32{1}}},
		{"phase 2 waits for the rollout", State{Write: 2, Read: []int32{1}}, 2, Observation{Rewritten: true}, State{Write: 2, Read: []int32{1}}},
		{"phase 3: old key dropped", State{Write: 2, Read: []int32{1}}, 2, done, Stable(2)},
		{"a later target waits for the rotation under way", State{Write: 1, Read: []int32{2}}, 5, Observation{RolledOut: true}, State{Write: 2, Read: []int32{1}}},
		{"from clear text", Stable(0), 1, Observation{}, State{Write: 0, Read: []int32{1}}},
	} {
		if got := Next(c.cur, c.target, c.o); !slices.Equal(got.Generations(), c.want.Generations()) {
			t.Errorf("%s: Next(%v, %d, %+v) = %v, want %v", c.name, c.cur, c.target, c.o, got, c.want)
		}
	}
}

func TestPhase(t *testing.T) {
	for s, want := range map[*State]Phase{
		{Write: 1}:                   PhaseStable,
		{Write: 1, Read: []int32{2}}: PhaseAddingReadKey,
		{Write: 0, Read: []int32{1}}: PhaseAddingReadKey,
		{Write: 2, Read: []int32{1}}: PhaseRewriting,
		{Write: 1, Read: []int32{0}}: PhaseRewriting,
	} {
		if got := s.Phase(); got != want {
			t.Errorf("%v: %s, want %s", *s, got, want)
		}
	}
}

// keySet is a sealed key set of s with derived keys, listing secrets.
func keySet(s State) KeySet {
	ks := KeySet{State: s, Resources: []string{"secrets"}}
	for _, g := range s.Generations() {
		if g != 0 {
			ks.Keys = append(ks.Keys, NewKey(root, uid, g, Derive(root, uid, g)))
		}
	}
	return ks
}

// Fixtures of expected configurations, written from the Kubernetes
// documentation's examples
// (https://kubernetes.io/docs/tasks/administer-cluster/encrypt-data/):
// entries of resources and providers, identity or secretbox keys named
// by generation.
var identity = apiserverv1.ProviderConfiguration{Identity: &apiserverv1.IdentityConfiguration{}}

func box(gens ...int32) apiserverv1.ProviderConfiguration {
	var keys []apiserverv1.Key
	for _, g := range gens {
		keys = append(keys, apiserverv1.Key{Name: fmt.Sprintf("generation-%d", g), Secret: base64.StdEncoding.EncodeToString(Derive(root, uid, g))})
	}
	return apiserverv1.ProviderConfiguration{Secretbox: &apiserverv1.SecretboxConfiguration{Keys: keys}}
}

func entry(resources []string, providers ...apiserverv1.ProviderConfiguration) apiserverv1.ResourceConfiguration {
	return apiserverv1.ResourceConfiguration{Resources: resources, Providers: providers}
}

func config(entries ...apiserverv1.ResourceConfiguration) *apiserverv1.EncryptionConfiguration {
	return &apiserverv1.EncryptionConfiguration{
		TypeMeta:  metav1.TypeMeta{APIVersion: "apiserver.config.k8s.io/v1", Kind: "EncryptionConfiguration"},
		Resources: entries,
	}
}

// TestConfigYAML checks one configuration byte for byte against the
// documentation's YAML shape.
func TestConfigYAML(t *testing.T) {
	want := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- providers:
  - secretbox:
      keys:
      - name: generation-1
        secret: ` + base64.StdEncoding.EncodeToString(Derive(root, uid, 1)) + `
  - identity: {}
  resources:
  - secrets
`
	data, err := keySet(Stable(1)).Data()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data[ConfigKey]); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestConfig checks each state's configuration: the write provider first,
// identity last unless it writes (clear-text objects of an added resource
// stay readable), and an entry for the resources removed but not yet
// rewritten with identity first and every key after it.
func TestConfig(t *testing.T) {
	s, cm := []string{"secrets"}, []string{"configmaps"}
	for _, c := range []struct {
		name string
		ks   KeySet
		want *apiserverv1.EncryptionConfiguration
	}{
		{"one key", keySet(Stable(1)), config(entry(s, box(1), identity))},
		{"in clear", keySet(Stable(0)), config(entry(s, identity))},
		{"phase 1 of the first key", keySet(State{Write: 0, Read: []int32{1}}), config(entry(s, identity, box(1)))},
		{"phase 2 of the first key", keySet(State{Write: 1, Read: []int32{0}}), config(entry(s, box(1), identity))},
		{"phase 1 of a rotation", keySet(State{Write: 2, Read: []int32{3}}), config(entry(s, box(2, 3), identity))},
		{"phase 2 of a rotation", keySet(State{Write: 3, Read: []int32{2}}), config(entry(s, box(3, 2), identity))},
		{"resource added, not rewritten", with(keySet(Stable(1)), []string{"secrets", "configmaps"}, cm),
			config(entry([]string{"secrets", "configmaps"}, box(1), identity))},
		{"resource removed, not rewritten", with(keySet(Stable(1)), s, cm),
			config(entry(s, box(1), identity), entry(cm, identity, box(1)))},
		{"removed during a rotation's phase 2", with(keySet(State{Write: 3, Read: []int32{2}}), s, []string{"configmaps", "pods"}),
			config(entry(s, box(3, 2), identity), entry([]string{"configmaps", "pods"}, identity, box(3, 2)))},
		{"removed, in clear: nothing to read", with(keySet(Stable(0)), s, cm), config(entry(s, identity))},
	} {
		if got := c.ks.Config(); !equality.Semantic.DeepEqual(got, c.want) {
			g, _ := yaml.Marshal(got)
			w, _ := yaml.Marshal(c.want)
			t.Errorf("%s:\n%s\nwant\n%s", c.name, g, w)
		}
		data, err := c.ks.Data()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadKeySet(data)
		if err != nil || back == nil || back.Check(root, uid) != nil || !equality.Semantic.DeepEqual(*back, c.ks) {
			t.Errorf("%s: key set does not read back: %v %v", c.name, back, err)
		}
	}
}

// with is ks listing resources, rewriting rewrite.
func with(ks KeySet, resources, rewrite []string) KeySet {
	ks.Resources, ks.Rewrite = resources, rewrite
	return ks
}

func TestCheckRefuses(t *testing.T) {
	good := keySet(State{Write: 2, Read: []int32{1}})
	if err := good.Check(root, uid); err != nil {
		t.Fatalf("a derived key set: %v", err)
	}
	forged := keySet(Stable(1))
	forged.Keys[0].Secret = bytes.Repeat([]byte{7}, 32)
	missing := keySet(State{Write: 2, Read: []int32{1}})
	missing.Keys = missing.Keys[:1]
	extra := keySet(Stable(1))
	extra.Keys = append(extra.Keys, NewKey(root, uid, 4, Derive(root, uid, 4)))
	repeated := keySet(State{Write: 1, Read: []int32{1}})
	big := keySet(Stable(MaxGeneration + 1))
	three := keySet(State{Write: 3, Read: []int32{2, 1}})
	refused := with(keySet(Stable(1)), []string{"secrets", "apiserveripinfo"}, nil)
	unlisted := with(keySet(Stable(1)), nil, []string{"configmaps"})
	for name, c := range map[string]struct {
		ks   KeySet
		root []byte
	}{
		"root key changed":                  {good, other},
		"key forged":                        {forged, root},
		"key missing":                       {missing, root},
		"key unused":                        {extra, root},
		"generation twice":                  {repeated, root},
		"out of range":                      {big, root},
		"three keys":                        {three, root},
		"a resource kube-apiserver refuses": {refused, root},
		"a move without resources":          {unlisted, root},
	} {
		if err := c.ks.Check(c.root, uid); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestStep walks changes of the settings' resources: the move records
// what was added or removed until its Job succeeded, one change at a time
// with a rotation.
func TestStep(t *testing.T) {
	s, sc := []string{"secrets"}, []string{"secrets", "configmaps"}
	moved := Observation{RolledOut: true, Moved: true}
	rs := func(st State, resources, rewrite []string) KeySet {
		return KeySet{State: st, Resources: resources, Rewrite: rewrite}
	}
	for _, c := range []struct {
		name   string
		cur    KeySet
		want   []string
		target int32
		o      Observation
		next   KeySet
	}{
		{"unchanged", rs(Stable(1), s, nil), s, 1, moved, rs(Stable(1), s, nil)},
		{"same set, other order", rs(Stable(1), []string{"configmaps", "secrets"}, nil), sc, 1, moved, rs(Stable(1), []string{"configmaps", "secrets"}, nil)},
		{"none recorded: the settings'", rs(Stable(1), nil, nil), s, 1, moved, rs(Stable(1), s, nil)},
		{"added", rs(Stable(1), s, nil), sc, 1, Observation{}, rs(Stable(1), sc, []string{"configmaps"})},
		{"removed", rs(Stable(1), sc, nil), s, 1, Observation{}, rs(Stable(1), s, []string{"configmaps"})},
		{"replaced", rs(Stable(1), []string{"configmaps"}, nil), []string{"pods"}, 1, Observation{}, rs(Stable(1), []string{"pods"}, []string{"configmaps", "pods"})},
		{"changed again mid-move keeps what is unmoved", rs(Stable(1), s, []string{"configmaps"}), []string{"secrets", "pods"}, 1, moved,
			rs(Stable(1), []string{"secrets", "pods"}, []string{"configmaps", "pods"})},
		{"move waits for the rollout", rs(Stable(1), s, []string{"configmaps"}), s, 1, Observation{Moved: true}, rs(Stable(1), s, []string{"configmaps"})},
		{"move waits for its Job", rs(Stable(1), s, []string{"configmaps"}), s, 1, Observation{RolledOut: true, Rewritten: true}, rs(Stable(1), s, []string{"configmaps"})},
		{"move done", rs(Stable(1), s, []string{"configmaps"}), s, 1, moved, rs(Stable(1), s, nil)},
		{"a rotation waits for the move", rs(Stable(1), s, []string{"configmaps"}), s, 2, Observation{}, rs(Stable(1), s, []string{"configmaps"})},
		{"a rotation waits for a change to be recorded", rs(Stable(1), s, nil), sc, 2, moved, rs(Stable(1), sc, []string{"configmaps"})},
		{"a rotation starts", rs(Stable(1), s, nil), s, 2, Observation{}, rs(State{Write: 1, Read: []int32{2}}, s, nil)},
		{"a change waits for the rotation", rs(State{Write: 1, Read: []int32{2}}, s, nil), sc, 2, Observation{RolledOut: true},
			rs(State{Write: 2, Read: []int32{1}}, s, nil)},
		{"a rebuilt move keeps the old key", rs(State{Write: 2, Read: []int32{1}}, s, []string{"configmaps"}), s, 2,
			Observation{RolledOut: true, Rewritten: true}, rs(State{Write: 2, Read: []int32{1}}, s, []string{"configmaps"})},
		{"a rebuilt move done, the old key dropped", rs(State{Write: 2, Read: []int32{1}}, s, []string{"configmaps"}), s, 2,
			Observation{RolledOut: true, Rewritten: true, Moved: true}, rs(Stable(2), s, nil)},
		{"a rebuilt move done while phase 1 rolls out", rs(State{Write: 1, Read: []int32{2}}, s, []string{"configmaps"}), s, 2,
			Observation{RolledOut: true, Moved: true}, rs(State{Write: 2, Read: []int32{1}}, s, nil)},
	} {
		got := c.cur.Step(c.want, c.target, c.o)
		if !equality.Semantic.DeepEqual(got, c.next) {
			t.Errorf("%s: Step = %+v, want %+v", c.name, got, c.next)
		}
	}
}

// TestRebuilt: a key set rebuilt without its record lists the settings'
// resources and every accepted one status named, all to be moved; the
// next Step keeps the settings' list encrypted (identity last) and gives
// what else was named an entry that reads with the key after identity
// (the Kubernetes documentation's rule: a removed resource stays readable
// until its objects are written again). An unaccepted name is left out.
func TestRebuilt(t *testing.T) {
	s, cm := []string{"secrets"}, []string{"configmaps"}
	ks := keySet(Stable(1))
	ks.Resources = nil
	got := ks.Rebuilt(s, []string{"configmaps", "secrets", "widgets.example.com"}, []string{"configmaps", "secrets", "pods"})
	if want := []string{"configmaps", "secrets"}; !slices.Equal(got.Resources, want) || !slices.Equal(got.Rewrite, want) {
		t.Fatalf("Rebuilt: resources %v, rewrite %v, want %v for both", got.Resources, got.Rewrite, want)
	}
	next := got.Step(s, 1, Observation{})
	next.Keys = got.Keys
	if want := config(entry(s, box(1), identity), entry(cm, identity, box(1))); !equality.Semantic.DeepEqual(next.Config(), want) {
		g, _ := yaml.Marshal(next.Config())
		t.Errorf("after Step:\n%s", g)
	}
}

func TestRemoved(t *testing.T) {
	ks := KeySet{Resources: []string{"secrets", "configmaps"}, Rewrite: []string{"configmaps", "pods"}}
	if got := ks.Removed(); !slices.Equal(got, []string{"pods"}) {
		t.Errorf("Removed = %v, want [pods]", got)
	}
}

// TestMoveID: 8 hex digits of SHA-256("<sorted resources>\x00<sorted
// rewrite>"), the same for any order.
func TestMoveID(t *testing.T) {
	sum := sha256.Sum256([]byte("configmaps,secrets\x00configmaps"))
	want := fmt.Sprintf("%x", sum[:4])
	a := KeySet{Resources: []string{"secrets", "configmaps"}, Rewrite: []string{"configmaps"}}
	b := KeySet{Resources: []string{"configmaps", "secrets"}, Rewrite: []string{"configmaps"}}
	if a.MoveID() != want || b.MoveID() != want {
		t.Errorf("MoveID = %s, %s; want %s", a.MoveID(), b.MoveID(), want)
	}
	if c := (KeySet{Resources: []string{"secrets"}, Rewrite: []string{"configmaps"}}); c.MoveID() == want {
		t.Errorf("another move has the same id %s", want)
	}
}

var testKMS = KMS{Name: "vault", Endpoint: "unix:///var/run/kms/vault.sock", Timeout: "3s"}

// kmsProvider is the expected provider of testKMS for generation gen,
// from kube-apiserver's KMSConfiguration (apiVersion v2, name, endpoint,
// timeout; k8s.io/apiserver v0.36.4 pkg/apis/apiserver/v1/types_encryption.go).
func kmsProvider(gen int32) apiserverv1.ProviderConfiguration {
	return apiserverv1.ProviderConfiguration{KMS: &apiserverv1.KMSConfiguration{
		APIVersion: "v2", Name: fmt.Sprintf("vault-generation-%d", gen), Endpoint: "unix:///var/run/kms/vault.sock", Timeout: &metav1.Duration{Duration: 3 * time.Second},
	}}
}

// kmsSet is keySet(s) with generation kmsGen held by testKMS.
func kmsSet(s State, kmsGen int32) KeySet {
	ks := keySet(s)
	for i, k := range ks.Keys {
		if k.Generation == kmsGen {
			ks.Keys[i] = NewKMSKey(root, uid, kmsGen, testKMS)
		}
	}
	return ks
}

// TestConfigKMS: a rotation from secretbox generation 1 to a KMS
// generation 2 (the two-phase machinery), and a KMS cluster.
func TestConfigKMS(t *testing.T) {
	s := []string{"secrets"}
	for _, c := range []struct {
		name string
		ks   KeySet
		want *apiserverv1.EncryptionConfiguration
	}{
		{"KMS alone", kmsSet(Stable(1), 1), config(entry(s, kmsProvider(1), identity))},
		{"phase 1 to KMS", kmsSet(State{Write: 1, Read: []int32{2}}, 2), config(entry(s, box(1), kmsProvider(2), identity))},
		{"phase 2 to KMS", kmsSet(State{Write: 2, Read: []int32{1}}, 2), config(entry(s, kmsProvider(2), box(1), identity))},
		{"KMS to KMS", func() KeySet {
			ks := kmsSet(State{Write: 3, Read: []int32{2}}, 2)
			ks.Keys[0] = NewKMSKey(root, uid, 3, testKMS)
			return ks
		}(), config(entry(s, kmsProvider(3), kmsProvider(2), identity))},
		{"removed under KMS reads with the secretbox keys", with(kmsSet(State{Write: 2, Read: []int32{1}}, 2), s, []string{"configmaps"}),
			config(entry(s, kmsProvider(2), box(1), identity), entry([]string{"configmaps"}, identity, box(1)))},
	} {
		if got := c.ks.Config(); !equality.Semantic.DeepEqual(got, c.want) {
			g, _ := yaml.Marshal(got)
			w, _ := yaml.Marshal(c.want)
			t.Errorf("%s:\n%s\nwant\n%s", c.name, g, w)
		}
		if err := c.ks.Check(root, uid); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestKMSKeySeal(t *testing.T) {
	k := NewKMSKey(root, uid, 2, testKMS)
	if !k.Verify(root, uid) {
		t.Fatal("a sealed KMS key does not verify")
	}
	moved := NewKMSKey(root, uid, 2, testKMS)
	moved.KMS.Endpoint = "unix:///tmp/other.sock"
	both := NewKMSKey(root, uid, 2, testKMS)
	both.Secret = Derive(root, uid, 2)
	for name, c := range map[string]Key{"endpoint changed": moved, "a secret too": both} {
		if c.Verify(root, uid) {
			t.Errorf("%s: verifies", name)
		}
	}
	if k.Fingerprint() == NewKMSKey(root, uid, 2, KMS{Name: "other", Endpoint: testKMS.Endpoint, Timeout: "3s"}).Fingerprint() {
		t.Error("two plugins have one fingerprint")
	}
}

// TestStepKMS: a key set with a KMS generation keeps the resources it
// lists (a removed entry could not name the KMS provider again) and
// takes the ones added.
func TestStepKMS(t *testing.T) {
	ks := kmsSet(Stable(1), 1)
	ks.Resources = []string{"secrets", "configmaps"}
	got := ks.Step([]string{"secrets", "pods"}, 1, Observation{RolledOut: true})
	if want := []string{"secrets", "configmaps", "pods"}; !sameSet(got.Resources, want) || !slices.Equal(got.Rewrite, []string{"pods"}) {
		t.Errorf("Step = resources %v rewrite %v, want %v and [pods]", got.Resources, got.Rewrite, want)
	}
}

// TestCheckKMS: kube-apiserver's validation of the provider refuses a
// non-unix endpoint and a zero timeout
// (pkg/apis/apiserver/validation/validation_encryption.go:391-416).
func TestCheckKMS(t *testing.T) {
	if errs := CheckKMS(testKMS); len(errs) != 0 {
		t.Errorf("refused: %v", errs)
	}
	for name, k := range map[string]KMS{
		"tcp endpoint": {Name: "vault", Endpoint: "tcp://127.0.0.1:1", Timeout: "3s"},
		"no timeout":   {Name: "vault", Endpoint: testKMS.Endpoint, Timeout: "0s"},
	} {
		if errs := CheckKMS(k); len(errs) != 1 {
			t.Errorf("%s: %v, want one refusal", name, errs)
		}
	}
}

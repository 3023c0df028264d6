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

// keySet is a sealed key set of s with derived keys.
func keySet(s State) KeySet {
	ks := KeySet{State: s}
	for _, g := range s.Generations() {
		if g != 0 {
			ks.Keys = append(ks.Keys, NewKey(root, uid, g, Derive(root, uid, g)))
		}
	}
	return ks
}

// TestConfig checks the EncryptionConfiguration against the shape of the
// Kubernetes documentation's examples
// (https://kubernetes.io/docs/tasks/administer-cluster/encrypt-data/):
// one resources entry, the writing provider first, identity last while
// it only reads.
func TestConfig(t *testing.T) {
	b64 := func(g int32) string { return base64.StdEncoding.EncodeToString(Derive(root, uid, g)) }
	for _, c := range []struct {
		name string
		s    State
		want string
	}{
		{"one key", Stable(1), `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- providers:
  - secretbox:
      keys:
      - name: generation-1
        secret: ` + b64(1) + `
  resources:
  - secrets
`},
		{"phase 1 of the first key", State{Write: 0, Read: []int32{1}}, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- providers:
  - identity: {}
  - secretbox:
      keys:
      - name: generation-1
        secret: ` + b64(1) + `
  resources:
  - secrets
`},
		{"phase 2 of the first key", State{Write: 1, Read: []int32{0}}, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- providers:
  - secretbox:
      keys:
      - name: generation-1
        secret: ` + b64(1) + `
  - identity: {}
  resources:
  - secrets
`},
		{"phase 2 of a rotation", State{Write: 3, Read: []int32{2}}, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- providers:
  - secretbox:
      keys:
      - name: generation-3
        secret: ` + b64(3) + `
      - name: generation-2
        secret: ` + b64(2) + `
  resources:
  - secrets
`},
	} {
		data, err := keySet(c.s).Data([]string{"secrets"})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(data[ConfigKey]); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
		back, err := ReadKeySet(data)
		if err != nil || back == nil || back.Check(root, uid) != nil || !slices.Equal(back.Generations(), c.s.Generations()) {
			t.Errorf("%s: key set does not read back: %v %v", c.name, back, err)
		}
	}
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
	for name, c := range map[string]struct {
		ks   KeySet
		root []byte
	}{
		"root key changed": {good, other},
		"key forged":       {forged, root},
		"key missing":      {missing, root},
		"key unused":       {extra, root},
		"generation twice": {repeated, root},
		"out of range":     {big, root},
		"three keys":       {three, root},
	} {
		if err := c.ks.Check(c.root, uid); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := yaml.Marshal(good.Config([]string{"secrets", "configmaps"})); err != nil {
		t.Fatal(err)
	}
}

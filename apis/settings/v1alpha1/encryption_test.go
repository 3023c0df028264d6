package v1alpha1

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestEncryptionResourcesRefused: each resource kube-apiserver refuses in
// an EncryptionConfiguration is reported at its own index naming the
// value, from the rules of k8s.io/apiserver v0.36.4
// pkg/apis/apiserver/validation/validation_encryption.go; the form check
// refuses wildcards and repeats before it.
func TestEncryptionResourcesRefused(t *testing.T) {
	for _, c := range []struct {
		value, why string
	}{
		{"events.events.k8s.io", ":244 events.k8s.io group"},
		{"ingresses.extensions", ":257 extensions group"},
		{"serviceipallocations", ":228-230 no REST API"},
		{"apiserveripinfo", ":228 no REST API"},
		{"servicenodeportallocations", ":230 no REST API"},
		{"Secrets", "form (and :199 capitals)"},
		{"*.apps", "form (and :270 across groups)"},
		{"*", "form (and :212 star)"},
		{"secrets", "repeated: form check"},
	} {
		e := Encryption{Resources: []string{"secrets", "configmaps", c.value}}
		errs := e.validateResources(field.NewPath("encryption", "resources"))
		if len(errs) != 1 || errs[0].Field != "encryption.resources[2]" || errs[0].BadValue != c.value {
			t.Errorf("%s (%s): %v, want one error at encryption.resources[2] naming it", c.value, c.why, errs)
		} else if strings.HasPrefix(c.why, ":") && !strings.Contains(errs[0].Detail, "kube-apiserver refuses it") {
			t.Errorf("%s (%s): %q, want kube-apiserver's reason", c.value, c.why, errs[0].Detail)
		}
	}
}

// TestEncryptionResourcesAccepted: built-in resources of the core and
// other groups pass; a typo, a custom resource and one GA only after the
// oldest supported minor are each refused at their own index naming the
// value, among accepted ones.
func TestEncryptionResourcesAccepted(t *testing.T) {
	e := Encryption{Resources: []string{"secrets", "configmaps", "deployments.apps", "events", "ingresses.networking.k8s.io"}}
	if errs := e.validateResources(field.NewPath("encryption", "resources")); len(errs) != 0 {
		t.Errorf("refused: %v", errs)
	}
	e.Resources = []string{"secrest", "secrets", "customresources.example.com", "configmaps", "volumeattributesclasses.storage.k8s.io"}
	errs := e.validateResources(field.NewPath("encryption", "resources"))
	if len(errs) != 3 {
		t.Fatalf("%v, want errors at [0], [2] and [4]", errs)
	}
	for i, at := range []int{0, 2, 4} {
		if want := fmt.Sprintf("encryption.resources[%d]", at); errs[i].Field != want || errs[i].BadValue != e.Resources[at] ||
			!strings.Contains(errs[i].Detail, "not a built-in resource") {
			t.Errorf("%v, want one at %s naming %q", errs[i], want, e.Resources[at])
		}
	}
}

// TestKMSValidate: each bad value is named at its path.
func TestKMSValidate(t *testing.T) {
	good := KMS{Name: "vault", Endpoint: "unix:///var/run/kms/vault.sock", Timeout: "3s"}
	if errs := good.validate(field.NewPath("encryption", "kms")); len(errs) != 0 {
		t.Errorf("refused: %v", errs)
	}
	for _, c := range []struct {
		k     KMS
		field string
	}{
		{KMS{Name: "Vault", Endpoint: good.Endpoint, Timeout: "3s"}, "encryption.kms.name"},
		{KMS{Name: "a:b", Endpoint: good.Endpoint, Timeout: "3s"}, "encryption.kms.name"},
		{KMS{Name: strings.Repeat("a", 41), Endpoint: good.Endpoint, Timeout: "3s"}, "encryption.kms.name"},
		{KMS{Name: "vault", Endpoint: "tcp://127.0.0.1:9000", Timeout: "3s"}, "encryption.kms.endpoint"},
		{KMS{Name: "vault", Endpoint: "unix://vault.sock", Timeout: "3s"}, "encryption.kms.endpoint"},
		{KMS{Name: "vault", Endpoint: "unix:///vault.sock", Timeout: "3s"}, "encryption.kms.endpoint"},
		{KMS{Name: "vault", Endpoint: "unix:///var/run/../kms.sock", Timeout: "3s"}, "encryption.kms.endpoint"},
		{KMS{Name: "vault", Endpoint: good.Endpoint, Timeout: "500ms"}, "encryption.kms.timeout"},
		{KMS{Name: "vault", Endpoint: good.Endpoint, Timeout: "2m"}, "encryption.kms.timeout"},
		{KMS{Name: "vault", Endpoint: good.Endpoint, Timeout: "soon"}, "encryption.kms.timeout"},
	} {
		errs := c.k.validate(field.NewPath("encryption", "kms"))
		if len(errs) == 0 || errs[0].Field != c.field {
			t.Errorf("%+v: %v, want an error at %s", c.k, errs, c.field)
		}
	}
	e := Encryption{KMS: &KMS{Name: "vault", Endpoint: good.Endpoint}}
	e.defaults()
	if e.KMS.Timeout != "3s" {
		t.Errorf("timeout defaults to %q, want kube-apiserver's 3s", e.KMS.Timeout)
	}
}

// TestKMSNeedsRootKey: the root key seals every key set, the plugin's too.
func TestKMSNeedsRootKey(t *testing.T) {
	e := Encryption{KMS: &KMS{Name: "vault", Endpoint: "unix:///var/run/kms/vault.sock", Timeout: "3s"}}
	e.defaults()
	errs := e.validate(field.NewPath("encryption"))
	if len(errs) != 1 || errs[0].Field != "encryption.rootKeySecret" {
		t.Errorf("%v, want one error at encryption.rootKeySecret", errs)
	}
	e.RootKeySecret = &SecretRef{Namespace: "tenantkube-system", Name: "root"}
	if errs := e.validate(field.NewPath("encryption")); len(errs) != 0 {
		t.Errorf("refused: %v", errs)
	}
}

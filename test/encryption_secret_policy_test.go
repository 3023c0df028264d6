package test

import (
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// renderedEncryptionSecret is the Secret demo-encryption-config of the
// render golden encryption-move (a move under way: keys.json records it).
func renderedEncryptionSecret(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	for _, d := range yamlDocs(t, filepath.Join(repoRoot(t), "test", "testdata", "control-plane", "encryption-move.golden.yaml")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() == "Secret" && u.GetName() == "demo-encryption-config" {
			return u
		}
	}
	t.Fatal("the render golden encryption-move holds no Secret demo-encryption-config")
	return nil
}

// TestEncryptionSecretPolicy evaluates deploy/encryption-secret-policy.yaml
// on the composed encryption Secret: only Crossplane changes its content,
// only Crossplane, the garbage collector and the namespace controller
// delete it; a tenant holding edit can neither delete, replace, strip the
// label off nor create one ahead of Crossplane under the name; a tenant's
// Secret of another name is not matched.
func TestEncryptionSecretPolicy(t *testing.T) {
	_, _, v := loadPolicy(t, filepath.Join(repoRoot(t), "deploy", "encryption-secret-policy.yaml"))
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	sec := renderedEncryptionSecret(t)
	edited := sec.DeepCopy()
	if err := unstructured.SetNestedField(edited.Object, "e30=", "data", "keys.json"); err != nil {
		t.Fatal(err)
	}
	unlabelled := sec.DeepCopy()
	labels := unlabelled.GetLabels()
	delete(labels, "crossplane.io/composite")
	unlabelled.SetLabels(labels)
	annotated := sec.DeepCopy()
	annotated.SetAnnotations(map[string]string{"note": "x"})
	// Owned by its XR, as Crossplane applies it; retargeted at an object
	// the tenant may delete, the garbage collector would delete it.
	owned := sec.DeepCopy()
	owned.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "tenantkube.io/v1alpha1", Kind: "XKubernetesCluster", Name: "demo-x7k2p", UID: "7c9e6679-7425-40de-944b-e07fc1f90ae7", Controller: ptr.To(true)}})
	retargeted := owned.DeepCopy()
	retargeted.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "mine", UID: "0f8fad5b-d9cb-469f-a165-70867728950e"}})
	ownedAnnotated := owned.DeepCopy()
	ownedAnnotated.SetAnnotations(map[string]string{"note": "x"})
	other := obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: app-config, namespace: tenant-demo}\ndata: {k: dg==}")
	otherEdited := other.DeepCopy()
	otherEdited.Object["data"] = map[string]any{"k": "dw=="}
	for _, c := range []struct {
		name     string
		op       admission.Operation
		obj, old *unstructured.Unstructured
		u        policyUser
		want     bool
	}{
		{"Crossplane updates it", admission.Update, edited, sec, crossplaneSA, true},
		{"Crossplane deletes it", admission.Delete, nil, sec, crossplaneSA, true},
		{"the garbage collector deletes it", admission.Delete, nil, sec, gcSA, true},
		{"the namespace controller deletes it", admission.Delete, nil, sec, nsControllerSA, true},
		{"the tenant deletes it", admission.Delete, nil, sec, editTenant, false},
		{"a tenant's ServiceAccount deletes it", admission.Delete, nil, sec, tenantSA, false},
		{"the platform deletes it", admission.Delete, nil, sec, masters, false},
		{"the tenant edits keys.json", admission.Update, edited, sec, editTenant, false},
		{"the platform edits keys.json", admission.Update, edited, sec, platformTeam, false},
		{"the tenant strips the label", admission.Update, unlabelled, sec, editTenant, false},
		{"the tenant annotates it", admission.Update, annotated, sec, editTenant, true},
		{"the tenant annotates it owned", admission.Update, ownedAnnotated, owned, editTenant, true},
		{"the tenant retargets its owner references", admission.Update, retargeted, owned, editTenant, false},
		{"the tenant adds an owner reference", admission.Update, retargeted, sec, editTenant, false},
		{"the tenant removes its owner references", admission.Update, sec, owned, editTenant, false},
		{"the garbage collector removes its owner references", admission.Update, sec, owned, gcSA, true},
		{"the tenant creates one ahead of Crossplane", admission.Create, unlabelled, nil, editTenant, false},
		{"the tenant re-creates it labelled", admission.Create, sec, nil, editTenant, false},
		{"Crossplane creates it", admission.Create, sec, nil, crossplaneSA, true},
		{"the platform creates one ahead", admission.Create, unlabelled, nil, platformTeam, true},
		{"the tenant deletes its own Secret", admission.Delete, nil, other, editTenant, true},
		{"the tenant edits its own Secret", admission.Update, otherEdited, other, editTenant, true},
		{"the tenant creates its own Secret", admission.Create, other, nil, editTenant, true},
	} {
		ok, msg := admitted(t, v, c.op, gvr, gvk, "", c.obj, c.old, nil, c.u.name, c.u.groups...)
		if ok != c.want {
			t.Errorf("%s: admitted %t, want %t (%s)", c.name, ok, c.want, msg)
		}
		if !ok && !strings.Contains(msg, "secrets tenant-demo/demo-encryption-config") {
			t.Errorf("%s: denial %q does not name the Secret", c.name, msg)
		}
	}
}

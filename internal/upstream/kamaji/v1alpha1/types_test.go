package v1alpha1_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
)

var transition = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func secretKey(name, key string) *kamajiv1alpha1.SecretReference {
	return &kamajiv1alpha1.SecretReference{Name: name, Namespace: "tenant-demo", KeyPath: key}
}

// demo is the etcd DataStore docs/architecture.md describes for cluster "demo" in
// namespace "tenant-demo" (cluster-scoped, so no namespace), with every
// modelled field set; the client certificate is given inline to exercise
// ContentRef.Content.
func demo() *kamajiv1alpha1.DataStore {
	return &kamajiv1alpha1.DataStore{
		TypeMeta: metav1.TypeMeta{APIVersion: kamajiv1alpha1.GroupVersion.String(), Kind: kamajiv1alpha1.DataStoreKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: "tenant-demo-demo",
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "tenantkube",
				"tenantkube.io/cluster":        "demo",
			},
		},
		Spec: kamajiv1alpha1.DataStoreSpec{
			Driver:    kamajiv1alpha1.DriverEtcd,
			Endpoints: []string{"demo-etcd.tenant-demo.svc:2379"},
			TLSConfig: &kamajiv1alpha1.TLSConfig{
				CertificateAuthority: kamajiv1alpha1.CertificateAuthority{
					Certificate: kamajiv1alpha1.ContentRef{SecretReference: secretKey("demo-etcd-client-ca-tls", "tls.crt")},
					PrivateKey:  &kamajiv1alpha1.ContentRef{SecretReference: secretKey("demo-etcd-client-ca-tls", "tls.key")},
				},
				ClientCertificate: &kamajiv1alpha1.ClientCertificate{
					Certificate: kamajiv1alpha1.ContentRef{Content: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")},
					PrivateKey:  kamajiv1alpha1.ContentRef{SecretReference: secretKey("demo-etcd-client-tls", "tls.key")},
				},
			},
		},
		Status: kamajiv1alpha1.DataStoreStatus{
			Ready:              true,
			ObservedGeneration: 1,
			UsedBy:             []string{"tenant-demo/demo"},
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: transition, Reason: "DataStoreValidated", Message: "ready",
			}},
		},
	}
}

func TestDataStoreMatchesCRD(t *testing.T) {
	obj := demo()
	if unset := upstreamtest.UnsetFields(obj); len(unset) > 0 {
		t.Errorf("fields not exercised by the test object: %v", unset)
	}
	upstreamtest.CheckObject(t, obj)
}

func TestDataStoreWithoutCAKeyViolatesCRDRule(t *testing.T) {
	obj := demo()
	obj.Spec.TLSConfig.CertificateAuthority.PrivateKey = nil
	err := upstreamtest.MustLoadShared(t).Validate(upstreamtest.ToUnstructured(t, obj))
	if err == nil || !strings.Contains(err.Error(), "certificateAuthority privateKey must have secretReference or content") {
		t.Errorf("Validate = %v, want the CRD's CEL rule on the CA private key", err)
	}
}

func TestDataStoreStatusDecodes(t *testing.T) {
	const statusJSON = `{
		"ready": false,
		"observedGeneration": 2,
		"usedBy": ["tenant-demo/demo", "tenant-other/x"],
		"conditions": [{"type": "Ready", "status": "False", "observedGeneration": 2,
			"lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "Connecting", "message": "dial tcp: refused"}]
	}`
	var got kamajiv1alpha1.DataStoreStatus
	upstreamtest.CheckStatusJSON(t, demo(), statusJSON, &got)
	want := kamajiv1alpha1.DataStoreStatus{
		ObservedGeneration: 2,
		UsedBy:             []string{"tenant-demo/demo", "tenant-other/x"},
		Conditions: []metav1.Condition{{
			Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 2,
			LastTransitionTime: transition, Reason: "Connecting", Message: "dial tcp: refused",
		}},
	}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

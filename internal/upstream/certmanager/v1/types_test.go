package v1_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cmv1 "github.com/tenantkube/tenantkube/internal/upstream/certmanager/v1"
	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
)

var (
	transition = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	labels     = map[string]string{"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo"}
)

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "tenant-demo", Labels: labels}
}

func issuerType() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: cmv1.GroupVersion.String(), Kind: cmv1.IssuerKind}
}

func certType() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: cmv1.GroupVersion.String(), Kind: cmv1.CertificateKind}
}

func readyCondition() []cmv1.Condition {
	return []cmv1.Condition{{
		Type: cmv1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: &transition,
		Reason: "Ready", Message: "ready", ObservedGeneration: 1,
	}}
}

// The etcd PKI docs/architecture.md describes for cluster "demo" in namespace
// "tenant-demo": a self-signed Issuer, CA Certificates, CA Issuers and a
// server certificate; together they set every modelled field.
func selfSigned() *cmv1.Issuer {
	return &cmv1.Issuer{
		TypeMeta: issuerType(), ObjectMeta: meta("demo-etcd-selfsigned"),
		Spec:   cmv1.IssuerSpec{SelfSigned: &cmv1.SelfSignedIssuer{}},
		Status: cmv1.IssuerStatus{Conditions: readyCondition()},
	}
}

func caIssuer() *cmv1.Issuer {
	return &cmv1.Issuer{
		TypeMeta: issuerType(), ObjectMeta: meta("demo-etcd-client-ca"),
		Spec: cmv1.IssuerSpec{CA: &cmv1.CAIssuer{SecretName: "demo-etcd-client-ca-tls"}},
	}
}

func caCertificate() *cmv1.Certificate {
	return &cmv1.Certificate{
		TypeMeta: certType(), ObjectMeta: meta("demo-etcd-client-ca"),
		Spec: cmv1.CertificateSpec{
			SecretName: "demo-etcd-client-ca-tls",
			CommonName: "demo-etcd-client-ca",
			IsCA:       true,
			Usages:     []cmv1.KeyUsage{cmv1.UsageCertSign, cmv1.UsageCRLSign, cmv1.UsageDigitalSignature},
			IssuerRef:  cmv1.IssuerReference{Name: "demo-etcd-selfsigned", Kind: cmv1.IssuerKind, Group: cmv1.GroupVersion.Group},
			PrivateKey: &cmv1.CertificatePrivateKey{Algorithm: cmv1.RSAKeyAlgorithm, Encoding: cmv1.PKCS1, RotationPolicy: cmv1.RotationPolicyNever, Size: 4096},
			Duration:   &metav1.Duration{Duration: 10 * 365 * 24 * time.Hour},
			SecretTemplate: &cmv1.CertificateSecretTemplate{
				Labels: labels, Annotations: map[string]string{"tenantkube.io/purpose": "etcd client CA"},
			},
		},
	}
}

func serverCertificate() *cmv1.Certificate {
	return &cmv1.Certificate{
		TypeMeta: certType(), ObjectMeta: meta("demo-etcd-server"),
		Spec: cmv1.CertificateSpec{
			SecretName: "demo-etcd-server-tls",
			CommonName: "demo-etcd",
			DNSNames: []string{
				"demo-etcd", "demo-etcd.tenant-demo.svc", "demo-etcd.tenant-demo.svc.cluster.local",
				"demo-etcd-0.demo-etcd-headless.tenant-demo.svc",
				"demo-etcd-1.demo-etcd-headless.tenant-demo.svc",
				"demo-etcd-2.demo-etcd-headless.tenant-demo.svc",
				"localhost",
			},
			IPAddresses: []string{"127.0.0.1"},
			Usages:      []cmv1.KeyUsage{cmv1.UsageServerAuth, cmv1.UsageClientAuth, cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment},
			IssuerRef:   cmv1.IssuerReference{Name: "demo-etcd-client-ca", Kind: cmv1.IssuerKind},
			PrivateKey:  &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Encoding: cmv1.PKCS8, RotationPolicy: cmv1.RotationPolicyAlways, Size: 256},
			Duration:    &metav1.Duration{Duration: 365 * 24 * time.Hour},
			RenewBefore: &metav1.Duration{Duration: 30 * 24 * time.Hour},
		},
		Status: cmv1.CertificateStatus{
			Conditions:             readyCondition(),
			NotBefore:              &transition,
			NotAfter:               ptr.To(metav1.NewTime(transition.Add(365 * 24 * time.Hour))),
			RenewalTime:            ptr.To(metav1.NewTime(transition.Add(335 * 24 * time.Hour))),
			Revision:               ptr.To(1),
			LastFailureTime:        &transition,
			FailedIssuanceAttempts: ptr.To(1),
		},
	}
}

func TestIssuersAndCertificatesMatchCRDs(t *testing.T) {
	ss, ca, cac, srv := selfSigned(), caIssuer(), caCertificate(), serverCertificate()
	if unset := upstreamtest.UnsetFields(ss, ca, cac, srv); len(unset) > 0 {
		t.Errorf("fields not exercised by the test objects: %v", unset)
	}
	t.Run("self-signed Issuer", func(t *testing.T) { upstreamtest.CheckObject(t, ss) })
	t.Run("CA Issuer", func(t *testing.T) { upstreamtest.CheckObject(t, ca) })
	t.Run("CA Certificate", func(t *testing.T) { upstreamtest.CheckObject(t, cac) })
	t.Run("server Certificate", func(t *testing.T) { upstreamtest.CheckObject(t, srv) })
}

func TestSelfSignedIsEmittedAsEmptyObject(t *testing.T) {
	u := upstreamtest.ToUnstructured(t, &cmv1.Issuer{TypeMeta: issuerType(), ObjectMeta: meta("x"),
		Spec: cmv1.IssuerSpec{SelfSigned: &cmv1.SelfSignedIssuer{}}})
	want := map[string]any{"selfSigned": map[string]any{}}
	if diff := cmp.Diff(want, u.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if _, found := u.Object["status"]; found {
		t.Error("zero status is emitted")
	}
}

func TestCertificateStatusDecodes(t *testing.T) {
	const statusJSON = `{
		"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-02T03:04:05Z",
			"reason": "Issuing", "message": "Issuing certificate as Secret does not exist", "observedGeneration": 1},
			{"type": "Issuing", "status": "True"}],
		"notBefore": "2026-01-02T03:04:05Z",
		"notAfter": "2026-01-02T03:04:05Z",
		"renewalTime": "2026-01-02T03:04:05Z",
		"revision": 2,
		"lastFailureTime": "2026-01-02T03:04:05Z",
		"failedIssuanceAttempts": 3
	}`
	var got cmv1.CertificateStatus
	upstreamtest.CheckStatusJSON(t, serverCertificate(), statusJSON, &got)
	want := cmv1.CertificateStatus{
		Conditions: []cmv1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, LastTransitionTime: &transition, Reason: "Issuing", Message: "Issuing certificate as Secret does not exist", ObservedGeneration: 1},
			{Type: "Issuing", Status: metav1.ConditionTrue},
		},
		NotBefore: &transition, NotAfter: &transition, RenewalTime: &transition,
		Revision: ptr.To(2), LastFailureTime: &transition, FailedIssuanceAttempts: ptr.To(3),
	}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestIssuerStatusDecodes(t *testing.T) {
	const statusJSON = `{"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z",
		"reason": "KeyPairVerified", "message": "Signing CA verified", "observedGeneration": 1}]}`
	var got cmv1.IssuerStatus
	upstreamtest.CheckStatusJSON(t, caIssuer(), statusJSON, &got)
	want := cmv1.IssuerStatus{Conditions: []cmv1.Condition{{
		Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: &transition,
		Reason: "KeyPairVerified", Message: "Signing CA verified", ObservedGeneration: 1,
	}}}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/csv"
	"encoding/pem"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	gvkCertificate = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	gvkIssuer      = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"}
)

// cert-manager's controller does not build from the module proxy (its main
// is in the module …/cmd/controller, which does not resolve), so the test
// issues each Certificate's Secret from its spec as cert-manager v1.21.1
// would (doc.go, Played components, has the sources): subject common name,
// DNS names, IP addresses, isCA, usages, duration, an ECDSA key, signed by
// the Issuer the spec names (selfSigned, or ca: the key pair in the
// Issuer's secretName), Secret type kubernetes.io/tls with tls.crt, tls.key
// and ca.crt, secretTemplate's labels and annotations, cert-manager's own
// label and annotations.
func (e *env) issueCertificates(ctx context.Context, ns, n string) ([]string, error) {
	certs, err := list(ctx, e.c, gvkCertificate, client.InNamespace(ns), client.MatchingLabels{labelCluster: n})
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("no Certificates labelled %s=%s in %s", labelCluster, n, ns)
	}
	// CAs first: leaves are signed by the CA Issuers backed by their Secrets.
	sort.SliceStable(certs, func(i, j int) bool {
		a, _, _ := unstructured.NestedBool(certs[i].Object, "spec", "isCA")
		b, _, _ := unstructured.NestedBool(certs[j].Object, "spec", "isCA")
		return a && !b
	})
	var issued []string
	for i := range certs {
		c := &certs[i]
		spec, _, _ := unstructured.NestedMap(c.Object, "spec")
		issuerName, _, _ := unstructured.NestedString(spec, "issuerRef", "name")
		iss, err := get(ctx, e.c, gvkIssuer, ns, issuerName)
		if err != nil {
			return nil, fmt.Errorf("Certificate %s: issuer: %w", c.GetName(), err)
		}
		key, tmpl, err := certificateTemplate(spec)
		if err != nil {
			return nil, fmt.Errorf("Certificate %s: %w", c.GetName(), err)
		}
		parent, signer, caPEM := tmpl, any(key), []byte(nil)
		if caSecret, ok, _ := unstructured.NestedString(iss.Object, "spec", "ca", "secretName"); ok {
			s := &corev1.Secret{}
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: caSecret}, s); err != nil {
				return nil, fmt.Errorf("Certificate %s: CA Secret %s of Issuer %s: %w", c.GetName(), caSecret, issuerName, err)
			}
			issuerCA, err := parseCA(s.Data["tls.crt"], s.Data["tls.key"])
			if err != nil {
				return nil, err
			}
			parent, signer, caPEM = issuerCA.cert, issuerCA.key, issuerCA.certPEM // v1.21.1 pkg/controller/certificaterequests/ca/ca.go:120-133
		} else if _, ok, _ := unstructured.NestedMap(iss.Object, "spec", "selfSigned"); !ok {
			return nil, fmt.Errorf("Certificate %s: Issuer %s is neither selfSigned nor ca", c.GetName(), issuerName)
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
		if err != nil {
			return nil, err
		}
		certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		if caPEM == nil { // v1.21.1 pkg/controller/certificaterequests/selfsigned/selfsigned.go:206-221
			caPEM = certPEM
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		// cert-manager v1.21.1 pkg/controller/certificates/issuing/internal/secret.go:143-222
		// (the issuer's details: issuing_controller.go:458-461; the
		// certificate's: internal/controller/certificates/secrets.go:63-77);
		// the key: pkg/util/pki/generate.go:127-135, 166-172.
		labels, _, _ := unstructured.NestedStringMap(spec, "secretTemplate", "labels")
		annotations, _, _ := unstructured.NestedStringMap(spec, "secretTemplate", "annotations")
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels["controller.cert-manager.io/fao"] = "true"
		issuerKind, _, _ := unstructured.NestedString(spec, "issuerRef", "kind")
		issuerGroup, _, _ := unstructured.NestedString(spec, "issuerRef", "group")
		var ips []string
		for _, ip := range tmpl.IPAddresses {
			ips = append(ips, ip.String())
		}
		for k, v := range map[string]string{
			"cert-manager.io/common-name": tmpl.Subject.CommonName, "cert-manager.io/alt-names": joinCSV(tmpl.DNSNames),
			"cert-manager.io/ip-sans": joinCSV(ips), "cert-manager.io/uri-sans": "",
			"cert-manager.io/certificate-name": c.GetName(), "cert-manager.io/issuer-name": issuerName,
			"cert-manager.io/issuer-kind": issuerKind, "cert-manager.io/issuer-group": issuerGroup,
		} {
			annotations[k] = v
		}
		secretName, _, _ := unstructured.NestedString(spec, "secretName")
		s := &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			Type:     corev1.SecretTypeTLS,
			Data: map[string][]byte{
				"tls.crt": certPEM, "tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), "ca.crt": caPEM,
			},
		}
		s.Name, s.Namespace, s.Labels, s.Annotations = secretName, ns, labels, annotations
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err != nil {
			return nil, err
		}
		if err := apply(ctx, e.c, &unstructured.Unstructured{Object: obj}); err != nil {
			return nil, fmt.Errorf("Secret %s: %w", secretName, err)
		}
		issued = append(issued, secretName)
	}
	return issued, nil
}

// joinCSV joins values as one CSV record, as cert-manager writes a list
// into an annotation (v1.21.1 pkg/util/util.go:107-121).
func joinCSV(values []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(values)
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// certificateTemplate is what cert-manager issues for a Certificate's
// spec, before signing: a new ECDSA P-256 key and a template with the
// spec's common name, DNS names, IP addresses, isCA and usages, valid from
// now for spec.duration (90 days when unset).
func certificateTemplate(spec map[string]any) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	cn, _, _ := unstructured.NestedString(spec, "commonName")
	isCA, _, _ := unstructured.NestedBool(spec, "isCA")
	dns, _, _ := unstructured.NestedStringSlice(spec, "dnsNames")
	ipStrs, _, _ := unstructured.NestedStringSlice(spec, "ipAddresses")
	usages, _, _ := unstructured.NestedStringSlice(spec, "usages")
	// cert-manager v1.21.1 pkg/util/pki/certificatetemplate.go:55-61, 309-322;
	// pkg/api/util/duration.go:29-36; pkg/apis/certmanager/v1/const.go:26.
	duration := 90 * 24 * time.Hour
	if d, ok, _ := unstructured.NestedString(spec, "duration"); ok {
		if duration, err = time.ParseDuration(d); err != nil {
			return nil, nil, fmt.Errorf("duration %q: %w", d, err)
		}
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: now, NotAfter: now.Add(duration),
		DNSNames: dns, IsCA: isCA, BasicConstraintsValid: true,
	}
	for _, ip := range ipStrs {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	// v1.21.1 pkg/util/pki/csr.go:89-114, pkg/apis/certmanager/v1/types.go:315-322.
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	if len(usages) == 0 {
		usages = []string{"digital signature", "key encipherment"}
	}
	for _, u := range usages {
		switch u {
		case "digital signature":
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		case "key encipherment":
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		case "cert sign":
			tmpl.KeyUsage |= x509.KeyUsageCertSign
		case "crl sign":
			tmpl.KeyUsage |= x509.KeyUsageCRLSign
		case "server auth":
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		case "client auth":
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		default:
			return nil, nil, fmt.Errorf("usage %q not issued by this test", u)
		}
	}
	return key, tmpl, nil
}

// secretCert reads the certificate (tls.crt) of a Secret.
func (e *env) secretCert(ctx context.Context, ns, name string) (*x509.Certificate, error) {
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		return nil, err
	}
	b, _ := pem.Decode(s.Data["tls.crt"])
	if b == nil {
		return nil, fmt.Errorf("Secret %s: tls.crt is not PEM", name)
	}
	return x509.ParseCertificate(b.Bytes)
}

// etcdPKI: the etcd Secrets issued from the composed Certificates chain to
// the CAs the DataStore and the peers trust, for the names etcd's clients
// and peers dial.
func (e *env) etcdPKI(t *testing.T) {
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	issued, err := e.issueCertificates(ctx, demoNS, demo)
	e.must(t, err, "issue the etcd PKI Secrets from the Certificates")
	t.Logf("issued from the Certificates: %s", strings.Join(issued, ", "))
	dss, err := list(ctx, e.c, gvkDataStore, client.MatchingLabels{labelCluster: demo})
	e.must(t, err, "DataStore")
	if len(dss) != 1 {
		fatalf(t, "%d DataStores labelled %s=%s, want 1", len(dss), labelCluster, demo)
	}
	ds := dss[0]
	ref := func(path ...string) string {
		n, _, _ := unstructured.NestedString(ds.Object, append([]string{"spec", "tlsConfig"}, append(path, "secretReference", "name")...)...)
		return n
	}
	caName, clientName := ref("certificateAuthority", "certificate"), ref("clientCertificate", "certificate")
	ca, err := e.secretCert(ctx, demoNS, caName)
	e.must(t, err, "DataStore CA Secret "+caName)
	clientCert, err := e.secretCert(ctx, demoNS, clientName)
	e.must(t, err, "DataStore client certificate Secret "+clientName)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := clientCert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		errorf(t, "DataStore client certificate %s does not chain to the DataStore CA %s for client auth: %v", clientName, caName, err)
	}
	// The server certificate etcd presents to the DataStore's endpoint.
	eps, _, _ := unstructured.NestedStringSlice(ds.Object, "spec", "endpoints")
	if len(eps) != 1 {
		fatalf(t, "DataStore endpoints %v, want 1", eps)
	}
	host, _, err := net.SplitHostPort(eps[0])
	e.must(t, err, "DataStore endpoint")
	// The Secrets etcd serves and peers with are those the EtcdCluster names.
	ec, err := get(ctx, e.c, gvkEtcd, demoNS, demo+"-etcd")
	e.must(t, err, "EtcdCluster")
	tlsName := func(k string) string {
		v, _, _ := unstructured.NestedString(ec.Object, "spec", "security", "tls", k)
		return v
	}
	if tlsName("clientTrustedCASecret") != caName || tlsName("clientSecret") != clientName {
		errorf(t, "EtcdCluster trusts client CA %q with client Secret %q; the DataStore uses %q and %q",
			tlsName("clientTrustedCASecret"), tlsName("clientSecret"), caName, clientName)
	}
	server, err := e.secretCert(ctx, demoNS, tlsName("serverSecret"))
	e.must(t, err, "etcd server certificate")
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		errorf(t, "etcd server certificate does not verify for the DataStore endpoint %s against the DataStore CA: %v", host, err)
	}
	// Peers dial each other by member name behind the headless Service,
	// with the peer certificate as client and server.
	peerCA, err := e.secretCert(ctx, demoNS, tlsName("peerTrustedCASecret"))
	e.must(t, err, "etcd peer CA")
	peer, err := e.secretCert(ctx, demoNS, tlsName("peerSecret"))
	e.must(t, err, "etcd peer certificate")
	peerRoots := x509.NewCertPool()
	peerRoots.AddCert(peerCA)
	member := fmt.Sprintf("%s-etcd-0.%s-etcd-headless.%s.svc", demo, demo, demoNS)
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := peer.Verify(x509.VerifyOptions{Roots: peerRoots, DNSName: member, KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
			errorf(t, "etcd peer certificate for %s (usage %v): %v", member, u, err)
		}
	}
	if _, err := peer.Verify(x509.VerifyOptions{Roots: roots}); err == nil {
		errorf(t, "etcd peer certificate chains to the client CA %s; peers and clients must have separate CAs", caName)
	}
	for _, s := range issued {
		sec := &corev1.Secret{}
		e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: s}, sec), "Secret "+s)
		if sec.Labels[labelCluster] != demo {
			errorf(t, "Secret %s labels %v: want %s=%s from the Certificate's secretTemplate", s, sec.Labels, labelCluster, demo)
		}
	}
}

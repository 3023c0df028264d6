package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/internal/function"
	certmanagerv1 "github.com/tenantkube/tenantkube/internal/upstream/certmanager/v1"
)

// etcdPKI is the cert-manager PKI of a dedicated etcd: a
// self-signed Issuer; a peer CA and a client CA Certificate, each backing a
// CA Issuer; the server and client Certificates signed by the client CA and
// the peer Certificate signed by the peer CA. Each object is keyed by its
// composed-resource name.
type etcdPKI struct {
	Issuers      map[string]*certmanagerv1.Issuer
	Certificates map[string]*certmanagerv1.Certificate
}

// buildEtcdPKI returns the etcd PKI of cluster id with replicas members.
// The server and peer certificates cover the client Service, every member's
// headless name and localhost/127.0.0.1.
func buildEtcdPKI(id function.Identity, replicas int32) etcdPKI {
	return buildEtcdPKIOf(clusterEtcdSite(id), replicas)
}

// buildEtcdPKIOf returns the PKI of the etcd of site, as buildEtcdPKI.
func buildEtcdPKIOf(site etcdSite, replicas int32) etcdPKI {
	n, ns := site.Names, site.Namespace
	// One apiVersion string and one labels map for every object: they are
	// only read (marshalled), never changed.
	apiVersion, labels := certmanagerv1.GroupVersion.String(), site.Labels
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	issuer := func(name string, spec certmanagerv1.IssuerSpec) *certmanagerv1.Issuer {
		return &certmanagerv1.Issuer{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: certmanagerv1.IssuerKind},
			ObjectMeta: meta(name),
			Spec:       spec,
		}
	}
	cert := func(name string, spec certmanagerv1.CertificateSpec) *certmanagerv1.Certificate {
		spec.SecretName = name
		// The Secret carries the cluster's labels, so the function finds it
		// and composes it for deletion with the cluster (cert-manager
		// itself keeps a Certificate's Secret).
		spec.SecretTemplate = &certmanagerv1.CertificateSecretTemplate{Labels: labels}
		spec.PrivateKey = &certmanagerv1.CertificatePrivateKey{
			Algorithm: certmanagerv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: certmanagerv1.RotationPolicyAlways,
		}
		return &certmanagerv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: certmanagerv1.CertificateKind},
			ObjectMeta: meta(name),
			Spec:       spec,
		}
	}
	by := func(issuer string) certmanagerv1.IssuerReference {
		return certmanagerv1.IssuerReference{Name: issuer, Kind: certmanagerv1.IssuerKind, Group: certmanagerv1.GroupVersion.Group}
	}
	caDuration := &metav1.Duration{Duration: 10 * 365 * 24 * 60 * 60 * 1e9}
	members := etcdMemberNames(n, ns, replicas)
	serverNames := append([]string{
		n.Cluster, n.Cluster + "." + ns, n.Cluster + "." + ns + ".svc",
	}, members...)
	serverNames = append(serverNames, "localhost")
	loopback := []string{"127.0.0.1"}
	leafUsages := func(u ...certmanagerv1.KeyUsage) []certmanagerv1.KeyUsage {
		return append([]certmanagerv1.KeyUsage{certmanagerv1.UsageDigitalSignature, certmanagerv1.UsageKeyEncipherment}, u...)
	}

	return etcdPKI{
		Issuers: map[string]*certmanagerv1.Issuer{
			"etcd-selfsigned-issuer": issuer(n.SelfSignedIssuer, certmanagerv1.IssuerSpec{SelfSigned: &certmanagerv1.SelfSignedIssuer{}}),
			"etcd-peer-ca-issuer":    issuer(n.PeerCAIssuer, certmanagerv1.IssuerSpec{CA: &certmanagerv1.CAIssuer{SecretName: n.PeerCA}}),
			"etcd-ca-issuer":         issuer(n.ClientCAIssuer, certmanagerv1.IssuerSpec{CA: &certmanagerv1.CAIssuer{SecretName: n.ClientCA}}),
		},
		Certificates: map[string]*certmanagerv1.Certificate{
			"etcd-peer-ca": cert(n.PeerCA, certmanagerv1.CertificateSpec{
				CommonName: n.PeerCA, IsCA: true, Duration: caDuration, IssuerRef: by(n.SelfSignedIssuer),
				Usages: []certmanagerv1.KeyUsage{certmanagerv1.UsageCertSign, certmanagerv1.UsageCRLSign},
			}),
			"etcd-ca": cert(n.ClientCA, certmanagerv1.CertificateSpec{
				CommonName: n.ClientCA, IsCA: true, Duration: caDuration, IssuerRef: by(n.SelfSignedIssuer),
				Usages: []certmanagerv1.KeyUsage{certmanagerv1.UsageCertSign, certmanagerv1.UsageCRLSign},
			}),
			"etcd-server-cert": cert(n.Server, certmanagerv1.CertificateSpec{
				CommonName: n.Cluster, DNSNames: serverNames, IPAddresses: loopback, IssuerRef: by(n.ClientCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageServerAuth),
			}),
			"etcd-peer-cert": cert(n.Peer, certmanagerv1.CertificateSpec{
				CommonName: n.Cluster, DNSNames: serverNames, IPAddresses: loopback, IssuerRef: by(n.PeerCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageServerAuth, certmanagerv1.UsageClientAuth),
			}),
			"etcd-client-cert": cert(n.Client, certmanagerv1.CertificateSpec{
				CommonName: "root", IssuerRef: by(n.ClientCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageClientAuth),
			}),
		},
	}
}

// etcdMemberNames are the DNS names of each etcd member behind the headless
// Service: <cluster>-<i>.<cluster>-headless.<NS>.svc, plus a wildcard for
// members added later by scaling.
func etcdMemberNames(n etcdNames, namespace string, replicas int32) []string {
	out := make([]string, 0, replicas+1)
	for i := range replicas {
		out = append(out, fmt.Sprintf("%s-%d.%s.%s.svc", n.Cluster, i, n.Headless, namespace))
	}
	return append(out, fmt.Sprintf("*.%s.%s.svc", n.Headless, namespace))
}

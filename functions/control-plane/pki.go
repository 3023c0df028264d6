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

// buildEtcdPKI returns the etcd PKI of cluster id on operator op with
// replicas members. The server certificate covers the client Service,
// every member's headless name and localhost/127.0.0.1; the peer
// certificate covers the members' headless names only (etcdPeerNames),
// short and under clusterDomain, the management cluster's DNS domain.
func buildEtcdPKI(id function.Identity, op etcdOperator, replicas int32, clusterDomain string) etcdPKI {
	return buildEtcdPKIOf(clusterEtcdSite(id, op), replicas, clusterDomain)
}

// buildEtcdPKIOf returns the PKI of the etcd of site, as buildEtcdPKI.
func buildEtcdPKIOf(site etcdSite, replicas int32, clusterDomain string) etcdPKI {
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
	// Short names: the etcd clients (Kamaji's controller, the tenant API
	// servers, the operators) are pods of the management cluster that
	// dial the short names the DataStore and the operators give, resolved
	// through their search path; a client checks the name it dialed.
	serverNames := append([]string{
		n.ClientService, n.ClientService + "." + ns, n.ClientService + "." + ns + ".svc",
	}, etcdMemberNames(site, replicas)...)
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
			// Client auth too: etcd's gRPC gateway dials the member's own
			// client listener with this certificate as its client
			// certificate (go.etcd.io/etcd/server/v3 embed/etcd.go:823-833),
			// and both operators set --client-cert-auth (cozystack v0.5.4
			// controllers/etcdmember_controller.go:736, Ænix v0.4.2
			// internal/controller/factory/statefulset.go:295).
			"etcd-server-cert": cert(n.Server, certmanagerv1.CertificateSpec{
				CommonName: n.Cluster, DNSNames: serverNames, IPAddresses: loopback, IssuerRef: by(n.ClientCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageServerAuth, certmanagerv1.UsageClientAuth),
			}),
			"etcd-peer-cert": cert(n.Peer, certmanagerv1.CertificateSpec{
				CommonName: n.Cluster, DNSNames: etcdPeerNames(site, clusterDomain), IssuerRef: by(n.PeerCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageServerAuth, certmanagerv1.UsageClientAuth),
			}),
			"etcd-client-cert": cert(n.Client, certmanagerv1.CertificateSpec{
				CommonName: "root", IssuerRef: by(n.ClientCAIssuer),
				Usages: leafUsages(certmanagerv1.UsageClientAuth),
			}),
		},
	}
}

// etcdPeerNames are the DNS names of the peer certificate of site: the
// members behind the headless Service, as the operators' peer URLs name
// them (https://<member>.<headless>.<NS>.svc:2380: cozystack v0.5.4
// controllers/helpers.go:136-138, Ænix v0.4.2
// internal/controller/factory/statefulset.go:309) and under clusterDomain,
// the management cluster's DNS domain (its kubelets' --cluster-domain),
// under which cluster DNS answers a member pod's reverse lookup. A member
// checks a
// connecting peer's client certificate against the peer's address: the
// reverse lookup's name, <member>.<headless>.<NS>.svc.<domain>, against
// the wildcards, else forward lookups of the other names
// (go.etcd.io/etcd/client/pkg/v3 transport/listener_tls.go:223-298). The
// same two names as cozystack v0.5.4's own peer certificate
// (controllers/etcdcluster_controller.go:1800-1803). Nothing dials the
// peer port on loopback or through the client Service.
func etcdPeerNames(site etcdSite, clusterDomain string) []string {
	wildcard := fmt.Sprintf("*.%s.%s.svc", site.Names.Headless, site.Namespace)
	return []string{wildcard, wildcard + "." + clusterDomain}
}

// etcdMemberNames are the DNS names of the etcd members of site behind
// the headless Service: the names its operator gives them in advance
// (etcdOperator.MemberNames), then a wildcard *.<headless>.<NS>.svc for
// members added later by scaling or named at random.
func etcdMemberNames(site etcdSite, replicas int32) []string {
	return append(site.Operator.MemberNames(site, replicas), fmt.Sprintf("*.%s.%s.svc", site.Names.Headless, site.Namespace))
}

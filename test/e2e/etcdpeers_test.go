//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/storage/names"
)

// TestEtcdPeers runs the dedicated etcd of the render golden
// etcd-backup-observed (three members on etcd-operator.cozystack.io
// v1alpha2) as that operator runs it, with the PKI its Certificates ask
// for, behind a real cluster DNS, and needs no kube-apiserver:
//
//   - network: a bridge and one network namespace per member, one for
//     DNS and one for a worker VM (resolv.conf: the nameserver alone), each
//     with its own address on 10.213.0.0/24 (no other test uses
//     it), and a pod's resolv.conf (search <ns>.svc.<domain> svc.<domain>
//     <domain>, ndots:5) through /etc/netns/<netns>/resolv.conf; the bridge
//     gets 10.213.0.1 so the test's own etcd and HTTPS clients reach the
//     members;
//   - DNS: bin/coredns (CoreDNS, tools/coredns) serving what cluster DNS
//     gives the operator's Services (kubernetes/dns docs/specification.md
//     2.3.1, 2.4.1 and 2.4.3; the headless Service publishes not-ready addresses,
//     cozystack etcd-operator v0.5.4 controllers/etcdcluster_controller.go:1818):
//     each member's A record <member>.<cluster>.<ns>.svc.<domain> and its
//     PTR record, the headless Service's A records, the client Service's
//     ClusterIP (10.213.0.100, resolved, never dialled); every other name
//     is NXDOMAIN;
//   - PKI: every Certificate of the golden that the EtcdCluster's Secrets
//     need issued with crypto/x509 from its spec (dnsNames, ipAddresses,
//     usages, isCA, issuerRef: a selfSigned Issuer, or a ca Issuer's Secret
//     written by another Certificate), as cert-manager issues it;
//   - etcd: bin/etcd, one member per namespace, named as the operator's
//     GenerateName names them (<cluster>-<5 random>), with the flags its
//     EtcdMember controller gives (controllers/etcdmember_controller.go:
//     705-766): peer and client URLs https://<member>.<cluster>.<ns>.svc
//     (controllers/helpers.go:136-145), client and peer TLS with client
//     certificate authentication, never --peer-skip-client-san-verification.
//
// It checks that the cluster forms (every member answers with one leader,
// three started members, a write readable through every member and through
// a member's gRPC gateway), that the leader killed and restarted on its
// data rejoins (it serves a write the other two took while it was down),
// and that the same run with the peer certificate the function composed
// before the cluster-domain wildcard never forms, each member logging
// etcd's refusal of its peers' certificates. Then the same for the render golden example
// (the default operator, etcd.aenix.io/v1alpha1 of Ænix v0.4.2): members
// <cluster>-<ordinal> behind <cluster>-headless with the flags of its
// StatefulSet (internal/controller/factory/statefulset.go:267-317), the
// peer and client CAs from the Secrets the EtcdCluster names; it forms.
// The EtcdClusters' spec.options are left out (no bearing on TLS).
// Last, on the same network and CoreDNS, every name the functions hand to
// a worker VM or a tenant pod resolves on the VM with no search path, for
// the default cluster domain and another (nodedns_test.go).
func TestEtcdPeers(t *testing.T) {
	w := newPeersWorld(t)
	w.network(t)
	// Before the network's and CoreDNS's cleanups (the last registered runs first).
	t.Cleanup(func() { w.stopMembers(t) })
	w.load(t, peersCozystackGolden, peersCozystack)
	formed := scenario(t, "etcd peers: three members form with the composed certificates", func(t *testing.T) {
		w.start(t, w.peer)
		w.formed(t)
	})
	if formed {
		scenario(t, "etcd peers: the leader, killed, restarts and rejoins", w.rejoins)
	}
	scenario(t, "etcd peers: the previous peer certificate never forms", func(t *testing.T) {
		w.stopMembers(t)
		w.start(t, w.previousPeer(t))
		w.refused(t)
	})
	scenario(t, "etcd peers: three members form on etcd.aenix.io/v1alpha1", func(t *testing.T) {
		w.load(t, peersAenixGolden, peersAenix)
		w.start(t, w.peer)
		w.formed(t)
	})
	scenario(t, "node DNS: every name handed to a node resolves with no search path", w.nodeDNS)
}

const (
	// peersNet is the test's /24: .1 the bridge (the test's clients), .53
	// the DNS, .11 to .13 the members, .20 a worker VM (nodedns_test.go),
	// .100 the client Service's ClusterIP, .101 and up the ClusterIPs of
	// the Services nodedns_test.go serves.
	peersNet             = "10.213.0"
	peersNode            = peersPrefix + "node"
	peersNodeIP          = peersNet + ".20"
	peersBridge          = "tkpeers-br"
	peersPrefix          = "tkpeers-"
	peersClientIP        = peersNet + ".100"
	peersDNSIP           = peersNet + ".53"
	peersHostIP          = peersNet + ".1"
	peersFirstIP         = 11
	peersReverse         = "0.213.10.in-addr.arpa"
	peersCozystackGolden = "etcd-backup-observed.golden.yaml"
	// peersAenixGolden is a claim's dedicated etcd on the default operator.
	peersAenixGolden = "example.golden.yaml"
	peersDomain      = "cluster.local"
	peersBound       = 30 * time.Second
	peersRefusedFor  = 20 * time.Second
	peersLeaderless  = 6 * time.Second
)

// sanRefused is the error etcd's peer listener gives a peer certificate
// that names neither the peer's address nor its reverse lookup
// (go.etcd.io/etcd/client/pkg/v3 transport/listener_tls.go:249), on the
// line it logs for it (server/v3 embed/config_logging.go:185).
const (
	peerRejected = "rejected connection on peer endpoint"
	sanRefused   = "does not match any of DNSNames"
)

// The two operators' EtcdCluster APIs.
const (
	peersCozystack = "etcd-operator.cozystack.io/v1alpha2"
	peersAenix     = "etcd.aenix.io/v1alpha1"
)

type peerMember struct {
	name, netns, ip string
	proc            *proc
}

// short is the member's name as the operator's URLs give it.
func (w *peersWorld) short(m *peerMember) string {
	return fmt.Sprintf("%s.%s.%s.svc", m.name, w.headless, w.ns)
}

// issuedSecret is a Certificate's Secret: tls.crt, tls.key, ca.crt.
type issuedSecret struct {
	cert                   *x509.Certificate
	key                    *ecdsa.PrivateKey
	certPEM, keyPEM, caPEM []byte
}

type peersWorld struct {
	bin, root, work, logs string
	coredns               *proc

	// The EtcdCluster of the golden loaded last: its API, name and
	// namespace, its operator's Service names (v1alpha2: headless
	// <cluster>, client <cluster>-client; v1alpha1: <cluster>-headless and
	// <cluster>) and members.
	op, cluster, ns, headless, clientService string
	members                                  []*peerMember
	// The golden's Certificates by secretName and Issuers by name; the
	// issued Secrets by name.
	certs, issuers map[string]*unstructured.Unstructured
	issued         map[string]*issuedSecret
	// The Secrets the EtcdCluster names: the peer and server key pairs,
	// the Secrets whose ca.crt the members trust for peers and clients,
	// the client key pair the operator dials with.
	peerSecret, peerCASecret, serverSecret, clientCASecret, clientName string
	// peer is the directory of the peer Secret the members run with.
	peer string
}

func newPeersWorld(t *testing.T) *peersWorld {
	t.Helper()
	if os.Geteuid() != 0 {
		fatalf(t, "TestEtcdPeers makes network namespaces and needs root")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fatal(t, err)
	}
	w := &peersWorld{root: root, bin: filepath.Join(root, "bin"), logs: filepath.Join(root, "_output", "e2e", "logs", "etcdpeers")}
	if d := os.Getenv("E2E_BIN"); d != "" {
		w.bin = d
	}
	for _, b := range []string{"etcd", "coredns"} {
		if _, err := os.Stat(filepath.Join(w.bin, b)); err != nil {
			fatalf(t, "bin/%s is missing: run make e2e-tools: %v", b, err)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		fatalf(t, "TestEtcdPeers needs iproute2's ip: %v", err)
	}
	_ = os.RemoveAll(w.logs)
	if err := os.MkdirAll(w.logs, 0o755); err != nil {
		fatal(t, err)
	}
	if w.work, err = os.MkdirTemp("", "tenantkube-e2e-etcdpeers-"); err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(w.work)
		}
	})

	for i := range 3 {
		w.members = append(w.members, &peerMember{netns: fmt.Sprintf("%sm%d", peersPrefix, i), ip: fmt.Sprintf("%s.%d", peersNet, peersFirstIP+i)})
	}
	return w
}

// load stops the members of the golden loaded before, reads the
// EtcdCluster of API op and the Certificates and Issuers of golden, names
// the members as op's operator does, writes their pod resolv.conf, starts
// CoreDNS with their records and issues the Secrets.
func (w *peersWorld) load(t *testing.T, golden, op string) {
	t.Helper()
	w.stopMembers(t)
	objs, err := decodeFile(filepath.Join(w.root, "test", "testdata", "control-plane", golden))
	if err != nil {
		fatalf(t, "read the render golden: %v", err)
	}
	w.op, w.certs, w.issuers, w.issued = op, map[string]*unstructured.Unstructured{}, map[string]*unstructured.Unstructured{}, map[string]*issuedSecret{}
	var etcd *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetAPIVersion() == op && o.GetKind() == "EtcdCluster":
			etcd = o
		case o.GetAPIVersion() == "cert-manager.io/v1" && o.GetKind() == "Certificate":
			s, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
			w.certs[s] = o
		case o.GetAPIVersion() == "cert-manager.io/v1" && o.GetKind() == "Issuer":
			w.issuers[o.GetName()] = o
		}
	}
	if etcd == nil {
		fatalf(t, "%s holds no %s EtcdCluster", golden, op)
	}
	w.cluster, w.ns = etcd.GetName(), etcd.GetNamespace()
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(etcd.Object, append([]string{"spec"}, path...)...)
		return v
	}
	if op == peersCozystack {
		// The server Secret's ca.crt is the CA clients must chain to; the
		// peer Secret's the peers' (controllers/etcdmember_controller.go:
		// 731-766).
		w.headless, w.clientService = w.cluster, w.cluster+"-client"
		w.peerSecret, w.serverSecret, w.clientName = str("tls", "peer", "secretRef", "name"), str("tls", "client", "serverSecretRef", "name"), str("tls", "client", "operatorClientSecretRef", "name")
		w.peerCASecret, w.clientCASecret = w.peerSecret, w.serverSecret
	} else {
		// Ænix v0.4.2 internal/controller/factory: Service names
		// svc.go:34-48; the trusted CAs are Secrets of their own,
		// statefulset.go:161-205 and 271-297.
		w.headless, w.clientService = w.cluster+"-headless", w.cluster
		w.peerSecret, w.serverSecret, w.clientName = str("security", "tls", "peerSecret"), str("security", "tls", "serverSecret"), str("security", "tls", "clientSecret")
		w.peerCASecret, w.clientCASecret = str("security", "tls", "peerTrustedCASecret"), str("security", "tls", "clientTrustedCASecret")
	}
	var replicas int64
	switch v, _, _ := unstructured.NestedFieldNoCopy(etcd.Object, "spec", "replicas"); n := v.(type) {
	case int64:
		replicas = n
	case float64:
		replicas = int64(n)
	}
	if replicas != int64(len(w.members)) || slices.Contains([]string{w.peerSecret, w.peerCASecret, w.serverSecret, w.clientCASecret, w.clientName}, "") {
		fatalf(t, "EtcdCluster %s/%s: %d replicas, Secrets peer %q (CA %q), server %q, client CA %q, client %q; want %d and all",
			w.ns, w.cluster, replicas, w.peerSecret, w.peerCASecret, w.serverSecret, w.clientCASecret, w.clientName, len(w.members))
	}
	// A pod's resolv.conf (dnsPolicy ClusterFirst): the kubelet's search
	// path for the pod's namespace and ndots:5.
	pod := fmt.Sprintf("search %s.svc.%s svc.%s %s\nnameserver %s\noptions ndots:5\n", w.ns, peersDomain, peersDomain, peersDomain, peersDNSIP)
	for i, m := range w.members {
		// v1alpha2: GenerateName <cluster>- (the API server's name
		// generator); v1alpha1: the StatefulSet's <cluster>-<ordinal>.
		m.name, m.proc = names.SimpleNameGenerator.GenerateName(w.cluster+"-"), nil
		if op == peersAenix {
			m.name = fmt.Sprintf("%s-%d", w.cluster, i)
		}
		if err := writeFiles(filepath.Join("/etc/netns", m.netns), map[string][]byte{"resolv.conf": []byte(pod)}); err != nil {
			fatal(t, err)
		}
	}
	w.dns(t)
	w.issue(t)
}

// ipCmd runs ip(8).
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// network makes the bridge and the namespaces; each is removed when the
// test ends, whatever its outcome (veths before their namespaces: a
// namespace's removal frees its veth only later).
func (w *peersWorld) network(t *testing.T) {
	t.Helper()
	start := time.Now()
	// What a killed earlier run left.
	for _, m := range w.members {
		_ = ipCmd("netns", "del", m.netns)
	}
	_ = ipCmd("netns", "del", peersPrefix+"dns")
	_ = ipCmd("netns", "del", peersNode)
	_ = ipCmd("link", "del", peersBridge)

	must := func(args ...string) {
		t.Helper()
		if err := ipCmd(args...); err != nil {
			fatal(t, err)
		}
	}
	must("link", "add", peersBridge, "type", "bridge")
	t.Cleanup(func() { _ = ipCmd("link", "del", peersBridge) })
	must("addr", "add", peersHostIP+"/24", "dev", peersBridge)
	must("link", "set", peersBridge, "up")
	if _, err := os.Stat("/etc/netns"); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir("/etc/netns", 0o755); err != nil {
			fatal(t, err)
		}
		t.Cleanup(func() { _ = os.Remove("/etc/netns") }) // only when empty
	}
	add := func(netns, ip string) {
		t.Helper()
		host := strings.Replace(netns, peersPrefix, peersPrefix+"h", 1)
		must("netns", "add", netns)
		t.Cleanup(func() { _ = ipCmd("netns", "del", netns) })
		must("link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", netns)
		t.Cleanup(func() { _ = ipCmd("link", "del", host) })
		must("link", "set", host, "master", peersBridge, "up")
		must("-n", netns, "link", "set", "lo", "up")
		must("-n", netns, "addr", "add", ip+"/24", "dev", "eth0")
		must("-n", netns, "link", "set", "eth0", "up")
		dir := filepath.Join("/etc/netns", netns)
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		if err := writeFiles(dir, map[string][]byte{"resolv.conf": []byte("nameserver " + peersDNSIP + "\n")}); err != nil {
			fatal(t, err)
		}
	}
	add(peersPrefix+"dns", peersDNSIP)
	for _, m := range w.members {
		add(m.netns, m.ip)
	}
	// A worker VM: the DHCP resolv.conf above, and the hosts and
	// nsswitch.conf of a distribution image, so getent reads nothing of
	// the host's.
	add(peersNode, peersNodeIP)
	if err := writeFiles(filepath.Join("/etc/netns", peersNode), map[string][]byte{
		"hosts":         []byte("127.0.0.1 localhost\n::1 localhost\n"),
		"nsswitch.conf": []byte("hosts: files dns\n"),
	}); err != nil {
		fatal(t, err)
	}
	t.Logf("network: bridge %s, namespaces %s, %.2fs", peersBridge, w.netnsNames(), time.Since(start).Seconds())
}

func (w *peersWorld) netnsNames() string {
	var out []string
	for _, m := range w.members {
		out = append(out, m.netns+"="+m.ip)
	}
	return strings.Join(append(out, peersPrefix+"dns="+peersDNSIP, peersNode+"="+peersNodeIP), ", ")
}

func (w *peersWorld) memberNames() string {
	var out []string
	for _, m := range w.members {
		out = append(out, m.name+"="+m.ip)
	}
	return strings.Join(out, ", ")
}

// resolver asks the test's CoreDNS only.
func peersResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(peersDNSIP, "53"))
	}}
}

// dns starts CoreDNS with the forward and reverse zones cluster DNS serves
// for the operator's two Services, and checks a member's records.
func (w *peersWorld) dns(t *testing.T) {
	t.Helper()
	start := time.Now()
	soa := fmt.Sprintf("$TTL 5\n@ IN SOA ns.dns.%[1]s. hostmaster.%[1]s. 1 7200 1800 86400 5\n@ IN NS ns.dns.%[1]s.\n", peersDomain)
	fwd := fmt.Sprintf("$ORIGIN %s.\n%sns.dns IN A %s\n%s.%s.svc IN A %s\n", peersDomain, soa, peersDNSIP, w.clientService, w.ns, peersClientIP)
	rev := fmt.Sprintf("$ORIGIN %s.\n%s", peersReverse, soa)
	for _, m := range w.members {
		fwd += fmt.Sprintf("%s IN A %s\n%s.%s.svc IN A %s\n", w.short(m), m.ip, w.headless, w.ns, m.ip)
		rev += fmt.Sprintf("%s IN PTR %s.%s.\n", m.ip[strings.LastIndex(m.ip, ".")+1:], w.short(m), peersDomain)
	}
	w.serveZones(t, map[string]string{peersDomain: fwd, peersReverse: rev})
	m := w.members[0]
	fqdn := w.short(m) + "." + peersDomain
	r := peersResolver()
	waitFor(t, 10*time.Second, "CoreDNS to answer for "+fqdn, func(ctx context.Context) (bool, string, error) {
		addrs, err := r.LookupHost(ctx, fqdn)
		return err == nil && slices.Equal(addrs, []string{m.ip}), fmt.Sprintf("%v %v", addrs, err), nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ptr, err := r.LookupAddr(ctx, m.ip); err != nil || !slices.Equal(ptr, []string{fqdn + "."}) {
		fatalf(t, "PTR of %s: %v %v, want %s.", m.ip, ptr, err, fqdn)
	}
	t.Logf("dns: CoreDNS answering for %s in %.2fs", w.memberNames(), time.Since(start).Seconds())
}

// serveZones (re)starts CoreDNS serving each zone (origin: zone file)
// from a file and NXDOMAIN for every name outside them.
func (w *peersWorld) serveZones(t *testing.T, zones map[string]string) {
	t.Helper()
	dir := filepath.Join(w.work, "dns")
	if err := os.RemoveAll(dir); err != nil {
		fatal(t, err)
	}
	files := map[string][]byte{}
	var corefile strings.Builder
	for _, origin := range slices.Sorted(maps.Keys(zones)) {
		files["db."+origin] = []byte(zones[origin])
		fmt.Fprintf(&corefile, "%s:53 {\n    errors\n    log\n    file %s\n}\n", origin, filepath.Join(dir, "db."+origin))
	}
	corefile.WriteString(".:53 {\n    errors\n    template ANY ANY {\n        rcode NXDOMAIN\n    }\n}\n")
	files["Corefile"] = []byte(corefile.String())
	if err := writeFiles(dir, files); err != nil {
		fatal(t, err)
	}
	if w.coredns == nil {
		w.coredns = newProc(w.logs, "coredns", "ip", []string{"netns", "exec", peersPrefix + "dns", filepath.Join(w.bin, "coredns"), "-conf", filepath.Join(dir, "Corefile")})
		t.Cleanup(func() { w.coredns.stop() })
	}
	w.coredns.stop()
	if err := w.coredns.start(); err != nil {
		fatal(t, err)
	}
}

// issue issues the Secrets the EtcdCluster names from the golden's
// Certificates and writes each as the operator mounts it.
func (w *peersWorld) issue(t *testing.T) {
	t.Helper()
	for _, s := range []string{w.peerSecret, w.peerCASecret, w.serverSecret, w.clientCASecret, w.clientName} {
		if _, err := w.secret(s, nil); err != nil {
			fatalf(t, "issue %s from the golden's Certificates: %v", s, err)
		}
		w.write(t, s, w.issued[s])
	}
	w.peer = filepath.Join(w.work, w.op, w.peerSecret)
	t.Logf("pki: peer certificate DNS names %q, IP addresses %v", w.issued[w.peerSecret].cert.DNSNames, w.issued[w.peerSecret].cert.IPAddresses)
}

// secret issues the Secret name from its Certificate's spec (with the
// spec's dnsNames and ipAddresses replaced when sans is not nil), after
// the CA Secrets its Issuer signs with; the CAs are issued once.
func (w *peersWorld) secret(name string, sans map[string]any) (*issuedSecret, error) {
	if s, ok := w.issued[name]; ok && sans == nil {
		return s, nil
	}
	c, ok := w.certs[name]
	if !ok {
		return nil, fmt.Errorf("no Certificate writes Secret %s", name)
	}
	spec, _, _ := unstructured.NestedMap(c.Object, "spec")
	for k, v := range sans {
		spec[k] = v
	}
	ref, _, _ := unstructured.NestedStringMap(spec, "issuerRef")
	iss, ok := w.issuers[ref["name"]]
	if !ok || ref["kind"] != "Issuer" || ref["group"] != "cert-manager.io" {
		return nil, fmt.Errorf("Certificate %s: issuerRef %v is not an Issuer of the golden", c.GetName(), ref)
	}
	key, tmpl, err := certificateTemplate(spec)
	if err != nil {
		return nil, fmt.Errorf("Certificate %s: %w", c.GetName(), err)
	}
	parent, signer := tmpl, key
	var caPEM []byte
	if caSecret, ok, _ := unstructured.NestedString(iss.Object, "spec", "ca", "secretName"); ok {
		ca, err := w.secret(caSecret, nil)
		if err != nil {
			return nil, err
		}
		parent, signer, caPEM = ca.cert, ca.key, ca.certPEM
	} else if _, ok, _ := unstructured.NestedMap(iss.Object, "spec", "selfSigned"); !ok {
		return nil, fmt.Errorf("Issuer %s is neither selfSigned nor ca", iss.GetName())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	s := &issuedSecret{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})}
	s.caPEM = caPEM
	if caPEM == nil {
		s.caPEM = s.certPEM
	}
	if sans == nil {
		w.issued[name] = s
	}
	return s, nil
}

// write writes the Secret as its volume holds it and returns the directory.
func (w *peersWorld) write(t *testing.T, dir string, s *issuedSecret) string {
	t.Helper()
	dir = filepath.Join(w.work, w.op, dir)
	if err := writeFiles(dir, map[string][]byte{"tls.crt": s.certPEM, "tls.key": s.keyPEM, "ca.crt": s.caPEM}); err != nil {
		fatal(t, err)
	}
	return dir
}

// previousPeer issues the peer Secret with the names the function
// composed before the cluster-domain wildcard: the client Service's, the
// members' wildcard, localhost and 127.0.0.1.
func (w *peersWorld) previousPeer(t *testing.T) string {
	t.Helper()
	client := w.clientService
	s, err := w.secret(w.peerSecret, map[string]any{
		"dnsNames":    []any{client, client + "." + w.ns, client + "." + w.ns + ".svc", fmt.Sprintf("*.%s.%s.svc", w.cluster, w.ns), "localhost"},
		"ipAddresses": []any{"127.0.0.1"},
	})
	if err != nil {
		fatal(t, err)
	}
	t.Logf("pki: previous peer certificate DNS names %q, IP addresses %v", s.cert.DNSNames, s.cert.IPAddresses)
	return w.write(t, w.peerSecret+"-previous", s)
}

// start starts every member on a new data directory with the peer Secret
// in peer, with the flags of the operator's EtcdMember controller.
func (w *peersWorld) start(t *testing.T, peer string) {
	t.Helper()
	var initial []string
	for _, m := range w.members {
		initial = append(initial, m.name+"=https://"+w.short(m)+":2380")
	}
	secret := func(name, key string) string { return filepath.Join(w.work, w.op, name, key) }
	for _, m := range w.members {
		data := filepath.Join(w.work, "data", m.name)
		if err := os.RemoveAll(data); err != nil {
			fatal(t, err)
		}
		args := []string{"netns", "exec", m.netns, filepath.Join(w.bin, "etcd"),
			"--name=" + m.name,
			"--data-dir=" + data,
			"--listen-peer-urls=https://0.0.0.0:2380",
			"--listen-client-urls=https://0.0.0.0:2379",
			"--advertise-client-urls=https://" + w.short(m) + ":2379",
			"--initial-advertise-peer-urls=https://" + w.short(m) + ":2380",
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-token=" + w.ns + "-" + w.cluster,
			"--initial-cluster-state=new",
			"--listen-metrics-urls=http://0.0.0.0:2381",
			"--cert-file=" + secret(w.serverSecret, "tls.crt"),
			"--key-file=" + secret(w.serverSecret, "tls.key"),
			"--client-cert-auth=true",
			"--trusted-ca-file=" + secret(w.clientCASecret, "ca.crt"),
			"--peer-cert-file=" + filepath.Join(peer, "tls.crt"),
			"--peer-key-file=" + filepath.Join(peer, "tls.key"),
			"--peer-trusted-ca-file=" + secret(w.peerCASecret, "ca.crt"),
			"--peer-client-cert-auth=true",
		}
		if m.proc == nil {
			m.proc = newProc(w.logs, m.name, "ip", args)
		} else {
			m.proc.args = args
		}
		if err := m.proc.start(); err != nil {
			fatal(t, err)
		}
	}
}

// stopMembers kills every member at once: their data is not used again,
// and a graceful stop takes etcd about 2 s each.
func (w *peersWorld) stopMembers(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	for _, m := range w.members {
		if p := m.proc; p != nil {
			wg.Go(func() { p.kill() })
		}
	}
	wg.Wait()
}

// tlsConfig is the operator's client: its client certificate, trusting
// the client CA Secret's ca.crt.
func (w *peersWorld) tlsConfig() (*tls.Config, error) {
	c := w.issued[w.clientName]
	pair, err := tls.X509KeyPair(c.certPEM, c.keyPEM)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(w.issued[w.clientCASecret].caPEM)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// peersDial dials a member by the name the operator's client URL gives,
// as a pod resolves it: completed with the last domain of its search
// path and looked up in the test's DNS.
func peersDial(ctx context.Context, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := peersResolver().LookupHost(ctx, host+"."+peersDomain+".")
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(ips[0], port))
}

// endpoint is m's client URL as the operator builds it.
func (w *peersWorld) endpoint(m *peerMember) string { return "https://" + w.short(m) + ":2379" }

// client is an etcd client of member m alone.
func (w *peersWorld) client(t *testing.T, m *peerMember) *clientv3.Client {
	t.Helper()
	cfg, err := w.tlsConfig()
	if err != nil {
		fatal(t, err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{w.endpoint(m)}, TLS: cfg,
		DialTimeout: 2 * time.Second, Logger: zap.NewNop(), DialOptions: []grpc.DialOption{grpc.WithContextDialer(peersDial)}})
	if err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// healthy is true when m answers with a leader of a cluster of every
// member, each started with its own peer URL.
func (w *peersWorld) healthy(ctx context.Context, c *clientv3.Client, m *peerMember) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.Status(ctx, c.Endpoints()[0])
	if err != nil {
		return false, m.name + ": " + err.Error(), nil
	}
	if st.Leader == 0 {
		return false, m.name + ": no leader", nil
	}
	ml, err := c.MemberList(ctx)
	if err != nil {
		return false, m.name + ": member list: " + err.Error(), nil
	}
	var got []string
	for _, mm := range ml.Members {
		got = append(got, mm.Name+"="+strings.Join(mm.PeerURLs, ","))
	}
	var want []string
	for _, o := range w.members {
		want = append(want, o.name+"=https://"+w.short(o)+":2380")
	}
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want), fmt.Sprintf("%s: members %v", m.name, got), nil
}

// sanRefusals are the lines of m's log where its peer listener refused a
// peer certificate's names.
func sanRefusals(m *peerMember) []string {
	b, _ := os.ReadFile(m.proc.log)
	var out []string
	for l := range strings.Lines(string(b)) {
		if strings.Contains(l, peerRejected) && strings.Contains(l, sanRefused) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// formed: every member answers with a leader and the three members; a
// write through one is read through each, and through a member's gRPC
// gateway (which dials its own client listener with the server
// certificate as client certificate); no member refused a peer's names.
func (w *peersWorld) formed(t *testing.T) {
	start := time.Now()
	clients := map[*peerMember]*clientv3.Client{}
	for _, m := range w.members {
		clients[m] = w.client(t, m)
	}
	waitFor(t, peersBound, "every member healthy", func(ctx context.Context) (bool, string, error) {
		for _, m := range w.members {
			if ok, why, err := w.healthy(ctx, clients[m], m); !ok || err != nil {
				return false, why, err
			}
		}
		return true, "", nil
	})
	t.Logf("formed %.2fs after the members started", time.Since(start).Seconds())
	ctx, cancel := context.WithTimeout(context.Background(), peersBound)
	defer cancel()
	if _, err := clients[w.members[0]].Put(ctx, "/etcdpeers/formed", "v1"); err != nil {
		fatalf(t, "put through %s: %v", w.members[0].name, err)
	}
	for _, m := range w.members {
		r, err := clients[m].Get(ctx, "/etcdpeers/formed")
		if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v1" {
			errorf(t, "get through %s: %v %v, want v1", m.name, r, err)
		}
	}
	w.gateway(ctx, t, w.members[2], "/etcdpeers/formed", "v1")
	for _, m := range w.members {
		if r := sanRefusals(m); len(r) > 0 {
			errorf(t, "%s refused a peer's certificate (%d times): %s", m.name, len(r), r[0])
		}
	}
}

// gateway reads key through m's gRPC gateway (etcd's JSON API).
func (w *peersWorld) gateway(ctx context.Context, t *testing.T, m *peerMember, key, want string) {
	t.Helper()
	cfg, err := w.tlsConfig()
	if err != nil {
		fatal(t, err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return peersDial(ctx, addr) }}}
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint(m)+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		fatal(t, err)
	}
	rsp, err := hc.Do(req)
	if err != nil {
		fatalf(t, "gateway of %s: %v", m.name, err)
	}
	defer rsp.Body.Close()
	b, _ := io.ReadAll(rsp.Body)
	var got struct{ Kvs []struct{ Value string } }
	_ = json.Unmarshal(b, &got)
	if rsp.StatusCode != http.StatusOK || len(got.Kvs) != 1 || got.Kvs[0].Value != base64.StdEncoding.EncodeToString([]byte(want)) {
		errorf(t, "gateway of %s: %s %s, want %s = %s", m.name, rsp.Status, b, key, want)
	}
}

// rejoins: the leader killed (SIGKILL), the other two elect another and
// accept a write; restarted on its data directory, the killed member
// serves that write and the cluster is whole again.
func (w *peersWorld) rejoins(t *testing.T) {
	up := w.members[0]
	c := w.client(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.Status(ctx, c.Endpoints()[0])
	if err != nil {
		fatal(t, err)
	}
	ml, err := c.MemberList(ctx)
	if err != nil {
		fatal(t, err)
	}
	var down *peerMember
	for _, mm := range ml.Members {
		for _, m := range w.members {
			if mm.ID == st.Leader && mm.Name == m.name {
				down = m
			}
		}
	}
	if down == nil {
		fatalf(t, "leader %x is none of the members", st.Leader)
	}
	if down == up {
		up = w.members[1]
		c = w.client(t, up)
	}
	down.proc.kill()
	// A proposal in flight when the leader goes is dropped: retry, and do
	// not wait for etcd's own request timeout (7 s) to say so.
	waitFor(t, peersBound, "a put through "+up.name+" with the leader "+down.name+" down", func(ctx context.Context) (bool, string, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.Put(ctx, "/etcdpeers/while-down", "v2")
		return err == nil, fmt.Sprint(err), nil
	})
	start := time.Now()
	if err := down.proc.start(); err != nil {
		fatal(t, err)
	}
	c = w.client(t, down)
	waitFor(t, peersBound, down.name+" to rejoin", func(ctx context.Context) (bool, string, error) {
		if ok, why, err := w.healthy(ctx, c, down); !ok || err != nil {
			return false, why, err
		}
		r, err := c.Get(ctx, "/etcdpeers/while-down")
		if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v2" {
			return false, fmt.Sprintf("get: %v %v", r, err), nil
		}
		return true, "", nil
	})
	t.Logf("%s rejoined %.2fs after its restart", down.name, time.Since(start).Seconds())
	if r := sanRefusals(down); len(r) > 0 {
		errorf(t, "%s refused a peer's certificate after its restart: %s", down.name, r[0])
	}
}

// refused: with the previous peer certificate every member logs that it
// refused another member's certificate, naming that member's address, and
// no member answers with a leader.
func (w *peersWorld) refused(t *testing.T) {
	start := time.Now()
	waitFor(t, peersRefusedFor, "every member to refuse a peer's certificate", func(context.Context) (bool, string, error) {
		for _, m := range w.members {
			r := sanRefusals(m)
			if len(r) == 0 {
				return false, m.name + " has refused no peer yet", nil
			}
			if !slices.ContainsFunc(w.members, func(o *peerMember) bool { return o != m && strings.Contains(r[0], `"`+o.ip+`:`) }) {
				return false, m.name + " refused another address: " + r[0], nil
			}
		}
		return true, "", nil
	})
	t.Logf("refused %.2fs after the members started: %s", time.Since(start).Seconds(), sanRefusals(w.members[0])[0])
	// Well past the time the composed certificates take to form (about 2 s).
	time.Sleep(time.Until(start.Add(peersLeaderless)))
	var wg sync.WaitGroup
	for _, m := range w.members {
		c := w.client(t, m)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if st, err := c.Status(ctx, c.Endpoints()[0]); err == nil && st.Leader != 0 {
				errorf(t, "%s has leader %x with the previous peer certificate", m.name, st.Leader)
			}
		})
	}
	wg.Wait()
	w.stopMembers(t)
}

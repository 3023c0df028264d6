package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestEtcdPeerCertificate: on both operators the peer certificate names
// the members behind the headless Service, short and under the cluster
// domain, and nothing else; the server certificate also has client auth.
// The want values are cozystack etcd-operator v0.5.4's own
// (controllers/etcdcluster_controller.go: peerCertDNSNames gives
// *.<cluster>.<ns>.svc and *.<cluster>.<ns>.svc.<cluster-domain>, with
// --cluster-domain defaulting to cluster.local; both its peer and server
// certificates get the usages server auth, client auth, digital signature
// and key encipherment), written out for the cluster demo in tenant-demo.
// On etcd.aenix.io/v1alpha1 the headless Service is <cluster>-headless
// and a member's reverse lookup name
// demo-etcd-0.demo-etcd-headless.tenant-demo.svc.cluster.local.
func TestEtcdPeerCertificate(t *testing.T) {
	usages := []any{"client auth", "digital signature", "key encipherment", "server auth"}
	for name, c := range map[string]struct {
		input string
		peer  []any
	}{
		"Aenix":     {"", []any{"*.demo-etcd-headless.tenant-demo.svc", "*.demo-etcd-headless.tenant-demo.svc.cluster.local"}},
		"Cozystack": {cozystackInput, []any{"*.demo-etcd.tenant-demo.svc", "*.demo-etcd.tenant-demo.svc.cluster.local"}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Call{Spec: `{}`, Input: c.input}.Run(t, fn)
			fntest.NoFatal(t, rsp)
			peer := fntest.DesiredObject(t, rsp, "etcd-peer-cert")
			if d := cmp.Diff(c.peer, fntest.Get(peer, "spec", "dnsNames")); d != "" {
				t.Errorf("peer dnsNames (-want +got):\n%s", d)
			}
			if ips := fntest.Get(peer, "spec", "ipAddresses"); ips != nil {
				t.Errorf("peer ipAddresses %v, want none", ips)
			}
			for _, cert := range []string{"etcd-peer-cert", "etcd-server-cert"} {
				got, _ := fntest.Get(fntest.DesiredObject(t, rsp, cert), "spec", "usages").([]any)
				got = slices.Clone(got)
				slices.SortFunc(got, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
				if d := cmp.Diff(usages, got); d != "" {
					t.Errorf("%s usages, sorted (-want +got):\n%s", cert, d)
				}
			}
		})
	}
}

package main

import (
	"strings"

	"github.com/tenantkube/tenantkube/internal/function"
)

// composeEtcdLeftovers adds to p what the dedicated etcd leaves in NS when
// it goes, so that it is deleted with the cluster: the PKI
// Secrets cert-manager wrote (cert-manager keeps a Certificate's Secret)
// and the members' PersistentVolumeClaims (a StatefulSet keeps its claims;
// etcd-operator.cozystack.io/v1alpha2 garbage-collects them with its members).
// With usages, each PKI Secret present gets a Usage keeping it until the
// KamajiControlPlane is gone — also one a Certificate owns (cert-manager's
// --enable-certificate-owner-ref), which is not composed but would
// otherwise be garbage-collected with its Certificate first: Kamaji reaches
// etcd with these certificates to delete the tenant's keys.
func composeEtcdLeftovers(p *function.Plan, r *function.Request, id function.Identity, op etcdOperator, usages bool) error {
	n := namesOfEtcd(id, op)
	pki := map[string]bool{n.PeerCA: true, n.ClientCA: true, n.Server: true, n.Peer: true, n.Client: true}
	secrets, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "Secret"},
		function.CleanupOptions{Keep: func(name string) bool { return pki[name] }})
	if err != nil {
		return err
	}
	if _, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		// etcd.aenix.io/v1alpha1's StatefulSet names its claims
		// <template>-<cluster>-<ordinal>, etcd-operator.cozystack.io/v1alpha2
		// data-<cluster>-<random>.
		function.CleanupOptions{Keep: func(name string) bool { return strings.Contains(name, "-"+n.Cluster+"-") }}); err != nil {
		return err
	}
	if !usages {
		return nil
	}
	for _, s := range secrets.Present {
		p.Add(namePKISecretUsagePrefix+s, id.Usage(s+"-used-by-control-plane", function.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: s}, id.KamajiControlPlaneRef(),
			"Kamaji reaches etcd with this certificate to delete the tenant's keys when its control plane is deleted"), readyOnReady)
	}
	return nil
}

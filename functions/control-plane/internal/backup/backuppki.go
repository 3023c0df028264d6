package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"filippo.io/age"
	xpextv1beta1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/internal/function"
)

// ClusterIdentity is one cluster's part of a backup: its PKI Secrets'
// data by role (its PKI object), and where its control plane keeps its
// data in etcd.
type ClusterIdentity struct {
	Cluster          string
	PKI              map[string]map[string][]byte
	Schema, Username string
}

// NamePrefixBackupClusterPKI + N + "-" + digest is the composed-resource
// name of cluster N's PKI object of that content digest.
const NamePrefixBackupClusterPKI = "backup-clusterpki-"

// pkiDigestLength is the length of a PKI object's content digest, and
// pkiIncarnationLength of its XR's, in hex characters.
const (
	pkiDigestLength      = 10
	pkiIncarnationLength = 12
)

// clusterPKIName is the cluster-scoped EnvironmentConfig holding cluster
// n's PKI of content digest d, written by the XR of incarnation inc (12
// hex characters of the SHA-256 of its UID): "<ns>.<n>-pki-<inc>-<d>", at
// most 63+1+32+5+12+1+10 = 124 characters. A cluster's PKI rarely
// changes, so its backups share one PKI object: a request carries each
// cluster's PKI once, not once per retained backup. The incarnation keeps
// a cluster restored with the same PKI, under another XR, from taking
// over a retained PKI object.
func clusterPKIName(ns, n, inc, d string) string {
	return ns + "." + n + "-pki-" + inc + "-" + d
}

// clusterPKIKey is the composed-resource name of cluster n's PKI object
// name.
func clusterPKIKey(n, name string) string {
	return NamePrefixBackupClusterPKI + n + "-" + name[max(0, len(name)-pkiDigestLength):]
}

// pkiObjects are the PKI objects a schedule's retained bundles name: those
// observed bundles name (kept as observed) and those of the bundle written
// in this call (composed).
type pkiObjects struct {
	ns, incarnation string
	labels          map[string]string
	owner           *metav1.OwnerReference
	// want: composed-resource name → the PKI object's cluster and name;
	// fresh: composed-resource name → the PKI's JSON to write, when not
	// observed; refs: the PKI objects each observed bundle names, as read.
	want  map[string][2]string
	fresh map[string][]byte
	refs  map[string]map[string]string
}

// add names cluster's PKI object name as wanted; it returns its
// composed-resource name.
func (x *pkiObjects) add(cluster, name string) string {
	if x.want == nil {
		x.want, x.fresh = map[string][2]string{}, map[string][]byte{}
	}
	k := clusterPKIKey(cluster, name)
	x.want[k] = [2]string{cluster, name}
	return k
}

// referencedBy adds the PKI objects the observed bundle names.
func (x *pkiObjects) referencedBy(r *function.Request, bundle string) error {
	refs, err := x.observedRefs(r, bundle)
	for c, ref := range refs {
		x.add(c, ref)
	}
	return err
}

// missing says whether a PKI object the observed bundle names is not
// observed.
func (x *pkiObjects) missing(r *function.Request, bundle string) (bool, error) {
	refs, err := x.observedRefs(r, bundle)
	for c, ref := range refs {
		if !r.ObservedExists(clusterPKIKey(c, ref)) {
			return true, err
		}
	}
	return false, err
}

// observedRefs are the PKI objects the observed bundle names, by cluster
// (none when it is not observed), each bundle decoded once.
func (x *pkiObjects) observedRefs(r *function.Request, bundle string) (map[string]string, error) {
	if refs, ok := x.refs[bundle]; ok {
		return refs, nil
	}
	env, _, err := function.Observed[xpextv1beta1.EnvironmentConfig](r, bundle)
	if err != nil || env == nil {
		return nil, err
	}
	refs, err := bundleRefs(env)
	if err != nil {
		return nil, err
	}
	if x.refs == nil {
		x.refs = map[string]map[string]string{}
	}
	x.refs[bundle] = refs
	return refs, nil
}

// bundleRefs are the PKI objects bundle env names, by cluster: a
// cluster's one (cluster, clusterPKI) or a Tenant's
// (clusters.<N>.clusterPKI); none for a bundle holding its PKI inline.
func bundleRefs(env *xpextv1beta1.EnvironmentConfig) (map[string]string, error) {
	out := map[string]string{}
	if c, ref := dataString(env, bundleCluster), dataString(env, bundleClusterPKI); c != "" && ref != "" {
		out[c] = ref
	}
	raw, ok := env.Data[bundleClusters]
	if !ok {
		return out, nil
	}
	var clusters map[string]map[string]string
	if err := json.Unmarshal(raw.Raw, &clusters); err != nil {
		return nil, fmt.Errorf("cannot read the clusters of bundle %s: %w", env.Name, err)
	}
	for c, f := range clusters {
		if f[bundleClusterPKI] != "" {
			out[c] = f[bundleClusterPKI]
		}
	}
	return out, nil
}

// refill writes again those PKI objects of ids that are named (add) and
// not observed, where the PKI has not changed: the same content is the
// same name.
func (x *pkiObjects) refill(ids []ClusterIdentity) error {
	for _, c := range ids {
		name, plain, err := x.nameOf(c)
		if err != nil {
			return err
		}
		if k := clusterPKIKey(c.Cluster, name); x.want[k] == [2]string{c.Cluster, name} {
			x.fresh[k] = plain
		}
	}
	return nil
}

// nameOf is the PKI object name of c's PKI, and the PKI's JSON.
func (x *pkiObjects) nameOf(c ClusterIdentity) (string, []byte, error) {
	plain, err := json.Marshal(c.PKI) // keys sorted: the same PKI, the same bytes
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(plain)
	return clusterPKIName(x.ns, c.Cluster, x.incarnation, hex.EncodeToString(sum[:])[:pkiDigestLength]), plain, nil
}

// carry adds the PKI objects of ids, named by their content, and returns
// their names by cluster.
func (x *pkiObjects) carry(ids []ClusterIdentity) (map[string]string, error) {
	refs := map[string]string{}
	for _, c := range ids {
		name, plain, err := x.nameOf(c)
		if err != nil {
			return nil, err
		}
		x.fresh[x.add(c.Cluster, name)] = plain
		refs[c.Cluster] = name
	}
	return refs, nil
}

// compose adds each wanted PKI object to p: kept as observed (encryption
// is randomised), or written now, encrypted to the platform's recipient.
// One named but neither observed nor written now (deleted by hand) stays
// gone: its backups cannot be restored.
func (x *pkiObjects) compose(p *function.Plan, r *function.Request, to age.Recipient) error {
	for _, k := range slices.Sorted(maps.Keys(x.want)) {
		if r.ObservedExists(k) {
			p.Kept = append(p.Kept, function.Kept{Name: k, Ready: fnv1.Ready_READY_TRUE})
			continue
		}
		plain, ok := x.fresh[k]
		if !ok {
			continue
		}
		armored, err := seal(plain, to)
		if err != nil {
			return err
		}
		cluster := x.want[k][0]
		l := maps.Clone(x.labels)
		l[function.LabelNamespace], l[function.LabelCluster] = x.ns, cluster
		p.Add(k, &xpextv1beta1.EnvironmentConfig{
			TypeMeta:   metav1.TypeMeta{APIVersion: xpextv1beta1.SchemeGroupVersion.String(), Kind: xpextv1beta1.EnvironmentConfigKind},
			ObjectMeta: metav1.ObjectMeta{Name: x.want[k][1], Labels: l, OwnerReferences: ownerRefs(x.owner)},
			Data:       jsonData(map[string]any{bundleNamespace: x.ns, bundleCluster: cluster, bundlePKI: armored}),
		}, function.ReadyAlways)
	}
	return nil
}

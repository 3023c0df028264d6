package main

import (
	"fmt"
	"math/big"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/quantity"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
)

// EtcdClientPort is the etcd client port the DataStore dials.
const EtcdClientPort = 2379

// Settings of every etcd tenantkube composes.
const (
	etcdAutoCompactionMode      = "periodic"
	etcdAutoCompactionRetention = "5m"
	etcdSnapshotCount           = 10000
	// etcdQuotaPercent of the member volume is etcd's backend quota.
	etcdQuotaPercent = 95
)

// etcdNames are the names of a tenant's dedicated etcd objects in NS.
type etcdNames struct {
	// Cluster is the EtcdCluster. Its operator names its Services:
	// etcd.aenix.io/v1alpha1 the client Service <cluster> and the headless
	// <cluster>-headless (members <cluster>-<ordinal>),
	// etcd-operator.cozystack.io/v1alpha2 the client Service
	// <cluster>-client and the headless <cluster> (members
	// <cluster>-<random>).
	Cluster, ClientService, Headless string
	// SelfSignedIssuer signs the two CAs.
	SelfSignedIssuer string
	// PeerCA/ClientCA are the CA Certificates and the Secrets they write;
	// PeerCAIssuer/ClientCAIssuer the CA Issuers backed by those Secrets.
	PeerCA, PeerCAIssuer, ClientCA, ClientCAIssuer string
	// Server, Peer and Client are the leaf Certificates and their Secrets.
	Server, Peer, Client string
}

// namesOfEtcd returns the etcd object names of cluster id on operator op:
// N-etcd and N-etcd-<role> for the PKI.
func namesOfEtcd(id function.Identity, op etcdOperator) etcdNames {
	return etcdNamesOf(id.Prefixed("etcd"), op)
}

// etcdNamesOf returns the names of an etcd cluster c on operator op: c,
// its Services, and c-<role> for the PKI.
func etcdNamesOf(c string, op etcdOperator) etcdNames {
	client, headless := op.ServiceNames(c)
	return etcdNames{
		Cluster: c, ClientService: client, Headless: headless,
		SelfSignedIssuer: c + "-selfsigned",
		PeerCA:           c + "-peer-ca", PeerCAIssuer: c + "-peer-ca-issuer",
		ClientCA: c + "-ca", ClientCAIssuer: c + "-ca-issuer",
		Server: c + "-server-tls", Peer: c + "-peer-tls", Client: c + "-client-tls",
	}
}

// etcdSite is where a dedicated etcd lives: its namespace, its objects'
// names and the labels of every object it composes (and of the members'
// claims and the PKI Secrets, by which they are found again).
type etcdSite struct {
	Operator  etcdOperator
	Namespace string
	Names     etcdNames
	Labels    map[string]string
}

// clusterEtcdSite is the dedicated etcd of a claim's cluster id on
// operator op: N-etcd in NS, labelled with the cluster.
func clusterEtcdSite(id function.Identity, op etcdOperator) etcdSite {
	return etcdSite{Operator: op, Namespace: id.Namespace, Names: namesOfEtcd(id, op), Labels: id.Labels()}
}

// ref is the object reference of the site's EtcdCluster (a Usage's).
func (s etcdSite) ref() function.ObjectRef {
	return function.ObjectRef{APIVersion: s.Operator.APIVersion(), Kind: etcdv1alpha1.EtcdClusterKind, Name: s.Names.Cluster}
}

// ready is the readiness of the site's EtcdCluster: its operator's
// ReadyCondition.
func (s etcdSite) ready() function.Readiness {
	return function.ReadyOnCondition(s.Operator.ReadyCondition())
}

// quotaBackendBytes is 95% of the member volume size in bytes, rounded down
// (4Gi → 4080218931).
func quotaBackendBytes(storage resource.Quantity) int64 {
	r := quantity.Rat(storage)
	return quantity.FloorRat(r.Mul(r, big.NewRat(etcdQuotaPercent, 100)))
}

// buildEtcdCluster returns the dedicated EtcdCluster N-etcd of site per
// docs/architecture.md: replicas and volume size from the input (storage
// class defaulting to spec.storageClass), quota-backend-bytes 95% of the
// volume, periodic auto-compaction every 5m, snapshot-count 10000, TLS for
// peers and clients from the cert-manager Secrets.
func buildEtcdCluster(site etcdSite, spec *tkv1alpha1.KubernetesClusterSpec, in *cpinput.ControlPlaneInput, storage resource.Quantity) any {
	storageClass := in.Etcd.StorageClassName
	if storageClass == "" {
		storageClass = spec.StorageClass
	}
	return site.Operator.BuildEtcd(site, in.Etcd.Version, in.Etcd.Replicas, storage, &storageClass)
}

// buildEtcdV1alpha1 is aenixEtcd.BuildEtcd's etcd.aenix.io/v1alpha1
// EtcdCluster.
func buildEtcdV1alpha1(site etcdSite, replicas int32, storage resource.Quantity, storageClass *string) *etcdv1alpha1.EtcdCluster {
	n := site.Names
	return &etcdv1alpha1.EtcdCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: etcdv1alpha1.GroupVersion.String(), Kind: etcdv1alpha1.EtcdClusterKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      n.Cluster,
			Namespace: site.Namespace,
			Labels:    site.Labels,
		},
		Spec: etcdv1alpha1.EtcdClusterSpec{
			Replicas: &replicas,
			Options: map[string]string{
				"quota-backend-bytes":       strconv.FormatInt(quotaBackendBytes(storage), 10),
				"auto-compaction-mode":      etcdAutoCompactionMode,
				"auto-compaction-retention": etcdAutoCompactionRetention,
				"snapshot-count":            strconv.Itoa(etcdSnapshotCount),
			},
			Storage: etcdv1alpha1.StorageSpec{
				VolumeClaimTemplate: &etcdv1alpha1.EmbeddedPersistentVolumeClaim{
					// The members' claims carry the cluster's labels, so the
					// function finds them and composes them for deletion
					// with the cluster (a StatefulSet keeps its claims).
					Metadata: etcdv1alpha1.EmbeddedObjectMetadata{Labels: site.Labels},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: storageClass,
						Resources: corev1.VolumeResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceStorage: storage},
						},
					},
				},
			},
			Security: &etcdv1alpha1.SecuritySpec{TLS: &etcdv1alpha1.TLSSpec{
				PeerTrustedCASecret:   n.PeerCA,
				PeerSecret:            n.Peer,
				ServerSecret:          n.Server,
				ClientTrustedCASecret: n.ClientCA,
				ClientSecret:          n.Client,
			}},
		},
	}
}

// buildEtcdV1alpha2 is cozystackEtcd.BuildEtcd's
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster: the same flags as typed options, the PKI's Secrets
// (the server Secret's ca.crt, the client CA, is the CA client
// certificates must chain to; naming the client Secret as the operator's
// turns on client certificate authentication), and the cluster's labels
// on every object the operator creates, its members' claims included.
func buildEtcdV1alpha2(site etcdSite, version string, replicas int32, storage resource.Quantity, storageClass *string) *etcdv1alpha2.EtcdCluster {
	n := site.Names
	quota, snapshots := quotaBackendBytes(storage), int64(etcdSnapshotCount)
	secret := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	return &etcdv1alpha2.EtcdCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdClusterKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      n.Cluster,
			Namespace: site.Namespace,
			Labels:    site.Labels,
		},
		Spec: etcdv1alpha2.EtcdClusterSpec{
			Version:  version,
			Replicas: &replicas,
			Options: &etcdv1alpha2.EtcdOptions{
				QuotaBackendBytes:       &quota,
				AutoCompactionMode:      etcdAutoCompactionMode,
				AutoCompactionRetention: etcdAutoCompactionRetention,
				SnapshotCount:           &snapshots,
			},
			Storage: etcdv1alpha2.StorageSpec{Size: &storage, StorageClassName: storageClass},
			TLS: &etcdv1alpha2.TLSSpec{
				Client: &etcdv1alpha2.ClientTLS{ServerSecretRef: secret(n.Server), OperatorClientSecretRef: secret(n.Client)},
				Peer:   &etcdv1alpha2.PeerTLS{SecretRef: secret(n.Peer)},
			},
			AdditionalMetadata: &etcdv1alpha2.AdditionalMetadata{Labels: site.Labels},
		},
	}
}

// buildDataStore returns the Kamaji DataStore (kamaji.clastix.io/v1alpha1,
// cluster-scoped) of the dedicated etcd: driver etcd, the client Service on
// port 2379, TLS with the client CA and the client certificate Secrets in NS.
func buildDataStore(id function.Identity, op etcdOperator) *kamajiv1alpha1.DataStore {
	return buildDataStoreOf(clusterEtcdSite(id, op), DataStoreName(id), id.Labels(function.LabelNamespace, id.Namespace))
}

// buildDataStoreOf returns the DataStore name (labels) of the etcd of
// site, as buildDataStore.
func buildDataStoreOf(site etcdSite, name string, labels map[string]string) *kamajiv1alpha1.DataStore {
	n := site.Names
	ref := func(secret, key string) kamajiv1alpha1.ContentRef {
		return kamajiv1alpha1.ContentRef{SecretReference: &kamajiv1alpha1.SecretReference{Name: secret, Namespace: site.Namespace, KeyPath: key}}
	}
	caKey := ref(n.ClientCA, corev1.TLSPrivateKeyKey)
	return &kamajiv1alpha1.DataStore{
		TypeMeta: metav1.TypeMeta{APIVersion: kamajiv1alpha1.GroupVersion.String(), Kind: kamajiv1alpha1.DataStoreKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
		},
		Spec: kamajiv1alpha1.DataStoreSpec{
			Driver: kamajiv1alpha1.DriverEtcd,
			// Short N.NS.svc: only pods of the management cluster dial it
			// (Kamaji's controller and the tenant API servers), and their
			// resolv.conf carries the cluster's search path, whatever its
			// domain; the server certificate covers this very name.
			Endpoints: []string{fmt.Sprintf("%s.%s.svc:%d", n.ClientService, site.Namespace, EtcdClientPort)},
			TLSConfig: &kamajiv1alpha1.TLSConfig{
				CertificateAuthority: kamajiv1alpha1.CertificateAuthority{
					Certificate: ref(n.ClientCA, corev1.TLSCertKey),
					PrivateKey:  &caKey,
				},
				ClientCertificate: &kamajiv1alpha1.ClientCertificate{
					Certificate: ref(n.Client, corev1.TLSCertKey),
					PrivateKey:  ref(n.Client, corev1.TLSPrivateKeyKey),
				},
			},
		},
	}
}

// etcdOperatorChanged returns a *field.Error at input.etcd.operator, naming
// owner (the cluster or the Tenant) and both operators, when the observed
// EtcdCluster of site is of another API than site's operator: a setting
// never moves a running etcd (the other operator would start an empty
// one and the old one would be deleted with the tenant's state).
func etcdOperatorChanged(r *function.Request, site etcdSite, owner string) error {
	running := r.ObservedString(nameEtcdCluster, "apiVersion")
	op := site.Operator.APIVersion()
	if running == "" || running == op {
		return nil
	}
	return field.Invalid(field.NewPath("input", "etcd", "operator"), op,
		fmt.Sprintf("%s runs its etcd (EtcdCluster %s/%s) on the %s operator; it is not moved to %s: no migration between them exists, set the operator back to %s",
			owner, site.Namespace, site.Names.Cluster, running, op, running))
}

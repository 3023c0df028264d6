package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/quantity"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
)

// EtcdClientPort is the etcd client port the DataStore dials.
const EtcdClientPort = 2379

// Settings of every etcd tenantkube composes.
const (
	etcdAutoCompactionMode      = "periodic"
	etcdAutoCompactionRetention = "5m"
	etcdSnapshotCount           = "10000"
	// etcdQuotaPercent of the member volume is etcd's backend quota.
	etcdQuotaPercent = 95
)

// etcdNames are the names of a tenant's dedicated etcd objects in NS.
type etcdNames struct {
	// Cluster is the EtcdCluster, its StatefulSet and its client Service
	// (the etcd-operator names the client Service after the cluster and the
	// headless Service <cluster>-headless).
	Cluster, Headless string
	// SelfSignedIssuer signs the two CAs.
	SelfSignedIssuer string
	// PeerCA/ClientCA are the CA Certificates and the Secrets they write;
	// PeerCAIssuer/ClientCAIssuer the CA Issuers backed by those Secrets.
	PeerCA, PeerCAIssuer, ClientCA, ClientCAIssuer string
	// Server, Peer and Client are the leaf Certificates and their Secrets.
	Server, Peer, Client string
}

// namesOfEtcd returns the etcd object names of cluster id: N-etcd and
// N-etcd-<role> for the PKI.
func namesOfEtcd(id function.Identity) etcdNames { return etcdNamesOf(id.Prefixed("etcd")) }

// etcdNamesOf returns the names of an etcd cluster c: c and c-<role> for
// the PKI.
func etcdNamesOf(c string) etcdNames {
	return etcdNames{
		Cluster: c, Headless: c + "-headless",
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
	Namespace string
	Names     etcdNames
	Labels    map[string]string
}

// clusterEtcdSite is the dedicated etcd of a claim's cluster id: N-etcd in
// NS, labelled with the cluster.
func clusterEtcdSite(id function.Identity) etcdSite {
	return etcdSite{Namespace: id.Namespace, Names: namesOfEtcd(id), Labels: id.Labels()}
}

// quotaBackendBytes is 95% of the member volume size in bytes, rounded down
// (4Gi → 4080218931).
func quotaBackendBytes(storage resource.Quantity) int64 {
	r := quantity.Rat(storage)
	return quantity.FloorRat(r.Mul(r, big.NewRat(etcdQuotaPercent, 100)))
}

// buildEtcdCluster returns the dedicated EtcdCluster N-etcd
// (etcd.aenix.io/v1alpha1) per docs/architecture.md: replicas and volume size from the
// input (storage class defaulting to spec.storageClass), quota-backend-bytes
// 95% of the volume, periodic auto-compaction every 5m, snapshot-count
// 10000, TLS for peers and clients from the cert-manager Secrets.
func buildEtcdCluster(id function.Identity, spec *tkv1alpha1.KubernetesClusterSpec, in *cpinput.ControlPlaneInput, storage resource.Quantity) *etcdv1alpha1.EtcdCluster {
	storageClass := in.Etcd.StorageClassName
	if storageClass == "" {
		storageClass = spec.StorageClass
	}
	return buildEtcd(clusterEtcdSite(id), in.Etcd.Replicas, storage, &storageClass)
}

// buildEtcd returns the EtcdCluster of site with replicas members, each
// with a volume of size storage of storageClass (nil: the management
// cluster's default class), and the settings of buildEtcdCluster.
func buildEtcd(site etcdSite, replicas int32, storage resource.Quantity, storageClass *string) *etcdv1alpha1.EtcdCluster {
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
				"snapshot-count":            etcdSnapshotCount,
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

// DataStoreName is the cluster-scoped DataStore's name: "<NS>.<N>"
// (Identity.ClusterScopedName, injective). A shared DataStore named in the
// input has no dot (input.dataStoreName), so none is ever taken for a
// tenant's.
func DataStoreName(id function.Identity) string { return id.ClusterScopedName() }

// DataStoreSchema is the control plane's etcd key prefix and SQL database
// and user in its DataStore: "t" and the first 31 hex digits of
// sha256("<NS>/<N>"). Kamaji's default (NS and N joined by '_', '-' turned
// to '_') gives (prod, team-a) and (prod-team, a) one prefix in a shared
// DataStore. 32 characters of [a-z0-9] starting with a letter: a valid
// etcd prefix, PostgreSQL identifier (63) and MySQL user name (32). Distinct
// per (NS, N) up to a collision of 124 bits of SHA-256.
func DataStoreSchema(id function.Identity) string {
	sum := sha256.Sum256([]byte(id.Namespace + "/" + id.Name))
	return "t" + hex.EncodeToString(sum[:])[:31]
}

// buildDataStore returns the Kamaji DataStore (kamaji.clastix.io/v1alpha1,
// cluster-scoped) of the dedicated etcd: driver etcd, the client Service on
// port 2379, TLS with the client CA and the client certificate Secrets in NS.
func buildDataStore(id function.Identity) *kamajiv1alpha1.DataStore {
	return buildDataStoreOf(clusterEtcdSite(id), DataStoreName(id), id.Labels(function.LabelNamespace, id.Namespace))
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
			Driver:    kamajiv1alpha1.DriverEtcd,
			Endpoints: []string{fmt.Sprintf("%s.%s.svc:%d", n.Cluster, site.Namespace, EtcdClientPort)},
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

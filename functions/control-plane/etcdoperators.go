package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
)

// etcdOperator is the etcd-operator that runs a dedicated etcd (a
// cluster's own or a Tenant's): one implementation per operator API,
// picked once from the input's etcd.operator (etcdOperatorOf).
type etcdOperator interface {
	// APIVersion is the group/version of its EtcdCluster.
	APIVersion() string
	// ServiceNames are the client and the headless Service the operator
	// creates for EtcdCluster c.
	ServiceNames(c string) (client, headless string)
	// ReadyCondition is the EtcdCluster condition that reports it ready.
	ReadyCondition() string
	// BuildEtcd returns the EtcdCluster of site with replicas members, each
	// with a volume of size storage of storageClass (nil: the management
	// cluster's default class), and the settings of buildEtcdCluster;
	// version is the etcd version where the API has one.
	BuildEtcd(site etcdSite, version string, replicas int32, storage resource.Quantity, storageClass *string) any
	// MemberNames are the DNS names <member>.<headless>.<NS>.svc of the
	// members of site known before they exist, for replicas members.
	MemberNames(site etcdSite, replicas int32) []string
	// ObservedSize is the members and the member volume size of the
	// observed EtcdCluster (nil when not observed, unreadable or unset).
	ObservedSize(r *function.Request) (replicas *int32, size *resource.Quantity)
	// TakesSnapshots says the operator takes snapshots and restores them
	// (backups and spec.restore).
	TakesSnapshots() bool
}

// etcdOperatorOf is the operator of setting op; anything but
// etcd-operator.cozystack.io/v1alpha2 is etcd.aenix.io/v1alpha1 (the
// settings' validation admits these two only).
func etcdOperatorOf(op cpinput.EtcdOperator) etcdOperator {
	if op == cpinput.EtcdOperatorCozystack {
		return cozystackEtcd{}
	}
	return aenixEtcd{}
}

// aenixEtcd is the Ænix etcd-operator v0.4 (etcd.aenix.io/v1alpha1): a
// StatefulSet of ordinal members, no snapshots.
type aenixEtcd struct{}

func (aenixEtcd) APIVersion() string { return etcdv1alpha1.GroupVersion.String() }

// ServiceNames: <c> and <c>-headless (v0.4.2
// internal/controller/factory/svc.go:34-48).
func (aenixEtcd) ServiceNames(c string) (string, string) { return c, c + "-headless" }

// ReadyCondition: Ready (v0.4.2 api/v1alpha1/etcdcluster_types.go:57).
func (aenixEtcd) ReadyCondition() string { return etcdv1alpha1.ConditionReady }

func (aenixEtcd) BuildEtcd(site etcdSite, _ string, replicas int32, storage resource.Quantity, storageClass *string) any {
	return buildEtcdV1alpha1(site, replicas, storage, storageClass)
}

// MemberNames: the StatefulSet <cluster> (v0.4.2
// internal/controller/factory/statefulset.go:104) names its pods
// <cluster>-<ordinal>.
func (aenixEtcd) MemberNames(site etcdSite, replicas int32) []string {
	n := site.Names
	out := make([]string, 0, replicas+1)
	for i := range replicas {
		out = append(out, fmt.Sprintf("%s-%d.%s.%s.svc", n.Cluster, i, n.Headless, site.Namespace))
	}
	return out
}

// ObservedSize: spec.replicas and the claim template's storage request.
func (aenixEtcd) ObservedSize(r *function.Request) (*int32, *resource.Quantity) {
	etcd, found, err := function.Observed[etcdv1alpha1.EtcdCluster](r, nameEtcdCluster)
	if err != nil || !found {
		return nil, nil
	}
	if t := etcd.Spec.Storage.VolumeClaimTemplate; t != nil {
		if q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			return etcd.Spec.Replicas, &q
		}
	}
	return etcd.Spec.Replicas, nil
}

func (aenixEtcd) TakesSnapshots() bool { return false }

// cozystackEtcd is the Cozystack etcd-operator v0.5
// (etcd-operator.cozystack.io/v1alpha2): members of random names,
// EtcdSnapshots and bootstrap from a snapshot.
type cozystackEtcd struct{}

func (cozystackEtcd) APIVersion() string { return etcdv1alpha2.GroupVersion.String() }

// ServiceNames: <c>-client and the headless <c> (v0.5.4
// controllers/etcdcluster_controller.go:1816,1829).
func (cozystackEtcd) ServiceNames(c string) (string, string) { return c + "-client", c }

// ReadyCondition: Available, true while the cluster has quorum (v0.5.4
// api/v1alpha2/etcdcluster_types.go:305).
func (cozystackEtcd) ReadyCondition() string { return etcdv1alpha2.ConditionAvailable }

func (cozystackEtcd) BuildEtcd(site etcdSite, version string, replicas int32, storage resource.Quantity, storageClass *string) any {
	return buildEtcdV1alpha2(site, version, replicas, storage, storageClass)
}

// MemberNames: none, members are named <cluster>-<random> (GenerateName,
// v0.5.4 controllers/etcdcluster_controller.go:419).
func (cozystackEtcd) MemberNames(etcdSite, int32) []string { return nil }

// ObservedSize: spec.replicas and spec.storage.size.
func (cozystackEtcd) ObservedSize(r *function.Request) (*int32, *resource.Quantity) {
	etcd, found, err := function.Observed[etcdv1alpha2.EtcdCluster](r, nameEtcdCluster)
	if err != nil || !found {
		return nil, nil
	}
	return etcd.Spec.Replicas, etcd.Spec.Storage.Size
}

// TakesSnapshots: EtcdSnapshot (v0.5.4 api/v1alpha2/etcdsnapshot_types.go:152)
// and spec.bootstrap (api/v1alpha2/etcdcluster_types.go:498).
func (cozystackEtcd) TakesSnapshots() bool { return true }

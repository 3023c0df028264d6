package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
)

// operatorCase is what the upstream sources say of one operator, for the
// EtcdCluster demo-etcd in ns.
type operatorCase struct {
	setting            cpinput.EtcdOperator
	apiVersion         string
	client, headless   string
	ready              string
	members            []string // of 2 replicas
	observed           string   // an EtcdCluster of 3 members of 8Gi
	snapshots          bool
	checkBuilt         func(t *testing.T, etcd any)
	wantImplementation etcdOperator
}

var operatorCases = map[string]operatorCase{
	// Ænix etcd-operator v0.4.2: Services <c> and <c>-headless
	// (internal/controller/factory/svc.go:34-48), condition Ready
	// (api/v1alpha1/etcdcluster_types.go:57), StatefulSet pods
	// <c>-<ordinal>, no EtcdSnapshot API.
	"Aenix": {
		setting:    cpinput.EtcdOperatorAenix,
		apiVersion: "etcd.aenix.io/v1alpha1",
		client:     "demo-etcd", headless: "demo-etcd-headless",
		ready:    "Ready",
		members:  []string{"demo-etcd-0.demo-etcd-headless.ns.svc", "demo-etcd-1.demo-etcd-headless.ns.svc"},
		observed: `{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, metadata: {name: demo-etcd, namespace: ns}, spec: {replicas: 3, storage: {volumeClaimTemplate: {spec: {resources: {requests: {storage: 8Gi}}}}}}}`,
		checkBuilt: func(t *testing.T, etcd any) {
			e, ok := etcd.(*etcdv1alpha1.EtcdCluster)
			if !ok {
				t.Fatalf("BuildEtcd = %T, want *v1alpha1.EtcdCluster", etcd)
			}
			// 95% of 4Gi = 0.95 * 4294967296 = 4080218931.2, rounded down.
			if e.APIVersion != "etcd.aenix.io/v1alpha1" || *e.Spec.Replicas != 2 || e.Spec.Options["quota-backend-bytes"] != "4080218931" {
				t.Errorf("BuildEtcd = %s, %d replicas, quota %s", e.APIVersion, *e.Spec.Replicas, e.Spec.Options["quota-backend-bytes"])
			}
		},
		wantImplementation: aenixEtcd{},
	},
	// Cozystack etcd-operator v0.5.4: Services <c>-client and the
	// headless <c> (controllers/etcdcluster_controller.go:1816,1829),
	// condition Available (api/v1alpha2/etcdcluster_types.go:305),
	// members <c>-<random> (:419), EtcdSnapshot
	// (api/v1alpha2/etcdsnapshot_types.go:152).
	"Cozystack": {
		setting:    cpinput.EtcdOperatorCozystack,
		apiVersion: "etcd-operator.cozystack.io/v1alpha2",
		client:     "demo-etcd-client", headless: "demo-etcd",
		ready:     "Available",
		observed:  `{apiVersion: etcd-operator.cozystack.io/v1alpha2, kind: EtcdCluster, metadata: {name: demo-etcd, namespace: ns}, spec: {replicas: 3, storage: {size: 8Gi}}}`,
		snapshots: true,
		checkBuilt: func(t *testing.T, etcd any) {
			e, ok := etcd.(*etcdv1alpha2.EtcdCluster)
			if !ok {
				t.Fatalf("BuildEtcd = %T, want *v1alpha2.EtcdCluster", etcd)
			}
			if e.APIVersion != "etcd-operator.cozystack.io/v1alpha2" || e.Spec.Version != "3.6.11" || *e.Spec.Replicas != 2 || e.Spec.Storage.Size.String() != "4Gi" || *e.Spec.Options.QuotaBackendBytes != 4080218931 {
				t.Errorf("BuildEtcd = %s, version %s, %d replicas, size %s", e.APIVersion, e.Spec.Version, *e.Spec.Replicas, e.Spec.Storage.Size)
			}
		},
		wantImplementation: cozystackEtcd{},
	},
}

func TestEtcdOperators(t *testing.T) {
	id := function.Identity{Name: "demo", Namespace: "ns"}
	for name, c := range operatorCases {
		op := etcdOperatorOf(c.setting)
		site := clusterEtcdSite(id, op)
		t.Run(name+"/Of", func(t *testing.T) {
			if op != c.wantImplementation {
				t.Errorf("etcdOperatorOf(%s) = %T", c.setting, op)
			}
		})
		t.Run(name+"/APIVersion", func(t *testing.T) {
			if got := op.APIVersion(); got != c.apiVersion {
				t.Errorf("APIVersion = %s, want %s", got, c.apiVersion)
			}
		})
		t.Run(name+"/ServiceNames", func(t *testing.T) {
			if client, headless := op.ServiceNames("demo-etcd"); client != c.client || headless != c.headless {
				t.Errorf("ServiceNames = %s, %s, want %s, %s", client, headless, c.client, c.headless)
			}
		})
		t.Run(name+"/ReadyCondition", func(t *testing.T) {
			if got := op.ReadyCondition(); got != c.ready {
				t.Errorf("ReadyCondition = %s, want %s", got, c.ready)
			}
		})
		t.Run(name+"/BuildEtcd", func(t *testing.T) {
			c.checkBuilt(t, op.BuildEtcd(site, "3.6.11", 2, resource.MustParse("4Gi"), nil))
		})
		t.Run(name+"/MemberNames", func(t *testing.T) {
			if d := cmp.Diff(c.members, op.MemberNames(site, 2)); d != "" {
				t.Errorf("MemberNames (-want +got):\n%s", d)
			}
		})
		t.Run(name+"/ObservedSize", func(t *testing.T) {
			r, _ := fntest.Call{Namespace: "ns", Observed: map[string]string{nameEtcdCluster: c.observed}}.Read(t)
			replicas, size := op.ObservedSize(r)
			if replicas == nil || *replicas != 3 || size == nil || size.String() != "8Gi" {
				t.Errorf("ObservedSize = %v, %v, want 3, 8Gi", replicas, size)
			}
			none, _ := fntest.Call{Namespace: "ns"}.Read(t)
			if replicas, size := op.ObservedSize(none); replicas != nil || size != nil {
				t.Errorf("ObservedSize of nothing observed = %v, %v, want nil, nil", replicas, size)
			}
		})
		t.Run(name+"/TakesSnapshots", func(t *testing.T) {
			if got := op.TakesSnapshots(); got != c.snapshots {
				t.Errorf("TakesSnapshots = %t, want %t", got, c.snapshots)
			}
		})
	}
}

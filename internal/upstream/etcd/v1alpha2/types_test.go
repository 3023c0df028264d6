package v1alpha2_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
)

var transition = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var labels = map[string]string{
	"app.kubernetes.io/managed-by": "tenantkube",
	"tenantkube.io/cluster":        "demo",
}

// demo is a dedicated EtcdCluster for cluster "demo" in namespace
// "tenant-demo": etcd 3.6.11 (the operator's documented sample), 3
// members, 4Gi volumes, quota 95% of 4Gi (4080218931), periodic compaction
// every 5m, snapshot-count 10000, mutual TLS from Secrets, with every
// modelled field set.
func demo() *etcdv1alpha2.EtcdCluster {
	return &etcdv1alpha2.EtcdCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-etcd", Namespace: "tenant-demo", Labels: labels},
		Spec: etcdv1alpha2.EtcdClusterSpec{
			Version:  "3.6.11",
			Replicas: ptr.To[int32](3),
			Options: &etcdv1alpha2.EtcdOptions{
				QuotaBackendBytes:       ptr.To[int64](4080218931),
				AutoCompactionMode:      "periodic",
				AutoCompactionRetention: "5m",
				SnapshotCount:           ptr.To[int64](10000),
			},
			Storage: etcdv1alpha2.StorageSpec{
				Medium:           "",
				Size:             ptr.To(resource.MustParse("4Gi")),
				StorageClassName: ptr.To("replicated"),
			},
			TLS: &etcdv1alpha2.TLSSpec{
				Client: &etcdv1alpha2.ClientTLS{
					ServerSecretRef:         &corev1.LocalObjectReference{Name: "demo-etcd-server-tls"},
					OperatorClientSecretRef: &corev1.LocalObjectReference{Name: "demo-etcd-client-tls"},
				},
				Peer: &etcdv1alpha2.PeerTLS{SecretRef: &corev1.LocalObjectReference{Name: "demo-etcd-peer-tls"}},
			},
			AdditionalMetadata: &etcdv1alpha2.AdditionalMetadata{
				Labels:      labels,
				Annotations: map[string]string{"tenantkube.io/cluster": "demo"},
			},
		},
		Status: etcdv1alpha2.EtcdClusterStatus{
			ReadyMembers: 3,
			Conditions: []metav1.Condition{
				{Type: etcdv1alpha2.ConditionAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "QuorumHealthy", Message: "All members are ready"},
			},
		},
	}
}

// demoMemory is demo on tmpfs volumes.
func demoMemory() *etcdv1alpha2.EtcdCluster {
	obj := demo()
	obj.Spec.Storage = etcdv1alpha2.StorageSpec{Medium: corev1.StorageMediumMemory, Size: ptr.To(resource.MustParse("1Gi"))}
	return obj
}

// s3 is an S3 location of the operator's documented shape (the exact
// key of a restore, <prefix>/<namespace>/<snapshot>.db).
func s3(key string) *etcdv1alpha2.S3SnapshotLocation {
	return &etcdv1alpha2.S3SnapshotLocation{
		Endpoint: "https://s3.corp.test", Bucket: "etcd-backups", Key: key, Region: "eu-west-1", ForcePathStyle: true,
		CredentialsSecretRef: corev1.LocalObjectReference{Name: "etcd-backup-s3"},
	}
}

// demoRestore is demo bootstrapped from a snapshot at source.
func demoRestore(source etcdv1alpha2.SnapshotLocation) *etcdv1alpha2.EtcdCluster {
	obj := demo()
	obj.Spec.Bootstrap = &etcdv1alpha2.Bootstrap{Restore: &etcdv1alpha2.BootstrapRestore{Source: source}}
	return obj
}

func TestEtcdClusterMatchesCRD(t *testing.T) {
	a, b := demo(), demoMemory()
	fromS3 := demoRestore(etcdv1alpha2.SnapshotLocation{S3: s3("tenantkube/tenant-demo/demo-backup-20261202183044.db")})
	fromPVC := demoRestore(etcdv1alpha2.SnapshotLocation{PVC: &etcdv1alpha2.PVCSnapshotLocation{ClaimName: "etcd-backups", SubPath: "tenantkube/demo-backup-20261202183044.db"}})
	if unset := upstreamtest.UnsetFields(a, b, fromS3, fromPVC); len(unset) > 0 {
		t.Errorf("fields not exercised by the test objects: %v", unset)
	}
	t.Run("pvc", func(t *testing.T) { upstreamtest.CheckObject(t, a) })
	t.Run("memory", func(t *testing.T) { upstreamtest.CheckObject(t, b) })
	t.Run("restore-s3", func(t *testing.T) { upstreamtest.CheckObject(t, fromS3) })
	t.Run("restore-pvc", func(t *testing.T) { upstreamtest.CheckObject(t, fromPVC) })
}

// TestRestoreNeedsTheExactKey: the CRD refuses a restore from an S3 key
// prefix (empty key) or a PVC without the file's path.
func TestRestoreNeedsTheExactKey(t *testing.T) {
	v := upstreamtest.MustLoadShared(t)
	for name, obj := range map[string]*etcdv1alpha2.EtcdCluster{
		"s3":  demoRestore(etcdv1alpha2.SnapshotLocation{S3: s3("")}),
		"pvc": demoRestore(etcdv1alpha2.SnapshotLocation{PVC: &etcdv1alpha2.PVCSnapshotLocation{ClaimName: "etcd-backups"}}),
	} {
		if err := v.Validate(upstreamtest.ToUnstructured(t, obj)); err == nil {
			t.Errorf("%s: a restore without the exact snapshot path validated", name)
		}
	}
}

func TestEtcdSnapshotMatchesCRD(t *testing.T) {
	snap := func(dest etcdv1alpha2.SnapshotLocation) *etcdv1alpha2.EtcdSnapshot {
		return &etcdv1alpha2.EtcdSnapshot{
			TypeMeta:   metav1.TypeMeta{APIVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdSnapshotKind},
			ObjectMeta: metav1.ObjectMeta{Name: "demo-backup-20261202183044", Namespace: "tenant-demo", Labels: labels},
			Spec:       etcdv1alpha2.EtcdSnapshotSpec{ClusterRef: corev1.LocalObjectReference{Name: "demo-etcd"}, Destination: dest},
			Status: etcdv1alpha2.EtcdSnapshotStatus{Phase: etcdv1alpha2.SnapshotPhaseComplete, Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: transition, Reason: "Complete", Message: "snapshot stored"},
			}},
		}
	}
	a := snap(etcdv1alpha2.SnapshotLocation{S3: s3("tenantkube/tenant-demo")})
	b := snap(etcdv1alpha2.SnapshotLocation{PVC: &etcdv1alpha2.PVCSnapshotLocation{ClaimName: "etcd-backups", SubPath: "tenantkube"}})
	if unset := upstreamtest.UnsetFields(a, b); len(unset) > 0 {
		t.Errorf("fields not exercised by the test objects: %v", unset)
	}
	t.Run("s3", func(t *testing.T) { upstreamtest.CheckObject(t, a) })
	t.Run("pvc", func(t *testing.T) { upstreamtest.CheckObject(t, b) })
	both := snap(etcdv1alpha2.SnapshotLocation{S3: s3("x"), PVC: b.Spec.Destination.PVC})
	if err := upstreamtest.MustLoadShared(t).Validate(upstreamtest.ToUnstructured(t, both)); err == nil {
		t.Error("an EtcdSnapshot with both destinations validated")
	}
}

// TestEtcdClusterRequiresVersion: the CRD requires spec.version, so a
// cluster without it is refused.
func TestEtcdClusterRequiresVersion(t *testing.T) {
	obj := demo()
	obj.Spec.Version = ""
	u := upstreamtest.ToUnstructured(t, obj)
	if err := upstreamtest.MustLoadShared(t).Validate(u); err == nil {
		t.Error("an EtcdCluster with an empty spec.version validated")
	}
}

func TestEtcdClusterStatusDecodes(t *testing.T) {
	const statusJSON = `{"readyMembers": 2, "conditions": [
		{"type": "Available", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2026-01-02T03:04:05Z",
		 "reason": "QuorumAvailable", "message": "2/3 members ready"}
	]}`
	var got etcdv1alpha2.EtcdClusterStatus
	upstreamtest.CheckStatusJSON(t, demo(), statusJSON, &got)
	want := etcdv1alpha2.EtcdClusterStatus{ReadyMembers: 2, Conditions: []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "QuorumAvailable", Message: "2/3 members ready"},
	}}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

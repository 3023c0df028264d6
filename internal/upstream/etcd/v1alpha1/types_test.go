package v1alpha1_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/upstream/internal/upstreamtest"
)

var transition = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var labels = map[string]string{
	"app.kubernetes.io/managed-by": "tenantkube",
	"tenantkube.io/cluster":        "demo",
}

// demo is the dedicated EtcdCluster docs/architecture.md describes for cluster "demo"
// in namespace "tenant-demo" (3 members, 4Gi volumes, quota 95% of 4Gi,
// periodic compaction every 5m, snapshot-count 10000, TLS everywhere),
// with every modelled field except Storage.EmptyDir set.
func demo() *etcdv1alpha1.EtcdCluster {
	return &etcdv1alpha1.EtcdCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: etcdv1alpha1.GroupVersion.String(), Kind: etcdv1alpha1.EtcdClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-etcd", Namespace: "tenant-demo", Labels: labels},
		Spec: etcdv1alpha1.EtcdClusterSpec{
			Replicas: ptr.To[int32](3),
			Options: map[string]string{
				"quota-backend-bytes":       "4080218931",
				"auto-compaction-mode":      "periodic",
				"auto-compaction-retention": "5m",
				"snapshot-count":            "10000",
			},
			Storage: etcdv1alpha1.StorageSpec{
				VolumeClaimTemplate: &etcdv1alpha1.EmbeddedPersistentVolumeClaim{
					TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
					Metadata: etcdv1alpha1.EmbeddedObjectMetadata{
						Name:        "data",
						Labels:      labels,
						Annotations: map[string]string{"tenantkube.io/purpose": "etcd-data"},
					},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: ptr.To("replicated"),
						Resources: corev1.VolumeResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")},
						},
					},
				},
			},
			Security: &etcdv1alpha1.SecuritySpec{TLS: &etcdv1alpha1.TLSSpec{
				PeerTrustedCASecret:   "demo-etcd-peer-ca-tls",
				PeerSecret:            "demo-etcd-peer-tls",
				ServerTrustedCASecret: "demo-etcd-peer-ca-tls",
				ServerSecret:          "demo-etcd-server-tls",
				ClientTrustedCASecret: "demo-etcd-client-ca-tls",
				ClientSecret:          "demo-etcd-client-tls",
			}},
			PodTemplate: &etcdv1alpha1.PodTemplate{
				Metadata: etcdv1alpha1.EmbeddedObjectMetadata{
					Name:        "demo-etcd",
					Labels:      labels,
					Annotations: map[string]string{"tenantkube.io/cluster": "demo"},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "etcd",
					Resources: corev1.ResourceRequirements{
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					},
				}}},
			},
		},
		Status: etcdv1alpha1.EtcdClusterStatus{Conditions: []metav1.Condition{
			{Type: etcdv1alpha1.ConditionInitialized, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "InitializationComplete", Message: "Cluster initialization is complete"},
			{Type: etcdv1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "AllPodsAreReady", Message: "Cluster is fully operational"},
		}},
	}
}

// demoEmptyDir is demo with emptyDir storage instead of volume claims.
func demoEmptyDir() *etcdv1alpha1.EtcdCluster {
	obj := demo()
	obj.Spec.Storage = etcdv1alpha1.StorageSpec{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium:    corev1.StorageMediumMemory,
		SizeLimit: ptr.To(resource.MustParse("4Gi")),
	}}
	return obj
}

func TestEtcdClusterMatchesCRD(t *testing.T) {
	a, b := demo(), demoEmptyDir()
	if unset := upstreamtest.UnsetFields(a, b); len(unset) > 0 {
		t.Errorf("fields not exercised by the test objects: %v", unset)
	}
	t.Run("volumeClaimTemplate", func(t *testing.T) { upstreamtest.CheckObject(t, a) })
	t.Run("emptyDir", func(t *testing.T) { upstreamtest.CheckObject(t, b) })
}

func TestEtcdClusterStatusDecodes(t *testing.T) {
	const statusJSON = `{"conditions": [
		{"type": "Initialized", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2026-01-02T03:04:05Z",
		 "reason": "InitializationComplete", "message": "Cluster initialization is complete"},
		{"type": "Ready", "status": "False", "observedGeneration": 1, "lastTransitionTime": "2026-01-02T03:04:05Z",
		 "reason": "WaitingForFirstQuorum", "message": "Waiting for first quorum to be established"}
	]}`
	var got etcdv1alpha1.EtcdClusterStatus
	upstreamtest.CheckStatusJSON(t, demo(), statusJSON, &got)
	want := etcdv1alpha1.EtcdClusterStatus{Conditions: []metav1.Condition{
		{Type: "Initialized", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "InitializationComplete", Message: "Cluster initialization is complete"},
		{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: transition, Reason: "WaitingForFirstQuorum", Message: "Waiting for first quorum to be established"},
	}}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("decoded status (-want +got):\n%s", cmp.Diff(want, got))
	}
}

package main

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tenantkube/tenantkube/internal/encryption"
	"github.com/tenantkube/tenantkube/internal/function"
)

// The rewrite of a rotation's phase 2, and of a move (the resources
// added or removed): a Job in NS that writes every object of the
// resources again through the tenant API server with the cluster's admin
// kubeconfig. kube-apiserver stores an updated object with its
// resource's first provider; an annotation that changes per generation
// (per move) makes each update a real write.
const (
	// namePrefixRewriteJob + G is the composed-resource name of the
	// rewrite to generation G.
	namePrefixRewriteJob = "encryption-rewrite-"
	// namePrefixMoveJob + KeySet.MoveID is the composed-resource name of
	// a move's rewrite.
	namePrefixMoveJob = "encryption-move-"
	// AnnotationKeyGeneration is set on every rewritten object: the
	// generation it was last written with by a rewrite.
	AnnotationKeyGeneration = "encryption.tenantkube.io/key-generation"
	// AnnotationMove is set on every object a move wrote again: the
	// move's KeySet.MoveID.
	AnnotationMove       = "encryption.tenantkube.io/move"
	rewriteKubeconfigDir = "/etc/tenantkube/kubeconfig"
	// rewriteMemoryLimit bounds the Job's kubectl, which holds one
	// unchunked LIST of each resource whole, decoded: 1 GiB holds
	// 256 MiB of stored objects at 4x decoding overhead (bytes read,
	// JSON, unstructured maps), e.g. 256 Secrets at their 1 MiB cap
	// (k8s.io/api core/v1 types.go MaxSecretSize) or ~65,000 of 4 KiB.
	rewriteMemoryLimit = "1Gi"
)

// rewriteJobKey is the composed-resource name of the rewrite to gen.
func rewriteJobKey(gen int32) string { return fmt.Sprintf("%s%d", namePrefixRewriteJob, gen) }

// moveJobKey is the composed-resource name of the move of ks.
func moveJobKey(ks encryption.KeySet) string { return namePrefixMoveJob + ks.MoveID() }

// rewriteJob is the Job N-<key>: kubectl annotate <resources> --all
// --all-namespaces --overwrite <annotation>=<value>, with the admin
// kubeconfig key function.KubeconfigSecretKey (the API server's
// Service), as a non-root, read-only container without capabilities.
func rewriteJob(id function.Identity, key, image string, resources []string, annotation, value string) *batchv1.Job {
	name := id.Prefixed(key)
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse(rewriteMemoryLimit)}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: id.Labels()},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](6),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: id.Labels()},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "rewrite",
						Image: image,
						Args: []string{"annotate", strings.Join(resources, ","), "--all", "--all-namespaces", "--overwrite",
							annotation + "=" + value},
						Env:       []corev1.EnvVar{{Name: "KUBECONFIG", Value: rewriteKubeconfigDir + "/" + function.KubeconfigSecretKey}},
						Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "kubeconfig", MountPath: rewriteKubeconfigDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
						SecretName: id.KubeconfigSecretName(),
						Items:      []corev1.KeyToPath{{Key: function.KubeconfigSecretKey, Path: function.KubeconfigSecretKey}},
					}}}},
				},
			},
		},
	}
}

// jobSucceeded says whether the observed rewrite Job of composed-resource
// name key succeeded (it reports a succeeded pod).
func (s *scope) jobSucceeded(key string) bool {
	return s.r.ObservedString(key, "metadata", "name") == s.t.ID.Prefixed(key) && s.r.ObservedNumber(key, "status", "succeeded") >= 1
}

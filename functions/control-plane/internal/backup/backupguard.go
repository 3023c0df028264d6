package backup

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	etcdv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha2"
)

// Required-resources keys of what a new backup is checked against.
const (
	// RequiredBackupCredentials: the namespace's S3 credentials Secret.
	RequiredBackupCredentials = "backup-credentials"
	// RequiredNamespaceBackups: the namespace's EtcdSnapshots labelled
	// as tenantkube's, asked for before a schedule's first backup.
	RequiredNamespaceBackups = "backup-namespace-snapshots"
)

// backupRefusal is why a schedule takes no new backup: the reason of
// BackupCurrent and its message ("" for none).
type backupRefusal struct {
	Reason, Message string
}

// backupCredentials asks for the S3 credentials Secret of namespace ns
// and says whether a backup may be written with it: the operator reads
// the Secret from ns, where the tenant reads it too, so only one the
// platform labelled LabelBackupCredentialsFor: ns (its statement that the
// credentials reach only <keyPrefix>/<ns>/) is used. A function cannot
// check what a credential may write; the label is the platform's word.
// arrived is false until Crossplane answered; a PVC destination needs no
// credentials.
func backupCredentials(p *function.Plan, r *function.Request, b *cpinput.EtcdBackup, ns string) (refused *backupRefusal, arrived bool, err error) {
	if b.S3 == nil {
		return nil, true, nil
	}
	name := b.S3.CredentialsSecretName
	p.Require(RequiredBackupCredentials, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: name},
		Namespace: proto.String(ns),
	})
	secrets, arrived, err := function.Required[metav1.PartialObjectMetadata](r, RequiredBackupCredentials)
	if err != nil || !arrived {
		return nil, arrived, err
	}
	prefix := backupLocation(b, ns, "").S3.Key + "/"
	mark := fmt.Sprintf("%s: %s", tkv1alpha1.LabelBackupCredentialsFor, ns)
	what := fmt.Sprintf("no backup is taken: Secret %s/%s (etcd.backup.s3.credentialsSecretName %q)", ns, name, name)
	switch {
	case len(secrets) != 1:
		return &backupRefusal{tkv1alpha1.ReasonBackupCredentialsNotScoped, fmt.Sprintf(
			"%s does not exist: the platform creates it with credentials that reach only %s of bucket %s, labelled %s", what, prefix, b.S3.Bucket, mark)}, true, nil
	default:
		got, ok := secrets[0].Labels[tkv1alpha1.LabelBackupCredentialsFor]
		switch {
		case !ok:
			return &backupRefusal{tkv1alpha1.ReasonBackupCredentialsNotScoped, fmt.Sprintf(
				"%s has no label %s, the platform's mark that its credentials reach only %s of bucket %s", what, mark, prefix, b.S3.Bucket)}, true, nil
		case got != ns:
			return &backupRefusal{tkv1alpha1.ReasonBackupCredentialsNotScoped, fmt.Sprintf(
				"%s is labelled %s: %q, not %q: its credentials are scoped to another namespace", what, tkv1alpha1.LabelBackupCredentialsFor, got, ns)}, true, nil
		}
	}
	return nil, true, nil
}

// deletedClusterBackups asks for the EtcdSnapshots of namespace ns
// labelled as tenantkube's and counts those of deleted clusters: without
// a controller reference, which the garbage collector removes once the
// XR is gone (backupOwner). At least max of them refuse the schedule's
// first backup, so a loop creating and deleting clusters leaves at most
// max-1 plus one cluster's retained backups per cluster alive at once.
// Clusters that have backups are not refused, and nothing is deleted.
func deletedClusterBackups(p *function.Plan, r *function.Request, b *cpinput.EtcdBackup, ns string) (refused *backupRefusal, arrived bool, err error) {
	p.Require(RequiredNamespaceBackups, &fnv1.ResourceSelector{
		ApiVersion: etcdv1alpha2.GroupVersion.String(), Kind: etcdv1alpha2.EtcdSnapshotKind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			function.LabelManagedBy: function.ManagedByTenantkube,
		}}},
		Namespace: proto.String(ns),
	})
	snaps, arrived, err := function.Required[metav1.PartialObjectMetadata](r, RequiredNamespaceBackups)
	if err != nil || !arrived {
		return nil, arrived, err
	}
	var gone []string
	for _, s := range snaps {
		if metav1.GetControllerOfNoCopy(s) == nil {
			gone = append(gone, s.Name)
		}
	}
	if len(gone) < int(b.MaxDeletedClusterBackups) {
		return nil, true, nil
	}
	return &backupRefusal{tkv1alpha1.ReasonTooManyDeletedClusterBackups, fmt.Sprintf(
		"no backup is taken of a new schedule: namespace %s holds %d backups of deleted clusters (EtcdSnapshots without a controller, such as %s), at least etcd.backup.maxDeletedClusterBackups (%d); the platform deletes those it does not keep",
		ns, len(gone), strings.Join(firstSorted(gone, 3), ", "), b.MaxDeletedClusterBackups)}, true, nil
}

// firstSorted is the first n of names in order.
func firstSorted(names []string, n int) []string {
	out := slices.Sorted(slices.Values(names))
	return out[:min(n, len(out))]
}

package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// maxPKISecretBytes and backupPKISecrets: the data bound of one PKI Secret
// a backup carries and how many it carries
// (functions/control-plane/internal/backup).
const (
	maxPKISecretBytes = 16 << 10
	backupPKISecrets  = 5
	// defaultRetention: backups kept per cluster by default
	// (apis/settings/v1alpha1 DefaultBackupRetention).
	defaultRetention = 7
)

// BenchmarkBackupRequestShare reports the protobuf bytes of a
// control-plane request that are backup and restore's own, from the
// render fixtures of test/testdata/control-plane: one observed backup
// (EtcdSnapshot + PKI bundle, per-backup-B, retained 7 times by default),
// the required recipient ConfigMap and S3 credentials Secret and a restore
// bundle (required-B), and the carried PKI Secrets at their bound
// (pki-bound-B: 5 × 16 KiB of data). Beside them the reference request
// (ref-req-B) and what a pipeline step of its own would receive besides
// them: the reference request without its required resources
// (step-req-B), the XR, observed and desired state Crossplane sends every
// step. It measures no time.
func BenchmarkBackupRequestShare(b *testing.B) {
	cp := filepath.Join(RepoRoot(), "test", "testdata", "control-plane")
	observed := fixtureObjects(b, filepath.Join(cp, "observed-etcd-backup", "control-plane.yaml"), "EtcdSnapshot", "EnvironmentConfig")
	required := fixtureObjects(b, filepath.Join(cp, "backup-keys.yaml"), "ConfigMap")
	required = append(required, fixtureObjects(b, filepath.Join(cp, "backup-credentials.yaml"), "Secret")...)
	required = append(required, fixtureObjects(b, filepath.Join(cp, "backup-bundle.yaml"), "EnvironmentConfig")...)
	ref := LoadOrSkip(b, Reference, "control-plane")
	step := proto.Clone(ref).(*fnv1.RunFunctionRequest)
	step.RequiredResources, step.ExtraResources = nil, nil
	for range b.N {
		proto.Size(ref)
	}
	perBackup := proto.Size(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: named(observed)}})
	req := proto.Size(&fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"backup": {Items: required}}})
	b.ReportMetric(float64(perBackup), "per-backup-B")
	b.ReportMetric(float64(defaultRetention*perBackup), "retained-B")
	b.ReportMetric(float64(req), "required-B")
	b.ReportMetric(float64(backupPKISecrets*maxPKISecretBytes), "pki-bound-B")
	b.ReportMetric(float64(proto.Size(ref)), "ref-req-B")
	b.ReportMetric(float64(proto.Size(step)), "step-req-B")
}

// fixtureObjects are the objects of the given kinds in the YAML stream at
// path, as Crossplane sends them.
func fixtureObjects(b *testing.B, path string, kinds ...string) []*fnv1.Resource {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out []*fnv1.Resource
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		o := map[string]any{}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		for _, k := range kinds {
			if o["kind"] == k {
				s, err := structpb.NewStruct(o)
				if err != nil {
					b.Fatalf("%s: %v", path, err)
				}
				out = append(out, &fnv1.Resource{Resource: s})
			}
		}
	}
	return out
}

// named keys rs by a composed-resource name of the same length as the
// function's (backup-<14 digits>, backup-pki-<14 digits>).
func named(rs []*fnv1.Resource) map[string]*fnv1.Resource {
	out := map[string]*fnv1.Resource{}
	for i, r := range rs {
		out[[]string{"backup-20261202183044", "backup-pki-20261202183044"}[i%2]] = r
	}
	return out
}

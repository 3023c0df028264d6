package test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/preview"
	"github.com/tenantkube/tenantkube/internal/render"
)

// readmeYAML matches a ```yaml block of a Markdown file.
var readmeYAML = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestReadmeClaimRenders renders the claim of README.md's "A cluster by
// example" as written (a KubernetesCluster, converted to its XR as
// Crossplane's claim controller does), with the example instance types and
// platform settings (its ingress host lies under <namespace>.<baseDomain>
// of examples/platform-settings.yaml), and checks what the README says of
// it: the XR carries the claim's name and namespace in Crossplane's claim
// labels, md0 autoscales between 1 and 5 (cluster-autoscaler's Cluster API
// annotations), and ingress-nginx serves its host.
func TestReadmeClaimRenders(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	binDir := buildFunctions(t, root, "control-plane", "workers", "addons")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var claim []byte
	for _, m := range readmeYAML.FindAllSubmatch(readme, -1) {
		if bytes.Contains(m[1], []byte("\nkind: KubernetesCluster\n")) {
			claim = m[1]
			break
		}
	}
	if claim == nil {
		t.Fatal("README.md has no ```yaml block with a KubernetesCluster")
	}
	file := filepath.Join(t.TempDir(), "demo.yaml")
	if err := os.WriteFile(file, claim, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	out, err := render.Render(ctx, render.Options{
		Root: root, XR: file, BinDir: binDir, Stderr: &stderr,
		Required: []string{filepath.Join(root, "examples", "instancetypes.yaml"), filepath.Join(root, "examples", "platform-settings.yaml")},
	})
	if err != nil {
		t.Fatalf("render of README.md's claim: %v\n%s", err, stderr.String())
	}
	if err := sharedValidator(t).ValidateYAMLStream(out); err != nil {
		t.Errorf("rendered objects fail the upstream CRD schemas: %v", err)
	}
	objs, err := preview.ReadYAML(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].GetKind() != "XKubernetesCluster" {
		t.Fatalf("first object is a %s, want the XR", objs[0].GetKind())
	}
	var md, ingress *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "MachineDeployment" && o.GetName() == "demo-md0":
			md = o
		case o.GetKind() == "HelmRelease" && o.GetAnnotations()["crossplane.io/composition-resource-name"] == "addon-ingress-nginx":
			ingress = o
		}
	}
	for _, o := range objs[1:] {
		if l := o.GetLabels(); l["crossplane.io/claim-name"] != "demo" || l["crossplane.io/claim-namespace"] != "tenant-demo" {
			t.Errorf("%s %s labelled %v, want the claim's name and namespace", o.GetKind(), o.GetName(), l)
			break
		}
	}
	if md == nil {
		t.Fatal("no MachineDeployment demo-md0")
	}
	a := md.GetAnnotations()
	if a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] != "1" || a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] != "5" {
		t.Errorf("demo-md0 autoscaler annotations %v, want min 1, max 5", a)
	}
	if ingress == nil {
		t.Fatal("no ingress-nginx HelmRelease")
	}
	if !bytes.Contains(out, []byte("host: app.demo.tenant-demo.k8s.example.net\n")) {
		t.Error("output does not route app.demo.tenant-demo.k8s.example.net")
	}
}

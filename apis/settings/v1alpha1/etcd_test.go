package v1alpha1

import (
	"encoding/json"
	"testing"
)

// TestSignerImageCRDDefaultMatchesGo: the generated CRD's default of
// talosCsrSignerImage (the kubebuilder marker) is what Default fills in,
// Cozystack v1.6.0's image
// (packages/apps/kubernetes/images/talos-csr-signer.tag of
// github.com/cozystack/cozystack at 3c780acd).
func TestSignerImageCRDDefaultMatchesGo(t *testing.T) {
	const cozystack = "ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818"
	props := schemaProperties(t)
	var crdDefault string
	if d := props["talosCsrSignerImage"].Default; d != nil {
		_ = json.Unmarshal(d.Raw, &crdDefault)
	}
	in := &Settings{}
	in.Default()
	if crdDefault != cozystack || in.TalosCSRSignerImage != cozystack {
		t.Errorf("talosCsrSignerImage default: CRD %q, Default %q, want %q", crdDefault, in.TalosCSRSignerImage, cozystack)
	}
}

package main

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/talos"
)

// RequiredTalosCA is the required-resource key of the Secret N-talos-ca
// (the Talos CA cert-manager writes for the control-plane step), asked
// for while a node group boots Talos.
const RequiredTalosCA = "talos-ca"

// hasTalosGroup reports whether a node group of spec boots Talos: its os,
// or the platform's defaultWorkerOS when it sets none.
func hasTalosGroup(spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput) bool {
	for _, ng := range spec.NodeGroups {
		os := ng.OS
		if os == "" {
			os = in.DefaultWorkerOS
		}
		if os == v1alpha1.WorkerOSTalos {
			return true
		}
	}
	return false
}

// talosTokens asks, when a node group of spec boots Talos, for the Secret
// N-talos-ca of NS and returns the tokens derived from its private key
// (talos.DeriveTokens, as the workers step derives cluster.token); nil
// when no group boots Talos or the Secret, with a key, is not observed.
func talosTokens(p *function.Plan, r *function.Request, id function.Identity, spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput) (*talos.Tokens, error) {
	if !hasTalosGroup(spec, in) {
		return nil, nil
	}
	p.Require(RequiredTalosCA, &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret",
		Match:     &fnv1.ResourceSelector_MatchName{MatchName: talos.CASecretName(id)},
		Namespace: proto.String(id.Namespace),
	})
	items, _, err := function.Required[corev1.Secret](r, RequiredTalosCA)
	if err != nil {
		return nil, field.InternalError(field.NewPath("requiredResources", RequiredTalosCA),
			fmt.Errorf("cannot decode the Secret %s/%s: %w", id.Namespace, talos.CASecretName(id), err))
	}
	if len(items) != 1 || len(items[0].Data[corev1.TLSPrivateKeyKey]) == 0 {
		return nil, nil
	}
	t := talos.DeriveTokens(items[0].Data[corev1.TLSPrivateKeyKey])
	return &t, nil
}

// keepTalosRelease keeps, while a cluster with a Talos group waits for its
// Talos CA, what was composed of the talos-bootstrap-token release (the
// HelmRelease, its values Secret, its Usage and a managed chart source no
// other release composes) as observed: a CA that is not observed for a
// moment does not uninstall the token. It returns the release's
// status.addons entry: the observed HelmRelease's, else what it waits
// for.
func keepTalosRelease(p *function.Plan, r *function.Request, id function.Identity, in *input.AddonsInput) v1alpha1.AddonStatus {
	release := TalosBootstrapTokenRelease
	names := []string{ComposedReleaseName(release), ComposedValuesSecretName(release), ComposedUsageName(release)}
	src, _ := in.Charts.Source(release)
	if s := managedSource(id, release, src, in); s != nil {
		names = append(names, s.Name)
	}
	composed := map[string]bool{}
	for _, c := range p.Composed {
		composed[c.Name] = true
	}
	for _, n := range names {
		if !composed[n] && r.ObservedExists(n) {
			p.Kept = append(p.Kept, function.Kept{Name: n})
		}
	}
	if r.ObservedExists(ComposedReleaseName(release)) {
		ok, _, msg := observedReady(r, ComposedReleaseName(release))
		return v1alpha1.AddonStatus{Ready: ok, Message: msg}
	}
	return v1alpha1.AddonStatus{Message: fmt.Sprintf("waiting for the Talos CA Secret %s, from which the bootstrap token is derived", talos.CASecretName(id))}
}

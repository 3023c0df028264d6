package main

import (
	"fmt"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Required-resources keys of the objects of the other API that name the
// same cluster N in NS: a claim's composed
// names, OIDC audience and kubeconfig Secret are those of a TenantCluster
// of the same name and namespace, so only one of them may compose.
const (
	// requiredSameNameTenantCluster: the TenantCluster N in NS (asked
	// for by a cluster-scoped XR).
	requiredSameNameTenantCluster = "same-name-tenantcluster"
	// requiredSameNameClaim: the claim KubernetesCluster N in NS (asked
	// for by a TenantCluster, and by a claim's XR for its claim's
	// creationTimestamp).
	requiredSameNameClaim = "same-name-claim"
	// requiredSameNameXR: the XKubernetesCluster N, which names NS in
	// spec.namespace when created without a claim (asked for by a
	// TenantCluster).
	requiredSameNameXR = "same-name-xr"
)

// yields is the name-clash rule: an object created at own gives way to the
// object of the other API with the same N and NS created at other (it gets
// a Fatal result, composes nothing). The one created first composes.
// Within one second (the precision of creationTimestamp) the one that has
// already composed wins: the TenantCluster when tenantClusterComposed (its
// spec.crossplane.resourceRefs is not empty), else the claim API's
// (ownIsClaim: a claim, or an XR created without a claim). Both sides call
// it with the same tenantClusterComposed, so exactly one of them yields.
func yields(own, other time.Time, ownIsClaim, tenantClusterComposed bool) bool {
	own, other = own.Truncate(time.Second), other.Truncate(time.Second)
	if own.Equal(other) {
		return ownIsClaim == tenantClusterComposed
	}
	return other.Before(own)
}

// sameNameObject is what the rule reads of a required object.
type sameNameObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Namespace  string `json:"namespace"`
		Crossplane struct {
			ResourceRefs []struct{} `json:"resourceRefs"`
		} `json:"crossplane"`
	} `json:"spec"`
}

// composed reports whether o, a TenantCluster, has composed anything.
func (o *sameNameObject) composed() bool { return len(o.Spec.Crossplane.ResourceRefs) > 0 }

// ofClaim reports whether the observed XR is a claim's (claim labels on
// a cluster-scoped XR).
func ofClaim(t *function.Cluster, r *function.Request) bool {
	return !t.Namespaced && r.CompositeString("metadata", "labels", function.LabelClaimName) != ""
}

// otherAPI is a kind of the other API whose object named N may share t's
// N and NS, under its required-resources key.
type otherAPI struct {
	key, kind, namespace string
}

// otherAPIs are the kinds of the other API t asks for: a TenantCluster the
// claim KubernetesCluster N in NS and the XKubernetesCluster N; a
// cluster-scoped XR the TenantCluster N in NS.
func otherAPIs(t *function.Cluster) []otherAPI {
	if t.Namespaced {
		return []otherAPI{
			{requiredSameNameClaim, tkv1alpha1.ClaimKind, t.ID.Namespace},
			{requiredSameNameXR, tkv1alpha1.CompositeKind, ""},
		}
	}
	return []otherAPI{{requiredSameNameTenantCluster, tkv1alpha1.NamespacedKind, t.ID.Namespace}}
}

// requireSameName asks for the objects of the other API that may share
// t's N and NS (otherAPIs). The Configuration package installs every XRD,
// so each kind asked for has a CRD (Crossplane fails the composition of a
// function requiring a kind without one). A claim's XR asks for its claim too: the claim is what the tenant created,
// its XR comes after it (possibly a second later), so the claim's
// creationTimestamp is the one compared.
func requireSameName(p *function.Plan, t *function.Cluster, r *function.Request) {
	byName := func(kind, ns string) *fnv1.ResourceSelector {
		s := &fnv1.ResourceSelector{ApiVersion: tkv1alpha1.GroupVersion.String(), Kind: kind,
			Match: &fnv1.ResourceSelector_MatchName{MatchName: t.ID.Name}}
		if ns != "" {
			s.Namespace = proto.String(ns)
		}
		return s
	}
	for _, o := range otherAPIs(t) {
		p.Require(o.key, byName(o.kind, o.namespace))
	}
	if ofClaim(t, r) {
		p.Require(requiredSameNameClaim, byName(tkv1alpha1.ClaimKind, t.ID.Namespace))
	}
}

// nameClash applies yields to t and the objects requireSameName asked for.
// It returns a *field.Error on metadata.name naming N and the object
// created first, or nil: also while a requirement has not arrived or a
// creationTimestamp is missing, so nothing is Fatal on a guess. The error
// is a required object that does not decode.
func nameClash(t *function.Cluster, r *function.Request) (*field.Error, error) {
	read := func(key string) ([]*sameNameObject, bool, error) {
		items, arrived, err := function.Required[sameNameObject](r, key)
		if err != nil {
			return nil, true, fmt.Errorf("cannot decode the required resource %s: %w", key, err)
		}
		return items, arrived, nil
	}
	this, ownStamp := tkv1alpha1.NamespacedKind, r.CompositeString("metadata", "creationTimestamp")
	if !t.Namespaced {
		this = "XR " + tkv1alpha1.CompositeKind
	}
	if ofClaim(t, r) {
		claims, arrived, err := read(requiredSameNameClaim)
		if err != nil || !arrived {
			return nil, err
		}
		this = "claim " + tkv1alpha1.ClaimKind
		if len(claims) == 1 { // none: the claim is gone, its XR with it
			ownStamp = ""
			if c := claims[0].CreationTimestamp; !c.IsZero() {
				ownStamp = c.UTC().Format(time.RFC3339)
			}
		}
	}
	own, err := time.Parse(time.RFC3339, ownStamp)
	if err != nil {
		return nil, nil
	}
	for _, api := range otherAPIs(t) {
		key := api.key
		items, arrived, err := read(key)
		if err != nil || !arrived {
			return nil, err
		}
		for _, o := range items {
			if key == requiredSameNameXR && (o.Labels[function.LabelClaimName] != "" || o.Spec.Namespace != t.ID.Namespace) {
				continue // a claim's XR (the claim is asked for), or another namespace's
			}
			tcComposed := r.CompositeComposed() // this TenantCluster's
			if !t.Namespaced {
				tcComposed = o.composed() // the required TenantCluster's
			}
			if o.CreationTimestamp.IsZero() || !yields(own, o.CreationTimestamp.Time, !t.Namespaced, tcComposed) {
				continue
			}
			other := fmt.Sprintf("the %s %s/%s", o.Kind, t.ID.Namespace, o.Name)
			switch key {
			case requiredSameNameClaim:
				other = fmt.Sprintf("the claim %s %s/%s", o.Kind, t.ID.Namespace, o.Name)
			case requiredSameNameXR:
				other = fmt.Sprintf("the %s %s (an XR without a claim, spec.namespace %s)", o.Kind, o.Name, t.ID.Namespace)
			}
			when := "was created first"
			switch {
			case !own.Truncate(time.Second).Equal(o.CreationTimestamp.Truncate(time.Second)):
			case tcComposed:
				when = "was created in the same second and has already composed, which wins a tie"
			default:
				when = "was created in the same second, and the claim API wins a tie while the TenantCluster has composed nothing"
			}
			return field.Invalid(field.NewPath("metadata", "name"), t.ID.Name, fmt.Sprintf(
				"%s, created %s, names the same cluster in namespace %s and %s (this %s: %s): both would compose the same objects, only the first does; rename or delete this %s",
				other, o.CreationTimestamp.UTC().Format(time.RFC3339), t.ID.Namespace, when, this, own.UTC().Format(time.RFC3339), this)), nil
		}
	}
	return nil, nil
}

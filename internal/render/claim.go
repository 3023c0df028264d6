package render

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/claim"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/composite"
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// KindError is a file whose object is none of the kinds render takes.
type KindError struct {
	File, APIVersion, Kind string
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%s: apiVersion %q kind %q is not an object render takes: want apiVersion %s with kind %s (the XR), %s (its claim, converted to the XR as Crossplane does), %s (namespaced) or %s",
		e.File, e.APIVersion, e.Kind, v1alpha1.GroupVersion, v1alpha1.CompositeKind, v1alpha1.ClaimKind, v1alpha1.NamespacedKind, v1alpha1.TenantKind)
}

// checkKind refuses an object in file that is none of the tenantkube kinds
// the default Compositions take.
func checkKind(file string) error {
	raw, err := os.ReadFile(file) //nolint:gosec // the caller's file
	if err != nil {
		return err
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	kinds := []string{v1alpha1.CompositeKind, v1alpha1.ClaimKind, v1alpha1.NamespacedKind, v1alpha1.TenantKind}
	if obj.APIVersion != v1alpha1.GroupVersion.String() || !slices.Contains(kinds, obj.Kind) {
		return &KindError{File: file, APIVersion: obj.APIVersion, Kind: obj.Kind}
	}
	return nil
}

// claimAsXR checks o.XR's kind when the Composition and XRD are the
// defaults, and when it holds a claim of the XRD in o.XRD checks it against
// the claim's CRD (unless SkipXRValidation) and writes the XR Crossplane
// makes of it to a temporary file, which o.XR then names until done is
// called.
func (o *Options) claimAsXR(defaults bool) (done func(), err error) {
	done = func() {}
	if defaults {
		if err := checkKind(o.XR); err != nil {
			return done, err
		}
	}
	if o.XRD == "" {
		return done, nil
	}
	raw, err := os.ReadFile(o.XRD)
	if err != nil {
		return done, err
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(raw, xrd); err != nil {
		return done, fmt.Errorf("%s: %w", o.XRD, err)
	}
	if raw, err = os.ReadFile(o.XR); err != nil {
		return done, err
	}
	cm := claim.New()
	if err := yaml.Unmarshal(raw, &cm.Object); err != nil {
		return done, fmt.Errorf("%s: %w", o.XR, err)
	}
	if xrd.Spec.ClaimNames == nil || cm.GetKind() != xrd.Spec.ClaimNames.Kind {
		return done, nil
	}
	if !o.SkipXRValidation {
		if err := ValidateClaim(o.XRD, o.XR); err != nil {
			return done, err
		}
	}
	xr, err := ClaimToXR(cm, xrd)
	if err != nil {
		return done, fmt.Errorf("%s: %w", o.XR, err)
	}
	out, err := yaml.Marshal(xr.Object)
	if err != nil {
		return done, err
	}
	dir, err := os.MkdirTemp("", "tenantkube-claim-")
	if err != nil {
		return done, err
	}
	done = func() { _ = os.RemoveAll(dir) }
	f := filepath.Join(dir, "xr-of-"+filepath.Base(o.XR))
	if err := os.WriteFile(f, out, 0o600); err != nil {
		return done, err
	}
	o.XR = f
	return done, nil
}

// alphanums is the API server's alphabet of generated name suffixes
// (k8s.io/apimachinery pkg/util/rand/rand.go:83).
const alphanums = "bcdfghjklmnpqrstvwxz2456789"

// ClaimToXR is the XR Crossplane v2.4's claim controller creates for cm,
// a claim of xrd (server-side apply syncer, the default:
// internal/controller/apiextensions/claim/syncer_ssa.go:73-164): named
// spec.resourceRef.name, else "<claim>-" and five characters of
// alphanums (Crossplane picks them at random; here they come from the
// claim's namespace and name, so a render is deterministic); the claim's
// labels and annotations but *.kubernetes.io and *.k8s.io keys, plus
// crossplane.io/claim-name and claim-namespace; the claim's spec without
// the claim's own fields and the XR machinery
// (xcrd.CompositeResourceClaimSpecProps, CompositeResourceSpecProps),
// except the composition fields of xcrd.PropagateSpecProps; and
// spec.claimRef. It also carries crossplane.io/composite: <XR name>, which
// the XR controller adds before composing
// (internal/controller/apiextensions/composite/api.go:461).
func ClaimToXR(cm *claim.Unstructured, xrd *xpv1.CompositeResourceDefinition) (*composite.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(cm.GetAPIVersion())
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", cm.GetAPIVersion(), err)
	}
	if gv.Group != xrd.Spec.Group {
		return nil, fmt.Errorf("apiVersion %q: want group %s", cm.GetAPIVersion(), xrd.Spec.Group)
	}
	if cm.GetName() == "" || cm.GetNamespace() == "" {
		return nil, fmt.Errorf("%s: a claim needs metadata.name and metadata.namespace (got %q, %q)", cm.GetKind(), cm.GetName(), cm.GetNamespace())
	}
	spec, ok := cm.Object["spec"].(map[string]any)
	if !ok {
		spec = map[string]any{}
	}

	xr := composite.New(composite.WithGroupVersionKind(gv.WithKind(xrd.Spec.Names.Kind)), composite.WithSchema(composite.SchemaLegacy))
	name := ""
	if ref := cm.GetResourceReference(); ref != nil {
		name = ref.Name
	}
	if name == "" {
		sum := sha256.Sum256([]byte(cm.GetNamespace() + "/" + cm.GetName()))
		var b strings.Builder
		for _, c := range sum[:5] {
			b.WriteByte(alphanums[int(c)%len(alphanums)])
		}
		name = cm.GetName() + "-" + b.String()
	}
	xr.SetName(name)
	if ann := withoutReserved(cm.GetAnnotations()); len(ann) > 0 {
		meta.AddAnnotations(xr, ann)
	}
	meta.AddLabels(xr, withoutReserved(cm.GetLabels()))
	meta.AddLabels(xr, map[string]string{
		xcrd.LabelKeyClaimName:             cm.GetName(),
		xcrd.LabelKeyClaimNamespace:        cm.GetNamespace(),
		xcrd.LabelKeyNamePrefixForComposed: name,
	})

	strip := xcrd.CompositeResourceClaimSpecProps(nil)
	maps.Copy(strip, xcrd.CompositeResourceSpecProps(xpv1.CompositeResourceScopeLegacyCluster, nil))
	for _, f := range xcrd.PropagateSpecProps {
		delete(strip, f)
	}
	xrSpec := make(map[string]any, len(spec))
	for k, v := range spec {
		if _, drop := strip[k]; !drop {
			xrSpec[k] = v
		}
	}
	xr.Object["spec"] = xrSpec
	xr.SetClaimReference(cm.GetReference())
	return xr, nil
}

// withoutReserved is m without the keys whose prefix ends in
// kubernetes.io or k8s.io (claim/object.go:32-41).
func withoutReserved(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		p, _, _ := strings.Cut(k, "/")
		if strings.HasSuffix(p, "kubernetes.io") || strings.HasSuffix(p, "k8s.io") {
			continue
		}
		out[k] = v
	}
	return out
}

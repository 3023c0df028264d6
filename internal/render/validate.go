package render

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/schema"
)

// XRError is an XR the API server would reject: each problem with its
// field path, as the CRD Crossplane derives from the XRD validates it.
type XRError struct {
	// File is the XR's file.
	File string
	// Kind and Name of the XR.
	Kind, Name string
	// Errs lists every problem.
	Errs field.ErrorList
}

func (e *XRError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %q is invalid (the API server would reject it):", e.File, e.Kind, e.Name)
	for _, fe := range e.Errs {
		b.WriteString("\n  - ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// ValidateXR checks the XR in xrFile as the API server checks it on create:
// against the CustomResourceDefinition Crossplane derives from the XRD in
// xrdFile (crossplane-runtime's xcrd, as Crossplane core does), with
// unknown fields reported rather than pruned, defaults applied, then the
// OpenAPI schema and the CEL rules (internal/schema, on the apiextensions
// apiserver's libraries). It returns an *XRError listing every problem.
func ValidateXR(xrdFile, xrFile string) error {
	return validateAgainst(xrdFile, xrFile, xcrd.ForCompositeResource)
}

// ValidateClaim checks the claim in claimFile as ValidateXR checks an XR,
// against the claim's CustomResourceDefinition Crossplane derives from the
// XRD (xcrd.ForCompositeResourceClaim).
func ValidateClaim(xrdFile, claimFile string) error {
	return validateAgainst(xrdFile, claimFile, xcrd.ForCompositeResourceClaim)
}

func validateAgainst(xrdFile, xrFile string, derive func(*xpv1.CompositeResourceDefinition) (*extv1.CustomResourceDefinition, error)) error {
	raw, err := os.ReadFile(xrdFile) //nolint:gosec // the caller's file
	if err != nil {
		return err
	}
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, xrd); err != nil {
		return fmt.Errorf("%s: %w", xrdFile, err)
	}
	crd, err := derive(xrd)
	if err != nil {
		return fmt.Errorf("%s: %w", xrdFile, err)
	}
	v, err := schema.FromCRDs(xrdFile, crd)
	if err != nil {
		return err
	}
	if raw, err = os.ReadFile(xrFile); err != nil { //nolint:gosec // the caller's file
		return err
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", xrFile, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	err = v.Validate(u)
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		return &XRError{File: xrFile, Kind: u.GetKind(), Name: u.GetName(), Errs: ve.Errs}
	}
	return err
}

// fatalResult finds a Fatal result in crossplane's error: `pipeline step
// "<step>" returned a fatal result: <message>`.
var fatalResult = regexp.MustCompile(`pipeline step "([^"]+)" returned a fatal result: `)

// Message returns what `crossplane composition render` reported on stderr,
// without the prefixes each layer of the CLI and the engine adds: for a
// Fatal result `step <step>: <the function's message>`, else crossplane's
// last error with its repeated "crossplane: error: ..." prefixes removed.
func Message(stderr string) string {
	s := strings.TrimSpace(stderr)
	if locs := fatalResult.FindAllStringSubmatchIndex(s, -1); len(locs) > 0 {
		l := locs[len(locs)-1]
		return "step " + s[l[2]:l[3]] + ": " + strings.TrimSpace(s[l[1]:])
	}
	if i := strings.LastIndex(s, "\ncrossplane: error: "); i >= 0 {
		s = s[i+1:]
	}
	for {
		_, rest, ok := strings.Cut(s, "crossplane: error: ")
		if !ok {
			return s
		}
		s = rest
	}
}

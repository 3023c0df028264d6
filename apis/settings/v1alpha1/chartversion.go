package v1alpha1

import (
	"fmt"
	"regexp"

	"github.com/Masterminds/semver/v3"
	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of a chart source's versions.
const (
	// MaxEarlierVersions is the most entries of ChartSource.EarlierVersions.
	MaxEarlierVersions = 8
	// MaxChartVersionLength bounds a version or tag: an OCI tag's 128
	// characters (distribution/reference v0.6.0 regexp.go:68).
	MaxChartVersionLength = 128
)

// ociTag is an OCI tag, anchored (distribution/reference v0.6.0
// regexp.go:39 TagRegexp, of tag at :68).
var ociTag = regexp.MustCompile(`^` + reference.TagRegexp.String() + `$`)

// checkVersion checks v, a version of a source of kind: for a HelmRepository
// a chart version or range source-controller reads as a Masterminds semver
// constraint (fluxcd/source-controller
// internal/helm/repository/chart_repository.go:211-221), for an
// OCIRepository a tag; at most MaxChartVersionLength characters.
func checkVersion(p *field.Path, kind SourceKind, v string) *field.Error {
	if len(v) > MaxChartVersionLength {
		return field.TooLong(p, "", MaxChartVersionLength)
	}
	switch kind {
	case KindHelmRepository:
		if _, err := semver.NewConstraint(v); err != nil {
			return field.Invalid(p, v, "must be a chart version or semver range: "+err.Error())
		}
	case KindOCIRepository:
		if !ociTag.MatchString(v) {
			return field.Invalid(p, v, "must be an OCI tag: a letter, digit or _, then up to 127 letters, digits, _, . or -")
		}
	}
	return nil
}

// validateVersions checks s.Version (when set) and every entry of
// s.EarlierVersions, each with checkVersion; earlier versions are for a
// HelmRepository or a managed OCIRepository only (the others carry no
// version the function writes), at most MaxEarlierVersions, none empty,
// twice, or the version itself. It returns every problem.
func (s *ChartSource) validateVersions(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Version != "" {
		if err := checkVersion(p.Child("version"), s.Kind, s.Version); err != nil {
			errs = append(errs, err)
		}
	}
	ep := p.Child("earlierVersions")
	if len(s.EarlierVersions) == 0 {
		return errs
	}
	if s.Kind == KindExternalArtifact || s.Kind == KindOCIRepository && s.URL == "" {
		return append(errs, field.Forbidden(ep, fmt.Sprintf("a %s source without url carries no version of the function's", s.Kind)))
	}
	if n := len(s.EarlierVersions); n > MaxEarlierVersions {
		return append(errs, field.TooMany(ep, n, MaxEarlierVersions))
	}
	seen := map[string]bool{}
	for i, v := range s.EarlierVersions {
		switch {
		case v == "":
			errs = append(errs, field.Required(ep.Index(i), "an earlier version"))
		case v == s.Version:
			errs = append(errs, field.Invalid(ep.Index(i), v, "is the version itself"))
		case seen[v]:
			errs = append(errs, field.Duplicate(ep.Index(i), v))
		default:
			if err := checkVersion(ep.Index(i), s.Kind, v); err != nil {
				errs = append(errs, err)
			}
		}
		seen[v] = true
	}
	return errs
}

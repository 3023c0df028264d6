package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NodeHealthCheck tunes the MachineHealthCheck of every node group (the
// Cozystack chart's nodeHealthCheck).
type NodeHealthCheck struct {
	// Most unhealthy machines of a node group for which remediation still
	// runs: a whole number such as 1 or a whole percentage such as 50% of
	// the group's machines, rounded down (50% of one machine is 0: a group
	// of one is remediated only with an integer). Machines still starting
	// count as unhealthy. 0 turns remediation off.
	// +kubebuilder:default="50%"
	// +kubebuilder:validation:MaxLength=8
	// +optional
	MaxUnhealthy IntOrPercent `json:"maxUnhealthy,omitempty"`

	// How long a machine may go without a node, counted from its creation
	// or, if later, its VM's readiness, before it is remediated.
	// +kubebuilder:default="20m"
	// +kubebuilder:validation:MaxLength=24
	// +optional
	NodeStartupTimeout Duration `json:"nodeStartupTimeout,omitempty"`

	// How long a node may be Ready=Unknown (its kubelet unheard) before
	// its machine is remediated: the VM is deleted and replaced.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:MaxLength=24
	// +optional
	ReadyUnknownTimeout Duration `json:"readyUnknownTimeout,omitempty"`

	// How long a node may be Ready=False (a registered node without a
	// working CNI is) before its machine is remediated.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:MaxLength=24
	// +optional
	ReadyFalseTimeout Duration `json:"readyFalseTimeout,omitempty"`
}

// Duration is a length of time as Go's time.ParseDuration reads it,
// narrowed to whole hours, minutes and seconds in that order ("20m",
// "1h30m", "90s", "20m0s"): the MachineHealthCheck counts whole seconds,
// and cluster-autoscaler ignores a value time.ParseDuration refuses. ""
// is the default (or, in a node group, the cluster-wide value).
type Duration string

// IntOrPercent is a number of machines ("1") or a whole percentage of a
// node group's machines ("50%"). "" is the default (or, in a node group,
// the cluster-wide value).
type IntOrPercent string

// Bounds of the health-check and provisioning durations (the XRD's rules
// carry the same). CAPI's webhook refuses a node startup timeout below 30s
// (other than 0, which turns the check off).
const (
	MinNodeStartupTimeout Duration = "30s"
	MinTimeout            Duration = "1s"
	MaxTimeout            Duration = "24h"
)

// Messages of the health-check rules; the XRD's rules (fieldrules.go) say
// the same.
const (
	msgDurationForm = "must be whole hours, minutes and seconds in that order, such as 20m, 1h30m or 90s"
	msgIntOrPercent = "must be a whole number of machines from 0 to 5000 such as 1, or a whole percentage from 0% to 100% such as 50%"
)

var (
	// durationPattern is a Duration: at most 5 digits a unit, so no value
	// overflows time.ParseDuration.
	durationPattern = regexp.MustCompile(durationForm)
	// machinesPattern and percentPatternWhole are the two forms of an
	// IntOrPercent, without leading zeros.
	machinesPattern     = regexp.MustCompile(machinesForm)
	percentPatternWhole = regexp.MustCompile(percentForm)
)

// Parse reads a non-empty duration at path and checks it is within
// [lo, hi]. It returns an error naming path and the text otherwise.
func (d Duration) Parse(path *field.Path, lo, hi Duration) (time.Duration, *field.Error) {
	s := string(d)
	v, err := time.ParseDuration(s)
	if err != nil || !durationPattern.MatchString(s) {
		return 0, field.Invalid(path, s, msgDurationForm)
	}
	if v < lo.mustParse() || v > hi.mustParse() {
		return 0, field.Invalid(path, s, fmt.Sprintf("must be at least %s and at most %s", lo, hi))
	}
	return v, nil
}

// Parse reads a non-empty IntOrPercent at path: an integer in
// [0, MaxReplicasLimit] or a percentage in [0%, 100%], as CAPI's
// MachineHealthCheck remediation.triggerIf.unhealthyLessThanOrEqualTo
// takes it (an integer, or a string ending in %).
func (v IntOrPercent) Parse(path *field.Path) (intstr.IntOrString, *field.Error) {
	s := string(v)
	switch {
	case percentPatternWhole.MatchString(s):
		return intstr.FromString(s), nil
	case machinesPattern.MatchString(s):
		n, _ := strconv.Atoi(s)
		if n <= MaxReplicasLimit {
			return intstr.FromInt32(int32(n)), nil
		}
	}
	return intstr.IntOrString{}, field.Invalid(path, s, msgIntOrPercent)
}

// Validate returns every problem of the health-check settings at path
// (spec.nodeHealthCheck), defaulted.
func (h NodeHealthCheck) Validate(path *field.Path) field.ErrorList {
	return nodeHealthCheckRules.check(h, path)
}

// validateHealthOverrides returns the problems of a node group's
// overrides of the health check at path (spec.nodeGroups[G]); "" keeps
// the cluster-wide value.
func (g NodeGroup) validateHealthOverrides(path *field.Path) field.ErrorList {
	return nodeGroupHealthRules.check(g, path)
}

// mustParse is a bound's value.
func (d Duration) mustParse() time.Duration {
	v, err := time.ParseDuration(string(d))
	if err != nil {
		panic(err)
	}
	return v
}

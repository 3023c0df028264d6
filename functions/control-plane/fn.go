package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// Function is the gRPC server of the control-plane composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
	// now is the clock that places backups in their schedule (nil:
	// function.Clock).
	now func() time.Time
}

// RunFunction adds the tenant cluster's control plane (plan) to the desired
// state. Bad input is a Fatal result naming the field; nothing earlier
// steps put in the desired state is dropped.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, function.ResponseTTL)
	r := function.NewRequest(req)
	in, settings, err := readInput(r, rsp)
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	t, err := r.Cluster()
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	// The APIs of all three steps: the first step stops the pipeline
	// before anything is applied.
	needs := function.APINeeds{EtcdOperator: string(in.Etcd.Operator), Talos: len(talosNodeGroups(t.Spec, in)) > 0}
	if err := function.RequirePlatformAPIs(r, rsp, function.NeededAPIs(needs)); err != nil {
		return function.Fatal(rsp, err), nil
	}
	function.RequireNamespace(rsp, t.ID)
	hosts, err := r.TenantHostPolicy(t.ID, hostSettings(in))
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	p, errs := plan(t, in, hosts, r, function.Clock(f.now))
	if len(errs) > 0 {
		return function.FatalList(rsp, attributeAll(settings, errs)), nil
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err), nil
	}
	return rsp, nil
}

// attributeAll names in the EnvironmentConfig each input field of errs
// whose value came from there (platform.Settings.Attribute).
func attributeAll(settings platform.Settings, errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		out = appendError(out, settings.Attribute(e))
	}
	return out
}

// readInput reads the step's input, merges the platform settings over it
// (platform.Functions), defaults and validates it. Its error names the field,
// in the EnvironmentConfig when the value came from there.
func readInput(r *function.Request, rsp *fnv1.RunFunctionResponse) (*cpinput.ControlPlaneInput, platform.Settings, error) {
	in := &cpinput.ControlPlaneInput{}
	if err := r.Input(in); err != nil {
		return nil, platform.Settings{}, fmt.Errorf("cannot read the control-plane function input: %w", err)
	}
	settings, err := platform.Functions.Read(r, rsp, in)
	if err != nil {
		return nil, settings, err
	}
	in.Default()
	if err := validateInput(in); err != nil {
		return nil, settings, settings.Attribute(err)
	}
	return in, settings, nil
}

// hostSettings are the input's host settings; a tenant API server has one
// name, never a wildcard.
func hostSettings(in *cpinput.ControlPlaneInput) function.HostSettings {
	return function.HostSettings{BaseDomain: in.BaseDomain, AllowedSuffixes: in.AllowedHostSuffixes, TenantHostSuffixes: in.AllowedTenantHostSuffixes}
}

// checkUpgrade enforces the upgrade rule (docs/tenant-guide.md, Versions) against the observed
// control plane: spec.version may not go below the minor last asked for
// (kubeadm cannot downgrade) nor more than one minor above the minor running
// (or last asked for, before the control plane reports a version). It
// returns a *field.Error saying which versions are allowed next.
func checkUpgrade(requested string, observed observedControlPlane) error {
	desired, errD := versions.MinorOf(observed.Desired)
	running, errR := versions.MinorOf(observed.Running)
	switch {
	case errD != nil && errR != nil:
		return nil // nothing observed (or unreadable): nothing to compare with
	case errD != nil:
		desired = running
	case errR != nil:
		running = desired
	}
	low, high := desired, min(desired, running)+1
	want, err := versions.MinorOf(requested)
	if err != nil {
		return field.Invalid(field.NewPath("spec", "version"), requested, err.Error())
	}
	if want >= low && want <= high {
		return nil
	}
	var allowed []string
	for m := low; m <= high; m++ {
		if _, err := versions.Lookup(fmt.Sprintf("v1.%d", m)); err == nil {
			allowed = append(allowed, fmt.Sprintf("v1.%d", m))
		}
	}
	state := "asked for " + observed.Desired
	if observed.Running != "" {
		state = "runs " + observed.Running
		if observed.Desired != "" && observed.Desired != observed.Running {
			state += " (upgrading to " + observed.Desired + ")"
		}
	}
	why := "downgrades are not supported"
	if want > high {
		why = "minor versions cannot be skipped (kubeadm upgrades one minor at a time)"
	}
	return field.Invalid(field.NewPath("spec", "version"), requested,
		fmt.Sprintf("the control plane %s; %s; allowed next: %s", state, why, strings.Join(allowed, " or ")))
}

// validateInput checks the platform team's input: every problem of the
// settings (settings.Settings.Validate) and of the OIDC issuer, which the
// tenant API servers' authentication configuration is built from. It
// returns an aggregate of *field.Error under "input".
func validateInput(in *cpinput.ControlPlaneInput) error {
	errs := in.Settings.Validate()
	p := field.NewPath("input", "oidc")
	if err := validateIssuer(p, in.OIDC, hostSettings(in)); err != nil {
		var fe *field.Error
		if !errors.As(err, &fe) {
			fe = field.InternalError(p, err)
		}
		errs = append(errs, fe)
	}
	return errs.ToAggregate()
}

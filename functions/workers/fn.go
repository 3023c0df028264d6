package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

// Function is the gRPC server of this composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
	// now is the clock hibernation schedules and maintenance windows are
	// read on (nil:
	// function.Clock).
	now func() time.Time
}

// RunFunction composes the worker node groups of a tenant cluster: it reads the
// input and the XR, plans, and writes the
// plan. Bad input gives a Fatal result naming every bad field, and
// WorkersReady=False.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, function.ResponseTTL)
	r := function.NewRequest(req)
	in, err := readInput(r, rsp)
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	t, err := r.Cluster()
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	p, errs := planAt(t, in, r, function.Clock(f.now))
	if len(errs) > 0 {
		function.FatalList(rsp, errs)
		response.ConditionFalse(rsp, v1alpha1.ConditionWorkersReady, fatalReason(errs)).
			WithMessage(errs.ToAggregate().Error()).TargetCompositeAndClaim()
		return rsp, nil
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err), nil
	}
	return rsp, nil
}

// fatalReason is the WorkersReady reason of a Fatal response:
// InstanceTypeNotFound when a node group's instance type does not exist,
// MinimumExceedsQuota when the capacity pre-flight rejects the cluster,
// InvalidSpec otherwise.
func fatalReason(errs field.ErrorList) string {
	for _, e := range errs {
		if strings.Contains(e.Detail, v1alpha1.ReasonInstanceTypeNotFound) {
			return v1alpha1.ReasonInstanceTypeNotFound
		}
		if strings.Contains(e.Detail, v1alpha1.ReasonMinimumExceedsQuota) {
			return v1alpha1.ReasonMinimumExceedsQuota
		}
	}
	return v1alpha1.ReasonInvalidSpec
}

// readInput decodes the step's WorkersInput (an absent input is the empty
// one), merges the platform settings over it (requesting them in rsp), and
// applies and validates its defaults. It returns the decoding or validation
// error, naming the EnvironmentConfig's field when the value came from it.
func readInput(r *function.Request, rsp *fnv1.RunFunctionResponse) (*inputv1alpha1.WorkersInput, error) {
	in := &inputv1alpha1.WorkersInput{}
	if err := r.Input(in); err != nil {
		return nil, fmt.Errorf("cannot decode the function input: %w", err)
	}
	settings, err := platform.Functions.Read(r, rsp, in)
	if err != nil {
		return nil, err
	}
	if !settings.Arrived {
		// Crossplane calls again once it has fetched the platform
		// settings, and only that call counts; a Fatal result from a
		// default now would end the pipeline before they arrive.
		in.AllowSerialConsoleLog = true
		in.SettingsPending = true
		f := &in.HealthCheckFloors
		for _, d := range []struct {
			floor *string
			least v1alpha1.Duration
		}{
			{&f.NodeStartupTimeout, v1alpha1.MinNodeStartupTimeout}, {&f.ReadyUnknownTimeout, v1alpha1.MinTimeout},
			{&f.ReadyFalseTimeout, v1alpha1.MinTimeout}, {&f.MaxNodeProvisionTime, v1alpha1.MinTimeout},
		} {
			if *d.floor == "" {
				*d.floor = string(d.least)
			}
		}
	}
	in.Default()
	if err := in.Validate(); err != nil {
		return nil, settings.Attribute(err)
	}
	return in, nil
}

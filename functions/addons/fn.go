package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Function is the gRPC server of this composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
}

// Condition the function sets on the XR and the claim (SPEC §2).
const (
	ConditionAddonsReady = "AddonsReady"
	// ReasonAllReady is AddonsReady=True's reason.
	ReasonAllReady = "AllBaseAddonsReady"
	// ReasonHelmReleaseFailed is AddonsReady=False's reason; the message
	// names each base release that is not Ready: "<release>: <message>".
	ReasonHelmReleaseFailed = "HelmReleaseFailed"
)

// RunFunction adds the tenant's add-on HelmReleases (and their managed chart
// sources and, for a Proxied ingress-nginx with hosts, the management
// Service and Ingress) to the desired state it receives, keeping what earlier
// steps put there. It reports per-add-on readiness in the XR's
// status.addons and the AddonsReady condition. Bad input is a Fatal result
// whose message names the field (SPEC §6); nothing is applied then.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	t, err := function.ReadTenant(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	in := &input.AddonsInput{}
	if req.GetInput() != nil {
		if err := request.GetInput(req, in); err != nil {
			response.Fatal(rsp, fmt.Errorf("cannot decode the function input: %w", err))
			return rsp, nil
		}
	}
	in.Default()
	if err := in.Validate(); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	objs, err := Render(t.ID, t.Spec, in)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}

	status := map[string]v1alpha1.AddonStatus{}
	var notReady []string
	for _, o := range objs {
		ready := fnv1.Ready_READY_TRUE
		switch o.Obj.(type) {
		case interface{ GetConditions() []metav1.Condition }:
			ok, msg := observedReady(req, o.Name)
			if !ok {
				ready = fnv1.Ready_READY_FALSE
			}
			if o.Release != "" {
				st := v1alpha1.AddonStatus{Ready: ok}
				if !ok {
					st.Message = msg
					if o.Base {
						notReady = append(notReady, o.Release+": "+msg)
					}
				}
				status[o.Release] = st
			}
		}
		if err := function.SetDesired(rsp, o.Name, o.Obj, ready); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
	}

	if err := setStatus(req, rsp, status); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if len(notReady) == 0 {
		response.ConditionTrue(rsp, ConditionAddonsReady, ReasonAllReady).TargetCompositeAndClaim()
	} else {
		sort.Strings(notReady)
		response.ConditionFalse(rsp, ConditionAddonsReady, ReasonHelmReleaseFailed).
			WithMessage(strings.Join(notReady, "; ")).TargetCompositeAndClaim()
	}
	return rsp, nil
}

// Messages of add-ons whose HelmRelease has no Ready condition yet.
const (
	msgNotObserved = "HelmRelease not created yet"
	msgNoCondition = "waiting for the HelmRelease's Ready condition"
	msgUnreadable  = "observed HelmRelease unreadable"
	msgNotReady    = "not ready"
)

// observedReady reads the Ready condition of the observed composed resource
// name (a Flux object): ready when status True, else false and the
// condition's message (or why there is none).
func observedReady(req *fnv1.RunFunctionRequest, name string) (bool, string) {
	var obs struct {
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
		} `json:"status"`
	}
	found, err := function.ObservedInto(req, name, &obs)
	switch {
	case !found:
		return false, msgNotObserved
	case err != nil:
		return false, msgUnreadable
	}
	for _, c := range obs.Status.Conditions {
		if c.Type != "Ready" {
			continue
		}
		if c.Status == metav1.ConditionTrue {
			return true, ""
		}
		if c.Message != "" {
			return false, c.Message
		}
		if c.Reason != "" {
			return false, c.Reason
		}
		return false, msgNotReady
	}
	return false, msgNoCondition
}

// setStatus writes status.addons into the desired composite resource,
// keeping everything earlier steps set there.
func setStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, status map[string]v1alpha1.AddonStatus) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot read the desired composite resource: %w", err)
	}
	m := map[string]any{}
	for r, s := range status {
		e := map[string]any{"ready": s.Ready}
		if s.Message != "" {
			e["message"] = s.Message
		}
		m[r] = e
	}
	if err := dxr.Resource.SetValue("status.addons", m); err != nil {
		return fmt.Errorf("cannot set status.addons: %w", err)
	}
	return response.SetDesiredCompositeResource(rsp, dxr)
}

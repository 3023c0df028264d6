package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

// Function is the gRPC server of this composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
}

// Condition the function sets on the XR and the claim (docs/spec.md §2).
const (
	ConditionAddonsReady = "AddonsReady"
	// ReasonAllReady is AddonsReady=True's reason: every release of an
	// enabled add-on, base or optional, is Ready.
	ReasonAllReady = "AllAddonsReady"
	// ReasonHelmReleaseFailed is AddonsReady=False's reason when a release
	// reports Ready=False; the message names each failed release
	// first ("<release>: <message>"), then those still pending.
	ReasonHelmReleaseFailed = "HelmReleaseFailed"
	// ReasonWaitingForHelmRelease is AddonsReady=False's reason when no
	// release failed but some are not Ready yet (not created, or no Ready
	// condition yet).
	ReasonWaitingForHelmRelease = "WaitingForHelmRelease"
)

// RunFunction adds the tenant's add-on HelmReleases (and their managed chart
// sources and, for a Proxied ingress-nginx with hosts, the management
// Service and Ingress) to the desired state it receives, keeping what earlier
// steps put there. It reports per-add-on readiness in the XR's
// status.addons and the AddonsReady condition. Bad input is a Fatal result
// whose message names the field (docs/spec.md §6); nothing is applied then.
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
	settings, err := platform.Apply(req, rsp, in)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	in.Default()
	if err := in.Validate(); err != nil {
		response.Fatal(rsp, settings.Attribute(err))
		return rsp, nil
	}
	function.RequireNamespace(rsp, t.ID)
	hosts, err := function.TenantHostPolicy(req, t.ID, in.HostSettings())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if errs := append(t.Spec.Validate(), CheckTenantInput(t.Spec, in, hosts)...); len(errs) > 0 {
		response.Fatal(rsp, errs.ToAggregate())
		return rsp, nil
	}
	objs, err := Render(t.ID, t.Spec, in, !tenantAPIAnswers(req))
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}

	status := map[string]v1alpha1.AddonStatus{}
	var failed, pending []string
	for _, o := range objs {
		ready := fnv1.Ready_READY_TRUE
		switch o.Obj.(type) {
		case *protectionv1beta1.Usage:
			ready = function.ReadyWhenConditionTrue(req, o.Name, "Ready")
		case interface{ GetConditions() []metav1.Condition }:
			ok, hasFailed, msg := observedReady(req, o.Name)
			if !ok {
				ready = fnv1.Ready_READY_FALSE
			}
			if o.Release != "" {
				st := v1alpha1.AddonStatus{Ready: ok}
				if !ok {
					st.Message = msg
					if hasFailed {
						failed = append(failed, o.Release+": "+msg)
					} else {
						pending = append(pending, o.Release+": "+msg)
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

	// The HelmCharts helm-controller made from the releases' chart
	// templates in NS (managed HelmRepository sources) go with the cluster
	// too; what any step composed for cleanup stays.
	charts, err := function.ComposeForCleanup(req, rsp, t.ID, HelmChartKind, function.CleanupOptions{Limit: in.MaxCleanupObjects})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if charts.Skipped > 0 {
		response.Warning(rsp, fmt.Errorf("%d more HelmCharts labelled %s=%s in %s are not composed for deletion with the cluster: at most %d are (input.maxCleanupObjects, bounded by gRPC's message size)",
			charts.Skipped, function.LabelCluster, t.ID.Name, t.ID.Namespace, in.MaxCleanupObjects)).
			WithReason("TooManyObjectsToCleanUp").TargetCompositeAndClaim()
	}
	if err := function.KeepComposedForCleanup(req, rsp); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if err := setStatus(rsp, status); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	sort.Strings(failed)
	sort.Strings(pending)
	switch {
	case len(failed) > 0:
		response.ConditionFalse(rsp, ConditionAddonsReady, ReasonHelmReleaseFailed).
			WithMessage(strings.Join(append(failed, pending...), "; ")).TargetCompositeAndClaim()
	case len(pending) > 0:
		response.ConditionFalse(rsp, ConditionAddonsReady, ReasonWaitingForHelmRelease).
			WithMessage(strings.Join(pending, "; ")).TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, ConditionAddonsReady, ReasonAllReady).TargetCompositeAndClaim()
	}
	return rsp, nil
}

// HelmChartKind is Flux's HelmChart, which helm-controller creates in a
// HelmRepository's namespace for each release charted from it.
var HelmChartKind = function.CleanupKind{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "HelmChart"}

// Messages of add-ons whose HelmRelease is not Ready and says nothing more.
const (
	msgNotObserved = "HelmRelease not created yet"
	msgNoCondition = "waiting for the HelmRelease's Ready condition"
	msgNotReady    = "not ready"
)

// observedReady reads the Ready condition of the observed composed resource
// name (a Flux object): ready when its status is True; failed when it is
// False; otherwise (not observed, no condition, Unknown) pending. msg is the
// condition's message, or why there is none.
func observedReady(req *fnv1.RunFunctionRequest, name string) (ready, failed bool, msg string) {
	if !function.ObservedExists(req, name) {
		return false, false, msgNotObserved
	}
	status, reason, message := function.ObservedConditionStatus(req, name, "Ready")
	switch {
	case status == "True":
		return true, false, ""
	case status == "":
		return false, false, msgNoCondition
	case message != "":
		return false, status == "False", message
	case reason != "":
		return false, status == "False", reason
	}
	return false, status == "False", msgNotReady
}

// setStatus writes status.addons into the desired composite resource,
// keeping everything earlier steps set there.
func setStatus(rsp *fnv1.RunFunctionResponse, status map[string]v1alpha1.AddonStatus) error {
	// Built as the Struct structpb.NewValue makes of {release: {ready,
	// message}}, without the maps in between.
	m := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(status))}
	for r, s := range status {
		e := &structpb.Struct{Fields: map[string]*structpb.Value{"ready": structpb.NewBoolValue(s.Ready)}}
		if s.Message != "" {
			e.Fields["message"] = structpb.NewStringValue(s.Message)
		}
		m.Fields[r] = structpb.NewStructValue(e)
	}
	return function.SetCompositeStatus(rsp, map[string]any{"addons": structpb.NewStructValue(m)})
}

// tenantAPIAnswers reports whether the observed KamajiControlPlane (the
// control-plane step's composed resource) says the tenant API server is
// ready (status.ready, as Kamaji sets it). Before the control plane is
// observed, and whenever it is not ready, the add-on HelmReleases are
// suspended: Flux cannot install into a tenant that does not answer, and a
// cluster deleted in that state must not wait on an uninstall (docs/spec.md §7).
func tenantAPIAnswers(req *fnv1.RunFunctionRequest) bool {
	return function.ReadyWhenStatusReady(req, function.KamajiControlPlaneResourceName) == fnv1.Ready_READY_TRUE
}

// CheckTenantInput applies the platform's bounds (the input) to a spec that
// may not have passed spec.Validate: each addons.ingressNginx.hosts entry
// may be claimed by this tenant (hosts, HostPolicy.Check), and all
// valuesOverride together encode to at most input.maxValuesOverrideBytes of
// JSON. It returns every violation, naming the field and the value (or its
// size).
func CheckTenantInput(spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput, hosts function.HostPolicy) field.ErrorList {
	var errs field.ErrorList
	ing := addonsPath("ingressNginx").Child("hosts")
	for i, h := range spec.Addons.IngressNginx.Hosts {
		if i == v1alpha1.MaxIngressHosts {
			break // the rest is spec.Validate's Too many
		}
		if err := hosts.Check(ing.Index(i), h); err != nil {
			errs = append(errs, err)
		}
	}
	total, seen := 0, map[string]bool{}
	for i := range Table {
		if Table[i].Override == nil {
			continue
		}
		raw, path := Table[i].Override(&spec.Addons)
		if raw == nil || seen[path.String()] {
			continue
		}
		seen[path.String()] = true
		total += len(raw.Raw)
		if total > in.MaxValuesOverrideBytes {
			return append(errs, field.Invalid(path, fmt.Sprintf("<%d bytes of JSON>", len(raw.Raw)),
				fmt.Sprintf("Too long: all valuesOverride together may be at most %d bytes of JSON (input.maxValuesOverrideBytes); %d with the overrides before it", in.MaxValuesOverrideBytes, total)))
		}
	}
	return errs
}

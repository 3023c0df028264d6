package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	"github.com/tenantkube/tenantkube/internal/platform"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// Function is the gRPC server of this composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
	// now is the clock hibernation schedules and maintenance windows are
	// read on (nil: function.Clock).
	now func() time.Time
}

// RunFunction adds the tenant's add-on HelmReleases (and their managed chart
// sources and, for a Proxied ingress-nginx with hosts, the management
// Service and Ingress) to the desired state it receives, keeping what earlier
// steps put there. It reports per-add-on readiness in the XR's
// status.addons and the AddonsReady condition. Bad input is a Fatal result
// whose message names the field; nothing is applied then.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, function.ResponseTTL)
	r := function.NewRequest(req)
	t, err := r.Cluster()
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	in, err := readInput(r, rsp)
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	hosts, err := r.TenantHostPolicy(t.ID, in.HostSettings())
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	p, err := plan(t, in, hosts, r, function.Clock(f.now))
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err), nil
	}
	return rsp, nil
}

// readInput is the step's input with the platform settings
// (EnvironmentConfig tenantkube) merged over it, defaulted and validated.
func readInput(r *function.Request, rsp *fnv1.RunFunctionResponse) (*input.AddonsInput, error) {
	in := &input.AddonsInput{}
	if err := r.Input(in); err != nil {
		return nil, fmt.Errorf("cannot decode the function input: %w", err)
	}
	settings, err := platform.Functions.Read(r, rsp, in)
	if err != nil {
		return nil, err
	}
	in.Default()
	if err := in.Validate(); err != nil {
		return nil, settings.Attribute(err)
	}
	return in, nil
}

// plan computes the add-ons of tenant t from its spec, the defaulted input,
// the hosts it may claim and the observed state r reads: every object
// Render makes with its readiness rule, the HelmCharts to delete with the
// cluster, status.addons, the AddonsReady condition and the tenant's
// Namespace as a required resource, with a Talos node group also its Talos
// CA (talosTokens, keepTalosRelease); while a namespaced cluster has no
// KamajiControlPlane, only what is observed. For bad input it returns every
// problem spec.Validate and CheckTenantInput find (an aggregate of
// *field.Error naming each field), else Render's *field.Error. The
// releases are suspended as releasesSuspended says at the clock now; a
// changed chart version waits for the maintenance window as
// holdForWindow says, reported in status.maintenance.
func plan(t *function.Cluster, in *input.AddonsInput, hosts function.HostPolicy, r *function.Request, now time.Time) (*function.Plan, error) {
	p := &function.Plan{}
	p.Require(function.RequirementNamespace, function.NamespaceSelector(t.ID))
	if errs := append(t.Spec.Validate(), CheckTenantInput(t.Spec, in, hosts)...); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	tokens, err := talosTokens(p, r, t.ID, t.Spec, in)
	if err != nil {
		return nil, err
	}
	suspend, asleep, err := releasesSuspended(t.Spec, r, now)
	if err != nil {
		return nil, err
	}
	d, held, err := holdForWindow(t, in, r, now)
	if err != nil {
		return nil, err
	}
	objs, err := Render(t.ID, t.Spec, held.in, suspend, tokens)
	if err != nil {
		return nil, err
	}
	status := make(map[string]v1alpha1.AddonStatus)
	var failed, pending []string
	for _, o := range objs {
		switch o.Obj.(type) {
		case *protectionv1beta1.Usage:
			p.Add(o.Name, o.Obj, function.ReadyOnCondition("Ready"))
		case interface{ GetConditions() []metav1.Condition }: // Flux objects
			p.Add(o.Name, o.Obj, fluxReady)
			if o.Release == "" {
				continue
			}
			ok, hasFailed, msg := observedReady(r, o.Name)
			status[o.Release] = v1alpha1.AddonStatus{Ready: ok, Message: msg}
			switch {
			case hasFailed:
				failed = append(failed, o.Release+": "+msg)
			case !ok:
				pending = append(pending, o.Release+": "+msg)
			}
		default:
			p.Add(o.Name, o.Obj, function.ReadyAlways)
		}
	}
	if tokens == nil && hasTalosGroup(t.Spec, in) {
		st := keepTalosRelease(p, r, t.ID, in)
		status[TalosBootstrapTokenRelease] = st
		if !st.Ready {
			pending = append(pending, TalosBootstrapTokenRelease+": "+st.Message)
		}
	}
	// The HelmCharts helm-controller made from the releases' chart
	// templates in NS (managed HelmRepository sources) go with the cluster
	// too.
	charts, err := p.ComposeForCleanup(r, t.ID, HelmChartKind, function.CleanupOptions{Limit: in.MaxCleanupObjects})
	if err != nil {
		return nil, err
	}
	if charts.Skipped > 0 {
		p.Warn(v1alpha1.ReasonTooManyObjectsToCleanUp, fmt.Sprintf("%d more HelmCharts labelled %s=%s in %s are not composed for deletion with the cluster: at most %d are (input.maxCleanupObjects, bounded by gRPC's message size)",
			charts.Skipped, function.LabelCluster, t.ID.Name, t.ID.Namespace, in.MaxCleanupObjects))
	}
	p.Status = map[string]any{"addons": status}
	if err := maintenance.Report(p, r, d, renderedOnly(held.changes, objs)); err != nil {
		return nil, field.InternalError(field.NewPath("status", "maintenance"), err)
	}
	if t.Namespaced && !r.ControlPlaneComposed() {
		// A namespaced cluster waiting for its tenant's DataStore: no release,
		// chart source or Usage
		// of the KamajiControlPlane anew; what was composed is kept.
		p.KeepOnlyObserved(r, nil)
		p.SetCondition(v1alpha1.ConditionAddonsReady, false, v1alpha1.ReasonWaitingForTenantDataStore,
			"no KamajiControlPlane yet (the tenant's DataStore does not exist): no add-on is composed until there is one")
		return p, nil
	}
	setAddonsReady(p, failed, pending)
	if asleep {
		setAsleep(p)
	}
	return p, nil
}

// setAddonsReady sets AddonsReady from the releases that failed and those
// still pending ("<release>: <message>" each): False naming the failed ones
// first when any failed, False naming the pending ones when any is
// pending, True otherwise.
func setAddonsReady(p *function.Plan, failed, pending []string) {
	sort.Strings(failed)
	sort.Strings(pending)
	switch {
	case len(failed) > 0:
		p.SetCondition(v1alpha1.ConditionAddonsReady, false, v1alpha1.ReasonHelmReleaseFailed, strings.Join(append(failed, pending...), "; "))
	case len(pending) > 0:
		p.SetCondition(v1alpha1.ConditionAddonsReady, false, v1alpha1.ReasonWaitingForHelmRelease, strings.Join(pending, "; "))
	default:
		p.SetCondition(v1alpha1.ConditionAddonsReady, true, v1alpha1.ReasonAllAddonsReady, "")
	}
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
// False; otherwise (not observed, no condition, Unknown) pending. msg is
// the condition's reason when Flux defines it (fluxReasons), or why there
// is none; "" when ready. The condition's message is never shown: Helm's
// errors quote the tenant's API server (its admission webhooks' denials,
// its objects' names), text the tenant writes.
func observedReady(r *function.Request, name string) (ready, failed bool, msg string) {
	if !r.ObservedExists(name) {
		return false, false, msgNotObserved
	}
	status, reason, _ := r.ObservedCondition(name, "Ready")
	switch {
	case status == "True":
		return true, false, ""
	case status == "":
		return false, false, msgNoCondition
	case fluxReasons[reason]:
		return false, status == "False", reason
	}
	return false, status == "False", msgNotReady
}

// fluxReasons are the Ready reasons Flux's APIs define for a HelmRelease
// and its sources (helm-controller api/v2 condition_types.go, fluxcd/pkg
// apis/meta conditions.go); any other reason shows as msgNotReady.
var fluxReasons = map[string]bool{
	helmv2.InstallSucceededReason: true, helmv2.InstallFailedReason: true,
	helmv2.UpgradeSucceededReason: true, helmv2.UpgradeFailedReason: true,
	helmv2.TestSucceededReason: true, helmv2.TestFailedReason: true,
	helmv2.RollbackSucceededReason: true, helmv2.RollbackFailedReason: true,
	helmv2.UninstallSucceededReason: true, helmv2.UninstallFailedReason: true,
	helmv2.ArtifactFailedReason: true, helmv2.DependencyNotReadyReason: true,
	helmv2.DriftDetectedReason: true, helmv2.NoDriftDetectedReason: true,
	meta.SucceededReason: true, meta.FailedReason: true, meta.ProgressingReason: true,
	meta.ProgressingWithRetryReason: true, meta.SuspendedReason: true,
	meta.InvalidPathReason: true, meta.InvalidURLReason: true,
	meta.InsecureConnectionsDisallowedReason: true, meta.UnsupportedConnectionTypeReason: true,
	meta.PruneFailedReason: true, meta.BuildFailedReason: true,
	meta.HealthCheckFailedReason: true, meta.HealthCheckCanceledReason: true,
	meta.ReconciliationSucceededReason: true, meta.ReconciliationFailedReason: true,
	meta.InvalidCELExpressionReason: true, meta.FeatureGateDisabledReason: true,
}

// fluxReady is the readiness of a Flux object: ready when observedReady
// says so, as its status.addons entry does.
func fluxReady(r *function.Request, name string) fnv1.Ready {
	ok, _, _ := observedReady(r, name)
	return function.ReadyIf(ok)
}

// tenantAPIAnswers reports whether the observed KamajiControlPlane (the
// control-plane step's composed resource) says the tenant API server is
// ready (status.ready, as Kamaji sets it). Before the control plane is
// observed, and whenever it is not ready, the add-on HelmReleases are
// suspended: Flux cannot install into a tenant that does not answer, and a
// cluster deleted in that state must not wait on an uninstall.
func tenantAPIAnswers(r *function.Request) bool {
	return r.ObservedBool(function.KamajiControlPlaneResourceName, "status", "ready")
}

// CheckTenantInput applies the platform's bounds (the input) to a spec that
// may not have passed spec.Validate: each addons.ingressNginx.hosts entry
// may be claimed by this tenant (hosts, HostPolicy.Check), spec.storageClass
// is one of input.remoteStorageClasses, and all valuesOverride together
// encode to at most input.maxValuesOverrideBytes of JSON. It returns every
// violation, naming the field and the value (or its size).
func CheckTenantInput(spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput, hosts function.HostPolicy) field.ErrorList {
	var errs field.ErrorList
	if err := storageclass.Check(field.NewPath("spec", "storageClass"), spec.StorageClass, in.RemoteStorageClasses); err != nil {
		errs = append(errs, err)
	}
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

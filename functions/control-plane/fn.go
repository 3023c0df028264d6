package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/internal/inputs"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// Function is the gRPC server of the control-plane composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
	// now is the clock that places backups in their schedule.
	now func() time.Time
}

// RunFunction adds the tenant cluster's control plane (plan) to the desired
// state, or for a Tenant XR its namespace's etcd and DataStore
// (planTenant). Bad input is a Fatal result naming the field; nothing earlier steps
// put in the desired state is dropped.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, function.ResponseTTL)
	r := function.NewRequest(req)
	in, settings, err := readInput(r, rsp)
	if err != nil {
		return function.Fatal(rsp, err), nil
	}
	if r.CompositeString("kind") == tkv1alpha1.TenantKind {
		if err := function.RequirePlatformAPIs(r, rsp, function.NeededAPIs(function.APINeeds{Tenant: true, EtcdOperator: string(in.Etcd.Operator)})); err != nil {
			return function.Fatal(rsp, err), nil
		}
		return runTenant(r, rsp, in, settings, f.clock()), nil
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
	p, errs := plan(t, in, hosts, r, f.clock())
	if len(errs) > 0 {
		return function.FatalList(rsp, attributeAll(settings, errs)), nil
	}
	if err := function.Write(rsp, r, p); err != nil {
		return function.Fatal(rsp, err), nil
	}
	return rsp, nil
}

// clock is the function's time: now, or the fixed time of the environment
// variable ClockEnv (RFC 3339), which `make render` and the render tests
// set so that their output does not depend on when they run.
func (f *Function) clock() time.Time {
	if f.now != nil {
		return f.now()
	}
	if v := os.Getenv(ClockEnv); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return time.Now()
}

// ClockEnv names the environment variable that fixes the function's clock.
const ClockEnv = "TENANTKUBE_CLOCK"

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
// (inputs.Platform), defaults and validates it. Its error names the field,
// in the EnvironmentConfig when the value came from there.
func readInput(r *function.Request, rsp *fnv1.RunFunctionResponse) (*cpinput.ControlPlaneInput, platform.Settings, error) {
	in := &cpinput.ControlPlaneInput{}
	if err := r.Input(in); err != nil {
		return nil, platform.Settings{}, fmt.Errorf("cannot read the control-plane function input: %w", err)
	}
	settings, err := inputs.Platform.Read(r, rsp, in)
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

// etcdVersionPattern is spec.version's pattern in the
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster CRD.
var etcdVersionPattern = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// validateInput checks the platform team's input. It returns a *field.Error
// under "input".
func validateInput(in *cpinput.ControlPlaneInput) error {
	p := field.NewPath("input")
	for _, c := range []struct {
		path *field.Path
		cidr string
	}{{p.Child("podCIDR"), in.PodCIDR}, {p.Child("serviceCIDR"), in.ServiceCIDR}} {
		if _, _, err := net.ParseCIDR(c.cidr); err != nil {
			return field.Invalid(c.path, c.cidr, "must be a CIDR such as 10.95.0.0/16")
		}
	}
	if in.CPUAllocationRatio < 1 {
		return field.Invalid(p.Child("cpuAllocationRatio"), in.CPUAllocationRatio, "must be at least 1")
	}
	if !slices.Contains(tkv1alpha1.WorkerOSes, in.DefaultWorkerOS) {
		return field.NotSupported(p.Child("defaultWorkerOS"), in.DefaultWorkerOS, tkv1alpha1.WorkerOSes)
	}
	if img := in.TalosCSRSignerImage; len(img) > tkv1alpha1.MaxImageLength || strings.ContainsAny(img, " \t\n") {
		return field.Invalid(p.Child("talosCsrSignerImage"), img, "must be an image reference")
	}
	switch in.DeletionOrder {
	case cpinput.DeletionOrderUsages, cpinput.DeletionOrderNone:
	default:
		return field.NotSupported(p.Child("deletionOrder"), in.DeletionOrder, []string{string(cpinput.DeletionOrderUsages), string(cpinput.DeletionOrderNone)})
	}
	switch in.Etcd.Operator {
	case cpinput.EtcdOperatorAenix, cpinput.EtcdOperatorCozystack:
	default:
		return field.NotSupported(p.Child("etcd", "operator"), in.Etcd.Operator, []string{string(cpinput.EtcdOperatorAenix), string(cpinput.EtcdOperatorCozystack)})
	}
	if !etcdVersionPattern.MatchString(in.Etcd.Version) {
		return field.Invalid(p.Child("etcd", "version"), in.Etcd.Version, "must be an etcd version MAJOR.MINOR.PATCH without \"v\", such as 3.6.11")
	}
	if err := validateBackup(p.Child("etcd", "backup"), in); err != nil {
		return err
	}
	if in.Etcd.Replicas < 1 {
		return field.Invalid(p.Child("etcd", "replicas"), in.Etcd.Replicas, "must be at least 1")
	}
	if err := function.ValidateClusterDomain(p.Child("clusterDomain"), in.ClusterDomain); err != nil {
		return err
	}
	if err := hostSettings(in).Validate(p); err != nil {
		return err
	}
	if err := validateIssuer(p.Child("oidc"), in.OIDC, hostSettings(in)); err != nil {
		return err
	}
	if in.DataStoreName != "" {
		// A DNS label: dotted names are the dedicated DataStores'.
		if msgs := validation.IsDNS1123Label(in.DataStoreName); len(msgs) > 0 {
			return field.Invalid(p.Child("dataStoreName"), in.DataStoreName, msgs[0])
		}
	}
	return nil
}

// validateBackup checks input.etcd.backup: one destination, backups only
// on the operator that takes them, the key objects named, the bounds in
// order. It returns a *field.Error under p.
func validateBackup(p *field.Path, in *cpinput.ControlPlaneInput) error {
	b := &in.Etcd.Backup
	if !b.Enabled() {
		return nil
	}
	switch {
	case b.S3 != nil && b.PVC != nil:
		return field.Invalid(p.Child("pvc"), b.PVC.ClaimName, "set either s3 or pvc, not both")
	case in.Etcd.Operator != cpinput.EtcdOperatorCozystack:
		return field.Invalid(p, "s3/pvc", fmt.Sprintf("backups need etcd.operator %s (EtcdSnapshot); the operator is %s", cpinput.EtcdOperatorCozystack, in.Etcd.Operator))
	case b.S3 != nil && (b.S3.Endpoint == "" || b.S3.Bucket == "" || b.S3.CredentialsSecretName == ""):
		return field.Required(p.Child("s3"), "endpoint, bucket and credentialsSecretName")
	case b.PVC != nil && b.PVC.ClaimName == "":
		return field.Required(p.Child("pvc", "claimName"), "the PersistentVolumeClaim of each tenant namespace")
	case b.PKINamespace == "" || b.RecipientConfigMap == "":
		return field.Required(p.Child("recipientConfigMap"), "backups encrypt the PKI they carry to the age public key of ConfigMap pkiNamespace/recipientConfigMap")
	case b.Retention < 1 || b.Retention > cpinput.MaxBackupRetention:
		return field.Invalid(p.Child("retention"), b.Retention, fmt.Sprintf("must be from 1 to %d", cpinput.MaxBackupRetention))
	case b.MaxDeletedClusterBackups < 1 || b.MaxDeletedClusterBackups > cpinput.MaxMaxDeletedClusterBackups:
		return field.Invalid(p.Child("maxDeletedClusterBackups"), b.MaxDeletedClusterBackups, fmt.Sprintf("must be from 1 to %d", cpinput.MaxMaxDeletedClusterBackups))
	}
	if msgs := validation.IsDNS1123Label(b.PKINamespace); len(msgs) > 0 {
		return field.Invalid(p.Child("pkiNamespace"), b.PKINamespace, msgs[0])
	}
	if _, err := b.MinInterval.Parse(p.Child("minInterval"), tkv1alpha1.MinBackupInterval, tkv1alpha1.MaxBackupInterval); err != nil {
		return err
	}
	if _, err := b.Interval.Parse(p.Child("interval"), b.MinInterval, tkv1alpha1.MaxBackupInterval); err != nil {
		return err
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
)

// Composed-resource names of this function's objects in the desired state.
const (
	nameCluster            = function.ClusterResourceName
	nameKubevirtCluster    = "kubevirtcluster"
	nameKamajiControlPlane = function.KamajiControlPlaneResourceName
	nameEtcdCluster        = "etcdcluster"
	nameDataStore          = "datastore"
	// nameEtcdUsage is the Usage keeping the EtcdCluster until the
	// KamajiControlPlane is gone.
	nameEtcdUsage = "usage-etcdcluster-by-kamajicontrolplane"
	// nameNodeGroupUsagePrefix + G is the Usage keeping the
	// KamajiControlPlane until node group G's MachineDeployment is gone.
	nameNodeGroupUsagePrefix = "usage-kamajicontrolplane-by-nodegroup-"
	// namePKISecretUsagePrefix + S is the Usage keeping the etcd PKI
	// Secret S until the KamajiControlPlane is gone.
	namePKISecretUsagePrefix = "usage-secret-by-kamajicontrolplane-"
)

// requiredKubeconfig is the required-resources key of Kamaji's admin
// kubeconfig Secret, copied into the claim's connection secret once it
// exists.
const requiredKubeconfig = "kubeconfig-secret"

// ConditionControlPlaneReady is the XR and claim condition reporting the
// tenant control plane.
const ConditionControlPlaneReady = "ControlPlaneReady"

// Function is the gRPC server of the control-plane composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
}

// RunFunction adds the tenant cluster's control plane to the desired state:
// Cluster, KubevirtCluster, KamajiControlPlane, and either a dedicated etcd
// (EtcdCluster, cert-manager PKI, DataStore) or a reference to the shared
// DataStore named in the input (docs/spec.md §5.1). Bad input is a Fatal result
// naming the field; nothing earlier steps put in the desired state is
// dropped.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	in := &cpinput.ControlPlaneInput{}
	if err := request.GetInput(req, in); err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the control-plane function input: %w", err))
		return rsp, nil
	}
	settings, err := platform.Apply(req, rsp, in)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	in.Default()
	if err := validateInput(in); err != nil {
		response.Fatal(rsp, settings.Attribute(err))
		return rsp, nil
	}
	t, err := function.ReadTenant(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	function.RequireNamespace(rsp, t.ID)
	hosts, err := function.TenantHostPolicy(req, t.ID, hostSettings(in))
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	plan, err := planControlPlane(t, in, hosts, observedControlPlaneVersions(req))
	if err != nil {
		response.Fatal(rsp, settings.Attribute(err))
		return rsp, nil
	}
	if err := writeControlPlane(req, rsp, t, plan); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	return rsp, nil
}

// controlPlanePlan is every object the function emits for one tenant
// cluster, computed from the request alone (pure).
type controlPlanePlan struct {
	objects  map[string]any // composed-resource name → typed object
	readyBy  map[string]readiness
	host     string
	patch    string
	external bool // a shared DataStore named in the input
	usages   bool // the deletion order is declared with Usages
}

// readiness says how a composed resource's readiness is read from its
// observed status.
type readiness int

const (
	readyByStatusReady readiness = iota
	readyByConditionReady
	readyByConditionAvailable
)

// planControlPlane validates the spec (every problem of spec.Validate and
// the upgrade rule, at once) and builds its objects. observed is the
// observed KamajiControlPlane's versions. It returns an error naming the
// field of each bad value.
func planControlPlane(t *function.Tenant, in *cpinput.ControlPlaneInput, hosts function.HostPolicy, observed observedControlPlane) (*controlPlanePlan, error) {
	spec := t.Spec
	errs := spec.Validate()
	if err := checkUpgrade(spec.Version, observed); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	version, err := function.LookupVersion(spec.Version)
	if err != nil {
		return nil, field.InternalError(field.NewPath("spec", "version"), err)
	}
	sizing, err := resolveSizing(spec.ControlPlane, in.CPUAllocationRatio)
	if err != nil {
		return nil, err
	}
	host, err := clusterHost(t.ID, spec, hosts)
	if err != nil {
		return nil, err
	}

	p := &controlPlanePlan{
		// Sized for a cluster of a few node groups (about 20 objects):
		// no growing on the way.
		objects: make(map[string]any, 32), readyBy: make(map[string]readiness, 32),
		host: host, patch: version.Patch, external: in.DataStoreName != "",
		usages: in.DeletionOrder == cpinput.DeletionOrderUsages,
	}
	dsName := in.DataStoreName
	if !p.external {
		storage, err := function.ParsePositiveQuantity(field.NewPath("input", "etcd", "storageSize"), string(in.Etcd.StorageSize))
		if err != nil {
			return nil, err
		}
		ds := buildDataStore(t.ID)
		dsName = ds.Name
		p.add(nameEtcdCluster, buildEtcdCluster(t.ID, spec, in, storage), readyByConditionReady)
		p.add(nameDataStore, ds, readyByStatusReady)
		pki := buildEtcdPKI(t.ID, in.Etcd.Replicas)
		for name, o := range pki.Issuers {
			p.add(name, o, readyByConditionReady)
		}
		for name, o := range pki.Certificates {
			p.add(name, o, readyByConditionReady)
		}
	}
	if !p.external && p.usages {
		// Kamaji's finalizers clean the tenant's keys out of etcd: etcd and
		// its PKI must outlive the control plane (docs/spec.md §7).
		p.add(nameEtcdUsage, t.ID.Usage(t.ID.Prefixed("etcd-used-by-control-plane"),
			function.ObjectRef{APIVersion: etcdv1alpha1.GroupVersion.String(), Kind: etcdv1alpha1.EtcdClusterKind, Name: namesOfEtcd(t.ID).Cluster},
			t.ID.KamajiControlPlaneRef(),
			"Kamaji cleans the tenant's keys out of etcd when its control plane is deleted"), readyByConditionReady)
	}
	if p.usages {
		// Node groups go before the control plane, while it can still drain
		// their nodes (docs/spec.md §7); CAPI bounds each drain.
		kcp := t.ID.KamajiControlPlaneRef()
		for g := range spec.NodeGroups {
			p.add(nameNodeGroupUsagePrefix+g, t.ID.Usage(t.ID.Prefixed("control-plane-used-by-nodegroup-"+g),
				kcp, function.ObjectRef{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: t.ID.Prefixed(g)},
				"node group "+g+" is drained through the tenant API server before the control plane goes"), readyByConditionReady)
		}
	}
	p.add(nameCluster, buildCluster(t.ID, in), readyByConditionAvailable)
	p.add(nameKubevirtCluster, buildKubevirtCluster(t.ID), readyByStatusReady)
	kcp := buildKamajiControlPlane(t.ID, spec, in, version, sizing, host, dsName)
	kcp.Spec.DataStoreSchema, kcp.Spec.DataStoreUsername = dataStoreAccount(t.ID, observed)
	p.add(nameKamajiControlPlane, kcp, readyByStatusReady)
	return p, nil
}

func (p *controlPlanePlan) add(name string, obj any, r readiness) {
	p.objects[name] = obj
	p.readyBy[name] = r
}

// writeControlPlane puts the plan's objects into the desired state with
// their observed readiness, reports status and the ControlPlaneReady
// condition, requires the kubeconfig Secret and publishes it as connection
// details once it exists.
func writeControlPlane(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, t *function.Tenant, p *controlPlanePlan) error {
	names := make([]string, 0, len(p.objects))
	for name := range p.objects {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var ready fnv1.Ready
		switch p.readyBy[name] {
		case readyByStatusReady:
			ready = function.ReadyWhenStatusReady(req, name)
		case readyByConditionReady:
			ready = function.ReadyWhenConditionTrue(req, name, "Ready")
		case readyByConditionAvailable:
			ready = function.ReadyWhenConditionTrue(req, name, "Available")
		}
		if err := function.SetDesired(rsp, name, p.objects[name], ready); err != nil {
			return err
		}
	}

	if !p.external {
		if err := composeEtcdLeftovers(req, rsp, t.ID, p.usages); err != nil {
			return err
		}
	}
	if err := function.KeepComposedForCleanup(req, rsp); err != nil {
		return err
	}

	status := map[string]any{
		"controlPlane":     map[string]any{"endpoint": "https://" + p.host + ":443"},
		"kubeconfigSecret": t.ID.KubeconfigSecretName(),
	}
	if v := function.ObservedString(req, nameKamajiControlPlane, "status", "version"); v != "" {
		status["version"] = v
	}
	if err := function.SetCompositeStatus(rsp, status); err != nil {
		return err
	}
	reportControlPlaneCondition(req, rsp, p)

	requireKubeconfig(rsp, t.ID)
	// The connection keys are read straight from the request's Struct,
	// without converting the whole Secret to an unstructured object first.
	if secret, arrived := function.RequiredResources(req, requiredKubeconfig); arrived && len(secret) == 1 {
		details := map[string][]byte{}
		data := secret[0].GetFields()["data"].GetStructValue().GetFields()
		for _, k := range tkv1alpha1.ConnectionSecretKeys {
			if v, ok := data[k].GetKind().(*structpb.Value_StringValue); ok {
				details[k] = decodeBase64(v.StringValue)
			}
		}
		function.SetConnectionDetails(rsp, details)
	}
	return nil
}

// composeEtcdLeftovers composes what the dedicated etcd leaves in NS when
// it goes, so that it is deleted with the cluster (docs/spec.md §7): the PKI
// Secrets cert-manager wrote (cert-manager keeps a Certificate's Secret)
// and the members' PersistentVolumeClaims (a StatefulSet keeps its claims).
// With usages, each PKI Secret present gets a Usage keeping it until the
// KamajiControlPlane is gone — also one a Certificate owns (cert-manager's
// --enable-certificate-owner-ref), which is not composed but would
// otherwise be garbage-collected with its Certificate first: Kamaji reaches
// etcd with these certificates to delete the tenant's keys.
func composeEtcdLeftovers(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, id function.Identity, usages bool) error {
	n := namesOfEtcd(id)
	pki := map[string]bool{n.PeerCA: true, n.ClientCA: true, n.Server: true, n.Peer: true, n.Client: true}
	secrets, err := function.ComposeForCleanup(req, rsp, id, function.CleanupKind{APIVersion: "v1", Kind: "Secret"},
		function.CleanupOptions{Keep: func(name string) bool { return pki[name] }})
	if err != nil {
		return err
	}
	if _, err := function.ComposeForCleanup(req, rsp, id, function.CleanupKind{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		// A StatefulSet names its claims <template>-<StatefulSet>-<ordinal>.
		function.CleanupOptions{Keep: func(name string) bool { return strings.Contains(name, "-"+n.Cluster+"-") }}); err != nil {
		return err
	}
	if !usages {
		return nil
	}
	for _, s := range secrets.Present {
		name := namePKISecretUsagePrefix + s
		u := id.Usage(s+"-used-by-control-plane", function.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: s}, id.KamajiControlPlaneRef(),
			"Kamaji reaches etcd with this certificate to delete the tenant's keys when its control plane is deleted")
		if err := function.SetDesired(rsp, name, u, function.ReadyWhenConditionTrue(req, name, "Ready")); err != nil {
			return err
		}
	}
	return nil
}

// reportControlPlaneCondition sets ControlPlaneReady on the XR and claim,
// with a reason saying what the control plane waits for.
func reportControlPlaneCondition(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *controlPlanePlan) {
	if function.ReadyWhenStatusReady(req, nameKamajiControlPlane) == fnv1.Ready_READY_TRUE {
		response.ConditionTrue(rsp, ConditionControlPlaneReady, "Available").
			WithMessage("the tenant API server answers at https://" + p.host + ":443").TargetCompositeAndClaim()
		return
	}
	reason, msg := "WaitingForControlPlane", "the KamajiControlPlane is not ready yet"
	switch {
	case !p.external && function.ReadyWhenConditionTrue(req, nameEtcdCluster, "Ready") != fnv1.Ready_READY_TRUE:
		reason, msg = "WaitingForEtcd", "the dedicated etcd cluster is not ready yet"
	case !p.external && function.ReadyWhenStatusReady(req, nameDataStore) != fnv1.Ready_READY_TRUE:
		reason, msg = "WaitingForDataStore", "the Kamaji DataStore is not ready yet"
	}
	response.ConditionFalse(rsp, ConditionControlPlaneReady, reason).WithMessage(msg).TargetCompositeAndClaim()
}

// requireKubeconfig asks Crossplane for Kamaji's admin kubeconfig Secret
// N-admin-kubeconfig in NS.
func requireKubeconfig(rsp *fnv1.RunFunctionResponse, id function.Identity) {
	function.Require(rsp, requiredKubeconfig, &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Secret",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: id.KubeconfigSecretName()},
		Namespace:  proto.String(id.Namespace),
	})
}

// hostSettings are the input's host settings; a tenant API server has one
// name, never a wildcard.
func hostSettings(in *cpinput.ControlPlaneInput) function.HostSettings {
	return function.HostSettings{BaseDomain: in.BaseDomain, AllowedSuffixes: in.AllowedHostSuffixes, TenantHostSuffixes: in.AllowedTenantHostSuffixes}
}

// observedControlPlane is the version the observed KamajiControlPlane was
// last asked for (spec.version) and the version it reports running
// (status.version); either is "" when not observed.
// Exists says a KamajiControlPlane was observed; Schema and Username are
// its spec.dataStoreSchema and spec.dataStoreUsername ("" when unset).
type observedControlPlane struct {
	Desired, Running string
	Exists           bool
	Schema, Username string
}

func observedControlPlaneVersions(req *fnv1.RunFunctionRequest) observedControlPlane {
	return observedControlPlane{
		Desired:  function.ObservedString(req, nameKamajiControlPlane, "spec", "version"),
		Running:  function.ObservedString(req, nameKamajiControlPlane, "status", "version"),
		Exists:   function.ObservedExists(req, nameKamajiControlPlane),
		Schema:   function.ObservedString(req, nameKamajiControlPlane, "spec", "dataStoreSchema"),
		Username: function.ObservedString(req, nameKamajiControlPlane, "spec", "dataStoreUsername"),
	}
}

// dataStoreAccount is the KamajiControlPlane's dataStoreSchema and
// dataStoreUsername: DataStoreSchema for a new control plane, whatever the
// observed one holds otherwise. Kamaji keeps a control plane's data under
// them and they are immutable, so a control plane created before they were
// set keeps Kamaji's default (README, Known limits).
func dataStoreAccount(id function.Identity, observed observedControlPlane) (schema, username string) {
	if observed.Exists {
		return observed.Schema, observed.Username
	}
	s := DataStoreSchema(id)
	return s, s
}

// checkUpgrade enforces the upgrade rule of docs/spec.md §3 against the observed
// control plane: spec.version may not go below the minor last asked for
// (kubeadm cannot downgrade) nor more than one minor above the minor running
// (or last asked for, before the control plane reports a version). It
// returns a *field.Error saying which versions are allowed next.
func checkUpgrade(requested string, observed observedControlPlane) *field.Error {
	desired, errD := function.MinorOf(observed.Desired)
	running, errR := function.MinorOf(observed.Running)
	switch {
	case errD != nil && errR != nil:
		return nil // nothing observed (or unreadable): nothing to compare with
	case errD != nil:
		desired = running
	case errR != nil:
		running = desired
	}
	low, high := desired, min(desired, running)+1
	want, err := function.MinorOf(requested)
	if err != nil {
		return field.Invalid(field.NewPath("spec", "version"), requested, err.Error())
	}
	if want >= low && want <= high {
		return nil
	}
	var allowed []string
	for m := low; m <= high; m++ {
		if _, err := function.LookupVersion(fmt.Sprintf("v1.%d", m)); err == nil {
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
	switch in.DeletionOrder {
	case cpinput.DeletionOrderUsages, cpinput.DeletionOrderNone:
	default:
		return field.NotSupported(p.Child("deletionOrder"), in.DeletionOrder, []string{string(cpinput.DeletionOrderUsages), string(cpinput.DeletionOrderNone)})
	}
	if in.Etcd.Replicas < 1 {
		return field.Invalid(p.Child("etcd", "replicas"), in.Etcd.Replicas, "must be at least 1")
	}
	if err := hostSettings(in).Validate(p); err != nil {
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

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/util/validation/field"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

// Function is the gRPC server of this composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log function.Logger
}

// Required-resource keys (Crossplane v2 rsp.requirements.resources).
const (
	// requirementMachineSets is the MachineSets of cluster N in NS.
	requirementMachineSets = "machinesets"
	// requirementInstancetypePrefix prefixes an instance type's name to
	// give its requirement key.
	requirementInstancetypePrefix = "instancetype-"
)

// Composed-resource names of the once-per-cluster objects.
const (
	// nameAutoscalerServiceAccount is cluster-autoscaler's ServiceAccount N-cluster-autoscaler.
	nameAutoscalerServiceAccount = "cluster-autoscaler-serviceaccount"
	// nameAutoscalerRoleBinding is cluster-autoscaler's RoleBinding.
	nameAutoscalerRoleBinding = "cluster-autoscaler-rolebinding"
	// nameAutoscalerDeployment is the Deployment N-cluster-autoscaler.
	nameAutoscalerDeployment = "cluster-autoscaler-deployment"
	// nameCCMServiceAccount is the KubeVirt CCM's ServiceAccount N-kccm.
	nameCCMServiceAccount = "kccm-serviceaccount"
	// nameCCMRoleBinding is the KubeVirt CCM's RoleBinding.
	nameCCMRoleBinding = "kccm-rolebinding"
	// nameCCMCloudConfig is the ConfigMap N-kccm-cloud-config.
	nameCCMCloudConfig = "kccm-cloud-config"
	// nameCCMDeployment is the Deployment N-kccm.
	nameCCMDeployment = "kccm-deployment"
	// nameCSIServiceAccount is the KubeVirt CSI controller's infra ServiceAccount N-kcsi-controller.
	nameCSIServiceAccount = "kcsi-serviceaccount"
	// nameCSIRoleBinding is the KubeVirt CSI controller's RoleBinding.
	nameCSIRoleBinding = "kcsi-rolebinding"
	// nameCSIDeployment is the Deployment N-kcsi-controller.
	nameCSIDeployment = "kcsi-controller-deployment"
	// nameCSIClusterRoleBinding is the CSI controller's ClusterRoleBinding
	// tenantkube:kcsi-controller:<NS>.<N> (PersistentVolumes, read only).
	nameCSIClusterRoleBinding = "kcsi-clusterrolebinding"
)

// Condition the function sets on the XR and the claim (issue 5).
const ConditionWorkersReady = "WorkersReady"

// bootstrapResourceName is the composed-resource name of G's
// KubeadmConfigTemplate.
func bootstrapResourceName(g string) string { return "nodegroup-" + g + "-bootstrap" }

// machineTemplateResourceName is the composed-resource name of G's
// KubevirtMachineTemplate with the given 6-hex hash.
func machineTemplateResourceName(g, hash string) string {
	return "nodegroup-" + g + "-machinetemplate-" + hash
}

// machineDeploymentResourceName is the composed-resource name of G's
// MachineDeployment.
func machineDeploymentResourceName(g string) string { return "nodegroup-" + g + "-machinedeployment" }

// healthCheckResourceName is the composed-resource name of G's
// MachineHealthCheck.
func healthCheckResourceName(g string) string { return "nodegroup-" + g + "-healthcheck" }

// machineTemplateGroup returns the node group of a machine-template
// composed-resource name (nodegroup-<G>-machinetemplate-<6 hex>), and false
// for any other name.
func machineTemplateGroup(name string) (string, bool) {
	const prefix, infix, hashLen = "nodegroup-", "-machinetemplate-", 6
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || len(rest) < len(infix)+hashLen+1 {
		return "", false
	}
	hash := rest[len(rest)-hashLen:]
	for _, c := range hash {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	g, ok := strings.CutSuffix(rest[:len(rest)-hashLen], infix)
	return g, ok && g != ""
}

// observedTemplatesByGroup indexes the observed machine-template
// composed-resource names by node group, each list sorted, in one pass over
// the observed state (so the cost per node group does not grow with the
// number of groups).
func observedTemplatesByGroup(req *fnv1.RunFunctionRequest) map[string][]string {
	out := map[string][]string{}
	for name := range function.ObservedNames(req) {
		if g, ok := machineTemplateGroup(name); ok {
			out[g] = append(out[g], name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// requirementInstancetypeKey is the required-resource key of an instance
// type.
func requirementInstancetypeKey(name string) string { return requirementInstancetypePrefix + name }

// RunFunction composes the worker node groups of a tenant cluster (docs/spec.md
// §5.2). Bad input gives Fatal results naming the field; a required
// resource that has not arrived keeps the affected node group's observed
// objects unchanged with a Warning. It never drops what an earlier step put
// into the desired state.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	in, err := readInput(req, rsp)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	t, err := function.ReadTenant(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if errs := compose(req, rsp, t, in); len(errs) > 0 {
		for _, e := range errs {
			response.Fatal(rsp, e)
		}
		response.ConditionFalse(rsp, ConditionWorkersReady, fatalReason(errs)).
			WithMessage(errs.ToAggregate().Error()).TargetCompositeAndClaim()
	}
	return rsp, nil
}

// fatalReason is the WorkersReady reason of a Fatal response:
// InstanceTypeNotFound when a node group's instance type does not exist,
// InvalidSpec otherwise.
func fatalReason(errs field.ErrorList) string {
	for _, e := range errs {
		if strings.Contains(e.Detail, reasonInstanceTypeNotFound) {
			return reasonInstanceTypeNotFound
		}
	}
	return "InvalidSpec"
}

const reasonInstanceTypeNotFound = "InstanceTypeNotFound"

// ReasonGPUOperatorOff is the reason of the Warning given for a node group
// with GPUs while the GPU operator add-on is off.
const ReasonGPUOperatorOff = "GPUOperatorDisabled"

// readInput decodes the step's WorkersInput (an absent input is the empty
// one), merges the platform settings over it (requesting them in rsp), and
// applies and validates its defaults. It returns the decoding or validation
// error, naming the EnvironmentConfig's field when the value came from it.
func readInput(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) (*inputv1alpha1.WorkersInput, error) {
	in := &inputv1alpha1.WorkersInput{}
	if req.GetInput() != nil {
		if err := request.GetInput(req, in); err != nil {
			return nil, fmt.Errorf("cannot decode the function input: %w", err)
		}
	}
	settings, err := platform.Apply(req, rsp, in)
	if err != nil {
		return nil, err
	}
	in.Default()
	if err := in.Validate(); err != nil {
		return nil, settings.Attribute(err)
	}
	return in, nil
}

// groupOutcome is what compose decided for one node group.
type groupOutcome struct {
	plan    *nodeGroupPlan // nil while pending
	pending string         // why the group is kept as observed
}

// compose fills rsp for tenant t. It returns the violations that make the
// whole response Fatal.
func compose(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, t *function.Tenant, in *inputv1alpha1.WorkersInput) field.ErrorList {
	id, spec := t.ID, t.Spec
	var errs field.ErrorList
	row, err := function.LookupVersion(spec.Version)
	if err != nil {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "version"), spec.Version, function.SupportedVersions()))
	}
	if len(spec.NodeGroups) > in.MaxNodeGroups {
		errs = append(errs, field.TooMany(field.NewPath("spec", "nodeGroups"), len(spec.NodeGroups), in.MaxNodeGroups))
	}
	names := sortedKeys(spec.NodeGroups)
	for _, g := range names {
		errs = append(errs, ValidateNodeGroup(g, spec.NodeGroups[g], in.MaxReplicas)...)
	}
	if img := spec.Images.WaitForKubeconfig; img != "" {
		p := field.NewPath("spec", "images", "waitForKubeconfig")
		if len(img) > v1alpha1.MaxImageLength {
			errs = append(errs, function.TooLong(p, img, v1alpha1.MaxImageLength))
		} else if named, err := function.CheckImage(p, img, in.AllowedImageRegistries); err != nil {
			errs = append(errs, err)
		} else {
			spec.Images.WaitForKubeconfig = named
		}
	}
	if len(errs) > 0 {
		return errs
	}

	// Requirements are emitted on every call, so Crossplane keeps them
	// stable and fetches them before the next call.
	for _, g := range names {
		if ng := spec.NodeGroups[g]; usesInstancetype(ng) {
			it := ng.InstanceTypeName()
			function.Require(rsp, requirementInstancetypeKey(it), instancetypeSelector(it))
		}
	}
	function.Require(rsp, requirementMachineSets, machineSetSelector(id))

	cpVersion, cpObserved := observedControlPlaneVersion(req)
	referenced, msArrived, err := referencedMachineTemplates(req, id)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("requirements", requirementMachineSets), err)}
	}

	templates := observedTemplatesByGroup(req)
	outcomes := map[string]groupOutcome{}
	for _, g := range names {
		ng := spec.NodeGroups[g]
		p := NodeGroupPath(g)
		var sizing Sizing
		switch {
		case explicit(ng):
			if sizing, err = ExplicitSizing(ng); err != nil {
				errs = append(errs, field.Invalid(p.Child("resources"), ng.Resources, err.Error()))
				continue
			}
		case usesInstancetype(ng):
			it := ng.InstanceTypeName()
			items, arrived := function.RequiredResources(req, requirementInstancetypeKey(it))
			switch {
			case !arrived:
				outcomes[g] = groupOutcome{pending: fmt.Sprintf("instance type %q has not been fetched yet", it)}
				continue
			case len(items) == 0:
				errs = append(errs, field.Invalid(p.Child("instanceType"), it,
					"no VirtualMachineClusterInstancetype of this name exists ("+reasonInstanceTypeNotFound+")"))
				continue
			}
			vmit := &instancetypev1beta1.VirtualMachineClusterInstancetype{}
			if err := function.DecodeStruct(items[0], vmit); err != nil {
				errs = append(errs, field.Invalid(p.Child("instanceType"), it, "cannot read the instance type: "+err.Error()))
				continue
			}
			sizing = InstancetypeSizing(vmit.Spec.CPU.Guest, &vmit.Spec.Memory.Guest)
		}
		// Otherwise instanceType is "": the size is unknown.
		res, err := computeReservations(p, ng.Kubelet, sizing)
		if err != nil {
			errs = append(errs, asFieldError(err, p))
			continue
		}
		version := workerVersion(req, g, row.Patch, cpVersion, cpObserved)
		minor, err := minorString(version)
		if err != nil {
			version, minor = row.Patch, row.Minor
		}
		outcomes[g] = groupOutcome{plan: &nodeGroupPlan{Name: g, Group: ng, Sizing: sizing, Kubelet: res, Version: version, Minor: minor}}
	}
	if len(errs) > 0 {
		return errs
	}

	status := map[string]nodeGroupStatus{}
	var notReady, pending []string
	for _, g := range names {
		o := outcomes[g]
		if o.plan == nil {
			kept := keepObservedGroup(req, rsp, g, templates[g])
			response.Warning(rsp, fmt.Errorf("node group %s: %s; keeping its %d observed objects unchanged", g, o.pending, kept)).
				WithReason("InstanceTypePending").TargetCompositeAndClaim()
			pending = append(pending, g)
			st, ready := observedGroupStatus(req, g, spec.NodeGroups[g], reservations{})
			status[g] = st
			if !ready {
				notReady = append(notReady, g)
			}
			continue
		}
		current, err := composeGroup(req, rsp, id, *o.plan, in)
		if err != nil {
			return field.ErrorList{field.InternalError(NodeGroupPath(g), err)}
		}
		keepOldTemplates(req, rsp, current, templates[g], referenced, msArrived, g)
		st, ready := observedGroupStatus(req, g, o.plan.Group, o.plan.Kubelet)
		status[g] = st
		if !ready {
			notReady = append(notReady, g)
		}
	}
	keepReferencedTemplates(req, rsp, id, referenced, msArrived)
	if !spec.Addons.GPUOperator.Enabled {
		for _, g := range names {
			if n := len(spec.NodeGroups[g].GPUs); n > 0 {
				response.Warning(rsp, fmt.Errorf("node group %s attaches %d GPUs but addons.gpuOperator.enabled is false: without the NVIDIA GPU operator the tenant's nodes get no GPU driver or device plugin, so pods cannot use the GPUs", g, n)).
					WithReason(ReasonGPUOperatorOff).TargetCompositeAndClaim()
			}
		}
	}
	if err := composeControllers(req, rsp, id, in, spec.Images.WaitForKubeconfig); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	for _, k := range in.CleanupKinds {
		res, err := function.ComposeForCleanup(req, rsp, id, function.CleanupKind{APIVersion: k.APIVersion, Kind: k.Kind},
			function.CleanupOptions{Limit: in.MaxCleanupObjects})
		if err != nil {
			return field.ErrorList{field.InternalError(field.NewPath("input", "cleanupKinds"), err)}
		}
		if res.Skipped > 0 {
			response.Warning(rsp, fmt.Errorf("%d more %s objects labelled %s=%s in %s are not composed for deletion with the cluster: at most %d are (input.maxCleanupObjects, bounded by gRPC's message size)",
				res.Skipped, k.Kind, function.LabelCluster, id.Name, id.Namespace, in.MaxCleanupObjects)).
				WithReason("TooManyObjectsToCleanUp").TargetCompositeAndClaim()
		}
	}
	// What any step composed for cleanup stays until its creator deletes
	// it or the cluster goes, also when a kind leaves cleanupKinds.
	if err := function.KeepComposedForCleanup(req, rsp); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("input", "cleanupKinds"), err)}
	}
	if err := writeStatus(rsp, status); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("status", "nodeGroups"), err)}
	}
	switch {
	case len(pending) > 0:
		response.ConditionFalse(rsp, ConditionWorkersReady, "InstanceTypePending").
			WithMessage("waiting for the instance types of node groups " + strings.Join(pending, ", ")).TargetCompositeAndClaim()
	case len(notReady) > 0:
		response.ConditionFalse(rsp, ConditionWorkersReady, "WaitingForNodes").
			WithMessage("node groups below their minimum of ready nodes: " + strings.Join(notReady, ", ")).TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, ConditionWorkersReady, "NodeGroupsReady").TargetCompositeAndClaim()
	}
	return nil
}

// composeGroup builds and sets the four objects of one node group. It
// returns the composed-resource name of the current machine template.
func composeGroup(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, id function.Identity, p nodeGroupPlan, in *inputv1alpha1.WorkersInput) (string, error) {
	image, err := in.ContainerDiskImage(p.Minor)
	if err != nil {
		return "", err
	}
	// Each template is marshalled once, for its Struct and its spec's hash.
	kct, bootstrapHash, err := convertKubeadmConfigTemplate(buildKubeadmConfigTemplate(id, p, in))
	if err != nil {
		return "", err
	}
	kmt, kmtStruct, err := buildMachineTemplate(id, p, image, bootstrapHash)
	if err != nil {
		return "", err
	}
	hash := strings.TrimPrefix(kmt.Name, p.ObjectName(id)+"-")
	md := buildMachineDeployment(id, p, kmt.Name)
	mhc := buildMachineHealthCheck(id, p)

	tmplName := machineTemplateResourceName(p.Name, hash)
	for _, o := range []struct {
		name  string
		obj   any
		ready fnv1.Ready
	}{
		{bootstrapResourceName(p.Name), kct, existsReady(req, bootstrapResourceName(p.Name))},
		{tmplName, kmtStruct, existsReady(req, tmplName)},
		{machineDeploymentResourceName(p.Name), md, machineDeploymentReady(req, p.Name, deref(p.Group.MinReplicas))},
		{healthCheckResourceName(p.Name), mhc, existsReady(req, healthCheckResourceName(p.Name))},
	} {
		if err := function.SetDesired(rsp, o.name, o.obj, o.ready); err != nil {
			return "", err
		}
	}
	return tmplName, nil
}

// composeControllers sets the once-per-cluster controllers:
// cluster-autoscaler, KubeVirt CCM (with its cloud-config) and the KubeVirt
// CSI controller, each with ServiceAccount and RoleBinding (of its
// ClusterRole in deploy/crossplane-rbac.yaml); the CSI controller also with
// its ClusterRoleBinding (PersistentVolumes, read only).
func composeControllers(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, id function.Identity, in *inputv1alpha1.WorkersInput, waitOverride string) error {
	wait := waitOverride
	if wait == "" {
		wait = in.Images.WaitForKubeconfig
	}
	cfg, err := buildCloudConfig(id, in.Controllers.LoadBalancerMode)
	if err != nil {
		return err
	}
	if err := function.SetDesired(rsp, nameCCMCloudConfig, cfg, existsReady(req, nameCCMCloudConfig)); err != nil {
		return err
	}
	for _, c := range []struct {
		ctl                 controller
		sa, rb, crb, deploy string
	}{
		{buildClusterAutoscaler(id, in, wait), nameAutoscalerServiceAccount, nameAutoscalerRoleBinding, "", nameAutoscalerDeployment},
		{buildCloudControllerManager(id, in, wait), nameCCMServiceAccount, nameCCMRoleBinding, "", nameCCMDeployment},
		{buildCSIController(id, in, wait), nameCSIServiceAccount, nameCSIRoleBinding, nameCSIClusterRoleBinding, nameCSIDeployment},
	} {
		objs := []struct {
			name  string
			obj   any
			ready fnv1.Ready
		}{
			{c.sa, c.ctl.ServiceAccount, existsReady(req, c.sa)},
			{c.rb, c.ctl.RoleBinding, existsReady(req, c.rb)},
			{c.deploy, c.ctl.Deployment, deploymentReady(req, c.deploy)},
		}
		if c.ctl.ClusterRoleBinding != nil {
			objs = append(objs, struct {
				name  string
				obj   any
				ready fnv1.Ready
			}{c.crb, c.ctl.ClusterRoleBinding, existsReady(req, c.crb)})
		}
		for _, o := range objs {
			if err := function.SetDesired(rsp, o.name, o.obj, o.ready); err != nil {
				return err
			}
		}
	}
	return nil
}

// instancetypeSelector selects the cluster-scoped
// VirtualMachineClusterInstancetype called name.
func instancetypeSelector(name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: instancetypev1beta1.SchemeGroupVersion.String(),
		Kind:       "VirtualMachineClusterInstancetype",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
}

// machineSetSelector selects the MachineSets of cluster N in NS.
func machineSetSelector(id function.Identity) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: clusterv1.GroupVersion.String(),
		Kind:       "MachineSet",
		Namespace:  ptr(id.Namespace),
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{function.LabelCAPICluster: id.Name},
		}},
	}
}

// minorString returns "v1.N" of a version "v1.N.P".
func minorString(version string) (string, error) {
	n, err := function.MinorOf(version)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("v1.%d", n), nil
}

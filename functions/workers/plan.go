package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	inputv1alpha1 "github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// plan computes the worker node groups of tenant t
// from the input and the observed state r reads: per node group its
// bootstrap and machine templates, MachineDeployment and health check;
// the once-per-cluster controllers; status.nodeGroups, status.nodes and
// WorkersReady. A node group whose instance type has not been fetched yet
// keeps its observed objects unchanged, with a Warning; a namespaced
// cluster without a KamajiControlPlane composes nothing new
// (waitForControlPlane). It returns every problem of the spec at once.
func plan(t *function.Cluster, in *inputv1alpha1.WorkersInput, r *function.Request, now time.Time) (*function.Plan, field.ErrorList) {
	id, spec := t.ID, t.Spec
	if errs := checkSpec(spec, in); len(errs) > 0 {
		return nil, errs
	}
	policy, errs := maintenance.For(&in.Settings.Maintenance, spec.Maintenance, id)
	if len(errs) > 0 {
		return nil, errs
	}
	gate, err := newRollGate(r, policy, now)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("context", maintenance.ContextKey), err)}
	}
	names := sortedKeys(spec.NodeGroups)
	p := &function.Plan{}
	requireInputs(p, r, id, spec, names)
	pki, ferr := requireTalosPKI(p, r, id, spec, in)
	if ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	requireStatusInputs(p, id, spec)
	referenced, msArrived, err := referencedMachineTemplates(r, id)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("requirements", requirementMachineSets), err)}
	}
	groups, errs := planGroups(r, spec, names, in, pki)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := preflight(p, r, id, names, groups, in); len(errs) > 0 {
		return nil, errs
	}
	status, pending, notReady, ferr := composeGroups(p, r, id, spec, in, groups, referenced, msArrived, pki, gate)
	if ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	if ferr := addRolloutStatus(r, id, status); ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	keepReferencedTemplates(p, r, id, referenced, msArrived)
	warnGPUsWithoutOperator(p, spec)
	warnNeverRemediated(p, spec)
	wait, _ := waitForKubeconfigImage(spec, in) // checked by validatePlatform
	if err := composeControllers(p, r, id, in, wait, t.ControllersNamespace(), !t.Namespaced); err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	if errs := composeForCleanup(p, r, id, in); len(errs) > 0 {
		return nil, errs
	}
	p.Status = map[string]any{"nodeGroups": status, "nodes": nodesStatus(status)}
	if err := maintenance.Report(p, r, gate.decision, gate.held); err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("status", "maintenance"), err)}
	}
	if t.Namespaced && !r.ControlPlaneComposed() {
		waitForControlPlane(p, r)
		return p, nil
	}
	setWorkersReady(p, pending, notReady, pki)
	return p, nil
}

// waitForControlPlane makes p compose nothing new while a namespaced
// cluster waits for its tenant's DataStore (no KamajiControlPlane desired
// nor observed; docs/architecture.md): no node group, no
// controller; what was composed is kept unchanged, a MachineDeployment
// without spec.replicas (cluster-autoscaler's).
func waitForControlPlane(p *function.Plan, r *function.Request) {
	p.KeepOnlyObserved(r, func(c function.Composed) []string {
		if _, ok := c.Object.(*clusterv1.MachineDeployment); ok {
			return []string{"spec.replicas"}
		}
		return nil
	})
	p.SetCondition(v1alpha1.ConditionWorkersReady, false, v1alpha1.ReasonWaitingForTenantDataStore,
		"no KamajiControlPlane yet (the tenant's DataStore does not exist): no node group or controller is composed until there is one")
}

// composeGroups adds to p the objects of each planned node group (groups)
// and the observed machine templates still in use; a pending group (not in
// groups) keeps its observed objects unchanged, with a Warning. It returns
// status.nodeGroups, the pending groups and why each group not ready is
// not (notReady), in the order of spec's groups.
func composeGroups(p *function.Plan, r *function.Request, id function.Identity, spec *v1alpha1.KubernetesClusterSpec, in *inputv1alpha1.WorkersInput,
	groups map[string]nodeGroupPlan, referenced map[string]bool, msArrived bool, pki *talosPKI, gate *rollGate) (status map[string]v1alpha1.NodeGroupStatus, pending, notReady []string, _ *field.Error) {
	templates := observedTemplatesByGroup(r)
	status = map[string]v1alpha1.NodeGroupStatus{}
	for _, g := range sortedKeys(spec.NodeGroups) {
		ng, res := spec.NodeGroups[g], reservations{}
		if gp, ok := groups[g]; ok {
			gm := observeGroupMaintenance(r, id, g, gate.decision, tenantInputs(spec, g, isTalos(gp.Group, in)))
			current, err := composeGroup(p, id, gp, in, spec.Talos, pki, gate.with(gm))
			if err != nil {
				return nil, nil, nil, field.InternalError(NodeGroupPath(g), err)
			}
			keepOldTemplates(p, r, current, templates[g], referenced, msArrived, g)
			keepOtherOSBootstrap(p, r, g, isTalos(gp.Group, in), templates[g], current)
			ng, res = gp.Group, gp.Kubelet
		} else { // pending: its instance type, or the Talos PKI, has not arrived
			kept := keepObservedGroup(p, r, g, templates[g])
			if isTalos(ng, in) && !pki.Ready() {
				p.Warn(v1alpha1.ReasonWaitingForTalosPKI, fmt.Sprintf("node group %s: %s; keeping its %d observed objects unchanged", g, pki.Waiting(id), kept))
			} else {
				p.Warn(v1alpha1.ReasonInstanceTypePending, fmt.Sprintf("node group %s: instance type %q has not been fetched yet; keeping its %d observed objects unchanged",
					g, ng.InstanceTypeName(), kept))
			}
			pending = append(pending, g)
		}
		st, why := observedGroupStatus(r, g, ng, res)
		status[g] = st
		if why != "" {
			notReady = append(notReady, why)
		}
	}
	return status, pending, notReady, nil
}

// checkSpec returns every violation of the spec (its Validate) and of the
// platform's bounds on it (validatePlatform).
func checkSpec(spec *v1alpha1.KubernetesClusterSpec, in *inputv1alpha1.WorkersInput) field.ErrorList {
	return append(spec.Validate(), validatePlatform(spec, sortedKeys(spec.NodeGroups), in)...)
}

// requireInputs asks, on every call (so Crossplane keeps them stable and
// fetches them before the next), for the instance type of each node group
// that names one and for the cluster's MachineSets; while a named instance
// type does not exist, for every instance type too (its Fatal lists them).
func requireInputs(p *function.Plan, r *function.Request, id function.Identity, spec *v1alpha1.KubernetesClusterSpec, names []string) {
	missing := false
	for _, g := range names {
		if ng := spec.NodeGroups[g]; usesInstancetype(ng) {
			it := ng.InstanceTypeName()
			p.Require(requirementInstancetypeKey(it), instancetypeSelector(it))
			items, arrived, _ := function.Required[instancetypev1beta1.VirtualMachineClusterInstancetype](r, requirementInstancetypeKey(it))
			missing = missing || arrived && len(items) == 0
		}
	}
	if missing {
		p.Require(requirementInstancetypes, allInstancetypesSelector())
	}
	p.Require(requirementMachineSets, machineSetSelector(id))
}

// planGroups plans each node group of names: its sizing, kubelet
// reservations and version. A group whose instance type has not been
// fetched yet is left out (pending). It returns every violation.
func planGroups(r *function.Request, spec *v1alpha1.KubernetesClusterSpec, names []string, in *inputv1alpha1.WorkersInput, pki *talosPKI) (map[string]nodeGroupPlan, field.ErrorList) {
	row, err := versions.Lookup(spec.Version) // checked by checkSpec
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "version"), err)}
	}
	cpVersion, cpObserved := observedControlPlaneVersion(r)
	out := map[string]nodeGroupPlan{}
	var errs field.ErrorList
	for _, g := range names {
		ng := spec.NodeGroups[g]
		s, arrived, ferr := groupSizing(r, g, ng)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		if !arrived || isTalos(ng, in) && !pki.Ready() {
			continue
		}
		res, err := computeReservations(NodeGroupPath(g), ng.Kubelet, s)
		if err != nil {
			errs = append(errs, asFieldError(err, NodeGroupPath(g)))
			continue
		}
		version := workerVersion(r, g, row.Patch, cpVersion, cpObserved)
		minor, err := minorString(version)
		if err != nil {
			version, minor = row.Patch, row.Minor
		}
		health, herrs := groupHealthCheck(spec, NodeGroupPath(g), ng)
		if len(herrs) > 0 {
			errs = append(errs, herrs...)
			continue
		}
		md, _ := observedMachineDeployment(r, g)
		out[g] = nodeGroupPlan{Name: g, Group: ng, Sizing: s, Kubelet: res, Version: version, Minor: minor,
			Health: health, MaxNodeProvisionTime: string(spec.MaxNodeProvisionTime), StorageClass: diskStorageClass(spec, ng),
			ObservedTemplate: md.InfrastructureRef}
	}
	return out, errs
}

// groupSizing is the size of one node of group g: its explicit resources,
// its instance type's (false while that has not been fetched), or unknown
// (the zero Sizing) without either.
func groupSizing(r *function.Request, g string, ng v1alpha1.NodeGroup) (Sizing, bool, *field.Error) {
	p := NodeGroupPath(g)
	switch {
	case explicit(ng):
		s, err := ExplicitSizing(ng)
		if err != nil {
			return Sizing{}, true, field.Invalid(p.Child("resources"), ng.Resources, err.Error())
		}
		return s, true, nil
	case usesInstancetype(ng):
		it := ng.InstanceTypeName()
		items, arrived, err := function.Required[instancetypev1beta1.VirtualMachineClusterInstancetype](r, requirementInstancetypeKey(it))
		switch {
		case !arrived:
			return Sizing{}, false, nil
		case err != nil:
			return Sizing{}, true, field.Invalid(p.Child("instanceType"), it, "cannot read the instance type: "+err.Error())
		case len(items) == 0:
			return instancetypeNotFound(r, p.Child("instanceType"), it)
		}
		s := InstancetypeSizing(items[0].Spec.CPU.Guest, &items[0].Spec.Memory.Guest)
		cpu := items[0].Spec.CPU
		s.DedicatedCPUs = cpu.DedicatedCPUPlacement != nil && *cpu.DedicatedCPUPlacement
		s.IsolateEmulatorThread = s.DedicatedCPUs && cpu.IsolateEmulatorThread != nil && *cpu.IsolateEmulatorThread
		return s, true, nil
	}
	return Sizing{}, true, nil // instanceType "": the size is unknown
}

// maxListedInstancetypes bounds the names an InstanceTypeNotFound message
// lists.
const maxListedInstancetypes = 20

// instancetypeNotFound is the Invalid error of instance type it, which does
// not exist, listing those that do (the first maxListedInstancetypes by
// name); pending (not arrived) until that list has been fetched, so the
// one Fatal carries it.
func instancetypeNotFound(r *function.Request, p *field.Path, it string) (Sizing, bool, *field.Error) {
	all, arrived, err := function.Required[instancetypev1beta1.VirtualMachineClusterInstancetype](r, requirementInstancetypes)
	if err != nil {
		return Sizing{}, true, field.Invalid(p, it, "cannot read the instance types: "+err.Error())
	}
	if !arrived {
		return Sizing{}, false, nil
	}
	names := make([]string, 0, len(all))
	for _, o := range all {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	exist := "none exists"
	switch {
	case len(names) > maxListedInstancetypes:
		exist = fmt.Sprintf("%d exist: %s, ...", len(names), strings.Join(names[:maxListedInstancetypes], ", "))
	case len(names) > 0:
		exist = "those that exist: " + strings.Join(names, ", ")
	}
	return Sizing{}, true, field.Invalid(p, it,
		"no VirtualMachineClusterInstancetype of this name exists; "+exist+" ("+v1alpha1.ReasonInstanceTypeNotFound+")")
}

// composeGroup adds the four objects of one node group to p: its
// bootstrap template (KubeadmConfigTemplate, or TalosConfigTemplate for a
// Talos group, which boots talos's release instead of a container disk),
// machine template, MachineDeployment and health check. It returns the
// composed-resource name of the current machine template.
func composeGroup(p *function.Plan, id function.Identity, gp nodeGroupPlan, in *inputv1alpha1.WorkersInput, talos v1alpha1.Talos, pki *talosPKI, gate *rollGate) (string, error) {
	image, err := in.ContainerDiskImage(gp.Minor)
	if err != nil {
		return "", err
	}
	var bootstrap any
	var bootstrapHash, bootstrapName string
	if isTalos(gp.Group, in) {
		gp.TalosImageURL = in.Talos.ImageURL(talos.SchematicID, talos.Version)
		tt := talosTemplate{Spec: talos, Platform: in.Talos, PodCIDR: in.PodCIDR, ServiceCIDR: in.ServiceCIDR, ClusterDomain: in.ClusterDomain, Endpoint: id.APIServerServiceFQDN(in.ClusterDomain), PKI: *pki}
		tct, err := buildTalosConfigTemplate(id, gp, tt)
		if err != nil {
			return "", err
		}
		bootstrap, bootstrapName = tct, talosBootstrapResourceName(gp.Name)
		bootstrapHash, err = talosBootstrapHash(id, gp, tt)
		if err != nil {
			return "", err
		}
	} else {
		kct := buildKubeadmConfigTemplate(id, gp, in)
		bootstrap, bootstrapName = kct, bootstrapResourceName(gp.Name)
		bootstrapHash, err = kubeadmBootstrapHash(id, kct)
		if err != nil {
			return "", err
		}
	}
	kmt, err := buildKubevirtMachineTemplate(id, gp, image, bootstrapHash)
	if err != nil {
		return "", err
	}
	tmplName := machineTemplateResourceName(gp.Name, strings.TrimPrefix(kmt.Name, gp.ObjectName(id)+"-"))
	ref, held := gate.hold(&gp, kmt.Name)
	if held && gate.group.bootstrapObserved(bootstrapName) {
		p.Kept = append(p.Kept, function.Kept{Name: bootstrapName, Ready: fnv1.Ready_READY_TRUE})
	} else {
		p.Add(bootstrapName, bootstrap, function.ReadyOnceObserved)
	}
	p.Add(tmplName, kmt, function.ReadyOnceObserved)
	md := buildMachineDeployment(id, gp, ref)
	md.Annotations[annotationTenantInputs] = gate.recorded
	p.Add(machineDeploymentResourceName(gp.Name), md, machineDeploymentReady(gp.Name, deref(gp.Group.MinReplicas)))
	p.Add(healthCheckResourceName(gp.Name), buildMachineHealthCheck(id, gp), function.ReadyOnceObserved)
	return tmplName, nil
}

// composeControllers adds the once-per-cluster controllers to p:
// cluster-autoscaler, KubeVirt CCM (with its cloud-config) and the KubeVirt
// CSI controller, each with ServiceAccount and RoleBinding (of its
// ClusterRole in deploy/crossplane-rbac.yaml); the CSI controller also with
// its ClusterRoleBinding (PersistentVolumes, read only) when clusterScoped
// (a namespaced XR composes nothing cluster-scoped). The Deployments, their
// ServiceAccounts and the cloud-config run in ns (function.Cluster's
// ControllersNamespace), named with managementPrefix outside NS; the
// RoleBindings are in NS. wait is the
// wait-for-kubeconfig image (waitForKubeconfigImage).
func composeControllers(p *function.Plan, r *function.Request, id function.Identity, in *inputv1alpha1.WorkersInput, wait, ns string, clusterScoped bool) error {
	cfg, err := buildCloudConfig(id, in.Controllers.LoadBalancerMode)
	if err != nil {
		return err
	}
	cfg.Namespace = ns
	moved := func(name string) string {
		if ns != id.Namespace {
			return managementPrefix + name
		}
		return name
	}
	add := p.Add // objects in ns
	if ns != id.Namespace {
		add = func(name string, obj any, ready function.Readiness) { p.AddInManagementNamespace(r, name, obj, ready) }
	}
	add(moved(nameCCMCloudConfig), cfg, function.ReadyOnceObserved)
	for _, c := range []struct {
		ctl                 controller
		sa, rb, crb, deploy string
	}{
		{buildClusterAutoscaler(id, in, wait), nameAutoscalerServiceAccount, nameAutoscalerRoleBinding, "", nameAutoscalerDeployment},
		{buildCloudControllerManager(id, in, wait), nameCCMServiceAccount, nameCCMRoleBinding, "", nameCCMDeployment},
		{buildCSIController(id, in, wait), nameCSIServiceAccount, nameCSIRoleBinding, nameCSIClusterRoleBinding, nameCSIDeployment},
	} {
		c.ctl = c.ctl.runIn(ns)
		add(moved(c.sa), c.ctl.ServiceAccount, function.ReadyOnceObserved)
		p.Add(c.rb, c.ctl.RoleBinding, function.ReadyOnceObserved)
		add(moved(c.deploy), c.ctl.Deployment, deploymentReady)
		if c.ctl.ClusterRoleBinding != nil && clusterScoped {
			p.Add(c.crb, c.ctl.ClusterRoleBinding, function.ReadyOnceObserved)
		}
	}
	return nil
}

// warnGPUsWithoutOperator warns for each node group with GPUs while the
// GPU operator add-on is off.
func warnGPUsWithoutOperator(p *function.Plan, spec *v1alpha1.KubernetesClusterSpec) {
	if spec.Addons.GPUOperator.Enabled {
		return
	}
	for _, g := range sortedKeys(spec.NodeGroups) {
		if n := len(spec.NodeGroups[g].GPUs); n > 0 {
			p.Warn(v1alpha1.ReasonGPUOperatorDisabled, fmt.Sprintf("node group %s attaches %d GPUs but addons.gpuOperator.enabled is false: without the NVIDIA GPU operator the tenant's nodes get no GPU driver or device plugin, so pods cannot use the GPUs", g, n))
		}
	}
}

// setWorkersReady sets WorkersReady: False while the Talos PKI, instance
// types are pending or node groups are not ready (notReady: why each is
// not), True otherwise.
func setWorkersReady(p *function.Plan, pending, notReady []string, pki *talosPKI) {
	switch {
	case len(pending) > 0 && pki.Needed && !pki.Ready():
		p.SetCondition(v1alpha1.ConditionWorkersReady, false, v1alpha1.ReasonWaitingForTalosPKI,
			"waiting for the Talos PKI of node groups "+strings.Join(pending, ", "))
	case len(pending) > 0:
		p.SetCondition(v1alpha1.ConditionWorkersReady, false, v1alpha1.ReasonInstanceTypePending,
			"waiting for the instance types of node groups "+strings.Join(pending, ", "))
	case len(notReady) > 0:
		p.SetCondition(v1alpha1.ConditionWorkersReady, false, v1alpha1.ReasonWaitingForNodes,
			"node groups not ready: "+strings.Join(notReady, "; "))
	default:
		p.SetCondition(v1alpha1.ConditionWorkersReady, true, v1alpha1.ReasonNodeGroupsReady, "")
	}
}

// composeForCleanup adds to p the objects of in.CleanupKinds that tenant
// controllers created for the cluster (function.Plan.ComposeForCleanup),
// with a Warning for each kind with more than in.MaxCleanupObjects of them.
func composeForCleanup(p *function.Plan, r *function.Request, id function.Identity, in *inputv1alpha1.WorkersInput) field.ErrorList {
	for _, k := range in.CleanupKinds {
		res, err := p.ComposeForCleanup(r, id, function.CleanupKind{APIVersion: k.APIVersion, Kind: k.Kind},
			function.CleanupOptions{Limit: in.MaxCleanupObjects})
		if err != nil {
			return field.ErrorList{field.InternalError(field.NewPath("input", "cleanupKinds"), err)}
		}
		if res.Skipped > 0 {
			p.Warn(v1alpha1.ReasonTooManyObjectsToCleanUp, fmt.Sprintf("%d more %s objects labelled %s=%s in %s are not composed for deletion with the cluster: at most %d are (input.maxCleanupObjects, bounded by gRPC's message size)",
				res.Skipped, k.Kind, function.LabelCluster, id.Name, id.Namespace, in.MaxCleanupObjects))
		}
	}
	return nil
}

// minorString returns "v1.N" of a version "v1.N.P".
func minorString(version string) (string, error) {
	n, err := versions.MinorOf(version)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("v1.%d", n), nil
}

// keepOtherOSBootstrap keeps, while group g rolls from one OS to the
// other, the observed bootstrap template of the OS it leaves
// (KubeadmConfigTemplate or TalosConfigTemplate N-G): the MachineSets of
// the machine templates still kept (keepOldTemplates) refer to it to
// replace a machine before the rollout ends.
func keepOtherOSBootstrap(p *function.Plan, r *function.Request, g string, talos bool, templates []string, current string) {
	other := talosBootstrapResourceName(g)
	if talos {
		other = bootstrapResourceName(g)
	}
	if r.ObservedString(other, "metadata", "name") == "" {
		return
	}
	kept := map[string]bool{}
	for _, k := range p.Kept {
		kept[k.Name] = true
	}
	for _, t := range templates {
		if t != current && kept[t] {
			p.Kept = append(p.Kept, function.Kept{Name: other, Ready: fnv1.Ready_READY_TRUE})
			return
		}
	}
}

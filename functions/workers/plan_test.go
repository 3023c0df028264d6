package main

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// planOf runs plan on req with the default input.
func planOf(t *testing.T, req *fnv1.RunFunctionRequest) (*function.Plan, field.ErrorList, *function.Request) {
	t.Helper()
	r := function.NewRequest(req)
	tenant, err := r.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	p, errs := plan(tenant, defaultInput(), r, testClock)
	return p, errs, r
}

// composed is the composed resource called name of p.
func composed(t *testing.T, p *function.Plan, name string) function.Composed {
	t.Helper()
	for _, c := range p.Composed {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("plan composes no %s", name)
	return function.Composed{}
}

// TestPlanMachineDeployment checks the MachineDeployment a node group
// gets: the autoscaler's bounds and the allocatable capacity (the seed's
// formula worked by hand), its version and its machine
// template.
func TestPlanMachineDeployment(t *testing.T) {
	type want struct {
		Annotations map[string]string
		Version     string
	}
	cases := map[string]struct {
		reason string
		spec   string
		want   want
	}{
		"InstanceType": {
			reason: "u1.large (2 cores, 8Gi): reserved 5% of 8192Mi = 409Mi twice, hard eviction 7% = 573.44Mi, so 8192 − 818 − 573.44 → 6800Mi; CPU 2000m − 2×100m = 1800m.",
			spec:   `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 1, maxReplicas: 4}}`,
			want: want{
				Annotations: map[string]string{
					annotationAutoscalerMin: "1", annotationAutoscalerMax: "4",
					annotationCapacityMemory: "6800Mi", annotationCapacityCPU: "1800m",
					annotationMaxNodeProvisionTime: "30m",
				},
				Version: "v1.35.6",
			},
		},
		"ExplicitResources": {
			reason: "4 cores, 16Gi: reserved 5% of 16384Mi = 819Mi twice, hard eviction 1146.88Mi, so 13599Mi; CPU 4000m − 2×200m = 3600m; replicas default to 0..10.",
			spec:   `nodeGroups: {md0: {resources: {cpu: "4", memory: 16Gi}}}`,
			want: want{
				Annotations: map[string]string{
					annotationAutoscalerMin: "0", annotationAutoscalerMax: "10",
					annotationCapacityMemory: "13599Mi", annotationCapacityCPU: "3600m",
					annotationMaxNodeProvisionTime: "30m",
				},
				Version: "v1.35.6",
			},
		},
		"NoSize": {
			reason: "instanceType \"\" and no resources: the size is unknown, so no capacity annotations.",
			spec:   `nodeGroups: {md0: {instanceType: ""}}`,
			want: want{
				Annotations: map[string]string{annotationAutoscalerMin: "0", annotationAutoscalerMax: "10", annotationMaxNodeProvisionTime: "30m"},
				Version:     "v1.35.6",
			},
		},
		"MaxNodeProvisionTime": {
			reason: "spec.maxNodeProvisionTime is written as given on the MachineDeployment, for cluster-autoscaler's time.ParseDuration (1h30m = 90 minutes).",
			spec:   `{maxNodeProvisionTime: 1h30m, nodeGroups: {md0: {instanceType: ""}}}`,
			want: want{
				Annotations: map[string]string{annotationAutoscalerMin: "0", annotationAutoscalerMax: "10", annotationMaxNodeProvisionTime: "1h30m"},
				Version:     "v1.35.6",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs, _ := planOf(t, newRequest(t, tc.spec, withInstancetypes(t, "u1.large"), withMachineSets(t)))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			md, ok := composed(t, p, machineDeploymentResourceName("md0")).Object.(*clusterv1.MachineDeployment)
			if !ok {
				t.Fatalf("the MachineDeployment is a %T", composed(t, p, machineDeploymentResourceName("md0")).Object)
			}
			ref := md.Spec.Template.Spec.InfrastructureRef.Name
			delete(md.Annotations, annotationTenantInputs) // TestMaintenance* check it
			got := want{
				Annotations: md.Annotations,
				Version:     md.Spec.Template.Spec.Version,
			}
			// The MachineDeployment refers to the machine template the plan composes.
			tmplName := machineTemplateResourceName("md0", ref[len(ref)-templateHashLength:])
			composed(t, p, tmplName)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// observedMD0 is node group md0's observed MachineDeployment with the
// given metadata.generation and status.
func observedMD0(t *testing.T, generation int, status string) *structpb.Struct {
	return mustStruct(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: demo-md0
  namespace: tenant-foo
  generation: `+itoa(generation)+`
  annotations: {capacity.cluster-autoscaler.kubernetes.io/cpu: 1800m, capacity.cluster-autoscaler.kubernetes.io/memory: 6800Mi}
spec: {replicas: 2, template: {spec: {version: v1.35.1}}}
status: `+status)
}

// TestPlanPendingInstanceType checks what a node group whose instance type
// has not been fetched yet keeps: its observed objects unchanged (the
// MachineDeployment without spec.replicas, which cluster-autoscaler owns),
// with a Warning and WorkersReady=False.
func TestPlanPendingInstanceType(t *testing.T) {
	type want struct {
		Kept       []function.Kept
		Warnings   []function.Warning
		Conditions []function.Condition
		Status     map[string]any
	}
	tmpl := mustStruct(t, `{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtMachineTemplate, metadata: {name: demo-md0-0a1b2c, namespace: tenant-foo}}`)
	cases := map[string]struct {
		reason   string
		observed map[string]*structpb.Struct
		want     want
	}{
		"FourObserved": {
			reason: "The bootstrap template, health check, machine template and MachineDeployment are kept; status from the observed MachineDeployment (1 of 2 ready).",
			observed: map[string]*structpb.Struct{
				bootstrapResourceName("md0"):                   mustStruct(t, `{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, metadata: {name: demo-md0}}`),
				healthCheckResourceName("md0"):                 mustStruct(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineHealthCheck, metadata: {name: demo-md0}}`),
				"nodegroup-md0-machinetemplate-0a1b2c":         tmpl,
				machineDeploymentResourceName("md0"):           observedMD0(t, 1, `{observedGeneration: 1, replicas: 2, readyReplicas: 1}`),
				"nodegroup-other-machinedeployment-not-a-tmpl": mustStruct(t, `{apiVersion: v1, kind: ConfigMap}`),
			},
			want: want{
				Kept: []function.Kept{
					{Name: "nodegroup-md0-bootstrap"},
					{Name: "nodegroup-md0-healthcheck"},
					{Name: "nodegroup-md0-machinetemplate-0a1b2c"},
					{Name: "nodegroup-md0-machinedeployment", Omit: []string{"spec.replicas"}},
				},
				Warnings: []function.Warning{{Reason: "InstanceTypePending",
					Message: `node group md0: instance type "u1.large" has not been fetched yet; keeping its 4 observed objects unchanged`}, neverRemediatedAtOne("md0")},
				Conditions: []function.Condition{{Type: "WorkersReady", Reason: "InstanceTypePending",
					Message: "waiting for the instance types of node groups md0"}},
				Status: map[string]any{
					"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Replicas: 2, ReadyReplicas: 1,
						Allocatable: v1alpha1.Allocatable{CPU: "1800m", Memory: "6800Mi"}}},
					"nodes": "1/2",
				},
			},
		},
		"NothingObserved": {
			reason: "A new group keeps nothing and reports no machines.",
			want: want{
				Warnings: []function.Warning{{Reason: "InstanceTypePending",
					Message: `node group md0: instance type "u1.large" has not been fetched yet; keeping its 0 observed objects unchanged`}, neverRemediatedAtOne("md0")},
				Conditions: []function.Condition{{Type: "WorkersReady", Reason: "InstanceTypePending",
					Message: "waiting for the instance types of node groups md0"}},
				Status: map[string]any{
					"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {}},
					"nodes":      "0/0",
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs, _ := planOf(t, newRequest(t, `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 1}}`,
				withMachineSets(t), fntest.WithObserved(tc.observed)))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			got := want{Kept: p.Kept, Warnings: p.Warnings, Conditions: p.Conditions, Status: p.Status}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
			for _, c := range p.Composed {
				if c.Name == machineDeploymentResourceName("md0") {
					t.Errorf("%s\nplan composes the pending group's MachineDeployment", tc.reason)
				}
			}
		})
	}
}

// TestPlanStatus checks status.nodeGroups, status.nodes, WorkersReady and
// the MachineDeployment's readiness: ready once observed at its current
// generation with at least minReplicas (2) ready machines.
func TestPlanStatus(t *testing.T) {
	type want struct {
		Status     map[string]any
		Conditions []function.Condition
		Ready      fnv1.Ready
	}
	allocatable := v1alpha1.Allocatable{CPU: "1800m", Memory: "6800Mi"} // u1.large, see TestPlanMachineDeployment
	waiting := func(msg string) []function.Condition {
		return []function.Condition{{Type: "WorkersReady", Reason: "WaitingForNodes", Message: "node groups not ready: " + msg}}
	}
	const zeroMin = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 0, maxReplicas: 3}}`
	cases := map[string]struct {
		reason string
		spec   string // default: md0, minReplicas 2
		md     *structpb.Struct
		want   want
	}{
		"NotObserved": {
			reason: "Before the MachineDeployment exists: no machines, waiting.",
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Allocatable: allocatable}}, "nodes": "0/0"},
				Conditions: waiting("md0: MachineDeployment not created yet"),
				Ready:      fnv1.Ready_READY_FALSE,
			},
		},
		"BelowMinimum": {
			reason: "1 of 2 ready is below minReplicas 2.",
			md:     observedMD0(t, 1, `{observedGeneration: 1, replicas: 2, readyReplicas: 1}`),
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Replicas: 2, ReadyReplicas: 1, Allocatable: allocatable}}, "nodes": "1/2"},
				Conditions: waiting("md0: 1 of minReplicas 2 machines ready"),
				Ready:      fnv1.Ready_READY_FALSE,
			},
		},
		"StaleGeneration": {
			reason: "2 ready, but observedGeneration 1 < generation 2: CAPI has not seen the latest spec.",
			md:     observedMD0(t, 2, `{observedGeneration: 1, replicas: 2, readyReplicas: 2}`),
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Replicas: 2, ReadyReplicas: 2, Allocatable: allocatable}}, "nodes": "2/2"},
				Conditions: waiting("md0: MachineDeployment generation 2 not observed yet (observed 1)"),
				Ready:      fnv1.Ready_READY_FALSE,
			},
		},
		"ZeroMinimumNotObserved": {
			reason: "minReplicas 0 before the MachineDeployment exists: waiting for it, no word of a minimum.",
			spec:   zeroMin,
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Allocatable: allocatable}}, "nodes": "0/0"},
				Conditions: waiting("md0: MachineDeployment not created yet (0 machines until it scales from zero on demand)"),
				Ready:      fnv1.Ready_READY_FALSE,
			},
		},
		"ZeroMinimumNoMachines": {
			reason: "minReplicas 0, observed at its generation with 0 machines: 0 of 0 is ready.",
			spec:   zeroMin,
			md:     observedMD0(t, 1, `{observedGeneration: 1, replicas: 0, readyReplicas: 0}`),
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Allocatable: allocatable}}, "nodes": "0/0"},
				Conditions: []function.Condition{{Type: "WorkersReady", True: true, Reason: "NodeGroupsReady"}},
				Ready:      fnv1.Ready_READY_TRUE,
			},
		},
		"Ready": {
			reason: "3 of 3 ready at the current generation.",
			md:     observedMD0(t, 1, `{observedGeneration: 1, replicas: 3, readyReplicas: 3}`),
			want: want{
				Status:     map[string]any{"nodeGroups": map[string]v1alpha1.NodeGroupStatus{"md0": {Replicas: 3, ReadyReplicas: 3, Allocatable: allocatable}}, "nodes": "3/3"},
				Conditions: []function.Condition{{Type: "WorkersReady", True: true, Reason: "NodeGroupsReady"}},
				Ready:      fnv1.Ready_READY_TRUE,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[string]*structpb.Struct{}
			if tc.md != nil {
				observed[machineDeploymentResourceName("md0")] = tc.md
			}
			spec := tc.spec
			if spec == "" {
				spec = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 2}}`
			}
			p, errs, r := planOf(t, newRequest(t, spec,
				withInstancetypes(t, "u1.large"), withMachineSets(t), fntest.WithObserved(observed)))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			md := composed(t, p, machineDeploymentResourceName("md0"))
			got := want{Status: p.Status, Conditions: p.Conditions, Ready: md.Ready(r, md.Name)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanErrors checks that plan returns every violation at once, each
// naming its field and value.
func TestPlanErrors(t *testing.T) {
	type fieldError struct {
		Type     field.ErrorType
		Field    string
		BadValue any
	}
	cases := map[string]struct {
		reason string
		spec   string
		want   []fieldError
	}{
		"VersionAndGroups": {
			reason: "An unsupported version and two bad node groups: three errors in one list.",
			spec:   `{version: v1.29, nodeGroups: {a: {minReplicas: 4, maxReplicas: 2}, b: {resources: {cpu: "2"}}}}`,
			want: []fieldError{
				{field.ErrorTypeNotSupported, "spec.version", "v1.29"},
				{field.ErrorTypeInvalid, "spec.nodeGroups[a].minReplicas", int32(4)},
				{field.ErrorTypeRequired, "spec.nodeGroups[b].resources.memory", ""},
			},
		},
		"NoSuchInstanceType": {
			reason: "Crossplane found no instance type of that name.",
			spec:   `nodeGroups: {md0: {instanceType: no.such}}`,
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.nodeGroups[md0].instanceType", "no.such"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs, _ := planOf(t, newRequest(t, tc.spec, withInstancetypes(t, "no.such"), withMachineSets(t)))
			if p != nil {
				t.Errorf("%s\nplan returned a plan with its errors", tc.reason)
			}
			var got []fieldError
			for _, e := range errs {
				got = append(got, fieldError{e.Type, e.Field, e.BadValue})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s\n%v", tc.reason, diff, errs)
			}
		})
	}
}

// TestComposeControllers checks the once-per-cluster objects
// composeControllers adds and their readiness rules: a Deployment is ready
// when Available=True, every other object once it exists.
func TestComposeControllers(t *testing.T) {
	const (
		f  = fnv1.Ready_READY_FALSE
		tr = fnv1.Ready_READY_TRUE
	)
	deployment := func(available string) *structpb.Struct {
		return mustStruct(t, `{apiVersion: apps/v1, kind: Deployment, status: {conditions: [{type: Available, status: "`+available+`"}]}}`)
	}
	exists := mustStruct(t, `{apiVersion: v1, kind: ServiceAccount}`)
	cases := map[string]struct {
		reason   string
		observed map[string]*structpb.Struct
		// namespaced: the XR is a namespaced TenantCluster.
		namespaced bool
		want       map[string]fnv1.Ready
	}{
		"Namespaced": {
			reason:     "A namespaced XR composes nothing cluster-scoped: no CSI ClusterRoleBinding.",
			namespaced: true,
			want: map[string]fnv1.Ready{
				"kccm-cloud-config":                 f,
				"cluster-autoscaler-serviceaccount": f, "cluster-autoscaler-rolebinding": f, "cluster-autoscaler-deployment": f,
				"kccm-serviceaccount": f, "kccm-rolebinding": f, "kccm-deployment": f,
				"kcsi-serviceaccount": f, "kcsi-rolebinding": f, "kcsi-controller-deployment": f,
			},
		},
		"NothingObserved": {
			reason: "Nothing exists yet: nothing is ready.",
			want: map[string]fnv1.Ready{
				"kccm-cloud-config":                 f,
				"cluster-autoscaler-serviceaccount": f, "cluster-autoscaler-rolebinding": f, "cluster-autoscaler-deployment": f,
				"kccm-serviceaccount": f, "kccm-rolebinding": f, "kccm-deployment": f,
				"kcsi-serviceaccount": f, "kcsi-rolebinding": f, "kcsi-controller-deployment": f, "kcsi-clusterrolebinding": f,
			},
		},
		"Observed": {
			reason: "Observed objects are ready; of the Deployments only the Available=True one.",
			observed: map[string]*structpb.Struct{
				"kccm-cloud-config":                 exists,
				"cluster-autoscaler-serviceaccount": exists, "cluster-autoscaler-rolebinding": exists,
				"cluster-autoscaler-deployment": deployment("True"),
				"kccm-deployment":               deployment("False"),
				"kcsi-controller-deployment":    mustStruct(t, `{apiVersion: apps/v1, kind: Deployment}`),
				"kcsi-clusterrolebinding":       exists,
			},
			want: map[string]fnv1.Ready{
				"kccm-cloud-config":                 tr,
				"cluster-autoscaler-serviceaccount": tr, "cluster-autoscaler-rolebinding": tr, "cluster-autoscaler-deployment": tr,
				"kccm-serviceaccount": f, "kccm-rolebinding": f, "kccm-deployment": f,
				"kcsi-serviceaccount": f, "kcsi-rolebinding": f, "kcsi-controller-deployment": f, "kcsi-clusterrolebinding": tr,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := function.NewRequest(fntest.NewRequest(xr(t, ``), fntest.WithObserved(tc.observed)))
			p := &function.Plan{}
			if err := composeControllers(p, r, testID, defaultInput(), "", testID.Namespace, !tc.namespaced); err != nil {
				t.Fatal(err)
			}
			got := map[string]fnv1.Ready{}
			for _, c := range p.Composed {
				got[c.Name] = c.Ready(r, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncomposeControllers(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestInstancetypeNotFound: a node group naming an instance type that
// does not exist is refused with the names that do, fetched first: the
// call that learns the name is missing asks for the list and refuses
// nothing (Crossplane v2.4 stops fetching at a Fatal,
// internal/xfn/required_resources.go:88-92).
func TestInstancetypeNotFound(t *testing.T) {
	const spec = `nodeGroups: {md0: {instanceType: no.such}}`
	it := func(n string) *structpb.Struct {
		return mustStruct(t, "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata: {name: "+n+"}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}")
	}
	named := fntest.WithRequired(requirementInstancetypeKey("no.such"))
	many := make([]*structpb.Struct, 0, 21)
	for i := 20; i >= 0; i-- { // out of order: the message sorts them
		many = append(many, it(fmt.Sprintf("t%02d", i)))
	}
	cases := map[string]struct {
		reason  string
		all     []fntest.RequestOption // the list's answer; none: not fetched yet
		message string                 // "": no error, the list required
	}{
		"ListNotFetched": {reason: "The list has not been fetched: no Fatal yet, the list required."},
		"Two": {reason: "The two that exist, by name.", all: []fntest.RequestOption{fntest.WithRequired(requirementInstancetypes, it("u1.medium"), it("cx1.medium"))},
			message: "no VirtualMachineClusterInstancetype of this name exists; those that exist: cx1.medium, u1.medium (InstanceTypeNotFound)"},
		"None": {reason: "The platform has none.", all: []fntest.RequestOption{fntest.WithRequired(requirementInstancetypes)},
			message: "no VirtualMachineClusterInstancetype of this name exists; none exists (InstanceTypeNotFound)"},
		"TwentyOne": {reason: "21 exist: the first 20 by name.", all: []fntest.RequestOption{fntest.WithRequired(requirementInstancetypes, many...)},
			message: "no VirtualMachineClusterInstancetype of this name exists; 21 exist: t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, ... (InstanceTypeNotFound)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := append([]fntest.RequestOption{named, withMachineSets(t)}, tc.all...)
			p, errs, _ := planOf(t, newRequest(t, spec, opts...))
			if tc.message == "" {
				if len(errs) > 0 || p == nil {
					t.Fatalf("%s\nplan errors %v", tc.reason, errs)
				}
				if _, ok := p.Requirements[requirementInstancetypes]; !ok {
					t.Errorf("%s\nthe list of instance types is not required", tc.reason)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != "spec.nodeGroups[md0].instanceType" || errs[0].Detail != tc.message {
				t.Errorf("%s\nplan errors %v, want one on spec.nodeGroups[md0].instanceType: %s", tc.reason, errs, tc.message)
			}
		})
	}
}

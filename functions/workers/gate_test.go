package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// namespacedXR is the observed TenantCluster demo in tenant-foo with spec.
func namespacedXR(t testing.TB, spec string) *structpb.Struct {
	t.Helper()
	return mustStruct(t, `apiVersion: tenantkube.io/v1alpha1
kind: TenantCluster
metadata: {name: `+testN+`, namespace: `+testNS+`}
spec: `+spec)
}

// withDesired adds composed resources an earlier step desired.
func withDesired(objs map[string]*structpb.Struct) fntest.RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		r.Desired.Resources = map[string]*fnv1.Resource{}
		for k, v := range objs {
			r.Desired.Resources[k] = &fnv1.Resource{Resource: v}
		}
	}
}

// TestWaitForControlPlane: while a TenantCluster waits for its tenant's
// DataStore (the control-plane step desired no KamajiControlPlane and none
// is observed; docs/architecture.md), the workers step composes no
// node group and no controller, and keeps what it composed before.
func TestWaitForControlPlane(t *testing.T) {
	const spec = `{nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3, resources: {cpu: "2", memory: 4Gi}}}}`
	kcp := map[string]*structpb.Struct{"kamajicontrolplane": mustStruct(t, `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, metadata: {name: demo, namespace: tenant-foo}}`)}
	md := mustStruct(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: demo-md0, namespace: tenant-foo}, spec: {clusterName: demo, replicas: 2}}`)
	deploy := mustStruct(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: demo-kccm, namespace: tenant-foo}, spec: {replicas: 1}}`)
	// Every object of one node group and the controllers (names.go),
	// the namespaced XR's: no CSI ClusterRoleBinding.
	normal := []string{
		"cluster-autoscaler-deployment", "cluster-autoscaler-rolebinding", "cluster-autoscaler-serviceaccount",
		"kccm-cloud-config", "kccm-deployment", "kccm-rolebinding", "kccm-serviceaccount",
		"kcsi-controller-deployment", "kcsi-rolebinding", "kcsi-serviceaccount",
		"nodegroup-md0-bootstrap", "nodegroup-md0-healthcheck", "nodegroup-md0-machinedeployment", "nodegroup-md0-machinetemplate-",
	}
	// A claim's: the objects in its management namespace under names of
	// their own, and the CSI ClusterRoleBinding.
	claim := []string{
		"cluster-autoscaler-rolebinding", "kccm-rolebinding", "kcsi-clusterrolebinding", "kcsi-rolebinding",
		"management-cluster-autoscaler-deployment", "management-cluster-autoscaler-serviceaccount",
		"management-kccm-cloud-config", "management-kccm-deployment", "management-kccm-serviceaccount",
		"management-kcsi-controller-deployment", "management-kcsi-serviceaccount",
		"nodegroup-md0-bootstrap", "nodegroup-md0-healthcheck", "nodegroup-md0-machinedeployment", "nodegroup-md0-machinetemplate-",
	}
	type args struct {
		xr   *structpb.Struct
		opts []fntest.RequestOption
	}
	type want struct {
		names  []string
		reason string
		// kept are desired objects that must equal the observed ones
		// less server state (by name; nil: not checked).
		kept map[string]map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"WaitingNothingObserved": {
			reason: "No KamajiControlPlane desired nor observed, nothing composed before: nothing is composed.",
			args:   args{xr: namespacedXR(t, spec)},
			want:   want{reason: v1alpha1.ReasonWaitingForTenantDataStore},
		},
		"WaitingKeepsObserved": {
			reason: "What was composed stays as observed (the MachineDeployment without spec.replicas, cluster-autoscaler's); nothing else is added.",
			args: args{xr: namespacedXR(t, spec), opts: []fntest.RequestOption{fntest.WithObserved(map[string]*structpb.Struct{
				"nodegroup-md0-machinedeployment": md, "kccm-deployment": deploy,
			})}},
			want: want{
				names:  []string{"kccm-deployment", "nodegroup-md0-machinedeployment"},
				reason: v1alpha1.ReasonWaitingForTenantDataStore,
				kept: map[string]map[string]any{
					"nodegroup-md0-machinedeployment": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
						"metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-foo"}, "spec": map[string]any{"clusterName": "demo"}},
					"kccm-deployment": deploy.AsMap(),
				},
			},
		},
		"ControlPlaneDesired": {
			reason: "The control-plane step composed the KamajiControlPlane: everything is composed.",
			args:   args{xr: namespacedXR(t, spec), opts: []fntest.RequestOption{withDesired(kcp)}},
			want:   want{names: sortedNames(append([]string{"kamajicontrolplane"}, normal...)), reason: v1alpha1.ReasonWaitingForNodes},
		},
		"ControlPlaneObserved": {
			reason: "A KamajiControlPlane exists: everything is composed.",
			args:   args{xr: namespacedXR(t, spec), opts: []fntest.RequestOption{fntest.WithObserved(kcp)}},
			want:   want{names: normal, reason: v1alpha1.ReasonWaitingForNodes},
		},
		"ClaimNeverWaits": {
			reason: "A claim's XR always has its dedicated etcd: never gated (and it has the CSI ClusterRoleBinding, and its controllers in the management namespace).",
			args:   args{xr: xr(t, spec)},
			want:   want{names: claim, reason: v1alpha1.ReasonWaitingForNodes},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, fntest.NewRequest(tc.args.xr, append([]fntest.RequestOption{withMachineSets(t)}, tc.args.opts...)...))
			fntest.NoFatal(t, rsp)
			var names []string
			for _, n := range fntest.DesiredNames(rsp) {
				if strings.HasPrefix(n, "nodegroup-md0-machinetemplate-") {
					n = "nodegroup-md0-machinetemplate-"
				}
				names = append(names, n)
			}
			got := want{names: names, reason: conditionReason(rsp, v1alpha1.ConditionWorkersReady)}
			if tc.want.kept != nil {
				got.kept = map[string]map[string]any{}
				for n := range tc.want.kept {
					got.kept[n] = fntest.DesiredObject(t, rsp, n)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRunFunction: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// sortedNames is names sorted.
func sortedNames(names []string) []string {
	slices.Sort(names)
	return names
}

// conditionReason is the reason of rsp's condition typ ("" when unset).
func conditionReason(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c.GetReason()
		}
	}
	return ""
}

// A claim's controllers run in its management namespace, which the
// control-plane step composes: on the first reconcile, before that
// Namespace is observed, nothing is composed into it (applying there would
// fail Crossplane's whole composition), while the RoleBindings in NS are.
func TestControllersWaitForTheManagementNamespace(t *testing.T) {
	const spec = `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 1, maxReplicas: 2}}`
	for name, c := range map[string]struct {
		opts []fntest.RequestOption
		want []string
	}{
		"NamespaceObserved": {want: []string{"kccm-rolebinding", "management-cluster-autoscaler-deployment", "management-cluster-autoscaler-serviceaccount",
			"management-kccm-cloud-config", "management-kccm-deployment", "management-kccm-serviceaccount", "management-kcsi-controller-deployment", "management-kcsi-serviceaccount"}},
		"FirstReconcile": {opts: []fntest.RequestOption{fntest.WithoutManagementNamespace()}, want: []string{"kccm-rolebinding"}},
	} {
		t.Run(name, func(t *testing.T) {
			opts := append([]fntest.RequestOption{withInstancetypes(t, "u1.large"), withMachineSets(t)}, c.opts...)
			rsp := run(t, newRequest(t, spec, opts...))
			var got []string
			for n := range rsp.GetDesired().GetResources() {
				if strings.HasPrefix(n, "management-") || n == "kccm-rolebinding" {
					got = append(got, n)
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("desired composed resources: -want, +got:\n%s", diff)
			}
		})
	}
}

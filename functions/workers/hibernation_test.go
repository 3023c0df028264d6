package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// withXRState records status.hibernation.state on the observed XR.
func withXRState(state string) fntest.RequestOption {
	return func(r *fnv1.RunFunctionRequest) {
		st, _ := structpb.NewStruct(map[string]any{"hibernation": map[string]any{"state": state}})
		r.Observed.Composite.Resource.Fields["status"] = structpb.NewStructValue(st)
	}
}

// withControlPlaneReady observes the KamajiControlPlane with status.ready.
func withControlPlaneReady(t testing.TB, ready bool) fntest.RequestOption {
	y := "{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, status: {ready: false}}"
	if ready {
		y = strings.Replace(y, "false", "true", 1)
	}
	return fntest.WithObserved(map[string]*structpb.Struct{function.KamajiControlPlaneResourceName: mustStruct(t, y)})
}

// runAt runs the function on req with its clock at now.
func runAt(t testing.TB, req *fnv1.RunFunctionRequest, now time.Time) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := fntest.Run((&Function{now: func() time.Time { return now }}).RunFunction, req)
	if err != nil {
		t.Fatal(err)
	}
	mustNoFatal(t, rsp)
	return rsp
}

// TestHibernationHoldsWorkersDown: asleep (and waking until the control
// plane is ready), each node group is at zero machines with the
// autoscaler's bounds at 0/0, its MachineHealthCheck never remediates
// (unhealthyLessThanOrEqualTo 0) and cluster-autoscaler has no replica;
// otherwise the function leaves replicas to the autoscaler (unset; but
// raised to the minimum while waking) with the spec's bounds (1/3) and
// runs one autoscaler replica.
func TestHibernationHoldsWorkersDown(t *testing.T) {
	const group = `nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}}`
	nightly := group + "\nhibernation: {schedules: [{start: \"0 22 * * *\", end: \"0 6 * * *\", timeZone: Europe/Berlin}]}"
	// 22:00 to 06:00 in Berlin (CET, +1): 21:00Z to 05:00Z.
	night, noon := time.Date(2026, 3, 10, 22, 30, 0, 0, time.UTC), time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		req  *fnv1.RunFunctionRequest
		now  time.Time
		down bool
	}{
		"enabled":                         {newRequest(t, group+"\nhibernation: {enabled: true}", withInstancetypes(t, "u1.medium")), noon, true},
		"asleep by schedule":              {newRequest(t, nightly, withInstancetypes(t, "u1.medium")), night, true},
		"awake by schedule":               {newRequest(t, nightly, withInstancetypes(t, "u1.medium")), noon, false},
		"never used":                      {newRequest(t, group, withInstancetypes(t, "u1.medium")), noon, false},
		"waking, control plane not ready": {newRequest(t, group, withInstancetypes(t, "u1.medium"), withXRState("Hibernated"), withControlPlaneReady(t, false)), noon, true},
		"waking, control plane ready":     {newRequest(t, group, withInstancetypes(t, "u1.medium"), withXRState("Hibernated"), withControlPlaneReady(t, true)), noon, false},
		"awake, control plane not ready":  {newRequest(t, group, withInstancetypes(t, "u1.medium"), withXRState("Awake"), withControlPlaneReady(t, false)), noon, false},
		"a tenant's word is not a state":  {newRequest(t, group, withInstancetypes(t, "u1.medium"), withXRState("Asleep")), noon, false},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := runAt(t, c.req, c.now)
			md := desired(t, rsp, machineDeploymentResourceName("md0"))
			mhc := desired(t, rsp, healthCheckResourceName("md0"))
			ca := desired(t, rsp, managementPrefix+nameAutoscalerDeployment)
			replicas, minSize, maxSize := get(md, "spec", "replicas"), get(md, "metadata", "annotations", annotationAutoscalerMin), get(md, "metadata", "annotations", annotationAutoscalerMax)
			remediate, caReplicas := get(mhc, "spec", "remediation", "triggerIf", "unhealthyLessThanOrEqualTo"), get(ca, "spec", "replicas")
			if c.down {
				if replicas != 0.0 || minSize != "0" || maxSize != "0" || remediate != 0.0 || caReplicas != 0.0 {
					t.Errorf("held down: replicas %v, min %v, max %v, unhealthyLessThanOrEqualTo %v, autoscaler replicas %v; want 0, 0, 0, 0, 0",
						replicas, minSize, maxSize, remediate, caReplicas)
				}
				if sleeping := !strings.HasPrefix(name, "waking"); sleeping != (workersReadyReason(rsp) == "Sleeping") {
					t.Errorf("WorkersReady reason %q; asleep by spec: %t", workersReadyReason(rsp), sleeping)
				}
				return
			}
			// No MachineDeployment observed: Cluster API's webhook sets
			// spec.replicas from min-size when it is created
			// (TestHibernationWakesAtMinimum covers an observed one).
			var wantReplicas any
			if replicas != wantReplicas || minSize != "1" || maxSize != "3" || remediate == 0.0 || caReplicas != 1.0 {
				t.Errorf("awake: replicas %v, min %v, max %v, unhealthyLessThanOrEqualTo %v, autoscaler replicas %v; want %v, 1, 3, not 0, 1",
					replicas, minSize, maxSize, remediate, caReplicas, wantReplicas)
			}
		})
	}
}

// TestHibernationWakeCapacity: asleep, a minimum that a quota no longer
// holds is what waking needs (WakeExceedsQuota), not a running minimum.
// u1.medium (1 vCPU, 4Gi) at minReplicas 1 requests 4Gi and more of
// memory; the quota leaves 1Gi.
func TestHibernationWakeCapacity(t *testing.T) {
	md := mustStruct(t, "{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: "+testN+"-md0, namespace: "+testNS+"}, status: {replicas: 0}}")
	for _, c := range []struct {
		spec, reason string
	}{
		{"nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}}\nhibernation: {enabled: true}", "WakeExceedsQuota"},
		{"nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}}", "MinimumExceedsQuota"},
	} {
		rsp := runAt(t, newRequest(t, c.spec, withInstancetypes(t, "u1.medium"), withQuotas(quotaObject(t, "compute", "{hard: {requests.memory: 1Gi}}", "")),
			fntest.WithObserved(map[string]*structpb.Struct{machineDeploymentResourceName("md0"): md})), time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC))
		var got []string
		for _, cond := range rsp.GetConditions() {
			if cond.GetType() == "CapacityFits" {
				got = append(got, cond.GetReason())
				if c.reason == "WakeExceedsQuota" && !strings.HasPrefix(cond.GetMessage(), "waking needs the node groups at minReplicas: node groups at minReplicas need requests.memory") {
					t.Errorf("CapacityFits message %q", cond.GetMessage())
				}
			}
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && strings.Contains(r.GetMessage(), "minReplicas need") && r.GetReason() != c.reason {
				t.Errorf("warning reason %q, want %q", r.GetReason(), c.reason)
			}
		}
		if len(got) != 1 || got[0] != c.reason {
			t.Errorf("%s: CapacityFits reasons %v, want [%s]", c.spec, got, c.reason)
		}
	}
}

// workersReadyReason is the reason of the last WorkersReady condition.
func workersReadyReason(rsp *fnv1.RunFunctionResponse) string {
	reason := ""
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "WorkersReady" {
			reason = c.GetReason()
		}
	}
	return reason
}

// TestHibernationStopsControllersLast: the KubeVirt cloud and CSI
// controllers keep their replica while a Machine is left (volumes to
// detach, nodes to serve) and go to zero with the control plane, once
// none is; cluster-autoscaler goes at once.
func TestHibernationStopsControllersLast(t *testing.T) {
	const spec = "nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}}\nhibernation: {enabled: true}"
	machine := mustStruct(t, "{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: demo-md0-x, namespace: "+testNS+"}}")
	noon := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		req                  *fnv1.RunFunctionRequest
		autoscaler, ccm, csi any
	}{
		"a Machine left":    {newRequest(t, spec, withInstancetypes(t, "u1.medium"), fntest.WithRequired(requirementMachines, machine)), 0.0, 1.0, 1.0},
		"Machines unknown":  {newRequest(t, spec, withInstancetypes(t, "u1.medium")), 0.0, 1.0, 1.0},
		"no Machine left":   {newRequest(t, spec, withInstancetypes(t, "u1.medium"), fntest.WithRequired(requirementMachines)), 0.0, 0.0, 0.0},
		"awake, no Machine": {newRequest(t, "nodeGroups: {md0: {minReplicas: 0, maxReplicas: 3}}", withInstancetypes(t, "u1.medium"), fntest.WithRequired(requirementMachines)), 1.0, 1.0, 1.0},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := runAt(t, c.req, noon)
			got := []any{
				get(desired(t, rsp, managementPrefix+nameAutoscalerDeployment), "spec", "replicas"),
				get(desired(t, rsp, managementPrefix+nameCCMDeployment), "spec", "replicas"),
				get(desired(t, rsp, managementPrefix+nameCSIDeployment), "spec", "replicas"),
			}
			if want := []any{c.autoscaler, c.ccm, c.csi}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
				t.Errorf("replicas of cluster-autoscaler, cloud controller, CSI controller %v, want %v", got, want)
			}
		})
	}
}

// TestWakeReplicas: a node group with minReplicas 2 is written
// spec.replicas 2 while its observed spec.replicas is below 2.
func TestWakeReplicas(t *testing.T) {
	for _, c := range []struct {
		name  string
		spec  float64
		want  int32
		write bool
	}{
		{"held at 0 asleep: raised to the minimum", 0, 2, true},
		{"one below: raised to the minimum", 1, 2, true},
		{"a fraction below the minimum: the minimum", 1.5, 2, true},
		{"not a number: the minimum", math.NaN(), 2, true},
		{"at the minimum: the autoscaler's", 2, 0, false},
		{"raised by the autoscaler: the autoscaler's", 3, 0, false},
	} {
		got, write := wakeReplicas(2, c.spec)
		if write != c.write || write && got != c.want {
			t.Errorf("%s: wakeReplicas(2, %v) = %d, %t; want %d, %t", c.name, c.spec, got, write, c.want, c.write)
		}
	}
	if _, write := wakeReplicas(0, 0); write {
		t.Errorf("minReplicas 0 at 0: written, want the autoscaler's")
	}
}

// TestHibernationWakesAtMinimum: with the node groups no longer held,
// each node group whose observed MachineDeployment's spec.replicas is
// below minReplicas gets spec.replicas minReplicas, whatever
// status.replicas counts (Machines being deleted included); one at or
// above its minimum is left to the autoscaler. md0 [1, 3] is at 1; md1
// [2, 4] observed at spec/status as given.
func TestHibernationWakesAtMinimum(t *testing.T) {
	const spec = "nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}, md1: {minReplicas: 2, maxReplicas: 4}}"
	noon := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	md := func(name string, specReplicas, machines int) *structpb.Struct {
		return mustStruct(t, fmt.Sprintf("{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: %s-%s, namespace: %s}, spec: {replicas: %d}, status: {replicas: %d}}",
			testN, name, testNS, specReplicas, machines))
	}
	for _, c := range []struct {
		name             string
		state            string
		md1Spec, md1Have int
		want             any
	}{
		{"md1 held at 0 asleep: raised to 2", "Hibernated", 0, 0, 2.0},
		{"md1 at 0 with 2 Machines still being deleted: raised to 2", "Waking", 0, 2, 2.0},
		{"md1 at 0, the wake over (Awake): raised to 2", "Awake", 0, 2, 2.0},
		{"md1 at 3 by the autoscaler, 1 Machine: the autoscaler's", "Waking", 3, 1, nil},
		{"md1 at its minimum: the autoscaler's", "Waking", 2, 0, nil},
		{"md1 awake above its minimum: the autoscaler's", "Awake", 4, 4, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newRequest(t, spec, withInstancetypes(t, "u1.medium"), withXRState(c.state), withControlPlaneReady(t, true),
				fntest.WithObserved(map[string]*structpb.Struct{
					machineDeploymentResourceName("md0"): md("md0", 1, 1),
					machineDeploymentResourceName("md1"): md("md1", c.md1Spec, c.md1Have),
				}))
			rsp := runAt(t, req, noon)
			if got := get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "replicas"); got != nil {
				t.Errorf("md0 (at its minimum) spec.replicas %v, want unset", got)
			}
			md1 := desired(t, rsp, machineDeploymentResourceName("md1"))
			if got := get(md1, "spec", "replicas"); got != c.want {
				t.Errorf("md1 spec.replicas %v, want %v", got, c.want)
			}
			if a, b := get(md1, "metadata", "annotations", annotationAutoscalerMin), get(md1, "metadata", "annotations", annotationAutoscalerMax); a != "2" || b != "4" {
				t.Errorf("md1 autoscaler bounds %v/%v, want the spec's 2/4", a, b)
			}
		})
	}
}

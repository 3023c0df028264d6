package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/platform"
)

// TestRemediationLimit: how many unhealthy machines a group of n still
// gets remediated at a maxUnhealthy, worked by hand as CAPI computes it
// (cluster-api #12904: a percentage of n, rounded down). A group whose
// unhealthy (or still starting) machines exceed the limit gets none.
func TestRemediationLimit(t *testing.T) {
	pct, num := intstr.FromString, intstr.FromInt32
	cases := map[string]struct {
		reason string
		limit  intstr.IntOrString
		n      int
		want   int
	}{
		"Default1":    {"50% of 1 = 0.5, rounded down: a group of one never remediates (cluster-api #12904).", pct("50%"), 1, 0},
		"Default2":    {"50% of 2 = 1: one of two machines is replaced, not both.", pct("50%"), 2, 1},
		"Default3":    {"50% of 3 = 1.5 → 1: one of three.", pct("50%"), 3, 1},
		"Default10":   {"50% of 10 = 5: up to five of ten; six unhealthy stop remediation.", pct("50%"), 10, 5},
		"Twenty3":     {"20% of 3 = 0.6 → 0: the upstream issue's own example.", pct("20%"), 3, 0},
		"Twenty5":     {"20% of 5 = 1.", pct("20%"), 5, 1},
		"One1":        {"An integer 1 replaces the only machine of a group of one.", num(1), 1, 1},
		"One10":       {"An integer 1 of 10: one at a time; two unhealthy stop remediation.", num(1), 10, 1},
		"Zero":        {"0 turns remediation off.", num(0), 10, 0},
		"Hundred3":    {"100% of 3 = 3: every machine, the product's old setting.", pct("100%"), 3, 3},
		"ZeroPercent": {"0% of 10 = 0.", pct("0%"), 10, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := remediationLimit(tc.limit, tc.n); got != tc.want {
				t.Errorf("%s\nremediationLimit(%s, %d) = %d, want %d", tc.reason, tc.limit.String(), tc.n, got, tc.want)
			}
		})
	}
}

// TestDefaultNeverRemediatesWholeGroup: with the defaults, a storage or
// host outage that marks every machine of a group unhealthy replaces
// none of them, at every group size up to the XRD's 5000 (floor(n/2) < n
// for n >= 1), while a group of two or more can always have one machine
// replaced (floor(n/2) >= 1 for n >= 2).
func TestDefaultNeverRemediatesWholeGroup(t *testing.T) {
	spec := &v1alpha1.KubernetesClusterSpec{}
	spec.Default()
	h, errs := groupHealthCheck(spec, NodeGroupPath("md0"), spec.NodeGroups["md0"])
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for n := 1; n <= v1alpha1.MaxReplicasLimit; n++ {
		limit := remediationLimit(h.MaxUnhealthy, n)
		if limit >= n {
			t.Fatalf("default maxUnhealthy %s lets all %d machines of a group be remediated", h.MaxUnhealthy.String(), n)
		}
		if n >= 2 && limit < 1 {
			t.Fatalf("default maxUnhealthy %s never remediates a group of %d", h.MaxUnhealthy.String(), n)
		}
	}
}

// TestNeverRemediates: the Warning's rule, a non-zero percentage that
// rounds down to 0 at a group size.
func TestNeverRemediates(t *testing.T) {
	pct, num := intstr.FromString, intstr.FromInt32
	for _, c := range []struct {
		limit intstr.IntOrString
		max   int32
		want  bool
	}{
		{pct("50%"), 1, true},   // 0.5 → 0
		{pct("50%"), 2, false},  // 1
		{pct("20%"), 4, true},   // 0.8 → 0
		{pct("20%"), 5, false},  // 1
		{pct("0%"), 3, false},   // off on purpose
		{num(0), 3, false},      // off on purpose
		{num(1), 1, false},      // one machine
		{pct("50%"), 0, false},  // no machine to remediate
		{pct("100%"), 1, false}, // 1
	} {
		if got := neverRemediates(c.limit, c.max); got != c.want {
			t.Errorf("neverRemediates(%s, %d) = %v, want %v", c.limit.String(), c.max, got, c.want)
		}
	}
}

// TestPlanHealthCheck checks the MachineHealthCheck and the Warnings a
// spec gets: the chart's defaults in seconds (20m = 1200, 5m = 300,
// 10m = 600), cluster-wide values, a group's overrides.
func TestPlanHealthCheck(t *testing.T) {
	type want struct {
		Checks       clusterv1.MachineHealthCheckChecks
		MaxUnhealthy intstr.IntOrString
		Warnings     []function.Warning
	}
	checks := func(startup, unknown, falseFor int32) clusterv1.MachineHealthCheckChecks {
		return clusterv1.MachineHealthCheckChecks{
			NodeStartupTimeoutSeconds: ptr(startup),
			UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr(unknown)},
				{Type: "Ready", Status: "False", TimeoutSeconds: ptr(falseFor)},
			},
		}
	}
	cases := map[string]struct {
		reason string
		spec   string
		want   want
	}{
		"Defaults": {
			reason: "The chart's nodeHealthCheck: 50%, 20m, 5m, 10m.",
			spec:   `nodeGroups: {md0: {instanceType: ""}}`,
			want:   want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromString("50%")},
		},
		"ClusterWide": {
			reason: "1h30m = 5400s, 2m30s = 150s, 2m = 120s (the default floor); maxUnhealthy 2 machines.",
			spec:   `{nodeHealthCheck: {maxUnhealthy: "2", nodeStartupTimeout: 1h30m, readyUnknownTimeout: 2m30s, readyFalseTimeout: 2m}, nodeGroups: {md0: {instanceType: ""}}}`,
			want:   want{Checks: checks(5400, 150, 120), MaxUnhealthy: intstr.FromInt32(2)},
		},
		"GroupOverrides": {
			reason: "The group's maxUnhealthy and nodeStartupTimeout (5m = 300s, the default floor) win; the Ready timeouts stay the cluster's.",
			spec:   `{nodeHealthCheck: {maxUnhealthy: 40%, nodeStartupTimeout: 1h}, nodeGroups: {md0: {instanceType: "", maxUnhealthy: 25%, nodeStartupTimeout: 5m}}}`,
			want:   want{Checks: checks(300, 300, 600), MaxUnhealthy: intstr.FromString("25%")},
		},
		"OneMachineGroup": {
			reason: "50% of at most one machine is 0: rendered as written, with a Warning naming the integer override.",
			spec:   `nodeGroups: {md0: {instanceType: "", minReplicas: 1, maxReplicas: 1}}`,
			want: want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromString("50%"), Warnings: []function.Warning{{
				Reason:  v1alpha1.ReasonRemediationNeverAllowed,
				Message: `node group md0: maxUnhealthy 50% rounds down to 0 machines at its minReplicas 1, so no unhealthy machine of it is replaced at that size; set nodeGroups.md0.maxUnhealthy to a number of machines such as "1" to allow it (a storage or host outage then replaces that many)`,
			}}},
		},
		"SmallAtMinimum": {
			reason: "min 1, max 4 at 50%: CAPI counts the machines that exist, and at 1 machine 50% is 0 (at 4 it would be 2): warned at minReplicas.",
			spec:   `nodeGroups: {md0: {instanceType: "", minReplicas: 1, maxReplicas: 4}}`,
			want: want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromString("50%"), Warnings: []function.Warning{{
				Reason:  v1alpha1.ReasonRemediationNeverAllowed,
				Message: `node group md0: maxUnhealthy 50% rounds down to 0 machines at its minReplicas 1, so no unhealthy machine of it is replaced at that size; set nodeGroups.md0.maxUnhealthy to a number of machines such as "1" to allow it (a storage or host outage then replaces that many)`,
			}}},
		},
		"ScaledFromZero": {
			reason: "min 0, max 1 at 50%: a group scaled from zero is judged at maxReplicas 1 → 0.",
			spec:   `nodeGroups: {md0: {instanceType: "", minReplicas: 0, maxReplicas: 1}}`,
			want: want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromString("50%"), Warnings: []function.Warning{{
				Reason:  v1alpha1.ReasonRemediationNeverAllowed,
				Message: `node group md0: maxUnhealthy 50% rounds down to 0 machines at its maxReplicas 1, so no unhealthy machine of it is replaced at that size; set nodeGroups.md0.maxUnhealthy to a number of machines such as "1" to allow it (a storage or host outage then replaces that many)`,
			}}},
		},
		"TwoAtMinimum": {
			reason: "min 2 at 50% is 1 machine: no Warning.",
			spec:   `nodeGroups: {md0: {instanceType: "", minReplicas: 2, maxReplicas: 4}}`,
			want:   want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromString("50%")},
		},
		"OneMachineGroupOptedIn": {
			reason: "An integer 1 remediates the group's only machine: no Warning.",
			spec:   `nodeGroups: {md0: {instanceType: "", minReplicas: 1, maxReplicas: 1, maxUnhealthy: "1"}}`,
			want:   want{Checks: checks(1200, 300, 600), MaxUnhealthy: intstr.FromInt32(1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs, _ := planOf(t, newRequest(t, tc.spec, withMachineSets(t)))
			if len(errs) > 0 {
				t.Fatalf("plan: %v", errs)
			}
			mhc, ok := composed(t, p, healthCheckResourceName("md0")).Object.(*clusterv1.MachineHealthCheck)
			if !ok {
				t.Fatalf("the health check is a %T", composed(t, p, healthCheckResourceName("md0")).Object)
			}
			got := want{Checks: mhc.Spec.Checks, MaxUnhealthy: *mhc.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo, Warnings: p.Warnings}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\nplan(...): -want, +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestPlanHealthCheckInvalid: values that skipped admission are refused,
// every one at once, each naming its field and value.
func TestPlanHealthCheckInvalid(t *testing.T) {
	p, errs, _ := planOf(t, newRequest(t, `{maxNodeProvisionTime: 1.5h, nodeHealthCheck: {maxUnhealthy: 150%}, nodeGroups: {md0: {instanceType: "", nodeStartupTimeout: 10s}}}`, withMachineSets(t)))
	if p != nil {
		t.Error("a plan despite invalid values")
	}
	want := []string{
		`spec.nodeGroups[md0].nodeStartupTimeout: Invalid value: "10s": must be at least 30s and at most 24h`,
		`spec.nodeHealthCheck.maxUnhealthy: Invalid value: "150%": must be a whole number of machines from 0 to 5000 such as 1, or a whole percentage from 0% to 100% such as 50%`,
		`spec.maxNodeProvisionTime: Invalid value: "1.5h": must be whole hours, minutes and seconds in that order, such as 20m, 1h30m or 90s`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// neverRemediatedAtOne is the Warning a group of minReplicas 1 gets at the
// default maxUnhealthy 50% (50% of 1 machine rounds down to 0).
func neverRemediatedAtOne(g string) function.Warning {
	return function.Warning{Reason: v1alpha1.ReasonRemediationNeverAllowed,
		Message: "node group " + g + ": maxUnhealthy 50% rounds down to 0 machines at its minReplicas 1, so no unhealthy machine of it is replaced at that size; set nodeGroups." + g + ".maxUnhealthy to a number of machines such as \"1\" to allow it (a storage or host outage then replaces that many)"}
}

// TestPlatformFloors: the platform's floors (input healthCheckFloors,
// defaults 5m, 2m, 2m, 5m) and its serial-console switch (input
// allowSerialConsoleLog, off by default) refuse a spec with a Fatal result
// naming each field and value, every one at once, once Crossplane has
// answered the platform-settings requirement (before, the call is not the
// last and refuses nothing); a platform lowering the floors or allowing the
// console admits the same spec.
func TestPlatformFloors(t *testing.T) {
	const churn = `{maxNodeProvisionTime: 1s, nodeHealthCheck: {nodeStartupTimeout: 30s, readyUnknownTimeout: 1s, readyFalseTimeout: 119s},
nodeGroups: {md0: {instanceType: "", nodeStartupTimeout: 4m59s, logSerialConsole: true}, md1: {instanceType: "", nodeStartupTimeout: 5m}}}`
	cases := map[string]struct {
		input string
		// notArrived: Crossplane has not answered the platform-settings
		// requirement yet (a call that is not the last).
		notArrived bool
		want       []string // substrings of the Fatal message; nil: none
	}{
		"NotArrived": {notArrived: true},
		"Defaults": {want: []string{
			`spec.maxNodeProvisionTime: Invalid value: "1s": must be at least 5m`,
			`spec.nodeHealthCheck.nodeStartupTimeout: Invalid value: "30s": must be at least 5m`,
			`spec.nodeHealthCheck.readyUnknownTimeout: Invalid value: "1s": must be at least 2m`,
			`spec.nodeHealthCheck.readyFalseTimeout: Invalid value: "119s": must be at least 2m`,
			`spec.nodeGroups[md0].nodeStartupTimeout: Invalid value: "4m59s": must be at least 5m`,
			`spec.nodeGroups[md0].logSerialConsole: Invalid value: true`,
		}},
		"Lowered":  {input: `allowSerialConsoleLog: true, healthCheckFloors: {nodeStartupTimeout: 30s, readyUnknownTimeout: 1s, readyFalseTimeout: 1s, maxNodeProvisionTime: 1s}`},
		"BadFloor": {input: `healthCheckFloors: {nodeStartupTimeout: 10s}`, want: []string{`input.healthCheckFloors.nodeStartupTimeout: Invalid value: "10s"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var opts []fntest.RequestOption
			if tc.input != "" {
				opts = append(opts, fntest.WithInput(mustStruct(t, "{apiVersion: fn.tenantkube.io/v1alpha1, kind: WorkersInput, "+tc.input+"}")))
			}
			opts = append(opts, withMachineSets(t))
			if !tc.notArrived {
				opts = append(opts, fntest.WithRequired(platform.RequirementKey))
			}
			got := strings.Join(fatals(run(t, newRequest(t, churn, opts...))), "\n")
			if tc.want == nil && got != "" {
				t.Fatalf("Fatal: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Fatal does not say %s:\n%s", w, got)
				}
			}
			if strings.Contains(got, "md1") {
				t.Errorf("md1 (5m, at the floor) refused:\n%s", got)
			}
		})
	}
}

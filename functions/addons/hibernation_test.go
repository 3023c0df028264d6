package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Add-on releases are suspended while the cluster sleeps and while it
// wakes, until its control plane is ready and its node groups have their
// minReplicas machines: add-ons resume last. AddonsReady says so while
// asleep.
func TestReleasesSuspendedWhileNotAwake(t *testing.T) {
	md := func(n string) string {
		return "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nstatus: {replicas: " + n + "}"
	}
	const group = "nodeGroups: {md0: {minReplicas: 2, maxReplicas: 3}}\n"
	mdName := function.MachineDeploymentResourceName("md0")
	// 22:00 to 06:00 UTC; 23:00 is asleep, noon awake.
	night, noon := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		call    fntest.Call
		now     time.Time
		suspend any
		reason  string // AddonsReady
	}{
		"enabled, tenant API answers": {fntest.Call{Spec: group + "hibernation: {enabled: true}",
			Observed: map[string]string{"kamajicontrolplane": observedKCP(true), mdName: md("2")}}, noon, true, "Sleeping"},
		"asleep by schedule": {fntest.Call{Spec: group + `hibernation: {schedules: [{start: "0 22 * * *", end: "0 6 * * *"}]}`,
			Observed: map[string]string{"kamajicontrolplane": observedKCP(true), mdName: md("2")}}, night, true, "Sleeping"},
		"awake by schedule": {fntest.Call{Spec: group + `hibernation: {schedules: [{start: "0 22 * * *", end: "0 6 * * *"}]}`,
			Observed: map[string]string{"kamajicontrolplane": observedKCP(true), mdName: md("2")}}, noon, nil, "WaitingForHelmRelease"},
		"waking, workers below minimum": {fntest.Call{Spec: group, XRStatus: "{hibernation: {state: Waking}}",
			Observed: map[string]string{"kamajicontrolplane": observedKCP(true), mdName: md("1")}}, noon, true, "WaitingForHelmRelease"},
		"waking, workers at minimum": {fntest.Call{Spec: group, XRStatus: "{hibernation: {state: Waking}}",
			Observed: map[string]string{"kamajicontrolplane": observedKCP(true), mdName: md("2")}}, noon, nil, "WaitingForHelmRelease"},
	} {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Run((&Function{now: func() time.Time { return c.now }}).RunFunction, c.call.Request(t))
			if err != nil {
				t.Fatal(err)
			}
			fntest.NoFatal(t, rsp)
			rels := releases(rsp)
			if len(rels) == 0 {
				t.Fatal("no release")
			}
			for r, hr := range rels {
				if got := fntest.Get(hr, "spec", "suspend"); got != c.suspend {
					t.Errorf("%s: spec.suspend = %v, want %v", r, got, c.suspend)
				}
			}
			// The Usages that delete each release before the control plane
			// stay, asleep too: deletion keeps its order.
			usages := 0
			for n := range rsp.GetDesired().GetResources() {
				if strings.HasPrefix(n, "usage-kamajicontrolplane-by-addon-") {
					usages++
				}
			}
			if usages != len(rels) {
				t.Errorf("%d release Usages for %d releases", usages, len(rels))
			}
			reason := ""
			for _, cond := range rsp.GetConditions() {
				if cond.GetType() == "AddonsReady" {
					reason = cond.GetReason()
				}
			}
			if reason != c.reason {
				t.Errorf("AddonsReady reason %q, want %q", reason, c.reason)
			}
		})
	}
}

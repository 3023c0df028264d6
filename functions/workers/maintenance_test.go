package main

import (
	"encoding/json"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// testClock is the workers tests' clock: inside the default maintenance
// window (every day 01:00-05:00 UTC), so that a roll they expect is not
// held; TestMaintenance* choose their own instants.
var testClock = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)

// fixedClock is Function.now of the tests.
func fixedClock() time.Time { return testClock }

// runMaintenanceAt calls RunFunction at now.
func runMaintenanceAt(t *testing.T, now time.Time, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := fntest.Run((&Function{now: func() time.Time { return now }}).RunFunction, req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	mustNoFatal(t, rsp)
	return rsp
}

// TestMaintenanceNodeGroupRoll: a node group composed with container
// disk A; the platform moves v1.35's disk to B (a new machine template).
// Outside the default window (01:00-05:00 UTC) the MachineDeployment
// keeps referring to the observed template and its bootstrap template is
// kept, with the change pending; inside the window, with rollNow, or when
// the tenant itself changes the group, it rolls.
func TestMaintenanceNodeGroupRoll(t *testing.T) {
	const spec = `nodeGroups: {md0: {instanceType: u1.large}}`
	disk := func(img string, rollNow bool) fntest.RequestOption {
		in := "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncontainerDiskImages: {v1.35: " + img + "}"
		if rollNow {
			in += "\nmaintenance: {rollNow: [" + testNS + "/" + testN + "]}"
		}
		return fntest.WithInput(mustStruct(t, in))
	}
	const diskA, diskB = "example.org/disk:a", "example.org/disk:b"
	old := runMaintenanceAt(t, testClock, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t), disk(diskA, false)))
	oldName := get(oneTemplate(t, old, "md0"), "metadata", "name").(string)
	outside, inside := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 8, 4, 59, 0, 0, time.UTC)
	mdRef := func(rsp *fnv1.RunFunctionResponse) string {
		return get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "template", "spec", "infrastructureRef", "name").(string)
	}
	// sameRecord: the MachineDeployment's annotationTenantInputs stays the
	// first run's.
	cases := map[string]struct {
		spec       string
		now        time.Time
		img        string
		rollNow    bool
		forge      func(map[string]*structpb.Struct)
		held       bool
		reason     string
		sameRecord bool
	}{
		"PlatformChangeWaitsOutside": {spec, outside, diskB, false, nil, true, pendingPlatformRoll, true},
		"PlatformChangeRollsInside":  {spec, inside, diskB, false, nil, false, "", true},
		"RollNow":                    {spec, outside, diskB, true, nil, false, "", true},
		"OwnChangeAtOnce":            {`nodeGroups: {md0: {instanceType: u1.large, diskSize: 40Gi}}`, outside, diskA, false, nil, false, "", false},
		"OwnChangeConfined": {`maintenance: {confineOwnChanges: true}
nodeGroups: {md0: {instanceType: u1.large, diskSize: 40Gi}}`, outside, diskA, false, nil, true, pendingOwnRoll, true},
		"NoRecordIsThePlatforms": {spec, outside, diskB, false, func(o map[string]*structpb.Struct) {
			delete(o[machineDeploymentResourceName("md0")].Fields["metadata"].GetStructValue().Fields["annotations"].GetStructValue().Fields, annotationTenantInputs)
		}, true, pendingPlatformRoll, true},
		"ForgedRecordOnlyRollsItsOwnCluster": {spec, outside, diskB, false, func(o map[string]*structpb.Struct) {
			o[machineDeploymentResourceName("md0")].Fields["metadata"].GetStructValue().Fields["annotations"].GetStructValue().Fields[annotationTenantInputs] = structpb.NewStringValue("0000000000000000")
		}, false, "", true},
		"ForgedTemplateNotKept": {spec, outside, diskB, false, func(o map[string]*structpb.Struct) {
			md := o[machineDeploymentResourceName("md0")].Fields["spec"].GetStructValue().Fields["template"].GetStructValue().Fields["spec"].GetStructValue()
			md.Fields["infrastructureRef"].GetStructValue().Fields["name"] = structpb.NewStringValue(testN + "-md0-ffffff")
		}, false, "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := observedFrom(old, nil)
			if tc.forge != nil {
				tc.forge(observed)
			}
			rsp := runMaintenanceAt(t, tc.now, newRequest(t, tc.spec, withInstancetypes(t, "u1.large"), withMachineSets(t, oldName), disk(tc.img, tc.rollNow), fntest.WithObserved(observed)))
			ref := mdRef(rsp)
			if (ref == oldName) != tc.held {
				t.Errorf("MachineDeployment refers to %s (observed %s), want held %v", ref, oldName, tc.held)
			}
			var st v1alpha1.MaintenanceStatus
			if raw, ok := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["maintenance"]; ok {
				b, _ := json.Marshal(raw)
				_ = json.Unmarshal(b, &st)
			}
			if tc.held != (len(st.Pending) == 1) || tc.held && (st.Pending[0].Reason != tc.reason || st.Pending[0].What != "nodeGroup/md0" || st.NextWindowStart != "2026-12-08T01:00:00Z") {
				t.Errorf("status.maintenance %+v", st)
			}
			if tc.held {
				bootstrap := bootstrapResourceName("md0")
				if d := cmp.Diff(observed[bootstrap].AsMap(), desired(t, rsp, bootstrap)); d != "" {
					t.Errorf("bootstrap template not kept (-observed +desired):\n%s", d)
				}
			}
			recorded := get(desired(t, rsp, machineDeploymentResourceName("md0")), "metadata", "annotations", annotationTenantInputs)
			first := get(desired(t, old, machineDeploymentResourceName("md0")), "metadata", "annotations", annotationTenantInputs)
			if (recorded == first) != tc.sameRecord {
				t.Errorf("recorded tenant inputs %v, first run's %v", recorded, first)
			}
		})
	}
}

// TestMaintenanceNewMinorIsTheTenants: v1.34 → v1.35 with the control
// plane at v1.35.6 outside the window: a new minor is the tenant's change
// even without a recorded hash, so it rolls at once (template and version
// together); with confineOwnChanges both wait.
func TestMaintenanceNewMinorIsTheTenants(t *testing.T) {
	old := runMaintenanceAt(t, testClock, newRequest(t, "version: v1.34\nnodeGroups: {md0: {instanceType: u1.large}}", withInstancetypes(t, "u1.large"), withMachineSets(t)))
	oldName := get(oneTemplate(t, old, "md0"), "metadata", "name").(string)
	outside := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		spec         string
		ref, version string
		wantOldRef   bool
		forgetRecord bool
	}{
		{"version: v1.35\nnodeGroups: {md0: {instanceType: u1.large}}", "", "v1.35.6", false, true},
		{"version: v1.35\nmaintenance: {confineOwnChanges: true}\nnodeGroups: {md0: {instanceType: u1.large}}", "", "v1.34.9", true, false},
	} {
		obs := observedFrom(old, nil)
		if c.forgetRecord {
			delete(obs[machineDeploymentResourceName("md0")].Fields["metadata"].GetStructValue().Fields["annotations"].GetStructValue().Fields, annotationTenantInputs)
		}
		obs["kamaji-control-plane"] = mustStruct(t, "apiVersion: controlplane.cluster.x-k8s.io/v1alpha2\nkind: KamajiControlPlane\nmetadata: {name: demo}\nstatus: {version: v1.35.6}")
		rsp := runMaintenanceAt(t, outside, newRequest(t, c.spec, withInstancetypes(t, "u1.large"), withMachineSets(t, oldName), fntest.WithObserved(obs)))
		md := desired(t, rsp, machineDeploymentResourceName("md0"))
		ref, version := get(md, "spec", "template", "spec", "infrastructureRef", "name"), get(md, "spec", "template", "spec", "version")
		if (ref == oldName) != c.wantOldRef || version != c.version {
			t.Errorf("%s: MachineDeployment on %v %v (observed %s v1.34.9), want old template %v, version %s", c.spec, ref, version, oldName, c.wantOldRef, c.version)
		}
	}
}

// TestMaintenanceFollowsControlPlane: inside the window, the workers step
// holds the platform's change when the control-plane step's decision in
// the pipeline context says the cluster waits for a roll slot, and rolls
// it outside the window when that decision lets a started roll finish.
func TestMaintenanceFollowsControlPlane(t *testing.T) {
	const spec = `nodeGroups: {md0: {instanceType: u1.large}}`
	disk := func(img string) fntest.RequestOption {
		return fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\ncontainerDiskImages: {v1.35: "+img+"}"))
	}
	old := runMaintenanceAt(t, testClock, newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t), disk("example.org/disk:a")))
	oldName := get(oneTemplate(t, old, "md0"), "metadata", "name").(string)
	for _, c := range []struct {
		now       time.Time
		admission string
		held      bool
		reason    string
	}{
		{testClock, `{platform: false, reason: WaitingForRollSlot}`, true, v1alpha1.ReasonWaitingForRollSlot},
		{testClock, `{platform: true}`, false, ""},
		{time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), `{platform: true}`, false, ""},
		{time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), `{platform: false, reason: WaitingForWindow}`, true, v1alpha1.ReasonWaitingForWindow},
	} {
		req := newRequest(t, spec, withInstancetypes(t, "u1.large"), withMachineSets(t, oldName), disk("example.org/disk:b"), fntest.WithObserved(observedFrom(old, nil)))
		req.Context = mustStruct(t, "tenantkube.io/maintenance: "+c.admission)
		rsp := runMaintenanceAt(t, c.now, req)
		ref := get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "template", "spec", "infrastructureRef", "name")
		var reason string
		for _, cond := range rsp.GetConditions() {
			if cond.GetType() == v1alpha1.ConditionMaintenancePending {
				reason = cond.GetReason()
			}
		}
		if (ref == oldName) != c.held || reason != c.reason {
			t.Errorf("%s with %s: template %v (observed %s), MaintenancePending %q; want held %v, %q", c.now, c.admission, ref, oldName, reason, c.held, c.reason)
		}
	}
}

package main

import (
	"strconv"
	"testing"
	"time"

	"filippo.io/age"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// nightly sleeps 22:00 to 06:00 UTC; at night (23:00) the next
// transition is 7 hours away (06:00), by hand.
const nightly = `{hibernation: {schedules: [{start: "0 22 * * *", end: "0 6 * * *"}]}, nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3}}}`

var night = time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)

// mdWith is an observed MachineDeployment with status.replicas n.
func mdWith(n int) string {
	return `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, status: {replicas: ` + strconv.Itoa(n) + `}}`
}

const machine = `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: demo-md0-x, namespace: tenant-demo}}`

func planAt(t *testing.T, c fntest.Call, now time.Time) *function.Plan {
	t.Helper()
	in := &cpinput.ControlPlaneInput{}
	in.Default()
	r, tenant := c.Read(t)
	p, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, now)
	if len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	return p
}

func condition(p *function.Plan, typ string) (function.Condition, int) {
	var out function.Condition
	n := 0
	for _, c := range p.Conditions {
		if c.Type == typ {
			out, n = c, n+1
		}
	}
	return out, n
}

func TestHibernation(t *testing.T) {
	mdName := function.MachineDeploymentResourceName("md0")
	for name, c := range map[string]struct {
		call         fntest.Call
		now          time.Time
		replicas     int32 // KamajiControlPlane spec.replicas
		state        tkv1alpha1.HibernationState
		hibernated   string // Hibernated: "True/Reason"
		waking       string
		cpReady      string // ControlPlaneReady reason
		askMachines  bool
		runAgain     time.Duration
		noHibernated bool
	}{
		"never used: nothing new": {
			call: fntest.Call{Spec: `{}`}, now: night, replicas: 2, noHibernated: true, cpReady: tkv1alpha1.ReasonWaitingForEtcd,
		},
		"asleep by schedule, a machine left": {
			call: fntest.Call{Spec: nightly, Observed: map[string]string{mdName: mdWith(1)}, Required: map[string][]string{requiredMachines: {machine}}},
			now:  night, replicas: 2, state: tkv1alpha1.HibernationHibernating, hibernated: "False/ScalingDownWorkers", waking: "False/Sleeping",
			cpReady: tkv1alpha1.ReasonWaitingForEtcd, askMachines: true, runAgain: 7 * time.Hour,
		},
		"asleep, machines not arrived": {
			call: fntest.Call{Spec: `{hibernation: {enabled: true}}`}, now: night, replicas: 2, state: tkv1alpha1.HibernationHibernating,
			hibernated: "False/ScalingDownWorkers", waking: "False/Sleeping", cpReady: tkv1alpha1.ReasonWaitingForEtcd, askMachines: true,
		},
		"asleep, no machine left: control plane to zero": {
			call: fntest.Call{Spec: nightly, Observed: map[string]string{mdName: mdWith(0)}, Required: map[string][]string{requiredMachines: {}}},
			now:  night, replicas: 0, state: tkv1alpha1.HibernationHibernated, hibernated: "True/ControlPlaneAsleep", waking: "False/Sleeping",
			cpReady: tkv1alpha1.ReasonControlPlaneAsleep, askMachines: true, runAgain: 7 * time.Hour,
		},
		"too many machines to ask for": {
			call: fntest.Call{Spec: `{hibernation: {enabled: true}}`, Observed: map[string]string{mdName: mdWith(201)}, Required: map[string][]string{requiredMachines: {}}},
			now:  night, replicas: 2, state: tkv1alpha1.HibernationHibernating, hibernated: "False/ScalingDownWorkers", waking: "False/Sleeping",
			cpReady: tkv1alpha1.ReasonWaitingForEtcd,
		},
		"woken: control plane first": {
			call: fntest.Call{Spec: `{}`, XRStatus: `{hibernation: {state: Hibernated}}`}, now: night, replicas: 2, state: tkv1alpha1.HibernationWaking,
			hibernated: "False/Awake", waking: "True/WaitingForControlPlane", cpReady: tkv1alpha1.ReasonWaitingForEtcd,
		},
		"woken: workers next": {
			call: fntest.Call{Spec: `{nodeGroups: {md0: {minReplicas: 2}}}`, XRStatus: `{hibernation: {state: Waking}}`,
				Observed: map[string]string{function.KamajiControlPlaneResourceName: `{status: {ready: true}}`, mdName: mdWith(1)}},
			now: night, replicas: 2, state: tkv1alpha1.HibernationWaking, hibernated: "False/Awake", waking: "True/WaitingForWorkers",
			cpReady: tkv1alpha1.ReasonControlPlaneAvailable,
		},
		"woken: awake once workers at minimum": {
			call: fntest.Call{Spec: `{nodeGroups: {md0: {minReplicas: 2}}}`, XRStatus: `{hibernation: {state: Waking}}`,
				Observed: map[string]string{function.KamajiControlPlaneResourceName: `{status: {ready: true}}`, mdName: mdWith(2)}},
			now: night, replicas: 2, state: tkv1alpha1.HibernationAwake, hibernated: "False/Awake", waking: "False/Awake",
			cpReady: tkv1alpha1.ReasonControlPlaneAvailable,
		},
		"a tenant's word in status is not a state": {
			call: fntest.Call{Spec: `{}`, XRStatus: `{hibernation: {state: Asleep}}`}, now: night, replicas: 2, noHibernated: true,
			cpReady: tkv1alpha1.ReasonWaitingForEtcd,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := planAt(t, c.call, c.now)
			kcp := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, nameKamajiControlPlane)
			if kcp.Spec.Replicas == nil || *kcp.Spec.Replicas != c.replicas {
				t.Errorf("KamajiControlPlane replicas %v, want %d", kcp.Spec.Replicas, c.replicas)
			}
			if _, ok := p.Requirements[requiredMachines]; ok != c.askMachines {
				t.Errorf("asks for the Machines: %t, want %t", ok, c.askMachines)
			}
			if p.RunAgainAfter != c.runAgain {
				t.Errorf("RunAgainAfter %s, want %s", p.RunAgainAfter, c.runAgain)
			}
			if cp, n := condition(p, tkv1alpha1.ConditionControlPlaneReady); n != 1 || cp.Reason != c.cpReady {
				t.Errorf("ControlPlaneReady %d times, last %+v, want once with reason %s", n, cp, c.cpReady)
			}
			if c.noHibernated {
				if _, n := condition(p, tkv1alpha1.ConditionHibernated); n != 0 || p.Status["hibernation"] != nil {
					t.Errorf("Hibernated set %d times, status.hibernation %v; want neither", n, p.Status["hibernation"])
				}
				return
			}
			st, _ := p.Status["hibernation"].(tkv1alpha1.HibernationStatus)
			if st.State != c.state {
				t.Errorf("status.hibernation.state %q, want %q", st.State, c.state)
			}
			for typ, want := range map[string]string{tkv1alpha1.ConditionHibernated: c.hibernated, tkv1alpha1.ConditionWaking: c.waking} {
				got, n := condition(p, typ)
				status := "False"
				if got.True {
					status = "True"
				}
				if n != 1 || status+"/"+got.Reason != want {
					t.Errorf("%s %d times, %s/%s; want once %s", typ, n, status, got.Reason, want)
				}
			}
		})
	}
}

// A hibernated cluster's backups go on as an awake one's (etcd runs):
// the same snapshot and bundle, and the run again at the next slot.
func TestHibernatedClusterTakesBackups(t *testing.T) {
	key, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	required := backupRequired(key)
	required[requiredMachines] = nil
	p, err := planBackupsAt(t, fntest.Call{Spec: `{hibernation: {enabled: true}}`, Required: required}, backupInput, backupNow)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := p.Status["hibernation"].(tkv1alpha1.HibernationStatus); st.State != tkv1alpha1.HibernationHibernated {
		t.Fatalf("state %q, want Hibernated", st.State)
	}
	got := composedWithPrefix(p, backup.NamePrefixBackup)
	if len(got) != 3 || got[0] != "backup-"+slot24h || got[1] != "backup-pki-"+slot24h {
		t.Errorf("backups composed asleep: %v, want backup-%s, backup-pki-%s and the PKI object", got, slot24h, slot24h)
	}
	// As TestBackupRunsAgainAtTheNextSlot: the next 24h slot.
	if want := 6*time.Hour + 30*time.Minute + 44*time.Second; p.RunAgainAfter != want {
		t.Errorf("RunAgainAfter %s, want %s", p.RunAgainAfter, want)
	}
}

// Deleting a hibernated cluster goes in the order of any other: the
// Usage that keeps the control plane until node group md0 is gone stays
// composed (its MachineDeployment has no machine to drain), and the
// control plane and its data store stay in the desired state at zero
// replicas, never left out of it.
func TestHibernatedClusterKeepsDeletionOrder(t *testing.T) {
	c := fntest.Call{Spec: `{hibernation: {enabled: true}, nodeGroups: {md0: {minReplicas: 1}}}`, Required: map[string][]string{requiredMachines: {}}}
	p := planAt(t, c, night)
	if st, _ := p.Status["hibernation"].(tkv1alpha1.HibernationStatus); st.State != tkv1alpha1.HibernationHibernated {
		t.Fatalf("state %q, want Hibernated", st.State)
	}
	names := composedNames(p)
	for _, want := range []string{nameNodeGroupUsagePrefix + "md0", nameKamajiControlPlane, nameCluster} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s not composed while hibernated; composed %v", want, names)
		}
	}
}

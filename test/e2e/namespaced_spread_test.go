//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rollRecord is a TenantCluster's spread record as its Tenant keeps it on
// the CSI controller's ClusterRoleBinding (docs/architecture.md, The
// spread of namespaced clusters).
type rollRecord struct{ state, since, reason string }

func (a *namespacedAPI) rollRecord(ctx context.Context, n string) (rollRecord, error) {
	crb, err := get(ctx, a.e.c, gvkClusterRoleBinding, "", "tenantkube:kcsi-controller:"+v2NS+"."+n)
	if err != nil {
		return rollRecord{}, err
	}
	an := crb.GetAnnotations()
	return rollRecord{crb.GetLabels()["tenantkube.io/roll"], an["tenantkube.io/roll-since"], an["tenantkube.io/roll-reason"]}, nil
}

// mdTemplate is the machine template and generation of MachineDeployment
// <n>-md0 in v2NS.
func (a *namespacedAPI) mdTemplate(ctx context.Context, n string) (string, int64, error) {
	md, err := get(ctx, a.e.c, gvkMD, v2NS, n+"-md0")
	if err != nil {
		return "", 0, err
	}
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return ref, md.GetGeneration(), nil
}

// spreadCountsTenantClusters: with maxConcurrentRolls 1, every other
// cluster's window closed (maintenance.defaultWindow) and the windows of
// TenantClusters one and two open, a new container disk for their minor
// is a platform change both wait for. Both ask their Tenant for a slot
// (the request label on their KamajiControlPlanes); the Tenant admits
// one (its binding Rolling since an RFC 3339 instant, its MachineDeployment
// on a new template) and keeps the other Waiting (WaitingForRollSlot on
// its binding and in its MaintenancePending condition, its
// MachineDeployment untouched). The tenant cannot write the binding. With
// the settings put back the waiting cluster's record goes and the rolling
// one takes its first template again; the windows are put back last.
func (a *namespacedAPI) spreadCountsTenantClusters(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	kcp, err := get(ctx, e.c, gvkKCP, v2NS, "one")
	e.must(t, err, "KamajiControlPlane one")
	v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
	minor := v[:strings.LastIndex(v, ".")]
	first := map[string]string{}
	gen := map[string]int64{}
	for _, n := range []string{"one", "two"} {
		first[n], gen[n], err = a.mdTemplate(ctx, n)
		e.must(t, err, "MachineDeployment "+n+"-md0")
	}

	closed := time.Now().UTC().Add(12 * time.Hour).Format("15:04")
	e.setPlatformSettings(t, `{"maintenance":{"maxConcurrentRolls":1,"defaultWindow":{"start":"`+closed+`","duration":"30m"}}}`)
	t.Cleanup(func() { e.setPlatformSettings(t, `{"maintenance":null,"containerDiskImages":null}`) })
	open := time.Now().UTC().Add(-5 * time.Minute).Format("15:04")
	for _, n := range []string{"one", "two"} {
		e.must(t, mergePatch(ctx, a.user, gvkTenantCluster, v2NS, n, `{"spec":{"maintenance":{"window":{"start":"`+open+`","duration":"1h"}}}}`),
			v2User+" opens the window of TenantCluster "+n)
	}
	e.setPlatformSettings(t, `{"containerDiskImages":{"`+minor+`":"e2e.test/ubuntu-container-disk:spread"}}`)

	start := time.Now()
	var rolling, waiting string
	waitFor(t, 3*time.Minute, "one TenantCluster Rolling, the other Waiting for a slot", func(ctx context.Context) (bool, string, error) {
		rolling, waiting = "", ""
		var got []string
		for _, n := range []string{"one", "two"} {
			r, err := a.rollRecord(ctx, n)
			if err != nil {
				return false, "", err
			}
			got = append(got, fmt.Sprintf("%s %+v", n, r))
			if _, perr := time.Parse(time.RFC3339, r.since); r.state == "Rolling" && perr == nil {
				rolling = n
			}
			if r.state == "Waiting" && r.reason == "WaitingForRollSlot" {
				waiting = n
			}
		}
		return rolling != "" && waiting != "", strings.Join(got, "; "), nil
	})
	t.Logf("the Tenant admitted %s and kept %s waiting %.1fs after the platform change", rolling, waiting, time.Since(start).Seconds())

	waitFor(t, 2*time.Minute, "MachineDeployment "+rolling+"-md0 on a new template, TenantCluster "+waiting+" MaintenancePending WaitingForRollSlot", func(ctx context.Context) (bool, string, error) {
		ref, _, err := a.mdTemplate(ctx, rolling)
		if err != nil {
			return false, "", err
		}
		tc, err := get(ctx, e.c, gvkTenantCluster, v2NS, waiting)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(tc, "MaintenancePending")
		return ref != first[rolling] && s == "True" && r == "WaitingForRollSlot",
			fmt.Sprintf("%s-md0 template %s (was %s); %s MaintenancePending %s %s %s", rolling, ref, first[rolling], waiting, s, r, m), nil
	})
	if kcp, err := get(ctx, e.c, gvkKCP, v2NS, waiting); err != nil || kcp.GetLabels()["tenantkube.io/roll-request"] != "true" {
		errorf(t, "KamajiControlPlane %s: labels %v (%v), want tenantkube.io/roll-request true", waiting, kcp.GetLabels(), err)
	}
	e.reconcilesOf(t, gvkTenantCluster, v2NS, waiting, "workers", 2, time.Minute)
	if ref, g, err := a.mdTemplate(ctx, waiting); err != nil || ref != first[waiting] || g != gen[waiting] {
		errorf(t, "MachineDeployment %s-md0 of the waiting cluster: template %s generation %d (%v), want %s %d", waiting, ref, g, err, first[waiting], gen[waiting])
	}

	// The record is the platform's: the tenant cannot grant itself the slot.
	err = mergePatch(ctx, a.user, gvkClusterRoleBinding, "", "tenantkube:kcsi-controller:"+v2NS+"."+waiting,
		`{"metadata":{"labels":{"tenantkube.io/roll":"Rolling"},"annotations":{"tenantkube.io/roll-since":"2026-01-01T00:00:00Z"}}}`)
	if !kerrors.IsForbidden(err) {
		errorf(t, "%s labels the ClusterRoleBinding of %s Rolling: want Forbidden, got %v", v2User, waiting, err)
	}

	e.setPlatformSettings(t, `{"maintenance":null,"containerDiskImages":null}`)
	waitFor(t, 2*time.Minute, "the record of "+waiting+" gone, "+rolling+"-md0 on its first template", func(ctx context.Context) (bool, string, error) {
		r, err := a.rollRecord(ctx, waiting)
		if err != nil {
			return false, "", err
		}
		ref, _, err := a.mdTemplate(ctx, rolling)
		return r.state == "" && ref == first[rolling], fmt.Sprintf("%s record %+v; %s-md0 template %s", waiting, r, rolling, ref), err
	})
	if ref, g, err := a.mdTemplate(ctx, waiting); err != nil || ref != first[waiting] || g != gen[waiting] {
		errorf(t, "MachineDeployment %s-md0 after the settings were put back: template %s generation %d (%v), want %s %d", waiting, ref, g, err, first[waiting], gen[waiting])
	}
	for _, n := range []string{"one", "two"} {
		e.must(t, mergePatch(ctx, a.user, gvkTenantCluster, v2NS, n, `{"spec":{"maintenance":null}}`), v2User+" puts back the window of TenantCluster "+n)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// spreadMember is a cluster the spread scenario rolls: the claim demo or
// a TenantCluster of v2NS.
type spreadMember struct{ ns, name string }

func (m spreadMember) String() string { return m.ns + "/" + m.name }

// record is m's spread record: the labels and annotations of its claim's
// management Namespace, or of the CSI controller's ClusterRoleBinding
// its Tenant keeps (docs/architecture.md, The spread of namespaced
// clusters).
func (a *namespacedAPI) record(ctx context.Context, m spreadMember) (state, since, reason string, err error) {
	var o *unstructured.Unstructured
	if m.ns == v2NS {
		o, err = get(ctx, a.e.c, gvkClusterRoleBinding, "", "tenantkube:kcsi-controller:"+v2NS+"."+m.name)
	} else {
		o, err = get(ctx, a.e.c, gvkNamespace, "", fntest.ManagementNamespace(m.ns, m.name))
	}
	if err != nil {
		return "", "", "", err
	}
	an := o.GetAnnotations()
	return o.GetLabels()["tenantkube.io/roll"], an["tenantkube.io/roll-since"], an["tenantkube.io/roll-reason"], nil
}

// pending is m's MaintenancePending condition (the claim's for demo).
func (a *namespacedAPI) pending(ctx context.Context, m spreadMember) (status, reason string, err error) {
	gvk := gvkTenantCluster
	if m.ns != v2NS {
		gvk = gvkClaim
	}
	u, err := get(ctx, a.e.c, gvk, m.ns, m.name)
	if err != nil {
		return "", "", err
	}
	status, reason, _ = condition(u, "MaintenancePending")
	return status, reason, nil
}

// template is the machine template and generation of m's
// MachineDeployment md0.
func (a *namespacedAPI) template(ctx context.Context, m spreadMember) (string, int64, error) {
	md, err := get(ctx, a.e.c, gvkMD, m.ns, m.name+"-md0")
	if err != nil {
		return "", 0, err
	}
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return ref, md.GetGeneration(), nil
}

// spreadCountsTenantClusters: maxConcurrentRolls 1, every other
// cluster's window closed (maintenance.defaultWindow), and the windows of
// the claim demo and of TenantClusters one and two open; a new container
// disk for their minors is a platform change all three wait for. Exactly
// one of them rolls (its record Rolling since an RFC 3339 instant, its
// MachineDeployment on a new template); the other two wait
// (MaintenancePending WaitingForRollSlot, MachineDeployments untouched),
// and the two TenantClusters of v2NS hold at most one record between them.
// The tenant cannot write its binding. With the settings put back, no
// record is Waiting and every MachineDeployment is on its first template;
// the windows are put back last.
func (a *namespacedAPI) spreadCountsTenantClusters(t *testing.T) {
	e := a.e
	ctx, cancel := ctxT(6 * time.Minute)
	defer cancel()
	members := []spreadMember{{demoNS, demo}, {v2NS, "one"}, {v2NS, "two"}}
	first, gen := map[spreadMember]string{}, map[spreadMember]int64{}
	disks := map[string]any{}
	for _, m := range members {
		var err error
		first[m], gen[m], err = a.template(ctx, m)
		e.must(t, err, "MachineDeployment of "+m.String())
		kcp, err := get(ctx, e.c, gvkKCP, m.ns, m.name)
		e.must(t, err, "KamajiControlPlane "+m.String())
		v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
		disks[v[:strings.LastIndex(v, ".")]] = "e2e.test/ubuntu-container-disk:spread"
	}

	closed := time.Now().UTC().Add(12 * time.Hour).Format("15:04")
	e.setPlatformSettings(t, `{"maintenance":{"maxConcurrentRolls":1,"defaultWindow":{"start":"`+closed+`","duration":"30m"}}}`)
	t.Cleanup(func() { e.setPlatformSettings(t, `{"maintenance":null,"containerDiskImages":null}`) })
	window := `{"spec":{"maintenance":{"window":{"start":"` + time.Now().UTC().Add(-5*time.Minute).Format("15:04") + `","duration":"1h"}}}}`
	e.patchClaim(t, demoNS, demo, window)
	for _, n := range []string{"one", "two"} {
		e.must(t, mergePatch(ctx, a.user, gvkTenantCluster, v2NS, n, window), v2User+" opens the window of TenantCluster "+n)
	}
	// Each MachineDeployment's tenant inputs observed as they are, so the
	// platform's change is the only one (a tenant change rolls at once).
	e.reconciles(t, "workers", 2, time.Minute)
	for _, n := range []string{"one", "two"} {
		e.reconcilesOf(t, gvkTenantCluster, v2NS, n, "workers", 2, time.Minute)
	}
	raw, err := json.Marshal(map[string]any{"containerDiskImages": disks})
	e.must(t, err, "settings patch")
	e.setPlatformSettings(t, string(raw))

	start := time.Now()
	var rolling spreadMember
	check := func(ctx context.Context) (bool, string, error) {
		var got []string
		rolls, v2records := 0, 0
		settled := true
		for _, m := range members {
			state, since, reason, err := a.record(ctx, m)
			if err != nil {
				return false, "", err
			}
			status, why, err := a.pending(ctx, m)
			if err != nil {
				return false, "", err
			}
			ref, _, err := a.template(ctx, m)
			if err != nil {
				return false, "", err
			}
			got = append(got, fmt.Sprintf("%s: record %q since %q reason %q, MaintenancePending %s %s, template changed %t", m, state, since, reason, status, why, ref != first[m]))
			if m.ns == v2NS && state != "" {
				v2records++
			}
			if _, perr := time.Parse(time.RFC3339, since); state == "Rolling" && perr == nil {
				rolls++
				rolling = m
				settled = settled && ref != first[m]
				continue
			}
			settled = settled && status == "True" && why == "WaitingForRollSlot" && ref == first[m]
		}
		if rolls > 1 || v2records > 1 {
			return false, "", fmt.Errorf("%d clusters rolling (maxConcurrentRolls 1), %d records of %s: %s", rolls, v2records, v2NS, strings.Join(got, "; "))
		}
		return rolls == 1 && settled, strings.Join(got, "; "), nil
	}
	waitFor(t, 3*time.Minute, "one of the three clusters rolling, the other two waiting for the slot", check)
	t.Logf("%s admitted, the other two waiting, %.1fs after the platform change", rolling, time.Since(start).Seconds())
	e.reconciles(t, "workers", 2, time.Minute)
	for _, n := range []string{"one", "two"} {
		e.reconcilesOf(t, gvkTenantCluster, v2NS, n, "workers", 2, time.Minute)
	}
	if ok, got, err := check(ctx); !ok || err != nil {
		errorf(t, "after two more reconciles of each: %s %v", got, err)
	}
	for _, m := range members {
		if _, g, err := a.template(ctx, m); m != rolling && (err != nil || g != gen[m]) {
			errorf(t, "MachineDeployment of %s (waiting): generation %d -> %d (%v)", m, gen[m], g, err)
		}
	}

	// The record is the platform's: the tenant cannot grant itself a slot.
	err = mergePatch(ctx, a.user, gvkClusterRoleBinding, "", "tenantkube:kcsi-controller:"+v2NS+".two",
		`{"metadata":{"labels":{"tenantkube.io/roll":"Rolling"},"annotations":{"tenantkube.io/roll-since":"2026-01-01T00:00:00Z"}}}`)
	if !kerrors.IsForbidden(err) {
		errorf(t, "%s labels the ClusterRoleBinding of two Rolling: want Forbidden, got %v", v2User, err)
	}

	e.setPlatformSettings(t, `{"maintenance":null,"containerDiskImages":null}`)
	waitFor(t, 2*time.Minute, "no record Waiting, every MachineDeployment on its first template", func(ctx context.Context) (bool, string, error) {
		var got []string
		done := true
		for _, m := range members {
			state, _, _, err := a.record(ctx, m)
			if err != nil {
				return false, "", err
			}
			ref, _, err := a.template(ctx, m)
			if err != nil {
				return false, "", err
			}
			got = append(got, fmt.Sprintf("%s: record %q, template %s (first %s)", m, state, ref, first[m]))
			done = done && state != "Waiting" && ref == first[m]
		}
		return done, strings.Join(got, "; "), nil
	})
	e.patchClaim(t, demoNS, demo, `{"spec":{"maintenance":null}}`)
	for _, n := range []string{"one", "two"} {
		e.must(t, mergePatch(ctx, a.user, gvkTenantCluster, v2NS, n, `{"spec":{"maintenance":null}}`), v2User+" puts back the window of TenantCluster "+n)
	}
}

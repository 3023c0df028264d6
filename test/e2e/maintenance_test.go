//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// maintenanceHold: a platform change (the container disk of the claim's
// minor and cilium's chart version, an EnvironmentConfig change) outside
// the claim's maintenance window leaves the MachineDeployment (its
// generation, machine template and version), the KamajiControlPlane's
// version and cilium's HelmRelease chart version (0.1.0, listed in
// charts.cilium.earlierVersions) as they run, with MaintenancePending=True
// and status.maintenance naming md0 and addon/cilium; a window moved over
// the functions' clock (the real time) lets md0 roll and the release take
// the new version (>=0.1.0, a range the loopback repository's only
// version 0.1.0 satisfies), which source-controller resolves (its
// HelmChart Ready at the range). The settings and window are put back,
// through the open window, at the end.
func (e *env) maintenanceHold(t *testing.T) {
	ctx, cancel := ctxT(3 * time.Minute)
	defer cancel()
	kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
	e.must(t, err, "KamajiControlPlane")
	cpVersion, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
	minor := cpVersion[:strings.LastIndex(cpVersion, ".")]
	closed := time.Now().UTC().Add(12 * time.Hour).Format("15:04")
	e.patchClaim(t, demoNS, demo, `{"spec":{"maintenance":{"window":{"start":"`+closed+`","duration":"30m"}}}}`)
	e.reconciles(t, "workers", 2, time.Minute)
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	gen := md.GetGeneration()
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	version, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version")

	e.setPlatformSettings(t, `{"containerDiskImages":{"`+minor+`":"e2e.test/ubuntu-container-disk:maintenance"},`+
		`"charts":{"cilium":{"version":"`+ciliumRange+`","earlierVersions":["`+chartVersion+`"]}}}`)
	waitFor(t, time.Minute, "MaintenancePending=True naming nodeGroup/md0 and addon/cilium", func(ctx context.Context) (bool, string, error) {
		s, r, m, err := e.maintenanceCondition(ctx)
		return err == nil && s == "True" && r == "WaitingForWindow" && strings.Contains(m, "nodeGroup/md0") && strings.Contains(m, "addon/cilium"),
			fmt.Sprintf("%s %s %s %v", s, r, m, err), err
	})
	e.reconciles(t, "workers", 2, time.Minute)
	md, err = get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	gotRef, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	gotVersion, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version")
	if md.GetGeneration() != gen || gotRef != ref || gotVersion != version {
		errorf(t, "outside the window: MachineDeployment generation %d template %s version %s, want %d %s %s", md.GetGeneration(), gotRef, gotVersion, gen, ref, version)
	}
	kcp, err = get(ctx, e.c, gvkKCP, demoNS, demo)
	e.must(t, err, "KamajiControlPlane")
	if v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version"); v != cpVersion {
		errorf(t, "outside the window: KamajiControlPlane at %s, want %s", v, cpVersion)
	}
	if v, _, err := e.ciliumChart(ctx); err != nil || v != chartVersion {
		errorf(t, "outside the window: cilium's HelmRelease at chart %q (%v), want %s", v, err, chartVersion)
	}

	open := time.Now().UTC().Add(-5 * time.Minute).Format("15:04")
	e.patchClaim(t, demoNS, demo, `{"spec":{"maintenance":{"window":{"start":"`+open+`","duration":"1h"}}}}`)
	// The cluster publishes its Waiting record first and starts once it
	// has settled (maintenance.RollSettle).
	waitFor(t, 2*time.Minute, "md0 rolled to a new template inside the window, nothing pending", func(ctx context.Context) (bool, string, error) {
		_, now, err := e.mdAnnotations(ctx)
		if err != nil {
			return false, "", err
		}
		s, r, _, err := e.maintenanceCondition(ctx)
		return now != ref && s == "False" && r == "NothingPending", fmt.Sprintf("template %s (was %s), MaintenancePending=%s %s", now, ref, s, r), err
	})
	// The roll is recorded for the spread on the management Namespace
	// (docs/platform-guide.md, Spread) until md0 is up to date.
	mgmt, err := get(ctx, e.c, gvkNamespace, "", fntest.ManagementNamespace(demoNS, demo))
	e.must(t, err, "management namespace")
	md, err = get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	upToDate, _, _ := unstructured.NestedInt64(md.Object, "status", "upToDateReplicas")
	replicas, _, _ := unstructured.NestedInt64(md.Object, "status", "replicas")
	state, since := mgmt.GetLabels()["tenantkube.io/roll"], mgmt.GetAnnotations()["tenantkube.io/roll-since"]
	if (state != "Rolling" || since == "") && upToDate < replicas {
		errorf(t, "md0 rolling (%d of %d up to date), management namespace roll record %q since %q, want Rolling", upToDate, replicas, state, since)
	}
	t.Logf("inside the window: md0 %d of %d up to date, roll record %q since %q", upToDate, replicas, state, since)
	waitFor(t, time.Minute, "cilium's release and HelmChart at "+ciliumRange+", Ready", func(ctx context.Context) (bool, string, error) {
		v, chart, err := e.ciliumChart(ctx)
		return err == nil && v == ciliumRange && chart == "True", fmt.Sprintf("release at %q, HelmChart Ready=%s", v, chart), err
	})
	e.setPlatformSettings(t, `{"containerDiskImages":null,"charts":null}`)
	waitFor(t, 2*time.Minute, "md0 back on its first template", func(ctx context.Context) (bool, string, error) {
		_, now, err := e.mdAnnotations(ctx)
		return now == ref, "template " + now, err
	})
	e.patchClaim(t, demoNS, demo, `{"spec":{"maintenance":null}}`)
}

// maintenanceCondition is the claim's MaintenancePending condition.
func (e *env) maintenanceCondition(ctx context.Context) (status, reason, message string, err error) {
	cl, err := get(ctx, e.c, gvkClaim, demoNS, demo)
	if err != nil {
		return "", "", "", err
	}
	status, reason, message = condition(cl, "MaintenancePending")
	return status, reason, message, nil
}

// ciliumRange is the chart version the scenario moves cilium to: a range
// whose only match in the loopback repository is chartVersion.
const ciliumRange = ">=" + chartVersion

// ciliumChart is the chart version of the demo claim's cilium HelmRelease
// and the Ready status of the HelmChart helm-controller made for it, at
// that version (status.helmChart, <namespace>/<name>: helm-controller
// api/v2/helmrelease_types.go:1313); "" while the HelmChart is at another
// or source-controller has not observed its generation.
func (e *env) ciliumChart(ctx context.Context) (version, ready string, err error) {
	hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-cilium")
	if err != nil {
		return "", "", err
	}
	version, _, _ = unstructured.NestedString(hr.Object, "spec", "chart", "spec", "version")
	ref, _, _ := unstructured.NestedString(hr.Object, "status", "helmChart")
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return version, "", nil
	}
	chart, err := get(ctx, e.c, gvkHelmChart, ns, name)
	if err != nil {
		return version, "", nil
	}
	gen, _, _ := unstructured.NestedInt64(chart.Object, "status", "observedGeneration")
	if v, _, _ := unstructured.NestedString(chart.Object, "spec", "version"); v != version || gen != chart.GetGeneration() {
		return version, "", nil
	}
	ready, _, _ = condition(chart, "Ready")
	return version, ready, nil
}

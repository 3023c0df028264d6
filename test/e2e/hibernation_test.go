//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// hibernation: the demo cluster (md0 at minReplicas 1, add-ons installed)
// sleeps with spec.hibernation.enabled and wakes without it
// (docs/tenant-guide.md, Hibernation). Asleep: no Machine, the
// KamajiControlPlane at zero replicas only after that, every add-on
// release suspended, etcd and the PKI Secrets kept. Kamaji is played
// (playSleep, playWake). Asleep, a second field manager owns md0's
// spec.replicas 0 beside Crossplane (coOwnReplicas). Awake again: the
// control plane first, then one Machine (the function writes replicas 1
// until it is there, and leaves them to the autoscaler afterwards, which
// the later scenario autoscalerReplicasSurvive relies on), then the
// releases resumed; a
// ConfigMap written before sleep reads back through the admin kubeconfig
// issued before sleep.
func (e *env) hibernation(t *testing.T, ta *tenantAPI) {
	ctx, cancel := ctxT(4 * time.Minute)
	defer cancel()
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hibernation-probe", Namespace: "default"}, Data: map[string]string{"written": "before sleep"}}
	e.must(t, ta.c.Create(ctx, probe), "ConfigMap in the tenant cluster")
	admin := &corev1.Secret{}
	e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: demo + "-admin-kubeconfig"}, admin), "admin kubeconfig Secret")
	caBefore := &corev1.Secret{}
	e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: demo + "-ca"}, caBefore), "CA Secret")
	kcpBefore, err := get(ctx, e.c, gvkKCP, demoNS, demo)
	e.must(t, err, "KamajiControlPlane")
	cpReplicas, _, _ := unstructured.NestedInt64(kcpBefore.Object, "spec", "replicas")
	etcdBefore, err := get(ctx, e.c, gvkEtcd, demoNS, demo+"-etcd")
	e.must(t, err, "EtcdCluster")

	e.sleep(t, ta)
	e.checkControllerReplicas(t, 0)
	// Another field manager that wrote the same 0 (cluster-autoscaler, an
	// operator's kubectl scale) owns spec.replicas beside Crossplane, played
	// by a server-side apply under the autoscaler's name: once Crossplane
	// stops writing replicas the 0 stays, and Cluster API's webhook keeps
	// it (cluster-api v1.13.6 internal/webhooks/machinedeployment.go:356-359),
	// so waking must write the minimum.
	e.must(t, e.coOwnReplicas(ctx, "cluster-autoscaler"), "cluster-autoscaler applies spec.replicas 0")
	if mhc, err := get(ctx, e.c, gvkMHC, demoNS, demo+"-md0"); err != nil {
		errorf(t, "MachineHealthCheck kept: %v", err)
	} else if v, _, _ := unstructured.NestedInt64(mhc.Object, "spec", "remediation", "triggerIf", "unhealthyLessThanOrEqualTo"); v != 0 {
		errorf(t, "MachineHealthCheck unhealthyLessThanOrEqualTo %d asleep, want 0", v)
	}
	etcd, err := get(ctx, e.c, gvkEtcd, demoNS, demo+"-etcd")
	switch {
	case err != nil || etcd.GetUID() != etcdBefore.GetUID():
		errorf(t, "EtcdCluster %s-etcd not kept asleep: %v", demo, err)
	case etcd.GetGeneration() != etcdBefore.GetGeneration():
		errorf(t, "EtcdCluster %s-etcd spec changed asleep (generation %d -> %d)", demo, etcdBefore.GetGeneration(), etcd.GetGeneration())
	}
	if !ta.etcd.running() {
		errorf(t, "the tenant etcd stopped asleep")
	}

	wake := time.Now()
	e.patchClaim(t, demoNS, demo, `{"spec":{"hibernation":{"enabled":false}}}`)
	waitFor(t, time.Minute, "KamajiControlPlane back at its replicas, md0 still at 0", func(ctx context.Context) (bool, string, error) {
		kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		kr, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas")
		r, err := e.mdReplicas(ctx)
		if err == nil && r != 0 {
			return false, "", fmt.Errorf("MachineDeployment replicas %d before the control plane is ready", r)
		}
		return kr == cpReplicas, fmt.Sprintf("KamajiControlPlane replicas %d (want %d)", kr, cpReplicas), err
	})
	e.must(t, e.playWake(ctx, ta, cpReplicas), "play Kamaji bringing the control plane back")
	waitFor(t, 2*time.Minute, "one Machine of md0 again, releases resumed, Awake", func(ctx context.Context) (bool, string, error) {
		ms, err := e.machines(ctx)
		if err != nil {
			return false, "", err
		}
		suspended, err := e.releasesSuspended(ctx, true)
		if err != nil {
			return false, "", err
		}
		ok, why, err := e.xrHibernation(ctx, "Awake", "False")
		return ok && len(ms) == 1 && len(suspended) == 0, fmt.Sprintf("%d Machines, suspended %v, %s", len(ms), suspended, why), err
	})
	t.Logf("awake %s after the patch", time.Since(wake).Round(time.Second))
	e.checkControllerReplicas(t, 1)
	if a, _, err := e.mdAnnotations(ctx); err != nil || a[annMinSize] != "1" || a[annMaxSize] == "0" {
		errorf(t, "md0 bounds after waking: %v (%v), want min-size 1 as the spec", a, err)
	}

	// The same cluster: the CA unchanged, the pre-sleep kubeconfig reads
	// the pre-sleep ConfigMap.
	caAfter := &corev1.Secret{}
	e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: demo + "-ca"}, caAfter), "CA Secret after waking")
	if !bytes.Equal(caAfter.Data["ca.crt"], caBefore.Data["ca.crt"]) || !bytes.Equal(caAfter.Data["ca.key"], caBefore.Data["ca.key"]) {
		errorf(t, "Secret %s-ca changed across hibernation", demo)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(admin.Data["admin.conf"])
	e.must(t, err, "the admin kubeconfig issued before sleep")
	c, err := client.New(cfg, client.Options{})
	e.must(t, err, "client from the pre-sleep kubeconfig")
	got := &corev1.ConfigMap{}
	e.must(t, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: probe.Name}, got), "ConfigMap written before sleep, through the pre-sleep kubeconfig")
	if got.Data["written"] != "before sleep" || got.UID != probe.UID {
		errorf(t, "ConfigMap after waking: uid %s data %v, want uid %s data %v", got.UID, got.Data, probe.UID, probe.Data)
	}
	e.must(t, c.Delete(ctx, got), "delete the probe ConfigMap")
}

// sleep puts the demo cluster to sleep (spec.hibernation.enabled) and
// waits until it is Hibernated: first no Machine of md0 and its
// MachineDeployment at 0/0 (the KamajiControlPlane never at 0 while a
// Machine is left), then the KamajiControlPlane at 0 and every release
// suspended; Kamaji's scale-to-zero is played (playSleep).
func (e *env) sleep(t *testing.T, ta *tenantAPI) {
	t.Helper()
	ctx, cancel := ctxT(4 * time.Minute)
	defer cancel()
	start := time.Now()
	e.patchClaim(t, demoNS, demo, `{"spec":{"hibernation":{"enabled":true}}}`)
	// The control plane stays while a Machine is left.
	waitFor(t, 2*time.Minute, "no Machine of md0, MachineDeployment at 0/0", func(ctx context.Context) (bool, string, error) {
		ms, err := e.machines(ctx)
		if err != nil {
			return false, "", err
		}
		md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
		if err != nil {
			return false, "", err
		}
		r, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
		a := md.GetAnnotations()
		kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		kr, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas")
		if len(ms) > 0 && kr == 0 {
			return false, "", fmt.Errorf("KamajiControlPlane at 0 replicas while %d Machines are left", len(ms))
		}
		ok := len(ms) == 0 && r == 0 && a[annMinSize] == "0" && a[annMaxSize] == "0"
		return ok, fmt.Sprintf("%d Machines, replicas %d, min %q max %q", len(ms), r, a[annMinSize], a[annMaxSize]), nil
	})
	waitFor(t, time.Minute, "KamajiControlPlane at 0 replicas, releases suspended", func(ctx context.Context) (bool, string, error) {
		kcp, err := get(ctx, e.c, gvkKCP, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		kr, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas")
		running, err := e.releasesSuspended(ctx, false)
		return kr == 0 && len(running) == 0 && err == nil, fmt.Sprintf("replicas %d, not suspended %v", kr, running), err
	})
	e.must(t, e.playSleep(ctx, ta), "play Kamaji scaling the control plane to zero")
	waitFor(t, time.Minute, "Hibernated=True, status.hibernation.state Hibernated", func(ctx context.Context) (bool, string, error) {
		return e.xrHibernation(ctx, "Hibernated", "True")
	})
	t.Logf("asleep %s after the patch", time.Since(start).Round(time.Second))
}

// deleteAsleep: the demo cluster put to sleep (sleep: no Machine, no
// control-plane replica, releases suspended, its API server stopped) is
// deleted as any other (docs/tenant-guide.md, Hibernation): the claim and
// every object labelled with it gone within deleteBound, in the Usages'
// order (deleteAndWait).
func (e *env) deleteAsleep(t *testing.T, ta *tenantAPI) {
	e.sleep(t, ta)
	e.deleteAndWait(t, demoNS, demo)
}

// coOwnReplicas applies md0's spec.replicas 0 (server-side, field manager
// manager) and checks that manager owns it then (metadata.managedFields).
func (e *env) coOwnReplicas(ctx context.Context, manager string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkMD)
	u.SetNamespace(demoNS)
	u.SetName(demo + "-md0")
	if err := unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas"); err != nil {
		return err
	}
	//nolint:staticcheck // Patch with client.Apply works for unstructured objects.
	if err := e.c.Patch(ctx, u, client.Apply, client.FieldOwner(manager)); err != nil {
		return err
	}
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	if err != nil {
		return err
	}
	for _, m := range md.GetManagedFields() {
		if m.Manager == manager && m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"f:replicas"`) {
			return nil
		}
	}
	var managers []string
	for _, m := range md.GetManagedFields() {
		managers = append(managers, m.Manager+"/"+string(m.Operation))
	}
	return fmt.Errorf("%s owns no spec.replicas of %s-md0 after its apply (managers %v)", manager, demo, managers)
}

// checkControllerReplicas waits for the spec.replicas of the demo
// cluster's cluster-autoscaler, KubeVirt cloud controller and CSI
// controller Deployments in its management namespace to be want.
func (e *env) checkControllerReplicas(t *testing.T, want int64) {
	t.Helper()
	waitFor(t, time.Minute, fmt.Sprintf("per-cluster controllers at %d replicas", want), func(ctx context.Context) (bool, string, error) {
		var got []string
		ok := true
		for _, name := range []string{demo + "-cluster-autoscaler", demo + "-kccm", demo + "-kcsi-controller"} {
			dep, err := get(ctx, e.c, gvkDeployment, fntest.ManagementNamespace(demoNS, demo), name)
			if err != nil {
				return false, "", err
			}
			r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
			ok = ok && r == want
			got = append(got, fmt.Sprintf("%s %d", name, r))
		}
		return ok, fmt.Sprint(got), nil
	})
}

// Cluster API's autoscaler annotations of a MachineDeployment.
const (
	annMinSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	annMaxSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

// releasesSuspended lists the demo cluster's HelmReleases whose
// spec.suspend is suspended.
func (e *env) releasesSuspended(ctx context.Context, suspended bool) ([]string, error) {
	hrs, err := list(ctx, e.c, gvkHR, client.InNamespace(demoNS), client.MatchingLabels{labelCluster: demo})
	if err != nil {
		return nil, err
	}
	if len(hrs) == 0 {
		return nil, fmt.Errorf("no HelmRelease of %s", demo)
	}
	var out []string
	for _, hr := range hrs {
		if s, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend"); s == suspended {
			out = append(out, hr.GetName())
		}
	}
	return out, nil
}

// xrHibernation reports whether the demo XR's status.hibernation.state is
// state and its Hibernated condition has status hibernated.
func (e *env) xrHibernation(ctx context.Context, state, hibernated string) (bool, string, error) {
	name, err := e.xrName(ctx, demoNS, demo)
	if err != nil {
		return false, "", err
	}
	xr, err := get(ctx, e.c, gvkXR, "", name)
	if err != nil {
		return false, "", err
	}
	got, _, _ := unstructured.NestedString(xr.Object, "status", "hibernation", "state")
	s, r, _ := condition(xr, "Hibernated")
	w, wr, _ := condition(xr, "Waking")
	return got == state && s == hibernated, fmt.Sprintf("state %q, Hibernated=%s %s, Waking=%s %s", got, s, r, w, wr), nil
}

// playSleep does what Kamaji and its provider do once the
// KamajiControlPlane has zero replicas: the TenantControlPlane's
// Deployment scales to zero (the tenant API server process stops; etcd
// runs on) and Kamaji reports it Sleeping (Kamaji e51909fa
// internal/resources/k8s_deployment_resource.go:85-88), which the
// provider turns into status.ready false with zero replicas (provider
// v0.20.0 controllers/kamajicontrolplane_controller.go:294-300, 341-344).
func (e *env) playSleep(ctx context.Context, ta *tenantAPI) error {
	if !ta.api.stop() {
		return fmt.Errorf("the tenant kube-apiserver did not stop")
	}
	return patchAs(ctx, e.c, "kamaji-played-by-e2e", gvkKCP, demoNS, demo, "status", map[string]any{"status": map[string]any{
		"ready": false, "replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "upToDateReplicas": 0,
	}})
}

// playWake is playSleep undone once the KamajiControlPlane has replicas
// again: the same kube-apiserver (same etcd, same certificates, same
// port) starts, answers, and the provider reports the replicas ready
// (provider v0.20.0 controllers/kamajicontrolplane_controller.go:294-300,
// 341-344).
func (e *env) playWake(ctx context.Context, ta *tenantAPI, replicas int64) error {
	if err := ta.api.start(); err != nil {
		return err
	}
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if _, last = get(ctx, ta.c, gvkNamespace, "", "kube-system"); last == nil {
			break
		}
	}
	if last != nil {
		return fmt.Errorf("the tenant kube-apiserver does not answer after restart: %w\n%s", last, tail(ta.api.log, 20))
	}
	return patchAs(ctx, e.c, "kamaji-played-by-e2e", gvkKCP, demoNS, demo, "status", map[string]any{"status": map[string]any{
		"ready": true, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
	}})
}

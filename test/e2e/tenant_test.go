//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	gvkMachine = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}
	gvkKC      = schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfig"}
	gvkKVM     = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "KubevirtMachine"}
	gvkVM      = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}
)

// TestControllers runs the upstream controllers that build from the Go
// module proxy on what the functions compose, on a stack of its own (the
// same bring-up as TestE2E), with the demo claim selecting a copy of the
// Composition whose add-ons are charted from a loopback Helm repository the
// test serves (a small chart per add-on, named like the real one, that
// renders a ConfigMap of its values):
//   - Cluster API core manager and kubeadm bootstrap manager (v1.13) and the
//     Cluster API provider KubeVirt (v0.11), each with the flags of its own
//     Deployment, leader election off, its webhooks (defaulting, validation,
//     CRD conversion) served on 127.0.0.1 with a certificate of the test CA.
//   - Flux source-controller v1.9 and helm-controller v1.4 (v1.6 needs a
//     Helm fork the module proxy does not serve), with the flags of their
//     Deployments, leader election off; CRDs from their own modules.
//     Each controller runs under a ServiceAccount of its own through a
//     token, never as system:masters: Cluster API's and the provider's
//     bound to the ClusterRole of their module's config/rbac/role.yaml,
//     Flux's by the RBAC of the Flux release that ships helm-controller
//     v1.4.3 (controllerIdentities), helm-controller as cluster-admin.
//   - A second etcd + kube-apiserver is the tenant cluster's API server.
//
// cert-manager's controller does not build (its main module does not
// resolve): the etcd PKI Secrets are issued from each Certificate's spec
// (issueCertificates). Beyond that, exactly two parts are played, because
// they cannot run here:
//   - Kamaji (its module does not resolve on the module proxy): once the
//     KamajiControlPlane exists, the test writes what Kamaji writes: Secrets
//     N-admin-kubeconfig, N-ca and N-kubeconfig pointing at the tenant API
//     server, the KamajiControlPlane's controlPlaneEndpoint and status, and
//     the KubevirtCluster's endpoint and ready status (playKamaji). For
//     the claim deleted with its tenant API server down, also what Kamaji
//     does then: the KamajiControlPlane's status.ready false, and the
//     KamajiControlPlane as owner of those Secrets (Kamaji's
//     TenantControlPlane owns them), so they go with it
//     (deleteWithTenantDown).
//   - KubeVirt's virt-controller (no kubelet, no VMs here): VirtualMachine
//     and VirtualMachineInstance are open CRDs; VirtualMachines the provider
//     creates are stored as written and never boot, so no Machine ever gets
//     a Node (no status: kubevirt v1.9.0 pkg/virt-controller/watch/vm/vm.go:2457-2473).
func TestControllers(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		fatal(t, err)
	}
	// Logs of its own, so TestE2E's clean start keeps them.
	e.logs = filepath.Join(e.root, "_output", "e2e", "logs-controllers")
	_ = os.RemoveAll(e.logs)
	e.must(t, os.MkdirAll(e.logs, 0o755), "log directory")
	t.Cleanup(func() {
		stopAll()
		if !t.Failed() {
			_ = os.RemoveAll(e.work)
		}
	})
	t.Logf("work directory %s, component logs in %s", e.work, e.logs)
	var cs *controllers
	var ta *tenantAPI
	var fc *fluxControllers
	var repo *helmRepo
	t.Cleanup(func() {
		if repo != nil {
			_ = repo.srv.Close()
		}
	})
	if !scenario(t, "controllers: bring-up", func(t *testing.T) {
		e.up(t)
		step(t, "tenant kube-apiserver + etcd", func() (err error) { ta, err = e.startTenantAPI(demo); return err })
		step(t, "controller modules", func() (err error) { cs, err = e.newControllers(); return err })
		step(t, "Cluster API and KubeVirt provider CRDs", func() error { return e.installControllerCRDs(cs) })
		step(t, "controller webhooks on loopback", func() error { return e.installWebhooks(cs) })
		var kubeconfigs map[string]string
		step(t, "controllers' ServiceAccounts under their upstream ClusterRoles", func() error {
			ids, err := e.controllerIdentities(cs)
			if err != nil {
				return err
			}
			if kubeconfigs, err = e.setupIdentities(ids); err != nil {
				return err
			}
			for _, c := range cs.all() {
				c.kubeconfig = kubeconfigs[c.name]
			}
			return nil
		})
		step(t, "Cluster API managers", func() error { return e.startControllers(cs) })
		srcV, helmV := e.bringUpFlux(t, kubeconfigs, &fc, &repo)
		versions = append(versions, cs.versions()...)
		versions = append(versions,
			"Flux source-controller "+srcV+" (bin/source-controller) and helm-controller "+helmV+" (bin/helm-controller) under the RBAC of Flux "+fluxRelease+" (manifests/rbac: helm-controller cluster-admin, flux-edit and flux-view aggregated into admin, edit and view); charts from a loopback Helm repository the test serves")
		versions = append(versions, "tenant API server: second etcd + kube-apiserver; Kamaji and virt-controller played (TestControllers doc)")
	}) {
		t.FailNow()
	}
	if !scenario(t, "controllers: Cluster API builds the node group", func(t *testing.T) { e.capiBuildsNodeGroup(t, ta) }) {
		t.FailNow()
	}
	scenario(t, "etcd PKI issued from the Certificates (cert-manager played)", e.etcdPKI)
	scenario(t, "flux: add-ons installed into the tenant cluster", func(t *testing.T) { e.fluxInstallsAddons(t, ta) })
	scenario(t, "controllers: hibernation sleeps and wakes the cluster", func(t *testing.T) { e.hibernation(t, ta) })
	scenario(t, "flux: as Flux ships, only the platform reaches the management cluster through it", e.fluxBoundary)
	scenario(t, "controllers: autoscaler replicas survive reconciles", e.autoscalerReplicasSurvive)
	scenario(t, "controllers: quiet steady state", e.quietWithControllers)
	scenario(t, "controllers: MachineHealthCheck status", e.healthCheckStatus)
	scenario(t, "controllers: diskSize rolls through Cluster API", e.diskSizeRoll)
	scenario(t, "controllers: a platform change waits for the maintenance window", e.maintenanceHold)
	scenario(t, "flux: a failing chart retried, never uninstalled", func(t *testing.T) { e.failingChartRetried(t, ta) })
	scenario(t, "flux: a disabled add-on uninstalled from the tenant cluster", func(t *testing.T) { e.disabledAddonUninstalled(t, ta) })
	scenario(t, "controllers: management-plane cost per tenant cluster", e.managementCost)
	scenario(t, "flux: reference cost of one HelmRelease per tenant", func(t *testing.T) { e.helmReference(t, fc) })
	scenario(t, "flux: delete a claim with its tenant API server down", e.deleteWithTenantDown)
	scenario(t, "controllers: delete the claim asleep", func(t *testing.T) { e.deleteAsleep(t, ta) })
}

// xrSynced is the XR's Synced condition of claim ns/n, as text.
func (e *env) xrSynced(ctx context.Context, ns, n string) string {
	xr, err := e.xrName(ctx, ns, n)
	if err != nil {
		return err.Error()
	}
	u, err := get(ctx, e.c, gvkXR, "", xr)
	if err != nil {
		return err.Error()
	}
	s, r, m := condition(u, "Synced")
	return fmt.Sprintf("XR Synced=%s %s %q", s, r, m)
}

// machines lists the Machines of the demo node group md0.
func (e *env) machines(ctx context.Context) ([]unstructured.Unstructured, error) {
	return list(ctx, e.c, gvkMachine, client.InNamespace(demoNS),
		client.MatchingLabels{"cluster.x-k8s.io/deployment-name": demo + "-md0"})
}

func (e *env) machineSets(ctx context.Context) ([]unstructured.Unstructured, error) {
	return list(ctx, e.c, gvkMS, client.InNamespace(demoNS),
		client.MatchingLabels{"cluster.x-k8s.io/deployment-name": demo + "-md0"})
}

var joinToken = regexp.MustCompile(`token: "?([a-z0-9]{6})\.([a-z0-9]{16})"?`)

// capiBuildsNodeGroup applies the example claim with one node required and
// follows Cluster API from the MachineDeployment to a VirtualMachine.
func (e *env) capiBuildsNodeGroup(t *testing.T, ta *tenantAPI) {
	ctx, cancel := ctxT(10 * time.Minute)
	defer cancel()
	claim := e.claimYAML(t)
	e.must(t, unstructured.SetNestedField(claim.Object, int64(1), "spec", "nodeGroups", "md0", "minReplicas"), "minReplicas")
	e.must(t, unstructured.SetNestedField(claim.Object, e2eComposition, "spec", "compositionRef", "name"), "compositionRef")
	e.must(t, e.ensureNamespace(ctx, demoNS), "namespace")
	e.must(t, apply(ctx, e.c, claim), "apply the example claim with minReplicas 1")

	// Every composed object is admitted by Cluster API's and the provider's
	// webhooks (Crossplane reports a denial as Synced=False on the XR).
	waitFor(t, 3*time.Minute, "every composed object admitted", func(ctx context.Context) (bool, string, error) {
		why, err := e.expectedObjects(ctx, demoNS, demo, withCertManager())
		if err != nil || why != "" {
			return false, why + "; " + e.xrSynced(ctx, demoNS, demo), err
		}
		return true, "", nil
	})
	e.must(t, e.playKamaji(ctx, ta, demoNS, demo), "play Kamaji")

	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	e.must(t, err, "MachineDeployment")
	kmtName, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	// The MachineDeployment webhook defaulted replicas from the autoscaler's
	// min-size annotation (the function leaves replicas to the autoscaler).
	if r, ok, _ := unstructured.NestedInt64(md.Object, "spec", "replicas"); !ok || r != 1 {
		errorf(t, "MachineDeployment spec.replicas = %d (set %t), want 1 (defaulted by CAPI from min-size 1)", r, ok)
	}

	waitFor(t, 2*time.Minute, "Cluster provisioned and its control plane initialized", func(ctx context.Context) (bool, string, error) {
		c, err := get(ctx, e.c, gvkCluster, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		infra, _, _ := unstructured.NestedBool(c.Object, "status", "initialization", "infrastructureProvisioned")
		cp, _, _ := unstructured.NestedBool(c.Object, "status", "initialization", "controlPlaneInitialized")
		host, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneEndpoint", "host")
		port, _, _ := unstructured.NestedInt64(c.Object, "spec", "controlPlaneEndpoint", "port")
		ok := infra && cp && host == "127.0.0.1" && port == int64(ta.apiPort)
		return ok, fmt.Sprintf("infrastructureProvisioned=%t controlPlaneInitialized=%t endpoint %s:%d", infra, cp, host, port), nil
	})

	var ms unstructured.Unstructured
	var machine unstructured.Unstructured
	waitFor(t, 3*time.Minute, "a MachineSet of the MachineDeployment and its Machine", func(ctx context.Context) (bool, string, error) {
		sets, err := e.machineSets(ctx)
		if err != nil {
			return false, "", err
		}
		if len(sets) != 1 {
			return false, fmt.Sprintf("%d MachineSets", len(sets)), nil
		}
		ms = sets[0]
		ms2, err := e.machines(ctx)
		if err != nil {
			return false, "", err
		}
		if len(ms2) != 1 {
			return false, fmt.Sprintf("%d Machines", len(ms2)), nil
		}
		machine = ms2[0]
		return true, "", nil
	})
	if ref := metav1.GetControllerOf(&ms); ref == nil || ref.Kind != "MachineDeployment" || ref.Name != demo+"-md0" {
		errorf(t, "MachineSet %s controller %v, want MachineDeployment %s-md0", ms.GetName(), ref, demo)
	}
	if r, _, _ := unstructured.NestedInt64(ms.Object, "spec", "replicas"); r != 1 {
		errorf(t, "MachineSet %s spec.replicas %d, want 1", ms.GetName(), r)
	}
	for _, c := range []struct{ path []string }{
		{[]string{"spec", "template", "spec", "infrastructureRef", "name"}},
		{[]string{"spec", "template", "spec", "bootstrap", "configRef", "name"}},
		{[]string{"spec", "template", "spec", "version"}},
	} {
		want, _, _ := unstructured.NestedString(md.Object, c.path...)
		got, _, _ := unstructured.NestedString(ms.Object, c.path...)
		if got != want || got == "" {
			errorf(t, "MachineSet %s .%s = %q, want the MachineDeployment's %q", ms.GetName(), strings.Join(c.path, "."), got, want)
		}
	}
	if v, _, _ := unstructured.NestedString(machine.Object, "spec", "version"); v != patchVersion {
		errorf(t, "Machine %s spec.version %q, want %s", machine.GetName(), v, patchVersion)
	}

	// Bootstrap: the kubeadm bootstrap controller wrote join data with a
	// bootstrap token that exists in the tenant cluster.
	var dataSecret string
	waitFor(t, 3*time.Minute, "bootstrap data of the Machine", func(ctx context.Context) (bool, string, error) {
		m, err := get(ctx, e.c, gvkMachine, demoNS, machine.GetName())
		if err != nil {
			return false, "", err
		}
		dataSecret, _, _ = unstructured.NestedString(m.Object, "spec", "bootstrap", "dataSecretName")
		kcName, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "configRef", "name")
		kc, _ := get(ctx, e.c, gvkKC, demoNS, kcName)
		return dataSecret != "", fmt.Sprintf("Machine bootstrap.dataSecretName %q; KubeadmConfig %s conditions %v", dataSecret, kcName, conditionsOf(kc)), nil
	})
	sec := &corev1.Secret{}
	e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: dataSecret}, sec), "bootstrap data Secret")
	data := string(sec.Data["value"])
	if !strings.Contains(data, "kubeadm join") && !strings.Contains(data, "kubeadm-join-config.yaml") {
		errorf(t, "bootstrap data %s has no kubeadm join:\n%s", dataSecret, data)
	}
	// It joins the endpoint our KubeadmConfigTemplate names (the tenant API
	// Service by its fully qualified name under the platform's default
	// clusterDomain: a VM resolves it without the management cluster's
	// search path) and pins the tenant cluster's CA, the one Kamaji wrote to
	// N-ca (kubeadm's sha256 of the public key info).
	kct, err := get(ctx, e.c, gvkKCT, demoNS, demo+"-md0")
	e.must(t, err, "KubeadmConfigTemplate")
	endpoint, _, _ := unstructured.NestedString(kct.Object, "spec", "template", "spec", "joinConfiguration", "discovery", "bootstrapToken", "apiServerEndpoint")
	if endpoint != demo+"."+demoNS+".svc.cluster.local:6443" {
		errorf(t, "KubeadmConfigTemplate join endpoint %q, want %s.%s.svc.cluster.local:6443 (the tenant API Service)", endpoint, demo, demoNS)
	}
	if !strings.Contains(data, "apiServerEndpoint: "+endpoint) {
		errorf(t, "bootstrap data %s does not join %s:\n%s", dataSecret, endpoint, data)
	}
	spki := sha256.Sum256(ta.ca.cert.RawSubjectPublicKeyInfo)
	if h := "sha256:" + hex.EncodeToString(spki[:]); !strings.Contains(data, h) {
		errorf(t, "bootstrap data %s does not pin the tenant CA (caCertHashes %s):\n%s", dataSecret, h, data)
	}
	m := joinToken.FindStringSubmatch(data)
	if m == nil {
		fatalf(t, "bootstrap data %s carries no bootstrap token:\n%s", dataSecret, data)
	}
	tok := &corev1.Secret{}
	e.must(t, ta.c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "bootstrap-token-" + m[1]}, tok), "bootstrap token Secret in the tenant cluster")
	if string(tok.Data["token-id"]) != m[1] || string(tok.Data["token-secret"]) != m[2] || string(tok.Data["usage-bootstrap-authentication"]) != "true" {
		errorf(t, "tenant bootstrap-token-%s: token-id %q, usage-bootstrap-authentication %q", m[1], tok.Data["token-id"], tok.Data["usage-bootstrap-authentication"])
	}

	// The KubeVirt provider made the VirtualMachine from our template.
	kmt, err := get(ctx, e.c, gvkKMT, demoNS, kmtName)
	e.must(t, err, "KubevirtMachineTemplate")
	kvmName, _, _ := unstructured.NestedString(machine.Object, "spec", "infrastructureRef", "name")
	var vm *unstructured.Unstructured
	waitFor(t, 3*time.Minute, "VirtualMachine of KubevirtMachine "+kvmName, func(ctx context.Context) (bool, string, error) {
		vm, err = get(ctx, e.c, gvkVM, demoNS, kvmName)
		if err != nil {
			kvm, _ := get(ctx, e.c, gvkKVM, demoNS, kvmName)
			return false, fmt.Sprintf("%v; KubevirtMachine conditions %v", err, conditionsOf(kvm)), nil
		}
		return true, "", nil
	})
	want := func(path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(kmt.Object, append([]string{"spec", "template", "spec", "virtualMachineTemplate", "spec"}, path...)...)
		return v
	}
	got := func(path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(vm.Object, append([]string{"spec"}, path...)...)
		return v
	}
	if it := fmt.Sprint(got("instancetype", "name")); it != "u1.medium" {
		errorf(t, "VirtualMachine %s instancetype %q, want u1.medium (claim)", kvmName, it)
	}
	for _, p := range [][]string{
		{"instancetype"},
		{"runStrategy"},
		{"template", "spec", "evictionStrategy"},
		{"template", "spec", "domain", "resources"},
		{"template", "spec", "networks"},
	} {
		if fmt.Sprint(got(p...)) != fmt.Sprint(want(p...)) {
			errorf(t, "VirtualMachine %s .spec.%s = %v, want the template's %v", kvmName, strings.Join(p, "."), got(p...), want(p...))
		}
	}
	// The provider adds its cloud-init disk to ours.
	disks, _ := got("template", "spec", "domain", "devices", "disks").([]any)
	var ours []any
	cloudInitDisk := false
	for _, d := range disks {
		if name, _, _ := unstructured.NestedString(d.(map[string]any), "name"); name == "cloudinitvolume" {
			cloudInitDisk = true
			continue
		}
		ours = append(ours, d)
	}
	if w := want("template", "spec", "domain", "devices", "disks"); !cloudInitDisk || fmt.Sprint(ours) != fmt.Sprint(w) {
		errorf(t, "VirtualMachine %s disks %v, want the template's %v and the provider's cloudinitvolume", kvmName, disks, w)
	}
	dvts, _ := got("dataVolumeTemplates").([]any)
	wantDVTs, _ := want("dataVolumeTemplates").([]any)
	if len(dvts) != len(wantDVTs) || len(dvts) == 0 {
		errorf(t, "VirtualMachine %s has %d DataVolume templates, the template %d", kvmName, len(dvts), len(wantDVTs))
	} else {
		dv := dvts[0].(map[string]any)
		size, _, _ := unstructured.NestedString(dv, "spec", "storage", "resources", "requests", "storage")
		if size != "20Gi" {
			errorf(t, "VirtualMachine %s DataVolume template storage %q, want 20Gi (claim diskSize)", kvmName, size)
		}
		if fmt.Sprint(dv["spec"]) != fmt.Sprint(wantDVTs[0].(map[string]any)["spec"]) {
			errorf(t, "VirtualMachine %s DataVolume template spec %v, want the template's %v", kvmName, dv["spec"], wantDVTs[0].(map[string]any)["spec"])
		}
	}
	// Its cloud-init carries the bootstrap data, copied by the provider.
	vols, _ := got("template", "spec", "volumes").([]any)
	userdata := ""
	for _, v := range vols {
		if name, _, _ := unstructured.NestedString(v.(map[string]any), "cloudInitNoCloud", "secretRef", "name"); name != "" {
			userdata = name
		}
		if name, _, _ := unstructured.NestedString(v.(map[string]any), "cloudInitConfigDrive", "secretRef", "name"); name != "" {
			userdata = name
		}
	}
	if userdata != dataSecret+"-userdata" {
		errorf(t, "VirtualMachine %s cloud-init Secret %q, want %s-userdata", kvmName, userdata, dataSecret)
	} else {
		ud := &corev1.Secret{}
		e.must(t, e.c.Get(ctx, client.ObjectKey{Namespace: demoNS, Name: userdata}, ud), "userdata Secret")
		if !strings.Contains(string(ud.Data["userdata"]), m[1]+"."+m[2]) {
			errorf(t, "userdata Secret %s does not carry the join token", userdata)
		}
	}
	t.Logf("MachineSet %s, Machine %s, VirtualMachine %s, bootstrap token %s in the tenant cluster", ms.GetName(), machine.GetName(), kvmName, m[1])
}

func conditionsOf(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			out = append(out, fmt.Sprintf("%v=%v(%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	sort.Strings(out)
	return out
}

// scaleMD writes the MachineDeployment's replicas through its scale
// subresource, as cluster-autoscaler's clusterapi provider does.
func (e *env) scaleMD(ctx context.Context, replicas int64) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkMD)
	u.SetNamespace(demoNS)
	u.SetName(demo + "-md0")
	return e.c.SubResource("scale").Patch(ctx, u,
		client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))),
		client.FieldOwner("cluster-autoscaler"))
}

func (e *env) mdReplicas(ctx context.Context) (int64, error) {
	md, err := get(ctx, e.c, gvkMD, demoNS, demo+"-md0")
	if err != nil {
		return 0, err
	}
	r, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
	return r, nil
}

func (e *env) waitMachines(t *testing.T, n int) {
	t.Helper()
	waitFor(t, 3*time.Minute, fmt.Sprintf("%d Machines of md0", n), func(ctx context.Context) (bool, string, error) {
		ms, err := e.machines(ctx)
		if err != nil {
			return false, "", err
		}
		return len(ms) == n, fmt.Sprintf("%d Machines", len(ms)), nil
	})
}

// autoscalerReplicasSurvive: replicas written by a stand-in autoscaler stay
// through 20 reconciles and a change of minReplicas in the claim.
func (e *env) autoscalerReplicasSurvive(t *testing.T) {
	ctx, cancel := ctxT(5 * time.Minute)
	defer cancel()
	e.must(t, e.scaleMD(ctx, 2), "scale md0 to 2 through the scale subresource")
	e.waitMachines(t, 2)
	e.reconciles(t, "workers", 20, 4*time.Minute)
	if r, err := e.mdReplicas(ctx); err != nil || r != 2 {
		errorf(t, "after 20 reconciles MachineDeployment replicas = %d (%v), want 2 (the autoscaler's)", r, err)
	}
	e.patchClaim(t, demoNS, demo, `{"spec":{"nodeGroups":{"md0":{"minReplicas":0}}}}`)
	waitFor(t, 2*time.Minute, "min-size 0 on the MachineDeployment", func(ctx context.Context) (bool, string, error) {
		a, _, err := e.mdAnnotations(ctx)
		if err != nil {
			return false, "", err
		}
		return a["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] == "0", fmt.Sprint(a), nil
	})
	e.reconciles(t, "workers", 3, time.Minute)
	if r, err := e.mdReplicas(ctx); err != nil || r != 2 {
		errorf(t, "after minReplicas 1 -> 0 MachineDeployment replicas = %d (%v), want 2 (the autoscaler's)", r, err)
	}
	e.waitMachines(t, 2)
}

// crossplaneWrites is, per composed object, the managedFields entries of
// Crossplane's field managers (manager, operation, time): unchanged entries
// mean Crossplane wrote nothing to the object.
func crossplaneWrites(u *unstructured.Unstructured) string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		if !strings.Contains(mf.Manager, "crossplane") {
			continue
		}
		ts := ""
		if mf.Time != nil {
			ts = mf.Time.UTC().Format(time.RFC3339)
		}
		out = append(out, fmt.Sprintf("%s/%s/%s@%s", mf.Manager, mf.Operation, mf.Subresource, ts))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// quietWithControllers: with Cluster API and the provider acting on the
// objects, 20 reconciles change no composed object's spec (generation) and
// Crossplane writes to none (its managedFields stay as they were); what
// changes is the controllers' status and metadata.
func (e *env) quietWithControllers(t *testing.T) {
	e.reconciles(t, "workers", 3, time.Minute)
	before := e.snapshot(t, demo)
	e.reconciles(t, "addons", 20, 4*time.Minute)
	after := e.snapshot(t, demo)
	e.compare(t, "20 reconciles with the controllers running", before, after, false)
	var problems []string
	for k, b := range before {
		a, ok := after[k]
		if !ok {
			continue
		}
		bw := crossplaneWrites(&unstructured.Unstructured{Object: b.obj})
		aw := crossplaneWrites(&unstructured.Unstructured{Object: a.obj})
		if bw != aw {
			problems = append(problems, fmt.Sprintf("%s: %s -> %s", k, bw, aw))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		errorf(t, "Crossplane wrote %d of %d composed objects during 20 reconciles:\n  %s", len(problems), len(before), strings.Join(problems, "\n  "))
	}
	t.Logf("%d composed objects, none written by Crossplane in 20 reconciles", len(before))
}

var _ = kerrors.IsNotFound

// diskSizeRoll: a new diskSize gives a new KubevirtMachineTemplate and
// Cluster API rolls the node group onto it with a new MachineSet; the old
// template is kept exactly as long as a MachineSet refers to it (CAPI keeps
// the old MachineSet until it is scaled to zero, here by the stand-in
// autoscaler, as no machine ever gets a node).
func (e *env) diskSizeRoll(t *testing.T) {
	ctx, cancel := ctxT(10 * time.Minute)
	defer cancel()
	_, oldKMT, err := e.mdAnnotations(ctx)
	e.must(t, err, "MachineDeployment")
	sets, err := e.machineSets(ctx)
	e.must(t, err, "MachineSets")
	if len(sets) != 1 {
		fatalf(t, "%d MachineSets before the roll, want 1", len(sets))
	}
	oldMS := sets[0].GetName()
	e.patchClaim(t, demoNS, demo, `{"spec":{"nodeGroups":{"md0":{"diskSize":"30Gi"}}}}`)
	var newKMT, newMS string
	waitFor(t, 3*time.Minute, "a new MachineSet on a new KubevirtMachineTemplate", func(ctx context.Context) (bool, string, error) {
		_, ref, err := e.mdAnnotations(ctx)
		if err != nil {
			return false, "", err
		}
		if ref == oldKMT {
			return false, "MachineDeployment still on " + oldKMT, nil
		}
		newKMT = ref
		sets, err := e.machineSets(ctx)
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, s := range sets {
			infra, _, _ := unstructured.NestedString(s.Object, "spec", "template", "spec", "infrastructureRef", "name")
			names = append(names, s.GetName()+"->"+infra)
			if infra == newKMT && s.GetName() != oldMS {
				newMS = s.GetName()
			}
		}
		return newMS != "", fmt.Sprintf("MachineSets %v", names), nil
	})
	kmt, err := get(ctx, e.c, gvkKMT, demoNS, newKMT)
	e.must(t, err, "new KubevirtMachineTemplate")
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		fatalf(t, "new KubevirtMachineTemplate %s has no DataVolume template", newKMT)
	}
	if size, _, _ := unstructured.NestedString(dvts[0].(map[string]any), "spec", "storage", "resources", "requests", "storage"); size != "30Gi" {
		errorf(t, "new KubevirtMachineTemplate %s disk %q, want 30Gi", newKMT, size)
	}
	// Several reconciles while the old MachineSet exists: its template stays.
	e.reconciles(t, "workers", 5, 2*time.Minute)
	if _, err := get(ctx, e.c, gvkMS, demoNS, oldMS); err != nil {
		fatalf(t, "old MachineSet %s: %v (CAPI removed it before the scale to zero)", oldMS, err)
	}
	if _, err := get(ctx, e.c, gvkKMT, demoNS, oldKMT); err != nil {
		errorf(t, "old KubevirtMachineTemplate %s gone while MachineSet %s refers to it: %v", oldKMT, oldMS, err)
	}
	e.must(t, e.scaleMD(ctx, 0), "scale md0 to 0")
	early := false
	waitFor(t, 4*time.Minute, "CAPI removing the old MachineSet, then the old template gone", func(ctx context.Context) (bool, string, error) {
		_, msErr := get(ctx, e.c, gvkMS, demoNS, oldMS)
		_, kmtErr := get(ctx, e.c, gvkKMT, demoNS, oldKMT)
		if msErr == nil && kerrors.IsNotFound(kmtErr) {
			early = true
			return true, "", nil
		}
		return kerrors.IsNotFound(msErr) && kerrors.IsNotFound(kmtErr), fmt.Sprintf("old MachineSet: %v; old template: %v", msErr, kmtErr), nil
	})
	if early {
		fatalf(t, "old KubevirtMachineTemplate %s gone while MachineSet %s still exists", oldKMT, oldMS)
	}
	if _, err := get(ctx, e.c, gvkKMT, demoNS, newKMT); err != nil {
		errorf(t, "new KubevirtMachineTemplate %s: %v", newKMT, err)
	}
	if _, err := get(ctx, e.c, gvkMS, demoNS, newMS); err != nil {
		errorf(t, "new MachineSet %s: %v", newMS, err)
	}
	e.waitMachines(t, 0)
}

// healthCheckStatus: the MachineHealthCheck is admitted and Cluster API
// checks the node group's machines with it. The claim keeps the default
// node startup timeout (20 minutes), so the status asserted is
// the one it reaches before that: both machines targeted, none healthy (no
// node), none remediated yet.
func (e *env) healthCheckStatus(t *testing.T) {
	var names []string
	waitFor(t, 2*time.Minute, "MachineHealthCheck status over the node group's 2 machines", func(ctx context.Context) (bool, string, error) {
		ms, err := e.machines(ctx)
		if err != nil {
			return false, "", err
		}
		names = names[:0]
		for _, m := range ms {
			names = append(names, m.GetName())
		}
		sort.Strings(names)
		mhc, err := get(ctx, e.c, gvkMHC, demoNS, demo+"-md0")
		if err != nil {
			return false, "", err
		}
		expected, _, _ := unstructured.NestedInt64(mhc.Object, "status", "expectedMachines")
		healthy, okH, _ := unstructured.NestedInt64(mhc.Object, "status", "currentHealthy")
		targets, _, _ := unstructured.NestedStringSlice(mhc.Object, "status", "targets")
		ok := expected == 2 && okH && healthy == 0 && strings.Join(targets, ",") == strings.Join(names, ",")
		return ok, fmt.Sprintf("expectedMachines %d currentHealthy %d (set %t) targets %v, machines %v", expected, healthy, okH, targets, names), nil
	})
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	ms, err := e.machines(ctx)
	e.must(t, err, "Machines")
	for i := range ms {
		for _, c := range conditionsOf(&ms[i]) {
			if strings.HasPrefix(c, "HealthCheckSucceeded=False") || strings.HasPrefix(c, "OwnerRemediated=") {
				errorf(t, "Machine %s remediated before the 10-minute node startup timeout: %s", ms[i].GetName(), c)
			}
		}
	}
}

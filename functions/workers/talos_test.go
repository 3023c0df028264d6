package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/schema"
)

// defaultSchematic is the Cozystack chart's talos.schematicID default.
const defaultSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

// machineTemplateOf returns the desired KubevirtMachineTemplate of group g.
func machineTemplateOf(t *testing.T, rsp *fnv1.RunFunctionResponse, g string) (string, map[string]any) {
	t.Helper()
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, "nodegroup-"+g+"-machinetemplate-") {
			return n, desired(t, rsp, n)
		}
	}
	t.Fatalf("no machine template of %s among %v", g, desiredNames(rsp))
	return "", nil
}

// talosPatchOf returns the one strategic patch of group g's
// TalosConfigTemplate, decoded.
func talosPatchOf(t *testing.T, rsp *fnv1.RunFunctionResponse, g string) map[string]any {
	t.Helper()
	tct := desired(t, rsp, talosBootstrapResourceName(g))
	patches, _ := get(tct, "spec", "template", "spec", "strategicPatches").([]any)
	if len(patches) != 1 {
		t.Fatalf("strategicPatches = %v, want one", patches)
	}
	var out map[string]any
	if err := sigsyaml.Unmarshal([]byte(patches[0].(string)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Test PEM contents of the observed Secrets (the function copies the
// certificates and derives from the key; it never parses them).
const (
	testTalosCACert   = "-----BEGIN CERTIFICATE-----\ntalos ca\n-----END CERTIFICATE-----\n"
	testTalosCAKey    = "-----BEGIN EC PRIVATE KEY-----\ntalos key\n-----END EC PRIVATE KEY-----\n"
	testClusterCACert = "-----BEGIN CERTIFICATE-----\nkamaji ca\n-----END CERTIFICATE-----\n"
)

// withTalosPKI answers the Talos PKI requirements with the Secrets
// N-talos-ca (cert-manager's keys) and N-ca (Kamaji's).
func withTalosPKI(t testing.TB) fntest.RequestOption {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	ca := mustStruct(t, `apiVersion: v1
kind: Secret
metadata: {name: demo-talos-ca, namespace: tenant-foo}
type: kubernetes.io/tls
data: {tls.crt: `+b64(testTalosCACert)+`, tls.key: `+b64(testTalosCAKey)+`, ca.crt: `+b64(testTalosCACert)+`}`)
	cluster := mustStruct(t, `apiVersion: v1
kind: Secret
metadata: {name: demo-ca, namespace: tenant-foo}
data: {ca.crt: `+b64(testClusterCACert)+`, ca.key: `+b64("kamaji key")+`}`)
	return func(r *fnv1.RunFunctionRequest) {
		fntest.WithRequired(requirementTalosCA, ca)(r)
		fntest.WithRequired(requirementClusterCA, cluster)(r)
	}
}

func workersInput(t *testing.T, y string) fntest.RequestOption {
	return fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\n"+y))
}

// TestTalosGroupObjects: a Talos group gets TalosConfigTemplate N-G (no
// KubeadmConfigTemplate), a MachineDeployment whose bootstrap.configRef
// names it, and a VM whose only disk is disk-system imported over HTTP
// from the Image Factory, of diskSize; the values are the chart's
// defaults and the URL shape, written here by hand.
func TestTalosGroupObjects(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}, diskSize: 30Gi, storageClass: fast}}`, withMachineSets(t), withTalosPKI(t), withRemoteClasses(t, "fast")))
	mustNoFatal(t, rsp)
	names := desiredNames(rsp)
	for _, n := range names {
		if n == bootstrapResourceName("md0") {
			t.Errorf("a Talos group composes a KubeadmConfigTemplate (%s)", n)
		}
	}
	tct := desired(t, rsp, talosBootstrapResourceName("md0"))
	for path, want := range map[string]any{
		"apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha3", "kind": "TalosConfigTemplate",
		"metadata.name": "demo-md0", "metadata.namespace": "tenant-foo",
		"spec.template.spec.generateType": "join", "spec.template.spec.talosVersion": "v1.13.6",
		"spec.template.spec.hostname.source": "MachineName",
	} {
		if got := get(tct, toPath(path)...); got != want {
			t.Errorf("TalosConfigTemplate %s = %v, want %v", path, got, want)
		}
	}
	md := desired(t, rsp, machineDeploymentResourceName("md0"))
	ref := get(md, "spec", "template", "spec", "bootstrap", "configRef").(map[string]any)
	if diff := cmp.Diff(map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "TalosConfigTemplate", "name": "demo-md0"}, ref); diff != "" {
		t.Errorf("bootstrap.configRef (-want +got):\n%s", diff)
	}
	_, kmt := machineTemplateOf(t, rsp, "md0")
	if got := get(md, "spec", "template", "spec", "infrastructureRef", "name"); got != get(kmt, "metadata", "name") {
		t.Errorf("infrastructureRef.name = %v, want the machine template %v", got, get(kmt, "metadata", "name"))
	}
	spec := get(kmt, "spec", "template", "spec").(map[string]any)
	if got := get(spec, "virtualMachineBootstrapCheck", "checkStrategy"); got != "none" {
		t.Errorf("checkStrategy = %v, want none (Talos has no ssh)", got)
	}
	vm := get(spec, "virtualMachineTemplate", "spec").(map[string]any)
	wantDV := []any{map[string]any{
		"metadata": map[string]any{"name": "disk-system", "annotations": map[string]any{"cdi.kubevirt.io/storage.usePopulator": "false"}},
		"spec": map[string]any{
			"source":  map[string]any{"http": map[string]any{"url": "https://factory.talos.dev/image/" + defaultSchematic + "/v1.13.6/openstack-amd64.raw.xz"}},
			"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "30Gi"}}, "storageClassName": "fast"},
		},
	}}
	if diff := cmp.Diff(wantDV, get(vm, "dataVolumeTemplates")); diff != "" {
		t.Errorf("dataVolumeTemplates (-want +got):\n%s", diff)
	}
	vmi := get(vm, "template", "spec").(map[string]any)
	if diff := cmp.Diff([]any{map[string]any{"name": "disk-system", "dataVolume": map[string]any{"name": "disk-system"}}}, get(vmi, "volumes")); diff != "" {
		t.Errorf("volumes: only disk-system, no container disk (-want +got):\n%s", diff)
	}
	disks := get(vmi, "domain", "devices", "disks").([]any)
	if len(disks) != 1 || get(disks[0].(map[string]any), "name") != "disk-system" {
		t.Errorf("disks = %v, want only disk-system", disks)
	}
}

// TestTalosPatch: the machine configuration patch holds the kubelet flags
// of the kubeadm path for the same group (the same reservation rule), the
// installer image <installerRepository>/<schematicID>:<version>, the
// registry mirrors, gpu=on for a GPU group, the tenant API server Service
// as endpoint and the platform's CIDRs.
func TestTalosPatch(t *testing.T) {
	const group = `{resources: {cpu: 2, memory: 4Gi}, gpus: [{name: nvidia.com/AD102GL_L40S}]`
	ubuntu := run(t, newRequest(t, `nodeGroups: {gpu: `+group+`}}`, withMachineSets(t)))
	mustNoFatal(t, ubuntu)
	talos := run(t, newRequest(t, `nodeGroups: {gpu: `+group+`, os: Talos}}
talos: {version: v1.13.2, schematicID: `+strings.Repeat("ab", 32)+`, registryMirrors: {docker.io: {endpoints: ["http://mirror.example.com:5000"], skipFallback: true}, "*": {endpoints: ["https://all.example.com"]}}}`,
		withMachineSets(t), withTalosPKI(t), workersInput(t, `talos: {imageFactoryURL: "https://images.example.com/factory/", installerRepository: registry.example.com/talos/installer}
serviceCIDR: 10.96.0.0/16`)))
	mustNoFatal(t, talos)

	kargs := map[string]any{}
	for _, a := range get(desired(t, ubuntu, bootstrapResourceName("gpu")), "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs").([]any) {
		m := a.(map[string]any)
		if m["name"] != "node-labels" {
			kargs[m["name"].(string)] = m["value"]
		}
	}
	patch := talosPatchOf(t, talos, "gpu")
	if diff := cmp.Diff(kargs, get(patch, "machine", "kubelet", "extraArgs")); diff != "" {
		t.Errorf("kubelet extraArgs differ from the kubeadm path's (-kubeadm +talos):\n%s", diff)
	}
	for path, want := range map[string]any{
		"machine.install.image":                               "registry.example.com/talos/installer/" + strings.Repeat("ab", 32) + ":v1.13.2",
		"machine.nodeLabels.gpu":                              "on",
		"cluster.controlPlane.endpoint":                       "https://demo.tenant-foo.svc.cluster.local:6443",
		"cluster.network.cni.name":                            "none",
		"cluster.proxy.disabled":                              true,
		"cluster.discovery.enabled":                           false,
		"machine.registries.mirrors.docker\\.io.skipFallback": true,
	} {
		if got := get(patch, toPath(path)...); got != want {
			t.Errorf("patch %s = %v, want %v", path, got, want)
		}
	}
	if diff := cmp.Diff(map[string]any{
		"docker.io": map[string]any{"endpoints": []any{"http://mirror.example.com:5000"}, "skipFallback": true},
		"*":         map[string]any{"endpoints": []any{"https://all.example.com"}},
	}, get(patch, "machine", "registries", "mirrors")); diff != "" {
		t.Errorf("registry mirrors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"podSubnets": []any{"10.243.0.0/16"}, "serviceSubnets": []any{"10.96.0.0/16"}, "cni": map[string]any{"name": "none"}},
		get(patch, "cluster", "network")); diff != "" {
		t.Errorf("cluster.network (-want +got):\n%s", diff)
	}
	_, kmt := machineTemplateOf(t, talos, "gpu")
	url := get(kmt, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates").([]any)[0]
	if got, want := get(url.(map[string]any), "spec", "source", "http", "url"), "https://images.example.com/factory/image/"+strings.Repeat("ab", 32)+"/v1.13.2/openstack-amd64.raw.xz"; got != want {
		t.Errorf("image URL = %v, want %v (the factory's trailing slash dropped)", got, want)
	}
	if _, ok := get(patch, "machine", "nodeLabels").(map[string]any); !ok {
		t.Error("a GPU group's workers have no gpu=on label")
	}
	for path, want := range map[string]string{"machine.ca.crt": testTalosCACert, "cluster.ca.crt": testClusterCACert} {
		got, _ := base64.StdEncoding.DecodeString(fmt.Sprint(get(patch, toPath(path)...)))
		if string(got) != want {
			t.Errorf("%s = %q, want the observed %q", path, got, want)
		}
	}
	machineToken, clusterToken := fmt.Sprint(get(patch, "machine", "token")), fmt.Sprint(get(patch, "cluster", "token"))
	if !bootstraputil.IsValidBootstrapToken(clusterToken) || !bootstraputil.IsValidBootstrapToken(machineToken) || machineToken == clusterToken {
		t.Errorf("machine.token %q and cluster.token %q: want two different tokens of the bootstrap-token shape", machineToken, clusterToken)
	}
}

// TestTalosWaitsForPKI: until the Talos CA and Kamaji's CA Secrets are
// observed, a Talos group composes nothing (its machines could not join)
// and WorkersReady says what it waits for; an Ubuntu group beside it is
// composed.
func TestTalosWaitsForPKI(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}, ubuntu: {resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t)))
	mustNoFatal(t, rsp)
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, "nodegroup-md0-") {
			t.Errorf("%s is composed before the Talos PKI is observed", n)
		}
	}
	if desired(t, rsp, bootstrapResourceName("ubuntu")) == nil {
		t.Error("the Ubuntu group is not composed")
	}
	sel := rsp.GetRequirements().GetResources()
	for key, name := range map[string]string{requirementTalosCA: "demo-talos-ca", requirementClusterCA: "demo-ca"} {
		if s := sel[key]; s.GetMatchName() != name || s.GetNamespace() != "tenant-foo" || s.GetKind() != "Secret" {
			t.Errorf("requirement %s = %v, want Secret tenant-foo/%s", key, s, name)
		}
	}
	var reason string
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "WorkersReady" {
			reason = c.GetReason()
		}
	}
	if reason != "WaitingForTalosPKI" {
		t.Errorf("WorkersReady reason = %q, want WaitingForTalosPKI", reason)
	}
	ubuntuOnly := run(t, newRequest(t, `nodeGroups: {ubuntu: {resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t)))
	if _, ok := ubuntuOnly.GetRequirements().GetResources()[requirementTalosCA]; ok {
		t.Error("a cluster without Talos groups asks for the Talos CA")
	}
}

// TestWorkerOSDefault: a group without os follows the platform's
// defaultWorkerOS (Ubuntu unless set); one with os keeps it.
func TestWorkerOSDefault(t *testing.T) {
	spec := `nodeGroups: {plain: {resources: {cpu: 2, memory: 4Gi}}, ubuntu: {os: Ubuntu, resources: {cpu: 2, memory: 4Gi}}, talos: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`
	for name, c := range map[string]struct {
		input string
		talos map[string]bool
	}{
		"platform default": {"", map[string]bool{"plain": false, "ubuntu": false, "talos": true}},
		"platform Talos":   {"defaultWorkerOS: Talos", map[string]bool{"plain": true, "ubuntu": false, "talos": true}},
		"platform Ubuntu":  {"defaultWorkerOS: Ubuntu", map[string]bool{"plain": false, "ubuntu": false, "talos": true}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, spec, withMachineSets(t), withTalosPKI(t), workersInput(t, c.input)))
			mustNoFatal(t, rsp)
			have := map[string]bool{}
			for _, n := range desiredNames(rsp) {
				have[n] = true
			}
			for g, talos := range c.talos {
				if have[talosBootstrapResourceName(g)] != talos || have[bootstrapResourceName(g)] == talos {
					t.Errorf("group %s: Talos template %v, kubeadm template %v; want Talos %v", g, have[talosBootstrapResourceName(g)], have[bootstrapResourceName(g)], talos)
				}
			}
		})
	}
}

// TestOSChangeRolls: changing a group's os gives a new machine template
// (so Cluster API rolls the group); while a MachineSet still uses the old
// template, the old template and the other OS's bootstrap template stay.
func TestOSChangeRolls(t *testing.T) {
	const ubuntuSpec = `nodeGroups: {md0: {resources: {cpu: 2, memory: 4Gi}}}`
	before := run(t, newRequest(t, ubuntuSpec, withMachineSets(t)))
	mustNoFatal(t, before)
	oldName, oldKMT := machineTemplateOf(t, before, "md0")
	observed := map[string]*structpb.Struct{
		oldName:                              mustMap(t, oldKMT),
		bootstrapResourceName("md0"):         mustMap(t, desired(t, before, bootstrapResourceName("md0"))),
		machineDeploymentResourceName("md0"): mustMap(t, desired(t, before, machineDeploymentResourceName("md0"))),
	}
	oldObj := get(oldKMT, "metadata", "name").(string)
	after := run(t, newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`,
		withMachineSets(t, oldObj), withTalosPKI(t), fntest.WithObserved(observed)))
	mustNoFatal(t, after)
	md := desired(t, after, machineDeploymentResourceName("md0"))
	newObj := get(md, "spec", "template", "spec", "infrastructureRef", "name").(string)
	if newObj == oldObj {
		t.Fatalf("the Talos group's MachineDeployment still refers to the Ubuntu template %s: the group would not roll", oldObj)
	}
	newName := machineTemplateResourceName("md0", strings.TrimPrefix(newObj, "demo-md0-"))
	newKMT := desired(t, after, newName)
	if got := get(newKMT, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates").([]any); get(got[0].(map[string]any), "metadata", "name") != "disk-system" {
		t.Errorf("the new template %s is not the Talos one", newName)
	}
	have := map[string]bool{}
	for _, n := range desiredNames(after) {
		have[n] = true
	}
	for _, n := range []string{oldName, bootstrapResourceName("md0"), talosBootstrapResourceName("md0")} {
		if !have[n] {
			t.Errorf("%s is not in the desired state during the rollout; have %v", n, desiredNames(after))
		}
	}
	observed[machineDeploymentResourceName("md0")] = mustMap(t, md)
	done := run(t, newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`,
		withMachineSets(t, newObj), withTalosPKI(t), fntest.WithObserved(observed)))
	for _, n := range desiredNames(done) {
		if n == oldName || n == bootstrapResourceName("md0") {
			t.Errorf("%s is kept after the rollout", n)
		}
	}
}

// TestTalosCRDServed: the TalosConfigTemplate CRD the objects validate
// against is loaded (../shared/crds/later).
func TestTalosCRDServed(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range v.Kinds() {
		if k.Kind == "TalosConfigTemplate" && k.Version == "v1alpha3" {
			return
		}
	}
	t.Fatal("no TalosConfigTemplate v1alpha3 CRD among the shared CRDs")
}

func mustMap(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// toPath splits a dotted path; "\." is a dot inside a key.
func toPath(p string) []any {
	var out []any
	for _, part := range strings.Split(strings.ReplaceAll(p, `\.`, "\x00"), ".") {
		out = append(out, strings.ReplaceAll(part, "\x00", "."))
	}
	return out
}

// TestTalosPendingKeepsObserved: a running Talos group whose CA Secrets
// are not answered on a call keeps every observed object, its
// TalosConfigTemplate included, unchanged.
func TestTalosPendingKeepsObserved(t *testing.T) {
	const spec = `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`
	running := run(t, newRequest(t, spec, withMachineSets(t), withTalosPKI(t)))
	mustNoFatal(t, running)
	observed := map[string]*structpb.Struct{}
	for _, n := range desiredNames(running) {
		observed[n] = mustMap(t, desired(t, running, n))
	}
	later := run(t, newRequest(t, spec, withMachineSets(t), fntest.WithObserved(observed)))
	mustNoFatal(t, later)
	have := map[string]bool{}
	for _, n := range desiredNames(later) {
		have[n] = true
	}
	for n := range observed {
		if strings.HasPrefix(n, "nodegroup-md0-") && !have[n] {
			t.Errorf("%s left the desired state while the Talos PKI was not answered", n)
		}
	}
}

// TestTalosNodeDNS: Talos drops the search list of the DHCP KubeVirt
// serves, so the patch sets machine.network.searchDomains to
// svc.<clusterDomain> and <clusterDomain> (Cozystack's chart:
// packages/apps/kubernetes/templates/talos/talos-reconcile-job.yaml:370-372),
// for the default domain and another one, and leaves the nameservers to
// that DHCP.
func TestTalosNodeDNS(t *testing.T) {
	for settings, want := range map[string][]any{
		"":                            {"svc.cluster.local", "cluster.local"},
		"clusterDomain: corp.example": {"svc.corp.example", "corp.example"},
	} {
		req := newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t), withTalosPKI(t))
		if settings != "" {
			if err := fntest.WithPlatformSettings(req, settings); err != nil {
				t.Fatal(err)
			}
		}
		rsp := run(t, req)
		mustNoFatal(t, rsp)
		network, _ := get(talosPatchOf(t, rsp, "md0"), "machine", "network").(map[string]any)
		if diff := cmp.Diff(map[string]any{"searchDomains": want}, network); diff != "" {
			t.Errorf("settings %q: machine.network (-want +got):\n%s", settings, diff)
		}
	}
}

// TestTalosKubePrismOff: the patch turns KubePrism off
// (machine.features.kubePrism.enabled false, the Talos v1alpha1 field
// Cozystack's chart sets: talos-reconcile-job.yaml:426-427), which CABPT's
// generated configuration enables from Talos v1.6.
func TestTalosKubePrismOff(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {md0: {os: Talos, resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t), withTalosPKI(t)))
	mustNoFatal(t, rsp)
	if diff := cmp.Diff(map[string]any{"kubePrism": map[string]any{"enabled": false}}, get(talosPatchOf(t, rsp, "md0"), "machine", "features")); diff != "" {
		t.Errorf("machine.features (-want +got):\n%s", diff)
	}
}

// TestTalosSystemDiskBlockSize: the Talos system disk presents 512-byte
// logical and 4096-byte physical sectors (Cozystack's chart:
// packages/apps/kubernetes/templates/cluster.yaml:168-171); an Ubuntu
// group's disks keep theirs.
func TestTalosSystemDiskBlockSize(t *testing.T) {
	rsp := run(t, newRequest(t, `nodeGroups: {talos: {os: Talos, resources: {cpu: 2, memory: 4Gi}}, ubuntu: {resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t), withTalosPKI(t)))
	mustNoFatal(t, rsp)
	disksOf := func(g string) []any {
		_, kmt := machineTemplateOf(t, rsp, g)
		return get(kmt, "spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "spec", "domain", "devices", "disks").([]any)
	}
	disks := disksOf("talos")
	if len(disks) != 1 {
		t.Fatalf("disks = %v, want only disk-system", disks)
	}
	if diff := cmp.Diff(map[string]any{"custom": map[string]any{"logical": float64(512), "physical": float64(4096)}}, get(disks[0].(map[string]any), "blockSize")); diff != "" {
		t.Errorf("disk-system blockSize (-want +got):\n%s", diff)
	}
	for _, d := range disksOf("ubuntu") {
		if bs, _ := get(d.(map[string]any), "blockSize", "custom").(map[string]any); bs != nil {
			t.Errorf("Ubuntu disk %v has a custom block size %v", get(d.(map[string]any), "name"), bs)
		}
	}
}

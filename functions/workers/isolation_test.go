package main

import (
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// workersRun runs the function on spec with the seed's instance types
// answered and the given input (YAML, may be empty). It returns the Fatal
// messages joined, and the response's desired composed resource count.
func workersRun(t *testing.T, spec, input string) (string, int) {
	t.Helper()
	opts := []fntest.RequestOption{withInstancetypes(t, "u1.medium"), withMachineSets(t)}
	if input != "" {
		opts = append(opts, fntest.WithInput(mustStruct(t, "apiVersion: fn.tenantkube.io/v1alpha1\nkind: WorkersInput\n"+input)))
	}
	rsp := run(t, newRequest(t, spec, opts...))
	return strings.Join(fatals(rsp), "\n"), len(rsp.GetDesired().GetResources())
}

// TestImagesOnlyFromAllowedRegistries: the image a
// tenant sets runs in the management cluster beside controller tokens; it
// must come from a registry the platform allows, else a Fatal result names
// the field and the value and nothing is composed.
func TestImagesOnlyFromAllowedRegistries(t *testing.T) {
	const path = "spec.images.waitForKubeconfig"
	for _, c := range []struct {
		image, input string
		fatal        string // "" when accepted
	}{
		{image: "docker.io/library/busybox:1.37.0"},
		{image: "busybox:1.36"},
		{image: "library/busybox@sha256:" + strings.Repeat("a", 64)},
		{image: "index.docker.io/library/busybox"},
		{image: "attacker.example/evil:latest", fatal: path + `: Forbidden: "attacker.example/evil:latest": images may only come from docker.io/library`},
		{image: "docker.io/attacker/busybox:1", fatal: path + `: Forbidden: "docker.io/attacker/busybox:1"`},
		{image: "attacker/busybox", fatal: path + `: Forbidden: "attacker/busybox"`},
		{image: "docker.io/library-evil/busybox", fatal: path + `: Forbidden: "docker.io/library-evil/busybox"`},
		{image: "docker.io.attacker.example/library/busybox", fatal: path + `: Forbidden: "docker.io.attacker.example/library/busybox"`},
		// The container runtime refuses a 64-hex name (it reads like an
		// image ID); go-containerregistry took it for docker.io/library/<hex>.
		{image: strings.Repeat("0123456789abcdef", 4), fatal: path + `: Invalid value: "` + strings.Repeat("0123456789abcdef", 4) + `": not an image reference`},
		{image: "BusyBox", fatal: path + `: Invalid value: "BusyBox": not an image reference`},
		{image: "registry-1.docker.io/library/busybox", fatal: path + `: Forbidden`},
		{image: "Not An Image", fatal: path + `: Invalid value: "Not An Image": not an image reference`},
		{image: "registry.corp.example/mirror/busybox:1", input: "allowedImageRegistries: [registry.corp.example]"},
		{image: "registry.corp.example/mirror/busybox:1", input: "allowedImageRegistries: [registry.corp.example/mirror]"},
		{image: "registry.corp.example/mirrors/busybox:1", input: "allowedImageRegistries: [registry.corp.example/mirror]", fatal: path + ": Forbidden"},
		{image: "docker.io/library/busybox:1", input: "allowedImageRegistries: []", fatal: path + ": Forbidden"},
		{image: "registry.corp.example/" + strings.Repeat("a", 600), input: "allowedImageRegistries: [registry.corp.example]", fatal: path + `: Invalid value: "registry.corp.example/` + strings.Repeat("a", 42) + `...": must be at most 512 characters (is 622)`},
	} {
		msg, n := workersRun(t, `images: {waitForKubeconfig: "`+c.image+`"}`, c.input)
		switch {
		case c.fatal == "" && msg != "":
			t.Errorf("%s (%s): Fatal %s", c.image, c.input, msg)
		case c.fatal != "" && !strings.Contains(msg, c.fatal):
			t.Errorf("%s (%s): Fatal %q, want one containing %q", c.image, c.input, msg, c.fatal)
		case c.fatal != "" && n != 0:
			t.Errorf("%s: a Fatal response composes %d objects", c.image, n)
		}
	}
}

// TestNodeGroupBounds (finding 4): each bound accepted at its edge and
// refused just past it, naming the field and the value.
func TestNodeGroupBounds(t *testing.T) {
	g := "spec.nodeGroups[md0]."
	roles := func(n int) string { return strings.TrimSuffix(strings.Repeat("r,", n), ",") }
	gpus := func(n int) string { return strings.TrimSuffix(strings.Repeat("{name: nvidia.com/L40S},", n), ",") }
	for _, c := range []struct{ spec, input, fatal string }{
		{spec: `nodeGroups: {md0: {maxReplicas: 100}}`},
		{spec: `nodeGroups: {md0: {maxReplicas: 101}}`, fatal: g + "maxReplicas: Invalid value: 101: must be at most 100 (the platform's ceiling)"},
		{spec: `nodeGroups: {md0: {maxReplicas: 2147483647}}`, fatal: g + "maxReplicas: Invalid value: 2147483647: must be at most 100"},
		{spec: `nodeGroups: {md0: {minReplicas: 101, maxReplicas: 101}}`, fatal: g + "minReplicas: Invalid value: 101: must be at most 100"},
		{spec: `nodeGroups: {md0: {maxReplicas: 300}}`, input: "maxReplicas: 300"},
		{spec: `nodeGroups: {md0: {maxReplicas: 301}}`, input: "maxReplicas: 300", fatal: g + "maxReplicas: Invalid value: 301: must be at most 300"},
		{spec: `nodeGroups: {md0: {roles: [` + roles(16) + `]}}`},
		{spec: `nodeGroups: {md0: {roles: [` + roles(17) + `]}}`, fatal: g + "roles: Too many: 17: must have at most 16 items"},
		{spec: `nodeGroups: {md0: {roles: [` + strings.Repeat("r", 63) + `]}}`},
		{spec: `nodeGroups: {md0: {roles: [` + strings.Repeat("r", 64) + `]}}`, fatal: g + `roles[0]: Invalid value: "` + strings.Repeat("r", 64) + `": must be at most 63 characters (is 64)`},
		{spec: `nodeGroups: {md0: {gpus: [` + gpus(16) + `]}}`},
		{spec: `nodeGroups: {md0: {gpus: [` + gpus(17) + `]}}`, fatal: g + "gpus: Too many: 17: must have at most 16 items"},
		{spec: `nodeGroups: {md0: {gpus: [{name: ` + strings.Repeat("g", 253) + `}]}}`},
		{spec: `nodeGroups: {md0: {gpus: [{name: ` + strings.Repeat("g", 254) + `}]}}`, fatal: g + `gpus[0].name: Invalid value: "` + strings.Repeat("g", 64) + `...": must be at most 253 characters (is 254)`},
		{spec: `nodeGroups: {md0: {resources: {cpu: 256, memory: 4Ti}}}`},
		{spec: `nodeGroups: {md0: {resources: {cpu: 257, memory: 4Gi}}}`, fatal: g + `resources.cpu: Invalid value: "257": resources.cpu must be at most 256`},
		{spec: `nodeGroups: {md0: {resources: {cpu: 4, memory: 4097Gi}}}`, fatal: g + `resources.memory: Invalid value: "4097Gi": resources.memory must be at most 4Ti`},
		{spec: `nodeGroups: {md0: {diskSize: 64Ti}}`},
		{spec: `nodeGroups: {md0: {diskSize: 65537Gi}}`, fatal: g + `diskSize: Invalid value: "65537Gi": diskSize must be at most 64Ti`},
		{spec: `nodeGroups: {md0: {storageClass: ` + strings.Repeat("s", 253) + `}}`, input: "remoteStorageClasses: [replicated, " + strings.Repeat("s", 253) + "]"},
		{spec: `nodeGroups: {md0: {storageClass: ` + strings.Repeat("s", 254) + `}}`, fatal: g + `storageClass: Invalid value: "` + strings.Repeat("s", 64) + `...": must be at most 253 characters (is 254)`},
		{spec: `nodeGroups: {md0: {resources: {cpu: 256, memory: 4Ti}, kubelet: {systemReservedCpu: 257}}}`, fatal: g + `kubelet.systemReservedCpu: Invalid value: "257": systemReservedCpu must be at most 256`},
		{spec: `nodeGroups: {md0: {resources: {cpu: 256, memory: 4Ti}, kubelet: {kubeReservedMemory: 4097Gi}}}`, fatal: g + `kubelet.kubeReservedMemory: Invalid value: "4097Gi": kubeReservedMemory must be at most 4Ti`},
	} {
		msg, _ := workersRun(t, c.spec, c.input)
		switch {
		case c.fatal == "" && msg != "":
			t.Errorf("%s: Fatal %s", c.spec, msg)
		case c.fatal != "" && !strings.Contains(msg, c.fatal):
			t.Errorf("%s: Fatal %q, want one containing %q", c.spec, msg, c.fatal)
		}
	}
}

// TestComposedImageIsFullyQualified: the Deployments run the name the
// container runtime would pull, spelled out (Docker's normalisation: a
// bare name is docker.io/library/<name>, index.docker.io is docker.io), so
// what was checked is what runs.
func TestComposedImageIsFullyQualified(t *testing.T) {
	in := defaultInput()
	platform := map[string]bool{in.Images.ClusterAutoscaler: true, in.Images.CloudControllerManager: true, in.Images.CSIDriver: true,
		in.Images.CSIProvisioner: true, in.Images.CSIAttacher: true, in.Images.CSIResizer: true, in.Images.CSILivenessProbe: true,
		in.Images.CSISnapshotter: true, in.Images.SnapshotController: true}
	for image, want := range map[string]string{
		"busybox:1.36":                              "docker.io/library/busybox:1.36",
		"busybox":                                   "docker.io/library/busybox",
		"library/busybox:1.36":                      "docker.io/library/busybox:1.36",
		"index.docker.io/library/busybox:1.36":      "docker.io/library/busybox:1.36",
		"docker.io/library/busybox:1.37.0":          "docker.io/library/busybox:1.37.0",
		"busybox@sha256:" + strings.Repeat("a", 64): "docker.io/library/busybox@sha256:" + strings.Repeat("a", 64),
	} {
		rsp := run(t, newRequest(t, `images: {waitForKubeconfig: "`+image+`"}`, withInstancetypes(t, "u1.medium"), withMachineSets(t)))
		if f := fatals(rsp); len(f) > 0 {
			t.Fatalf("%s: %v", image, f)
		}
		seen := 0
		for name, r := range rsp.GetDesired().GetResources() {
			obj := r.GetResource().AsMap()
			if obj["kind"] != "Deployment" {
				continue
			}
			for _, key := range []string{"initContainers", "containers"} {
				cs, _ := get(obj, "spec", "template", "spec", key).([]any)
				for _, c := range cs {
					img := c.(map[string]any)["image"].(string)
					if platform[img] {
						continue
					}
					seen++
					if img != want {
						t.Errorf("%s: %s runs %s, want %s", image, name, img, want)
					}
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: no Deployment runs it", image)
		}
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/distribution/reference"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// FuzzTenantConfinement: whatever the claim's namespace, name
// and spec, every composed object lands in NS or the cluster's management
// namespace but the CSI controller's ClusterRoleBinding, named
// tenantkube:kcsi-controller:<NS>.<N>; the controllers' Deployments,
// ServiceAccounts and cloud-config land in the management namespace, out
// of NS, and every other object in NS; every RoleBinding grants one of the
// controllers' ClusterRoles, and the ClusterRoleBinding only the
// PersistentVolume read, to a ServiceAccount of the management namespace;
// and every image a Deployment runs is the platform's (the input's) or
// from an allowed registry.
func FuzzTenantConfinement(f *testing.F) {
	for _, s := range [][3]string{
		{"tenant-demo", "demo", ``},
		{"prod", "team-a", `nodeGroups: {md0: {maxReplicas: 100, roles: [ingress-nginx]}}`},
		{"prod-team", "a", `images: {waitForKubeconfig: attacker.example/evil:latest}`},
		{"prod", "team.a", ``},
		{"x", "y", `images: {waitForKubeconfig: busybox}`},
		{"x", "y", `nodeGroups: {md0: {maxReplicas: 2147483647}}`},
		{"x", "y", `images: {waitForKubeconfig: index.docker.io/library/busybox:1}`},
		{"x", "y", `images: {waitForKubeconfig: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef}`},
	} {
		f.Add(s[0], s[1], s[2])
	}
	in := defaultInput()
	platform := map[string]bool{in.Images.ClusterAutoscaler: true, in.Images.CloudControllerManager: true, in.Images.CSIDriver: true,
		in.Images.CSIProvisioner: true, in.Images.CSIAttacher: true, in.Images.CSIResizer: true, in.Images.CSILivenessProbe: true, in.Images.WaitForKubeconfig: true,
		in.Images.CSISnapshotter: true, in.Images.SnapshotController: true}
	roles := map[string]bool{}
	for _, c := range controllerComponents {
		roles[clusterRoleName(c)] = true
	}
	f.Fuzz(func(t *testing.T, ns, n, spec string) {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
			return
		}
		x, err := fntest.Struct(fntest.TenantXR(ns, n, m))
		if err != nil {
			return
		}
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: x}}, Desired: &fnv1.State{}}
		withInstancetypes(t, "u1.medium", "u1.large")(req)
		fntest.WithRequired(requirementMachineSets)(req)
		rsp, err := fntest.Run((&Function{now: fixedClock}).RunFunction, req)
		if err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		if len(fatals(rsp)) > 0 {
			return
		}
		if err := fntest.CheckConfined(rsp, nil, ns, n, true, fntest.ClusterScoped{
			"rbac.authorization.k8s.io/ClusterRoleBinding": func(ns, n string) string { return "tenantkube:kcsi-controller:" + ns + "." + n },
		}); err != nil {
			t.Fatalf("ns=%q n=%q spec=%s: %v", ns, n, spec, err)
		}
		mgmt := fntest.ManagementNamespace(ns, n)
		for name, r := range rsp.GetDesired().GetResources() {
			obj := r.GetResource().AsMap()
			var wantNS any = ns
			switch obj["kind"] {
			case "Deployment", "ServiceAccount", "ConfigMap":
				wantNS = mgmt
			case "ClusterRoleBinding":
				wantNS = nil
			}
			if got, _ := get(obj, "metadata", "namespace").(string); wantNS != nil && got != wantNS {
				t.Fatalf("ns=%q n=%q: %s %s in namespace %q, want %q", ns, n, obj["kind"], name, got, wantNS)
			}
			switch obj["kind"] {
			case "RoleBinding", "ClusterRoleBinding":
				ok := roles[get(obj, "roleRef", "name").(string)]
				if obj["kind"] == "ClusterRoleBinding" {
					ok = get(obj, "roleRef", "name") == "tenantkube:kcsi-persistentvolumes"
				}
				if !ok || get(obj, "roleRef", "kind") != "ClusterRole" {
					t.Fatalf("%s binds %v %v", name, get(obj, "roleRef", "kind"), get(obj, "roleRef", "name"))
				}
				for _, s := range get(obj, "subjects").([]any) {
					if s.(map[string]any)["namespace"] != mgmt || s.(map[string]any)["kind"] != "ServiceAccount" {
						t.Fatalf("%s: subject %v outside %s", name, s, mgmt)
					}
				}
			case "Deployment":
				pod := get(obj, "spec", "template", "spec").(map[string]any)
				for _, key := range []string{"initContainers", "containers"} {
					cs, _ := pod[key].([]any)
					for _, c := range cs {
						img := c.(map[string]any)["image"].(string)
						if !platform[img] && !officialImage(img) {
							t.Fatalf("ns=%q spec=%s: %s runs %s", ns, spec, name, img)
						}
					}
				}
			}
		}
	})
}

// officialImage judges a composed image against the default allowed
// registries (docker.io/library) without the function's matcher: the name
// is spelled out in full, as the container runtime's parser would itself
// expand it (reference.ParseNamed refuses any name it would change), and
// literally starts with "docker.io/library/".
func officialImage(img string) bool {
	named, err := reference.ParseNamed(img)
	return err == nil && named.String() == img && strings.HasPrefix(img, "docker.io/library/")
}

package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Names Crossplane v2.4 gave the Functions it installed for these
// dependencies (tenantkube-function-control-plane, …), and what
// the same rule gives for a registry with a path and one with a port.
func TestFunctionName(t *testing.T) {
	for src, want := range map[string]string{
		"xpkg.tenantkube.io/tenantkube/function-control-plane":               "tenantkube-function-control-plane",
		"registry.example.com/platform/tenantkube/function-workers":          "platform-tenantkube-function-workers",
		"127.0.0.1:5000/tenantkube/function-addons":                          "tenantkube-function-addons",
		"xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform": "crossplane-contrib-function-patch-and-transform",
		// Only the first 63 bytes count; a '-' there at the end goes.
		"r.test/aaaaaaaaaa/bbbbbbbbbb/cccccccccc/dddddddddd/eeeeeeeeee/fffffff-gggg": "aaaaaaaaaa-bbbbbbbbbb-cccccccccc-dddddddddd-eeeeeeeeee-fffffff",
	} {
		got, err := FunctionName(src)
		if err != nil || got != want {
			t.Errorf("FunctionName(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
}

type step struct {
	Step        string `json:"step"`
	FunctionRef struct {
		Name string `json:"name"`
	} `json:"functionRef"`
}

func steps(t *testing.T, comp []byte) map[string]string {
	t.Helper()
	var c struct {
		Spec struct {
			Pipeline []step `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(comp, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range c.Spec.Pipeline {
		out[s.Step] = s.FunctionRef.Name
	}
	return out
}

func deps(t *testing.T, meta []byte) []string {
	t.Helper()
	var m struct {
		Spec struct {
			DependsOn []struct {
				Function string `json:"function"`
			} `json:"dependsOn"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range m.Spec.DependsOn {
		out = append(out, d.Function)
	}
	return out
}

// The Compositions the package ships, one per XRD: the claim's
// (XKubernetesCluster), the namespaced TenantCluster's, the Tenant's.
var packageCompositions = []string{"composition-namespaced.yaml", "composition-tenant.yaml", "composition.yaml"}

func TestRender(t *testing.T) {
	root := "../.."
	for registry, want := range map[string]struct {
		deps  []string
		steps map[string]string
	}{
		// The committed package: its Compositions already use the names
		// its dependencies give.
		CanonicalRegistry: {
			deps:  []string{"xpkg.tenantkube.io/tenantkube/function-control-plane", "xpkg.tenantkube.io/tenantkube/function-workers", "xpkg.tenantkube.io/tenantkube/function-addons"},
			steps: map[string]string{"control-plane": "tenantkube-function-control-plane", "workers": "tenantkube-function-workers", "addons": "tenantkube-function-addons"},
		},
		"registry.example.com/platform/": {
			deps:  []string{"registry.example.com/platform/tenantkube/function-control-plane", "registry.example.com/platform/tenantkube/function-workers", "registry.example.com/platform/tenantkube/function-addons"},
			steps: map[string]string{"control-plane": "platform-tenantkube-function-control-plane", "workers": "platform-tenantkube-function-workers", "addons": "platform-tenantkube-function-addons"},
		},
	} {
		meta, comps, err := Render(root+"/package", registry)
		if err != nil {
			t.Fatalf("%s: %v", registry, err)
		}
		if got := deps(t, meta); len(got) != 3 || got[0] != want.deps[0] || got[1] != want.deps[1] || got[2] != want.deps[2] {
			t.Errorf("%s: dependsOn %v, want %v", registry, got, want.deps)
		}
		if diff := cmp.Diff(packageCompositions, sortedKeys(comps)); diff != "" {
			t.Errorf("%s: Compositions (-want +got):\n%s", registry, diff)
		}
		for f, comp := range comps {
			got := steps(t, comp)
			if len(got) == 0 {
				t.Errorf("%s: %s has no steps", registry, f)
			}
			// Each step refers to the Function named after it.
			for s, n := range got {
				if n != want.steps[s] {
					t.Errorf("%s: %s step %s refers to %q, want %q", registry, f, s, n, want.steps[s])
				}
			}
		}
	}
}

// A Composition step naming a Function no dependency installs is an error
// naming the file and the step.
func TestRenderUnknownFunction(t *testing.T) {
	root := t.TempDir()
	write(t, root, "crossplane.yaml", "spec:\n  dependsOn:\n  - function: xpkg.tenantkube.io/tenantkube/function-workers\n")
	write(t, root, "composition-x.yaml", "spec:\n  pipeline:\n  - step: cp\n    functionRef: {name: tenantkube-function-control-plane}\n")
	_, _, err := Render(root, "r.example")
	if err == nil || !strings.Contains(err.Error(), "composition-x.yaml: step cp refers to Function \"tenantkube-function-control-plane\"") {
		t.Errorf("Render: %v, want the file, step and Function named", err)
	}
}

func write(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// xrdOrComposition holds the fields that pair an XRD with its Composition.
type xrdOrComposition struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		// XRD
		Group                 string `json:"group"`
		Scope                 string `json:"scope"`
		DefaultCompositionRef struct {
			Name string `json:"name"`
		} `json:"defaultCompositionRef"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		ClaimNames *struct {
			Kind string `json:"kind"`
		} `json:"claimNames"`
		Versions []struct {
			Name string `json:"name"`
		} `json:"versions"`
		// Composition
		CompositeTypeRef struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"compositeTypeRef"`
	} `json:"spec"`
}

// The package root written for `make xpkg` holds crossplane.yaml, every
// XRD and every Composition; each XRD's default Composition is in it and
// composes that XRD's kind, and each Composition composes a kind an XRD of
// the package defines. Both APIs are shipped: the claim (v1 XRD with
// claimNames) and the namespaced TenantCluster (v2 XRD, no claim), with
// the platform's cluster-scoped Tenant (v2 XRD).
func TestRun(t *testing.T) {
	out := t.TempDir()
	c := &cli{PackageRoot: "../../package", Registry: CanonicalRegistry, Output: out}
	if err := c.run(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	want := append([]string{"crossplane.yaml"}, packageCompositions...)
	want = append(want, "xrd-namespaced.yaml", "xrd-tenant.yaml", "xrd.yaml")
	sort.Strings(want)
	if diff := cmp.Diff(want, files); diff != "" {
		t.Fatalf("package root (-want +got):\n%s", diff)
	}
	xrds, comps := map[string]xrdOrComposition{}, map[string]xrdOrComposition{}
	for _, f := range files {
		if f == "crossplane.yaml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		var o xrdOrComposition
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch o.Kind {
		case "CompositeResourceDefinition":
			xrds[f] = o
		case "Composition":
			comps[o.Metadata.Name] = o
		default:
			t.Errorf("%s: a %s", f, o.Kind)
		}
	}
	kinds := map[string]string{} // group/version, kind → XRD file
	for f, x := range xrds {
		for _, v := range x.Spec.Versions {
			kinds[x.Spec.Group+"/"+v.Name+", "+x.Spec.Names.Kind] = f
		}
		comp, ok := comps[x.Spec.DefaultCompositionRef.Name]
		if !ok {
			t.Errorf("%s: default Composition %q is not in the package", f, x.Spec.DefaultCompositionRef.Name)
			continue
		}
		if comp.Spec.CompositeTypeRef.Kind != x.Spec.Names.Kind || !strings.HasPrefix(comp.Spec.CompositeTypeRef.APIVersion, x.Spec.Group+"/") {
			t.Errorf("%s: default Composition %s composes %s %s, not %s", f, comp.Metadata.Name, comp.Spec.CompositeTypeRef.APIVersion, comp.Spec.CompositeTypeRef.Kind, x.Spec.Names.Kind)
		}
	}
	for n, comp := range comps {
		if _, ok := kinds[comp.Spec.CompositeTypeRef.APIVersion+", "+comp.Spec.CompositeTypeRef.Kind]; !ok {
			t.Errorf("Composition %s composes %s %s, which no XRD of the package defines", n, comp.Spec.CompositeTypeRef.APIVersion, comp.Spec.CompositeTypeRef.Kind)
		}
	}
	// The two cluster APIs side by side: a claim, and a namespaced XR.
	if x := xrds["xrd.yaml"]; x.Spec.ClaimNames == nil || x.Spec.ClaimNames.Kind != "KubernetesCluster" {
		t.Errorf("xrd.yaml: claim kind %+v, want KubernetesCluster", x.Spec.ClaimNames)
	}
	for f, want := range map[string][2]string{"xrd-namespaced.yaml": {"TenantCluster", "Namespaced"}, "xrd-tenant.yaml": {"Tenant", "Cluster"}} {
		if x := xrds[f]; x.Spec.Names.Kind != want[0] || x.Spec.Scope != want[1] || x.Spec.ClaimNames != nil {
			t.Errorf("%s: kind %s scope %s claimNames %+v, want %s, %s, none", f, x.Spec.Names.Kind, x.Spec.Scope, x.Spec.ClaimNames, want[0], want[1])
		}
	}
}

package main

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// Names Crossplane v2.4 gave the Functions it installed for these
// dependencies (issue 15: tenantkube-function-control-plane, …), and what
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

func TestRender(t *testing.T) {
	root := "../../.."
	for registry, want := range map[string]struct {
		deps  []string
		steps map[string]string
	}{
		// The committed package: its Composition already uses the names
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
		meta, comp, err := Render(root+"/package", registry)
		if err != nil {
			t.Fatalf("%s: %v", registry, err)
		}
		if got := deps(t, meta); len(got) != 3 || got[0] != want.deps[0] || got[1] != want.deps[1] || got[2] != want.deps[2] {
			t.Errorf("%s: dependsOn %v, want %v", registry, got, want.deps)
		}
		got := steps(t, comp)
		for s, n := range want.steps {
			if got[s] != n {
				t.Errorf("%s: step %s refers to %q, want %q", registry, s, got[s], n)
			}
		}
		if len(got) != len(want.steps) {
			t.Errorf("%s: steps %v", registry, got)
		}
	}
}

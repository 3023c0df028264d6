//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What a platform team installs, as docs/platform-guide.md says: the
// four packages `make xpkg` built, pushed to a registry (here a loopback
// one); an ImageConfig rewriting the packages' canonical prefix to that
// registry; the Configuration, whose Function dependencies Crossplane's
// package manager resolves and installs; the platform settings. Only the
// Functions' runtime is played (no kubelet): the test serves each
// function over mTLS and points its active revision at it.

// packages are the package files under _output/xpkg, pushed as
// <registry>/tenantkube/<name>.
var packages = []string{"tenantkube", "function-control-plane", "function-workers", "function-addons"}

const (
	// canonicalPrefix is where package/crossplane.yaml's dependencies
	// live (make xpkg's default XPKG_REGISTRY).
	canonicalPrefix = "xpkg.tenantkube.io/tenantkube/"
	configuration   = "tenantkube"
)

var (
	gvkConfiguration = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	gvkImageConfig   = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1beta1", Kind: "ImageConfig"}
	gvkEnvConfig     = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
)

func (e *env) registryPrefix() string {
	return fmt.Sprintf("127.0.0.1:%d/tenantkube/", e.registryPort)
}

// pushPackages starts the loopback registry and pushes every package.
func (e *env) pushPackages() error {
	e.registry = newProc(e.logs, "registry", e.binary("crane"), []string{
		"registry", "serve", fmt.Sprintf("--address=127.0.0.1:%d", e.registryPort),
	})
	if err := e.registry.start(); err != nil {
		return err
	}
	if err := e.waitHTTP(e.registry, fmt.Sprintf("http://127.0.0.1:%d/v2/", e.registryPort), nil, 20*time.Second); err != nil {
		return err
	}
	for _, p := range packages {
		if err := runOnce(e.logs, "crane-push-"+p, e.binary("crane"), 2*time.Minute, []string{
			"push", "--insecure", e.path("_output", "xpkg", p+".xpkg"), e.registryPrefix() + p + ":" + xpkgTag,
		}); err != nil {
			return err
		}
	}
	return nil
}

// installConfiguration applies the ImageConfig and the Configuration,
// plays the runtime of each Function Crossplane installs for a dependency,
// and waits until the Configuration is healthy and its XRDs established.
func (e *env) installConfiguration() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, o := range []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "ImageConfig",
			"metadata": map[string]any{"name": "tenantkube-registry"},
			"spec": map[string]any{
				"matchImages":  []any{map[string]any{"type": "Prefix", "prefix": canonicalPrefix}},
				"rewriteImage": map[string]any{"prefix": e.registryPrefix()},
			},
		}},
		{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration",
			"metadata": map[string]any{"name": configuration},
			"spec":     map[string]any{"package": canonicalPrefix + "tenantkube:" + xpkgTag},
		}},
	} {
		if err := apply(ctx, e.c, o); err != nil {
			return fmt.Errorf("%s: %w", o.GetKind(), err)
		}
	}
	for _, f := range functions {
		if err := e.registerRevision(f, 3*time.Minute); err != nil {
			return err
		}
	}
	if err := poll(2*time.Minute, func(ctx context.Context) (bool, string, error) {
		for _, f := range functions {
			u, err := get(ctx, e.c, gvkFunction, "", fnName(f))
			if err != nil {
				return false, "", err
			}
			if pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package"); !strings.HasPrefix(pkg, canonicalPrefix+"function-"+f+":") {
				return false, "", fmt.Errorf("Function %s installs %q, want %sfunction-%s", fnName(f), pkg, canonicalPrefix, f)
			}
			for _, c := range []string{"Installed", "Healthy"} {
				if s, r, m := condition(u, c); s != "True" {
					return false, fmt.Sprintf("Function %s %s=%s %s %s", fnName(f), c, s, r, m), nil
				}
			}
		}
		return true, "", nil
	}); err != nil {
		return err
	}
	return e.waitConfiguration()
}

// waitConfiguration waits for the Configuration to be installed and
// healthy and for every XRD of the package (package/xrd*.yaml) to be
// established, and a claim XRD (spec.claimNames) also offered: a v2 XRD
// offers no claim and has no Offered condition. The API server rejecting
// the CRDs Crossplane renders from an XRD is final: it fails at once with
// its message.
func (e *env) waitConfiguration() error {
	want, err := e.packageXRDs()
	if err != nil {
		return err
	}
	if err := poll(3*time.Minute, func(ctx context.Context) (bool, string, error) {
		u, err := get(ctx, e.c, gvkConfiguration, "", configuration)
		if err != nil {
			return false, "", err
		}
		for _, c := range []string{"Installed", "Healthy"} {
			if s, r, m := condition(u, c); s != "True" {
				return false, fmt.Sprintf("Configuration %s=%s %s %s; events: %s", c, s, r, m, e.events(ctx, configuration)), nil
			}
		}
		return true, "", nil
	}); err != nil {
		return err
	}
	var rejected error
	err = poll(2*time.Minute, func(ctx context.Context) (bool, string, error) {
		for name, claim := range want {
			xrd, err := get(ctx, e.c, gvkXRD, "", name)
			if kerrors.IsNotFound(err) {
				return false, "no XRD " + name, nil
			}
			if err != nil {
				return false, "", err
			}
			conds := []string{"Established"}
			if claim {
				conds = append(conds, "Offered")
			}
			for _, c := range conds {
				if s, r, m := condition(xrd, c); s != "True" {
					evs := e.events(ctx, name)
					why := fmt.Sprintf("XRD %s %s=%s %s %s; latest events: %s", name, c, s, r, m, evs)
					if strings.Contains(evs, "is invalid") {
						rejected = fmt.Errorf("the API server rejects the CRDs rendered from the package's XRD %s: %s", name, why)
						return true, "", nil
					}
					return false, why, nil
				}
			}
		}
		return true, "", nil
	})
	if rejected != nil {
		return rejected
	}
	return err
}

// packageXRDs are the names of the package's XRDs (package/xrd*.yaml), each
// with whether it offers a claim.
func (e *env) packageXRDs() (map[string]bool, error) {
	files, err := filepath.Glob(e.path("package", "xrd*.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, f := range files {
		objs, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			_, claim, _ := unstructured.NestedMap(o.Object, "spec", "claimNames")
			out[o.GetName()] = claim
		}
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("package/xrd*.yaml: %d XRDs, want the claim's and the TenantCluster's at least", len(out))
	}
	return out, nil
}

// registerRevision waits for the active FunctionRevision of fnName(f), which
// Crossplane creates once it resolved the dependency, and writes its
// status as Crossplane's package runtime would (doc.go, Played
// components), with the function's loopback address as the endpoint.
func (e *env) registerRevision(f string, timeout time.Duration) error {
	return poll(timeout, func(ctx context.Context) (bool, string, error) {
		revs, err := list(ctx, e.c, gvkFnRevision, client.MatchingLabels{"pkg.crossplane.io/package": fnName(f)})
		if err != nil {
			return false, "", err
		}
		if len(revs) == 0 {
			cfg, _ := get(ctx, e.c, gvkConfiguration, "", configuration)
			_, r, m := condition(cfg, "Healthy")
			return false, fmt.Sprintf("no FunctionRevision for %s yet (Configuration Healthy: %s %s; lock: %s)", fnName(f), r, m, e.lockStatus(ctx)), nil
		}
		for i := range revs {
			rev := &revs[i]
			if st, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); st != "Active" {
				continue
			}
			endpoint := fmt.Sprintf("127.0.0.1:%d", e.fnPorts[f])
			ep, _, _ := unstructured.NestedString(rev.Object, "status", "endpoint")
			if s, _, _ := condition(rev, "RuntimeHealthy"); ep == endpoint && s == "True" {
				return true, "", nil
			}
			// Crossplane v2.4.0 internal/controller/pkg/runtime/runtime_function.go:70, 91; the name is
			// the Function's (apis/v2 pkg/v1/interfaces.go:1034, 1189-1191), set in spec only for
			// the Deployment runtime (internal/controller/pkg/manager/reconciler.go:144-156, 246-248).
			_ = unstructured.SetNestedField(rev.Object, endpoint, "status", "endpoint")
			_ = unstructured.SetNestedField(rev.Object, fnName(f)+"-tls-server", "status", "tlsServerSecretName")
			conds, _, _ := unstructured.NestedSlice(rev.Object, "status", "conditions")
			var out []any
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && (m["type"] == "RuntimeHealthy" || m["type"] == "RuntimeActive") {
					continue
				}
				out = append(out, c)
			}
			// Crossplane v2.4.0 internal/controller/pkg/runtime/reconciler.go:433-437
			// (apis/v2 pkg/v1/conditions.go:177-195).
			now := time.Now().UTC().Format(time.RFC3339)
			out = append(out,
				map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": now},
				map[string]any{"type": "RuntimeActive", "status": "True", "reason": "ActiveRuntime", "lastTransitionTime": now})
			_ = unstructured.SetNestedSlice(rev.Object, out, "status", "conditions")
			if err := e.c.Status().Update(ctx, rev); err != nil {
				return false, "", fmt.Errorf("patch status of %s: %w", rev.GetName(), err)
			}
			return false, "status patched, re-reading", nil
		}
		return false, "no active FunctionRevision for " + fnName(f), nil
	})
}

// lockStatus is the package manager's dependency resolution condition.
func (e *env) lockStatus(ctx context.Context) string {
	lock, err := get(ctx, e.c, schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1beta1", Kind: "Lock"}, "", "lock")
	if err != nil {
		return err.Error()
	}
	s, r, m := condition(lock, "Resolved")
	return fmt.Sprintf("Resolved=%s %s %s", s, r, m)
}

// installPlatformSettings applies examples/platform-settings.yaml.
func (e *env) installPlatformSettings() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := decodeFile(e.path("examples", "platform-settings.yaml"))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GroupVersionKind() != gvkEnvConfig {
			return fmt.Errorf("examples/platform-settings.yaml holds a %s", o.GroupVersionKind())
		}
		if err := apply(ctx, e.c, o); err != nil {
			return err
		}
	}
	return nil
}

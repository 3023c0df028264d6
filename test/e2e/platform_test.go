//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// platformTenant is a second tenant for the platform-settings scenario.
const (
	platformNS     = "tenant-platform"
	platformTenant = "second"
)

// platformValues are the values one setting of each function gives a
// tenant's objects: the control plane's ingress hostname (baseDomain,
// control-plane), the cluster-autoscaler image (images.clusterAutoscaler,
// workers) and the Cilium chart version (charts.cilium.version, addons).
func (e *env) platformValues(ctx context.Context, ns, n string) (host, autoscaler, cilium string, err error) {
	kcp, err := get(ctx, e.c, gvkKCP, ns, n)
	if err != nil {
		return "", "", "", err
	}
	host, _, _ = unstructured.NestedString(kcp.Object, "spec", "network", "ingress", "hostname")
	dep, err := get(ctx, e.c, gvkDeployment, fntest.ManagementNamespace(ns, n), n+"-cluster-autoscaler")
	if err != nil {
		return "", "", "", err
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "cluster-autoscaler" {
			autoscaler, _ = m["image"].(string)
		}
	}
	hr, err := get(ctx, e.c, gvkHR, ns, n+"-cilium")
	if err != nil {
		return "", "", "", err
	}
	cilium, _, _ = unstructured.NestedString(hr.Object, "spec", "chart", "spec", "version")
	return host, autoscaler, cilium, nil
}

// setPlatformSettings merges data into the EnvironmentConfig tenantkube.
func (e *env) setPlatformSettings(t *testing.T, data string) {
	t.Helper()
	ctx, cancel := ctxT(30 * time.Second)
	defer cancel()
	e.must(t, mergePatch(ctx, e.c, gvkEnvConfig, "", "tenantkube", `{"data":`+data+`}`), "patch the EnvironmentConfig with "+data)
}

// waitPlatformValues waits, without touching any claim or XR, until every
// tenant's objects carry the values: Crossplane watches the
// EnvironmentConfig, a required resource of every XR, and re-runs each XR's
// pipeline when it changes.
func (e *env) waitPlatformValues(t *testing.T, tenants [][2]string, hostSuffix, autoscaler, cilium string) time.Duration {
	t.Helper()
	start := time.Now()
	waitFor(t, 4*time.Minute, fmt.Sprintf("every tenant at host *%s, autoscaler %s, cilium %s", hostSuffix, autoscaler, cilium), func(ctx context.Context) (bool, string, error) {
		var behind []string
		for _, tn := range tenants {
			h, a, c, err := e.platformValues(ctx, tn[0], tn[1])
			if err != nil {
				return false, "", err
			}
			if !strings.HasSuffix(h, hostSuffix) || a != autoscaler || c != cilium {
				behind = append(behind, fmt.Sprintf("%s/%s (host %s, autoscaler %s, cilium %s)", tn[0], tn[1], h, a, c))
			}
		}
		return len(behind) == 0, "not reconciled yet: " + strings.Join(behind, "; "), nil
	})
	return time.Since(start)
}

// platformSettingChange changes one platform setting read by each function
// in the EnvironmentConfig and shows every tenant reconciled to them by
// Crossplane alone, then puts the settings back.
func (e *env) platformSettingChange(t *testing.T) {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	e.must(t, e.ensureNamespace(ctx, platformNS), "namespace")
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster",
		"metadata": map[string]any{"name": platformTenant, "namespace": platformNS},
		"spec":     map[string]any{},
	}}
	e.must(t, apply(ctx, e.c, claim), "apply claim "+platformTenant)
	e.waitComposed(t, platformNS, platformTenant, baseReleases, false)
	tenants := [][2]string{{demoNS, demo}, {platformNS, platformTenant}}
	// examples/platform-settings.yaml, as installed, and the defaults.
	for _, tn := range tenants {
		// The controllers in the management namespace can follow the rest
		// by Crossplane's back-off (composed before their Namespace exists).
		var h, a, c string
		waitFor(t, 3*time.Minute, "the platform values of "+tn[1], func(ctx context.Context) (bool, string, error) {
			var err error
			h, a, c, err = e.platformValues(ctx, tn[0], tn[1])
			return err == nil, fmt.Sprint(err), nil
		})
		if !strings.HasSuffix(h, ".k8s.example.net:443") || a != "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1" || c != "1.18.4" {
			fatalf(t, "%s/%s before the change: host %s, autoscaler %s, cilium %s; want *.k8s.example.net:443 (examples/platform-settings.yaml) and the defaults", tn[0], tn[1], h, a, c)
		}
	}

	e.setPlatformSettings(t, `{"baseDomain":"tenants.e2e.test","images":{"clusterAutoscaler":"mirror.e2e.test/cluster-autoscaler:v1.35.1"},"charts":{"cilium":{"version":"1.18.5"}}}`)
	took := e.waitPlatformValues(t, tenants, ".tenants.e2e.test:443", "mirror.e2e.test/cluster-autoscaler:v1.35.1", "1.18.5")
	t.Logf("every tenant reconciled to the changed platform settings %.1fs after the change, by Crossplane's own reconciles", took.Seconds())

	// A bad value: every reconcile fails naming the field; nothing changes.
	before := e.snapshot(t, demo)
	e.setPlatformSettings(t, `{"podCIDR":"10.243.0.0/33"}`)
	waitFor(t, 3*time.Minute, "XR of the demo claim Synced=False naming the EnvironmentConfig's field", func(ctx context.Context) (bool, string, error) {
		xr, err := e.xrName(ctx, demoNS, demo)
		if err != nil {
			return false, "", err
		}
		u, err := get(ctx, e.c, gvkXR, "", xr)
		if err != nil {
			return false, "", err
		}
		s, r, m := condition(u, "Synced")
		return s == "False" && strings.Contains(m, "EnvironmentConfig(tenantkube).data.podCIDR"), fmt.Sprintf("XR Synced=%s %s %q", s, r, m), nil
	})
	e.compare(t, "after a bad platform setting", before, e.snapshot(t, demo), false)

	// Back to examples/platform-settings.yaml: the changed keys unset.
	e.setPlatformSettings(t, `{"baseDomain":"k8s.example.net","podCIDR":"10.243.0.0/16","images":null,"charts":null}`)
	e.waitPlatformValues(t, tenants, ".k8s.example.net:443", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1", "1.18.4")
	e.deleteAndWait(t, platformNS, platformTenant)
}

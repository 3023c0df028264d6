package main

import (
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestEndpointsFullyQualified: every tenant API server endpoint handed to
// a tenant pod is the Service's fully qualified name under the platform
// setting clusterDomain, for the default domain and another one: Cilium's
// agents resolve k8sServiceHost on the worker VMs, whose DNS (from DHCP)
// has no management-cluster search path.
func TestEndpointsFullyQualified(t *testing.T) {
	producers := []struct {
		name, release string
		path          []string
	}{
		{"cilium k8sServiceHost", "cilium", []string{"k8sServiceHost"}},
	}
	for _, domain := range []struct{ settings, want string }{
		{"", "demo.tenant-demo.svc.cluster.local"},
		{"clusterDomain: corp.example", "demo.tenant-demo.svc.corp.example"},
	} {
		req := fntest.Call{Spec: "{}"}.Request(t)
		if domain.settings != "" {
			if err := fntest.WithPlatformSettings(req, domain.settings); err != nil {
				t.Fatal(err)
			}
		}
		rsp, err := fntest.Run(runFn, req)
		if err != nil {
			t.Fatal(err)
		}
		fntest.NoFatal(t, rsp)
		rs := releases(rsp)
		for _, p := range producers {
			if got := fntest.Get(rs[p.release], append([]string{"spec", "values"}, p.path...)...); got != domain.want {
				t.Errorf("%s with settings %q = %v, want %s", p.name, domain.settings, got, domain.want)
			}
		}
	}
}

// TestClusterDomainValidated: the refusal of a clusterDomain that is no
// DNS subdomain names the EnvironmentConfig's field.
func TestClusterDomainValidated(t *testing.T) {
	for _, bad := range []string{"Corp.Example", "corp.example.", "corp_example", strings.Repeat("a", 60) + "." + strings.Repeat("b", 59)} {
		req := fntest.Call{Spec: "{}"}.Request(t)
		if err := fntest.WithPlatformSettings(req, `clusterDomain: "`+bad+`"`); err != nil {
			t.Fatal(err)
		}
		rsp, err := fntest.Run(runFn, req)
		if err != nil {
			t.Fatal(err)
		}
		if msg := fntest.FatalMessage(rsp); !strings.Contains(msg, "EnvironmentConfig(tenantkube).data.clusterDomain") {
			t.Errorf("clusterDomain %q: Fatal %q, want one naming EnvironmentConfig(tenantkube).data.clusterDomain", bad, msg)
		}
	}
}

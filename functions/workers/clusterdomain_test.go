package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestEndpointsFullyQualified: every tenant API server endpoint handed to
// a worker VM is the Service's fully qualified name under the platform
// setting clusterDomain (the VM's DNS, from DHCP, has no management-cluster
// search path, so a short N.NS.svc would not resolve there), for the
// default domain and another one.
func TestEndpointsFullyQualified(t *testing.T) {
	const talosSpec = `nodeGroups: {md0: {resources: {cpu: 2, memory: 4Gi}, os: Talos}}
talos: {version: v1.13.2, schematicID: ` + "abababababababababababababababababababababababababababababababab" + `}`
	producers := []struct {
		name, spec string
		opts       []fntest.RequestOption
		endpoint   func(t *testing.T, rsp *fnv1.RunFunctionResponse) any
		want       string // with %s for the fully qualified Service name
	}{
		{
			name: "kubeadm joinConfiguration.discovery.bootstrapToken.apiServerEndpoint",
			spec: `nodeGroups: {md0: {resources: {cpu: 2, memory: 4Gi}}}`,
			endpoint: func(t *testing.T, rsp *fnv1.RunFunctionResponse) any {
				return get(desired(t, rsp, bootstrapResourceName("md0")), "spec", "template", "spec", "joinConfiguration", "discovery", "bootstrapToken", "apiServerEndpoint")
			},
			want: "%s:6443",
		},
		{
			name: "Talos cluster.controlPlane.endpoint",
			spec: talosSpec, opts: []fntest.RequestOption{withTalosPKI(t)},
			endpoint: func(t *testing.T, rsp *fnv1.RunFunctionResponse) any {
				return get(talosPatchOf(t, rsp, "md0"), "cluster", "controlPlane", "endpoint")
			},
			want: "https://%s:6443",
		},
	}
	// The machine template each group runs, by producer: the same under
	// any clusterDomain (the bootstrap hash is of the short name), so a
	// running group does not roll.
	templates := map[string]any{}
	for _, domain := range []struct{ settings, fqdn string }{
		{"", "demo.tenant-foo.svc.cluster.local"},
		{"clusterDomain: corp.example", "demo.tenant-foo.svc.corp.example"},
	} {
		for _, p := range producers {
			req := newRequest(t, p.spec, append([]fntest.RequestOption{withMachineSets(t)}, p.opts...)...)
			if domain.settings != "" {
				if err := fntest.WithPlatformSettings(req, domain.settings); err != nil {
					t.Fatal(err)
				}
			}
			rsp := run(t, req)
			mustNoFatal(t, rsp)
			if got, want := p.endpoint(t, rsp), strings.Replace(p.want, "%s", domain.fqdn, 1); got != want {
				t.Errorf("%s with settings %q = %v, want %s", p.name, domain.settings, got, want)
			}
			tmpl := get(desired(t, rsp, machineDeploymentResourceName("md0")), "spec", "template", "spec", "infrastructureRef", "name")
			if prev, ok := templates[p.name]; ok && prev != tmpl {
				t.Errorf("%s: settings %q run machine template %v, the default domain %v: the group would roll", p.name, domain.settings, tmpl, prev)
			}
			templates[p.name] = tmpl
		}
	}
}

// TestClusterDomainValidated: clusterDomain must be a DNS subdomain
// without a trailing dot, of at most 119 characters; the refusal names the
// EnvironmentConfig's field.
func TestClusterDomainValidated(t *testing.T) {
	for _, bad := range []string{"Corp.Example", "corp.example.", "corp_example", strings.Repeat("a", 60) + "." + strings.Repeat("b", 59)} {
		req := newRequest(t, `nodeGroups: {md0: {resources: {cpu: 2, memory: 4Gi}}}`, withMachineSets(t))
		if err := fntest.WithPlatformSettings(req, "clusterDomain: "+bad); err != nil {
			t.Fatal(err)
		}
		msgs := fatals(run(t, req))
		if len(msgs) == 0 || !strings.Contains(msgs[0], "EnvironmentConfig(tenantkube).data.clusterDomain") {
			t.Errorf("clusterDomain %q: Fatal %q, want one naming EnvironmentConfig(tenantkube).data.clusterDomain", bad, msgs)
		}
	}
}

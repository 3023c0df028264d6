package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestNamesUnderClusterDomain: every name of a management-cluster Service
// that something outside the management cluster's pods dials or checks is
// fully qualified under the platform setting clusterDomain, for the default
// domain and another one: the tenant API server's certificate (worker VMs
// and Cilium dial N.NS.svc.<clusterDomain>: their DNS has no
// management-cluster search path), the Talos signer's certificate (Talos
// workers dial the same name) and the etcd peer certificate's wildcard
// (the name a member's reverse lookup answers with). With another domain,
// no name of the management cluster under cluster.local is left.
func TestNamesUnderClusterDomain(t *testing.T) {
	producers := []struct {
		name, object string
		path         []string
		want         string // with %s for clusterDomain
	}{
		{"API server certificate (KamajiControlPlane spec.network.certSANs)", nameKamajiControlPlane, []string{"spec", "network", "certSANs"}, "demo.tenant-demo.svc.%s"},
		{"Talos signer certificate (N-talos-tls spec.dnsNames)", nameTalosTLS, []string{"spec", "dnsNames"}, "demo.tenant-demo.svc.%s"},
		{"etcd peer certificate (N-etcd-peer spec.dnsNames)", "etcd-peer-cert", []string{"spec", "dnsNames"}, "*.demo-etcd-headless.tenant-demo.svc.%s"},
	}
	for _, domain := range []string{"", "corp.example"} {
		required := talosObserved(true, true)
		if domain != "" {
			required["platform-settings"] = []string{`{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenantkube}, data: {clusterDomain: ` + domain + `}}`}
		}
		rsp := fntest.Call{Spec: talosSpec, Input: `{talosCsrSignerImage: ` + signerImage + `}`, Required: required}.Run(t, fn)
		fntest.NoFatal(t, rsp)
		d := domain
		if d == "" {
			d = "cluster.local"
		}
		for _, p := range producers {
			want := strings.Replace(p.want, "%s", d, 1)
			got, _ := fntest.Get(fntest.DesiredObject(t, rsp, p.object), p.path...).([]any)
			if !slices.Contains(got, any(want)) {
				t.Errorf("clusterDomain %q: %s = %v, want it to hold %s", domain, p.name, got, want)
			}
		}
		if domain == "" {
			continue
		}
		// The tenant cluster's own service-account issuer,
		// kubernetes.default.svc.cluster.local, is no management name.
		raw, err := json.Marshal(rsp.GetDesired().GetResources())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`[a-z0-9*.-]+\.cluster\.local`).FindAllString(string(raw), -1) {
			if m != "kubernetes.default.svc.cluster.local" {
				t.Errorf("clusterDomain %q: desired state still names %s", domain, m)
			}
		}
	}
}

// TestTenantEtcdPeerNamesUnderClusterDomain: a namespace's shared etcd's
// peer certificate carries its wildcard under clusterDomain too.
func TestTenantEtcdPeerNamesUnderClusterDomain(t *testing.T) {
	for _, domain := range []string{"cluster.local", "corp.example"} {
		site := tenantEtcdSite("tenant-demo", aenixEtcd{})
		got := buildEtcdPKIOf(site, 3, domain).Certificates["etcd-peer-cert"].Spec.DNSNames
		want := "*." + site.Names.Headless + ".tenant-demo.svc." + domain
		if !slices.Contains(got, want) {
			t.Errorf("clusterDomain %q: peer dnsNames %v, want %s among them", domain, got, want)
		}
	}
}

// TestClusterDomainValidated: the refusal of a clusterDomain that is no
// DNS subdomain names the EnvironmentConfig's field.
func TestClusterDomainValidated(t *testing.T) {
	for _, bad := range []string{"Corp.Example", "corp.example.", "corp_example", strings.Repeat("a", 60) + "." + strings.Repeat("b", 59)} {
		required := map[string][]string{"platform-settings": {`{apiVersion: apiextensions.crossplane.io/v1beta1, kind: EnvironmentConfig, metadata: {name: tenantkube}, data: {clusterDomain: "` + bad + `"}}`}}
		if msg := fntest.FatalMessage(fntest.Call{Spec: `{}`, Required: required}.Run(t, fn)); !strings.Contains(msg, "EnvironmentConfig(tenantkube).data.clusterDomain") {
			t.Errorf("clusterDomain %q: Fatal %q, want one naming EnvironmentConfig(tenantkube).data.clusterDomain", bad, msg)
		}
	}
}

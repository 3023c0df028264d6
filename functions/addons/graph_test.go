package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// dependencyGraph is the HelmRelease dependency graph Table gives for the
// add-ons a: each installed release and the releases its dependsOn names,
// in order.
func dependencyGraph(a *v1alpha1.Addons) map[string][]string {
	g := map[string][]string{}
	for i := range Table {
		row := &Table[i]
		if row.On(&Context{Spec: &v1alpha1.KubernetesClusterSpec{Addons: *a}}) {
			g[row.Release] = append([]string{}, row.DependsOn(a)...)
		}
	}
	return g
}

// The wanted graphs are typed from the "depends on" column of the add-on
// table in docs/tenant-guide.md (the seed README lists the add-ons and
// their switches, addons.*.enabled, but not their order). Monitoring's four
// releases are "as the seed chart" there: their edges below are the
// Cozystack kubernetes chart's HelmReleases as recorded when the table was
// written (victoria-metrics-operator waits for cert-manager's CRDs only
// when cert-manager is installed).
func TestTableDependsOn(t *testing.T) {
	base := map[string][]string{
		"cilium":                   {},
		"coredns":                  {"cilium"},
		"vsnap-crd":                {},
		"csi":                      {"vsnap-crd", "cilium"},
		"prometheus-operator-crds": {},
		"metrics-server":           {"cilium", "prometheus-operator-crds"},
	}
	with := func(extra map[string][]string) map[string][]string {
		out := map[string][]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	type args struct {
		addons v1alpha1.Addons
	}
	cases := map[string]struct {
		reason string
		args   args
		want   map[string][]string
	}{
		"Defaults": {
			reason: "the always-installed add-ons only; cilium waits for nothing",
			args:   args{},
			want:   base,
		},
		"CertManager": {
			reason: "cert-manager waits for cilium and its CRDs, which wait for nothing",
			args:   args{addons: v1alpha1.Addons{CertManager: v1alpha1.ToggledAddon{Enabled: true}}},
			want: with(map[string][]string{
				"cert-manager-crds": {},
				"cert-manager":      {"cilium", "cert-manager-crds"},
			}),
		},
		"GatewayAPI": {
			reason: "with Gateway API, cilium waits for the Gateway API CRDs",
			args:   args{addons: v1alpha1.Addons{GatewayAPI: v1alpha1.GatewayAPIAddon{Enabled: true}}},
			want: with(map[string][]string{
				"gateway-api-crds": {},
				"cilium":           {"gateway-api-crds"},
			}),
		},
		"IngressNginxAndOuroboros": {
			reason: "ouroboros waits for cilium, coredns and ingress-nginx; ingress-nginx for cilium",
			args: args{addons: v1alpha1.Addons{
				IngressNginx: v1alpha1.IngressNginxAddon{Enabled: true},
				Ouroboros:    v1alpha1.ToggledAddon{Enabled: true},
			}},
			want: with(map[string][]string{
				"ingress-nginx": {"cilium"},
				"ouroboros":     {"cilium", "coredns", "ingress-nginx"},
			}),
		},
		"GPU": {
			reason: "hami waits for cilium and the GPU operator; the GPU operator for cilium",
			args: args{addons: v1alpha1.Addons{
				GPUOperator: v1alpha1.ToggledAddon{Enabled: true},
				HAMi:        v1alpha1.ToggledAddon{Enabled: true},
			}},
			want: with(map[string][]string{
				"gpu-operator": {"cilium"},
				"hami":         {"cilium", "gpu-operator"},
			}),
		},
		"FluxCD": {
			reason: "fluxcd waits for cilium and its operator; the operator for cilium",
			args:   args{addons: v1alpha1.Addons{FluxCD: v1alpha1.ToggledAddon{Enabled: true}}},
			want: with(map[string][]string{
				"fluxcd-operator": {"cilium"},
				"fluxcd":          {"cilium", "fluxcd-operator"},
			}),
		},
		"MonitoringWithoutCertManager": {
			reason: "monitoring's four releases; the operator waits for cilium only",
			args:   args{addons: v1alpha1.Addons{MonitoringAgents: v1alpha1.ToggledAddon{Enabled: true}}},
			want: with(map[string][]string{
				"cozy-victoria-metrics-operator": {"cilium"},
				"vertical-pod-autoscaler-crds":   {"cilium"},
				"monitoring-agents":              {"cozy-victoria-metrics-operator", "vertical-pod-autoscaler-crds", "prometheus-operator-crds", "metrics-server"},
				"vertical-pod-autoscaler":        {"monitoring-agents"},
			}),
		},
		"Velero": {
			reason: "velero waits for cilium",
			args:   args{addons: v1alpha1.Addons{Velero: v1alpha1.ToggledAddon{Enabled: true}}},
			want:   with(map[string][]string{"velero": {"cilium"}}),
		},
		"Everything": {
			reason: "every add-on on: the conditional edges (cilium and ouroboros on the Gateway API CRDs, the monitoring operator on cert-manager's CRDs) are added",
			args: args{addons: v1alpha1.Addons{
				CertManager:      v1alpha1.ToggledAddon{Enabled: true},
				GatewayAPI:       v1alpha1.GatewayAPIAddon{Enabled: true},
				IngressNginx:     v1alpha1.IngressNginxAddon{Enabled: true},
				GPUOperator:      v1alpha1.ToggledAddon{Enabled: true},
				HAMi:             v1alpha1.ToggledAddon{Enabled: true},
				FluxCD:           v1alpha1.ToggledAddon{Enabled: true},
				MonitoringAgents: v1alpha1.ToggledAddon{Enabled: true},
				Velero:           v1alpha1.ToggledAddon{Enabled: true},
				Ouroboros:        v1alpha1.ToggledAddon{Enabled: true},
			}},
			want: with(map[string][]string{
				"gateway-api-crds":               {},
				"cilium":                         {"gateway-api-crds"},
				"cert-manager-crds":              {},
				"cert-manager":                   {"cilium", "cert-manager-crds"},
				"ingress-nginx":                  {"cilium"},
				"gpu-operator":                   {"cilium"},
				"hami":                           {"cilium", "gpu-operator"},
				"fluxcd-operator":                {"cilium"},
				"fluxcd":                         {"cilium", "fluxcd-operator"},
				"cozy-victoria-metrics-operator": {"cilium", "cert-manager-crds"},
				"vertical-pod-autoscaler-crds":   {"cilium"},
				"monitoring-agents":              {"cozy-victoria-metrics-operator", "vertical-pod-autoscaler-crds", "prometheus-operator-crds", "metrics-server"},
				"vertical-pod-autoscaler":        {"monitoring-agents"},
				"velero":                         {"cilium"},
				"ouroboros":                      {"cilium", "coredns", "ingress-nginx", "gateway-api-crds"},
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dependencyGraph(&tc.args.addons)); diff != "" {
				t.Errorf("%s\ndependency graph: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTableInstallOrder checks the order Table promises: a release comes
// after every release it may depend on, with every add-on on.
func TestTableInstallOrder(t *testing.T) {
	all := &v1alpha1.Addons{
		CertManager: v1alpha1.ToggledAddon{Enabled: true}, GatewayAPI: v1alpha1.GatewayAPIAddon{Enabled: true},
		IngressNginx: v1alpha1.IngressNginxAddon{Enabled: true}, GPUOperator: v1alpha1.ToggledAddon{Enabled: true},
		HAMi: v1alpha1.ToggledAddon{Enabled: true}, FluxCD: v1alpha1.ToggledAddon{Enabled: true},
		MonitoringAgents: v1alpha1.ToggledAddon{Enabled: true}, Velero: v1alpha1.ToggledAddon{Enabled: true},
		Ouroboros: v1alpha1.ToggledAddon{Enabled: true},
	}
	seen := map[string]bool{}
	for i := range Table {
		for _, d := range Table[i].DependsOn(all) {
			if !seen[d] {
				t.Errorf("%s depends on %s, which comes after it in Table", Table[i].Release, d)
			}
		}
		seen[Table[i].Release] = true
	}
}

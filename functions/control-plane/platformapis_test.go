package main

import (
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// cozystackAPIServices are the required resources of a platform like
// Cozystack's: Cluster API v1.10.1 (cluster.x-k8s.io and
// bootstrap.cluster.x-k8s.io v1beta1 only) and the Kamaji control-plane
// provider v0.19.0 (v1alpha1 only): Crossplane answers their APIServices
// with nothing, the others with the object; Flux serves ExternalArtifact
// (its CRD). Names written by hand.
func cozystackAPIServices(served ...string) map[string][]string {
	out := map[string][]string{
		"apiservice-v1beta2.cluster.x-k8s.io":               nil,
		"apiservice-v1beta2.bootstrap.cluster.x-k8s.io":     nil,
		"apiservice-v1alpha2.controlplane.cluster.x-k8s.io": nil,
		"crd-externalartifacts.source.toolkit.fluxcd.io": {
			"{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: externalartifacts.source.toolkit.fluxcd.io}}"},
	}
	for _, name := range served {
		out["apiservice-"+name] = []string{"{apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: " + name + "}}"}
	}
	return out
}

// TestMissingPlatformAPIs: on a platform lacking Cluster API v1beta2 and
// KamajiControlPlane v1alpha2, a cluster (claim and TenantCluster) and a
// Tenant get one Fatal result naming each missing group/version, its kinds
// and the release that first serves them, and no desired object.
// Crossplane applies nothing and deletes nothing on a Fatal result
// (crossplane v2.4.0
// internal/controller/apiextensions/composite/composition_functions.go:520-522
// returns before the apply and the garbage collection).
func TestMissingPlatformAPIs(t *testing.T) {
	clusterServed := []string{"v1alpha1.infrastructure.cluster.x-k8s.io", "v1alpha1.kamaji.clastix.io", "v1alpha1.etcd.aenix.io",
		"v1.cert-manager.io", "v2.helm.toolkit.fluxcd.io", "v1.source.toolkit.fluxcd.io"}
	capi := "cluster.x-k8s.io/v1beta2 Cluster, MachineDeployment, MachineHealthCheck, MachineSet, Machine (Cluster API v1.11.0)"
	kubeadm := "bootstrap.cluster.x-k8s.io/v1beta2 KubeadmConfigTemplate (Cluster API v1.11.0)"
	kcp := "controlplane.cluster.x-k8s.io/v1alpha2 KamajiControlPlane (Cluster API control-plane provider Kamaji v0.20.0)"
	for name, c := range map[string]struct {
		call fntest.Call
		want []string
	}{
		"claim":         {fntest.Call{Required: cozystackAPIServices(clusterServed...)}, []string{capi, kubeadm, kcp}},
		"TenantCluster": {fntest.Call{Namespaced: true, Required: cozystackAPIServices(clusterServed...)}, []string{capi, kubeadm, kcp}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := c.call.Run(t, fnAtBackupNow)
			msg := fntest.FatalMessage(rsp)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Fatal %q lacks %q", msg, w)
				}
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%d desired objects", n)
			}
		})
	}
	t.Run("Tenant", func(t *testing.T) {
		req := tenantCall{name: "tenant-demo", required: cozystackAPIServices("v1alpha1.kamaji.clastix.io", "v1alpha1.etcd.aenix.io", "v1.cert-manager.io")}.request(t)
		rsp, err := fntest.Run(fnAtBackupNow, req)
		if err != nil {
			t.Fatal(err)
		}
		msg := fntest.FatalMessage(rsp)
		if !strings.Contains(msg, kcp) || strings.Contains(msg, "cluster.x-k8s.io/v1beta2") {
			t.Errorf("Fatal %q: want only %q (a Tenant composes no Cluster API object)", msg, kcp)
		}
		if n := len(rsp.GetDesired().GetResources()); n != 0 {
			t.Errorf("%d desired objects", n)
		}
	})
	t.Run("served", func(t *testing.T) {
		served := append([]string{"v1beta2.cluster.x-k8s.io", "v1beta2.bootstrap.cluster.x-k8s.io", "v1alpha2.controlplane.cluster.x-k8s.io"}, clusterServed...)
		fntest.NoFatal(t, fntest.Call{Required: cozystackAPIServices(served...)}.Run(t, fnAtBackupNow))
	})
}

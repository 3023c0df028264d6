package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/schema"
)

const talosSpec = `{nodeGroups: {md0: {os: Talos}}}`

const signerImage = "ghcr.io/clastix/talos-csr-signer:v0.1.0"

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// talosObserved are the required resources of a running Talos cluster:
// the Talos CA and serving-certificate Secrets and Kamaji's Service N.
func talosObserved(withService, withSecrets bool) map[string][]string {
	req := map[string][]string{requiredTalosCA: nil, requiredTalosTLS: nil, requiredAPIServerService: nil}
	if withService {
		req[requiredAPIServerService] = []string{`{apiVersion: v1, kind: Service, metadata: {name: demo, namespace: tenant-demo}, spec: {clusterIP: 10.96.12.34}}`}
	}
	if withSecrets {
		req[requiredTalosCA] = []string{`{apiVersion: v1, kind: Secret, metadata: {name: demo-talos-ca, namespace: tenant-demo}, data: {tls.crt: ` + b64("ca") + `, tls.key: ` + b64("key") + `}}`}
		req[requiredTalosTLS] = []string{`{apiVersion: v1, kind: Secret, metadata: {name: demo-talos-tls, namespace: tenant-demo}, data: {tls.crt: ` + b64("crt") + `, tls.key: ` + b64("key2") + `}}`}
	}
	return req
}

// TestTalosSignerImageDefault: a platform that names no talos-csr-signer
// image runs Cozystack's, the content of
// packages/apps/kubernetes/images/talos-csr-signer.tag in
// github.com/cozystack/cozystack at 3c780acd (release v1.6.0), also for a
// group following the platform's Talos default.
func TestTalosSignerImageDefault(t *testing.T) {
	const cozystack = "ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818"
	for name, c := range map[string]fntest.Call{
		"os Talos":              {Spec: talosSpec, Required: talosObserved(true, true)},
		"defaultWorkerOS Talos": {Spec: `{nodeGroups: {md0: {}}}`, Input: `{defaultWorkerOS: Talos}`, Required: talosObserved(true, true)},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := c.Run(t, fn)
			fntest.NoFatal(t, rsp)
			containers, _ := fntest.Get(fntest.DesiredObject(t, rsp, nameKamajiControlPlane), "spec", "deployment", "extraContainers").([]any)
			if len(containers) != 1 {
				t.Fatalf("extraContainers = %v, want the signer", containers)
			}
			if got := containers[0].(map[string]any)["image"]; got != cozystack {
				t.Errorf("signer image %v, want %s", got, cozystack)
			}
		})
	}
}

// TestTalosControlPlane: the PKI is composed at once; the serving
// certificate once Kamaji's Service has an IP (named in it); the signer
// sidecar, its volumes, the trustd port and the certSAN once both
// Secrets are observed; an Ubuntu-only cluster gets none of it. Every
// object validates against the CRDs.
func TestTalosControlPlane(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	in := `{talosCsrSignerImage: ` + signerImage + `}`
	has := func(names []string, n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}

	ubuntu := fntest.Call{Spec: `{nodeGroups: {md0: {}}}`, Input: in}.Run(t, fn)
	fntest.NoFatal(t, ubuntu)
	for _, n := range []string{nameTalosCA, nameTalosTLS, nameTalosCAIssuer, nameTalosSelfSignedIssuer} {
		if has(fntest.DesiredNames(ubuntu), n) {
			t.Errorf("an Ubuntu cluster composes %s", n)
		}
	}

	first := fntest.Call{Spec: talosSpec, Input: in, Required: talosObserved(false, false)}.Run(t, fn)
	fntest.NoFatal(t, first)
	names := fntest.DesiredNames(first)
	for _, n := range []string{nameTalosCA, nameTalosCAIssuer, nameTalosSelfSignedIssuer} {
		if !has(names, n) {
			t.Errorf("%s is not composed", n)
		}
	}
	if has(names, nameTalosTLS) {
		t.Error("the serving certificate is composed before the Service's IP is observed")
	}
	if c := fntest.DesiredObject(t, first, nameKamajiControlPlane); fntest.Get(c, "spec", "deployment", "extraContainers") != nil {
		t.Error("the signer is added before its Secrets are observed: the control-plane pod would not start")
	}
	ca := fntest.DesiredObject(t, first, nameTalosCA)
	if fntest.Get(ca, "spec", "isCA") != true || fntest.Get(ca, "spec", "secretName") != "demo-talos-ca" {
		t.Errorf("Talos CA = %v", ca["spec"])
	}

	full := fntest.Call{Spec: talosSpec, Input: in, Required: talosObserved(true, true)}.Run(t, fn)
	fntest.NoFatal(t, full)
	tls := fntest.DesiredObject(t, full, nameTalosTLS)
	if diff := cmp.Diff([]any{"10.96.12.34"}, fntest.Get(tls, "spec", "ipAddresses")); diff != "" {
		t.Errorf("serving certificate IPs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"demo", "demo.tenant-demo", "demo.tenant-demo.svc", "demo.tenant-demo.svc.cluster.local"}, fntest.Get(tls, "spec", "dnsNames")); diff != "" {
		t.Errorf("serving certificate names (-want +got):\n%s", diff)
	}
	kcp := fntest.DesiredObject(t, full, nameKamajiControlPlane)
	containers, _ := fntest.Get(kcp, "spec", "deployment", "extraContainers").([]any)
	if len(containers) != 1 {
		t.Fatalf("extraContainers = %v, want the signer", containers)
	}
	c := containers[0].(map[string]any)
	if c["name"] != "talos-csr-signer" || c["image"] != signerImage {
		t.Errorf("signer = %v", c)
	}
	args := map[string]bool{}
	for _, a := range c["args"].([]any) {
		args[a.(string)] = true
	}
	for _, a := range []string{"--port=50001", "--ca-cert-path=/etc/talos-ca/tls.crt", "--ca-key-path=/etc/talos-ca/tls.key", "--tls-cert-path=/etc/talos-tls/tls.crt", "--tls-key-path=/etc/talos-tls/tls.key"} {
		if !args[a] {
			t.Errorf("signer lacks %s: %v", a, c["args"])
		}
	}
	if diff := cmp.Diff([]any{map[string]any{"name": "trustd", "port": float64(50001), "protocol": "TCP", "targetPort": float64(50001)}},
		fntest.Get(kcp, "spec", "network", "additionalServicePorts")); diff != "" {
		t.Errorf("additionalServicePorts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"demo.tenant-demo.svc.cluster.local", "demo.tenant-demo.svc"}, fntest.Get(kcp, "spec", "network", "certSANs")); diff != "" {
		t.Errorf("certSANs (-want +got):\n%s", diff)
	}
	for _, n := range fntest.DesiredNames(full) {
		obj := &unstructured.Unstructured{Object: fntest.DesiredObject(t, full, n)}
		if g := obj.GroupVersionKind().Group; g == "" || strings.HasSuffix(g, ".k8s.io") && !strings.HasSuffix(g, "x-k8s.io") {
			continue
		}
		if err := v.Validate(obj); err != nil {
			t.Errorf("%s does not validate: %v", n, err)
		}
	}
}

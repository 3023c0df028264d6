package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// adminKubeconfig is Kamaji's admin kubeconfig Secret of demo in
// tenant-demo, key super-admin.svc: the in-cluster server, the tenant CA
// ca (base64 of PEM) and an admin client certificate the OIDC kubeconfig
// must never carry.
func adminKubeconfig(ca string) string {
	conf := `apiVersion: v1
kind: Config
current-context: default
clusters:
- name: demo
  cluster: {server: "https://demo.tenant-demo.svc:6443", certificate-authority-data: ` + ca + `}
users:
- name: admin
  user: {client-certificate-data: QURNSU4tQ0VSVA==, client-key-data: QURNSU4tS0VZ, token: admin-token}
contexts:
- name: default
  context: {cluster: demo, user: admin}
`
	return `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo},
		data: {super-admin.svc: ` + base64.StdEncoding.EncodeToString([]byte(conf)) + `}}`
}

// wantOIDCKubeconfig is the kubeconfig of today's chart for demo in
// tenant-demo (oidc-rbac-job.yaml's heredoc), written by hand: server on
// the tenant host, port 443; kubectl oidc-login get-token with the issuer,
// the client ID tenant-demo.demo (the audience), email and groups scopes,
// PKCE.
func wantOIDCKubeconfig(ca string, groups bool) string {
	scope := ""
	if groups {
		scope = "\n      - --oidc-extra-scope=groups"
	}
	return `apiVersion: v1
kind: Config
current-context: demo
clusters:
- name: demo
  cluster:
    server: https://demo.tenant-demo.tenants.example.com:443
    certificate-authority-data: ` + ca + `
users:
- name: demo-oidc
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: kubectl
      args:
      - oidc-login
      - get-token
      - --oidc-issuer-url=https://id.corp.test/realms/platform
      - --oidc-client-id=tenant-demo.demo
      - --oidc-extra-scope=email` + scope + `
      - --oidc-use-pkce
      env: null
      interactiveMode: IfAvailable
      provideClusterInfo: true
contexts:
- name: demo
  context: {cluster: demo, user: demo-oidc}
`
}

func TestOIDCKubeconfigSecret(t *testing.T) {
	ca := base64.StdEncoding.EncodeToString([]byte(testCA(t)))
	const system = `{issuerURL: "https://id.corp.test/realms/platform", usernameClaim: email}`
	const gated = `{issuerURL: "https://id.corp.test/realms/platform", usernameClaim: email, groupsClaim: groups, tenantGroups: ["tenant:{namespace}:admin"]}`
	observedSecret := map[string]string{nameOIDCKubeconfig: `{apiVersion: v1, kind: Secret, metadata: {name: demo-oidc-kubeconfig, namespace: tenant-demo}}`}
	type want struct {
		kubeconfig string // "" for no composed Secret
		kept       bool
		require    bool // the admin kubeconfig is required
	}
	cases := map[string]struct {
		reason     string
		namespaced bool
		spec       string
		oidc       string
		required   []string // the admin kubeconfig Secret answered
		observed   map[string]string
		want       want
	}{
		"System": {
			reason: "Mode System with the tenant CA known: the Secret N-oidc-kubeconfig, key kubeconfig, with the CA and no admin credential.",
			spec:   `{oidc: {mode: System}}`, oidc: system, required: []string{adminKubeconfig(ca)},
			want: want{kubeconfig: wantOIDCKubeconfig(ca, false), require: true},
		},
		"SystemGated": {
			reason: "With a claim gate the groups scope is asked for too.",
			spec:   `{oidc: {mode: System}}`, oidc: gated, required: []string{adminKubeconfig(ca)},
			want: want{kubeconfig: wantOIDCKubeconfig(ca, true), require: true},
		},
		"Namespaced": {
			reason:     "A TenantCluster has no connection details but requires the admin kubeconfig for the CA.",
			namespaced: true, spec: `{oidc: {mode: System}}`, oidc: system, required: []string{adminKubeconfig(ca)},
			want: want{kubeconfig: wantOIDCKubeconfig(ca, false), require: true},
		},
		"CANotYet": {
			reason: "Before Kamaji wrote the admin kubeconfig nothing is composed, and nothing fails.",
			spec:   `{oidc: {mode: System}}`, oidc: system,
			want: want{require: true},
		},
		"CANotYetKept": {
			reason: "An observed OIDC kubeconfig is kept while the CA is unknown: never a smaller desired state.",
			spec:   `{oidc: {mode: System}}`, oidc: system, observed: observedSecret,
			want: want{kept: true, require: true},
		},
		"CANotPEM": {
			reason: "A CA that is no PEM certificate is unknown: the observed Secret is kept.",
			spec:   `{oidc: {mode: System}}`, oidc: system, observed: observedSecret,
			required: []string{adminKubeconfig(base64.StdEncoding.EncodeToString([]byte("not a certificate")))},
			want:     want{kept: true, require: true},
		},
		"None": {
			reason:     "Mode None: no Secret, and a TenantCluster requires no admin kubeconfig.",
			namespaced: true, spec: `{}`, oidc: system, required: []string{adminKubeconfig(ca)},
		},
		"CustomConfig": {
			reason: "CustomConfig: the platform knows no issuer or client of the tenant's (the chart's rule).",
			spec:   `{oidc: {mode: CustomConfig, customConfig: {config: ` + strings.ReplaceAll(strings.ReplaceAll(`"`+docsConfig+`"`, "\n", `\n`), `""`, `\"\"`) + `}}}`,
			oidc:   system, required: []string{adminKubeconfig(ca)},
			want: want{require: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			call := fntest.Call{Namespaced: tc.namespaced, Spec: tc.spec, Observed: tc.observed}
			if tc.required != nil {
				call.Required = map[string][]string{requiredKubeconfig: tc.required}
			}
			p, errs := planOf(t, call, `{oidc: `+tc.oidc+`}`)
			if len(errs) > 0 {
				t.Fatalf("%s\nplan: %v", tc.reason, errs)
			}
			if _, ok := p.Requirements[requiredKubeconfig]; ok != tc.want.require {
				t.Errorf("%s\nadmin kubeconfig required: got %v, want %v", tc.reason, ok, tc.want.require)
			}
			kept := false
			for _, k := range p.Kept {
				kept = kept || k.Name == nameOIDCKubeconfig
			}
			if kept != tc.want.kept {
				t.Errorf("%s\nkept: got %v, want %v", tc.reason, kept, tc.want.kept)
			}
			var got *corev1.Secret
			for _, c := range p.Composed {
				if c.Name == nameOIDCKubeconfig {
					got = c.Object.(*corev1.Secret)
				}
			}
			if tc.want.kubeconfig == "" {
				if got != nil {
					t.Errorf("%s\nwant no OIDC kubeconfig, got %v", tc.reason, got)
				}
				return
			}
			if got == nil {
				t.Fatalf("%s\nno OIDC kubeconfig composed", tc.reason)
			}
			wantNS := "tenant-demo"
			if got.Name != "demo-oidc-kubeconfig" || got.Namespace != wantNS || len(got.Data) != 1 {
				t.Errorf("%s\nSecret %s/%s with keys %d, want tenant-demo/demo-oidc-kubeconfig with one key", tc.reason, got.Namespace, got.Name, len(got.Data))
			}
			text := string(got.Data["kubeconfig"])
			for _, secret := range []string{"QURNSU4tQ0VSVA==", "QURNSU4tS0VZ", "admin-token", "6443"} {
				if strings.Contains(text, secret) {
					t.Errorf("%s\nthe OIDC kubeconfig holds %q of the admin kubeconfig", tc.reason, secret)
				}
			}
			// kubectl loads it.
			cfg, err := clientcmd.Load(got.Data["kubeconfig"])
			if err != nil {
				t.Fatalf("%s\nthe kubeconfig does not load: %v", tc.reason, err)
			}
			if err := clientcmd.Validate(*cfg); err != nil {
				t.Errorf("%s\nthe kubeconfig is not valid: %v", tc.reason, err)
			}
			var w, g any
			if err := yaml.Unmarshal([]byte(tc.want.kubeconfig), &w); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(text), &g); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(w, g); d != "" {
				t.Errorf("%s\nkubeconfig (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}

// TestOIDCKubeconfigSecretNames: the Secret is named in NS after N only,
// like every per-cluster object of NS.
func TestOIDCKubeconfigSecretNames(t *testing.T) {
	if got := OIDCKubeconfigSecretName(function.Identity{Namespace: "tenant-demo", Name: "demo"}); got != "demo-oidc-kubeconfig" {
		t.Errorf("OIDCKubeconfigSecretName = %q, want demo-oidc-kubeconfig", got)
	}
}

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// pemPair is a self-signed certificate and its key, both PEM.
type pemPair struct{ cert, key []byte }

func newPair(t *testing.T, cn string) pemPair {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:masters"}},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(100 * 365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair{cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})}
}

func kcB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// kamajiKubeconfig is a kubeconfig shaped as Kamaji writes super-admin.svc
// for demo in tenant-demo, with extra lines in the cluster (cluster) and
// the user (user) entries and at the top (top).
func kamajiKubeconfig(ca, client pemPair, cluster, user, top string) []byte {
	return []byte(`apiVersion: v1
kind: Config
current-context: default
clusters:
- name: demo
  cluster:
    server: https://demo.tenant-demo.svc:6443
    certificate-authority-data: ` + kcB64(ca.cert) + cluster + `
users:
- name: admin
  user:
    client-certificate-data: ` + kcB64(client.cert) + `
    client-key-data: ` + kcB64(client.key) + user + `
contexts:
- name: default
  context: {cluster: demo, user: admin}
` + top)
}

// wantControllersKubeconfig is the rebuilt kubeconfig, written by hand:
// the tenant API server's Service N.NS.svc on port 6443, the CA, the
// client certificate and key, nothing else.
func wantControllersKubeconfig(ca, client pemPair) string {
	return `apiVersion: v1
kind: Config
current-context: tenant
clusters:
- name: tenant
  cluster:
    server: https://demo.tenant-demo.svc:6443
    certificate-authority-data: ` + kcB64(ca.cert) + `
users:
- name: super-admin
  user:
    client-certificate-data: ` + kcB64(client.cert) + `
    client-key-data: ` + kcB64(client.key) + `
contexts:
- name: tenant
  context: {cluster: tenant, user: super-admin}
`
}

func kubeconfigSecretOf(kc []byte) *corev1.Secret {
	return &corev1.Secret{Data: map[string][]byte{function.KubeconfigSecretKey: kc}}
}

// TestControllersKubeconfigDropsHostileEntries: each entry a tenant
// holding a write role in NS could add to Kamaji's Secret is dropped, one
// case per entry: the rebuilt kubeconfig is the same hand-written one as
// for Kamaji's own.
func TestControllersKubeconfigDropsHostileEntries(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	ca, client := newPair(t, "tenant-ca"), newPair(t, "kubernetes-super-admin")
	want := wantControllersKubeconfig(ca, client)
	cases := map[string]struct{ cluster, user, top string }{
		"Kamaji's own":                {},
		"another server":              {cluster: "\n    server: https://attacker.example.com:443"},
		"a proxy":                     {cluster: "\n    proxy-url: http://attacker.example.com:3128"},
		"insecure-skip-tls-verify":    {cluster: "\n    insecure-skip-tls-verify: true"},
		"a TLS server name":           {cluster: "\n    tls-server-name: attacker.example.com"},
		"a CA file":                   {cluster: "\n    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt"},
		"cluster extensions":          {cluster: "\n    extensions: [{name: x, extension: {a: b}}]"},
		"an exec plugin":              {user: "\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'cat /var/run/secrets/kubernetes.io/serviceaccount/token'], interactiveMode: Never}"},
		"an auth provider":            {user: "\n    auth-provider: {name: oidc, config: {idp-issuer-url: 'https://attacker.example.com'}}"},
		"a token":                     {user: "\n    token: attacker-token"},
		"a token file":                {user: "\n    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"},
		"basic auth":                  {user: "\n    username: admin\n    password: secret"},
		"impersonation":               {user: "\n    as: system:serviceaccount:kube-system:default\n    as-groups: [system:masters]\n    as-uid: \"0\"\n    as-user-extra: {a: [b]}"},
		"a client certificate file":   {user: "\n    client-certificate: /etc/kubernetes/pki/apiserver.crt\n    client-key: /etc/kubernetes/pki/apiserver.key"},
		"another context and cluster": {top: "preferences: {}\n"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := controllersKubeconfig(id, kubeconfigSecretOf(kamajiKubeconfig(ca, client, c.cluster, c.user, c.top)))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got.Name != "demo-admin-kubeconfig" || got.Namespace != "tenantkube-s2kzg26tu36kdlxgdpetdiewsm" || got.Type != corev1.SecretTypeOpaque || len(got.Data) != 1 {
				t.Errorf("Secret %s/%s type %s with %d keys, want tenantkube-s2kzg26tu36kdlxgdpetdiewsm/demo-admin-kubeconfig, Opaque, one key", got.Namespace, got.Name, got.Type, len(got.Data))
			}
			var w, g any
			if err := yaml.Unmarshal([]byte(want), &w); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(got.Data[function.KubeconfigSecretKey], &g); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(w, g); d != "" {
				t.Errorf("kubeconfig (-want +got):\n%s", d)
			}
			cfg, err := clientcmd.Load(got.Data[function.KubeconfigSecretKey])
			if err != nil {
				t.Fatal(err)
			}
			if err := clientcmd.Validate(*cfg); err != nil {
				t.Errorf("not a valid kubeconfig: %v", err)
			}
		})
	}
}

// TestControllersKubeconfigRefused: a Secret whose kubeconfig lacks a part
// Kamaji writes, or holds one that is no PEM certificate or key (or a key
// of another certificate), gives no kubeconfig and an error saying what.
func TestControllersKubeconfigRefused(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	ca, client, other := newPair(t, "tenant-ca"), newPair(t, "kubernetes-super-admin"), newPair(t, "other")
	good := string(kamajiKubeconfig(ca, client, "", "", ""))
	cases := map[string]struct {
		data map[string][]byte
		want string
	}{
		"NoKey":            {data: map[string][]byte{"admin.conf": []byte(good)}, want: "absent"},
		"NotAKubeconfig":   {data: map[string][]byte{function.KubeconfigSecretKey: []byte("{")}, want: "not a kubeconfig"},
		"NoCurrentContext": {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, "current-context: default", "current-context: other", 1))}, want: `current context "other"`},
		"NoCluster":        {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, "cluster: demo, user", "cluster: other, user", 1))}, want: `cluster "other"`},
		"NoUser":           {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, "user: admin}", "user: other}", 1))}, want: `user "other"`},
		"CANotPEM":         {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, kcB64(ca.cert), kcB64([]byte("not a certificate")), 1))}, want: "certificate-authority-data"},
		"CertNotPEM":       {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, kcB64(client.cert), kcB64([]byte("ADMIN-CERT")), 1))}, want: "client-certificate-data"},
		"KeyNotPEM":        {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, kcB64(client.key), kcB64([]byte("ADMIN-KEY")), 1))}, want: "client-key-data"},
		"KeyOfAnotherCert": {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(good, kcB64(client.key), kcB64(other.key), 1))}, want: "client-key-data"},
		"TokenOnly":        {data: map[string][]byte{function.KubeconfigSecretKey: []byte(strings.Replace(strings.Replace(good, "client-certificate-data: "+kcB64(client.cert), "token: attacker-token", 1), "client-key-data: "+kcB64(client.key), "", 1))}, want: "client-certificate-data"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := controllersKubeconfig(id, &corev1.Secret{Data: c.data})
			if got != nil || !errors.Is(err, errKubeconfigRefused) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, %v; want no kubeconfig and a refusal naming %q", got, err, c.want)
			}
		})
	}
	if got, err := controllersKubeconfig(id, nil); got != nil || err != nil {
		t.Errorf("before the Secret arrived: %v, %v; want nothing and no error", got, err)
	}
}

// TestComposeManagement: the claim API always composes the management
// namespace; the controllers' kubeconfig once Kamaji's Secret arrived and
// is accepted; the copy composed before is kept while the Secret is
// absent, gone or refused, and a refusal is a Warning naming the Secret.
// A TenantCluster composes none of it.
func TestComposeManagement(t *testing.T) {
	ca, client := newPair(t, "tenant-ca"), newPair(t, "kubernetes-super-admin")
	secret := func(kc []byte) string {
		return `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo}, data: {super-admin.svc: ` + kcB64(kc) + `}}`
	}
	good := secret(kamajiKubeconfig(ca, client, "", "", ""))
	bad := secret(kamajiKubeconfig(ca, pemPair{cert: []byte("x"), key: client.key}, "", "", ""))
	observed := map[string]string{nameControllersKubeconfig: `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenantkube-s2kzg26tu36kdlxgdpetdiewsm}}`}
	cases := map[string]struct {
		namespaced bool
		required   []string // nil: not arrived
		observed   map[string]string
		composed   bool // the kubeconfig copy is composed
		kept       bool
		warned     bool
	}{
		"NotArrived":         {},
		"Arrived":            {required: []string{good}, composed: true},
		"Refused":            {required: []string{bad}, warned: true},
		"RefusedKept":        {required: []string{bad}, observed: observed, kept: true, warned: true},
		"GoneKept":           {required: []string{}, observed: observed, kept: true},
		"NotArrivedKept":     {observed: observed, kept: true},
		"TenantClusterNever": {namespaced: true, required: []string{good}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			call := fntest.Call{Namespaced: c.namespaced, Spec: `{}`, Observed: c.observed}
			if c.required != nil {
				call.Required = map[string][]string{requiredKubeconfig: c.required}
			}
			p, errs := planOf(t, call, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var ns *corev1.Namespace
			composed := false
			for _, o := range p.Composed {
				switch o.Name {
				case nameManagementNamespace:
					ns = o.Object.(*corev1.Namespace)
				case nameControllersKubeconfig:
					composed = true
				}
			}
			if c.namespaced != (ns == nil) {
				t.Errorf("management Namespace composed: %v, want %v", ns != nil, !c.namespaced)
			}
			if ns != nil && (ns.Name != "tenantkube-s2kzg26tu36kdlxgdpetdiewsm" || ns.Labels["tenantkube.io/management-namespace"] != "true" || ns.Labels["tenantkube.io/namespace"] != "tenant-demo") {
				t.Errorf("Namespace %s labels %v", ns.Name, ns.Labels)
			}
			kept := false
			for _, k := range p.Kept {
				kept = kept || k.Name == nameControllersKubeconfig
			}
			warned := false
			for _, w := range p.Warnings {
				if w.Reason == tkv1alpha1.ReasonKubeconfigRefused {
					warned = strings.Contains(w.Message, "tenant-demo/demo-admin-kubeconfig")
				}
			}
			if composed != c.composed || kept != c.kept || warned != c.warned {
				t.Errorf("composed %v kept %v warned %v, want %v %v %v (warnings %v)", composed, kept, warned, c.composed, c.kept, c.warned, p.Warnings)
			}
		})
	}
}

// TestNamespaceUsages: one Usage per controller, in the management
// namespace, of the Namespace (cluster-scoped: namespace "") by the
// controller's Deployment N-<component>.
func TestNamespaceUsages(t *testing.T) {
	const mgmt = "tenantkube-s2kzg26tu36kdlxgdpetdiewsm"
	us := namespaceUsages(function.Identity{Namespace: "tenant-demo", Name: "demo"})
	want := map[string]string{
		"usage-namespace-by-cluster-autoscaler": "demo-cluster-autoscaler",
		"usage-namespace-by-kccm":               "demo-kccm",
		"usage-namespace-by-kcsi-controller":    "demo-kcsi-controller",
	}
	if len(us) != len(want) {
		t.Fatalf("%d Usages, want %d", len(us), len(want))
	}
	for name, deploy := range want {
		u := us[name]
		if u == nil {
			t.Fatalf("no Usage %s", name)
		}
		of, by := u.Spec.Of, u.Spec.By
		if u.Namespace != mgmt || of.Kind != "Namespace" || of.APIVersion != "v1" || of.ResourceRef.Name != mgmt ||
			of.ResourceRef.Namespace == nil || *of.ResourceRef.Namespace != "" ||
			by.Kind != "Deployment" || by.APIVersion != "apps/v1" || by.ResourceRef.Name != deploy || !*u.Spec.ReplayDeletion {
			t.Errorf("%s: %+v", name, u)
		}
	}
}

// TestManagementNamespaceGate: what lives in the management namespace (its
// Usages and the controllers' kubeconfig) is composed only once the
// Namespace is observed; on a cluster's first reconcile only the Namespace
// is, since an apply into a namespace that does not exist fails
// Crossplane's whole composition.
func TestManagementNamespaceGate(t *testing.T) {
	ca, client := newPair(t, "tenant-ca"), newPair(t, "kubernetes-super-admin")
	good := `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo}, data: {super-admin.svc: ` +
		kcB64(kamajiKubeconfig(ca, client, "", "", "")) + `}}`
	inNamespace := []string{nameControllersKubeconfig, "usage-namespace-by-cluster-autoscaler", "usage-namespace-by-kccm", "usage-namespace-by-kcsi-controller"}
	for name, firstReconcile := range map[string]bool{"NamespaceObserved": false, "FirstReconcile": true} {
		t.Run(name, func(t *testing.T) {
			call := fntest.Call{Spec: `{}`, NoManagementNamespace: firstReconcile, Required: map[string][]string{requiredKubeconfig: {good}}}
			p, errs := planOf(t, call, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			composed := map[string]bool{}
			for _, o := range p.Composed {
				composed[o.Name] = true
			}
			if !composed[nameManagementNamespace] {
				t.Errorf("management Namespace not composed")
			}
			for _, n := range inNamespace {
				if composed[n] == firstReconcile {
					t.Errorf("%s composed: %v, want %v", n, composed[n], !firstReconcile)
				}
			}
		})
	}
}

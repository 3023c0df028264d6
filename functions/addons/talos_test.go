package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/template"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// talosCA is the Secret demo-talos-ca cert-manager writes; its tls.key is
// test/testdata/workers/talos-pki.yaml's.
const talosCA = `apiVersion: v1
kind: Secret
metadata: {name: demo-talos-ca, namespace: tenant-demo}
type: kubernetes.io/tls
data:
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnRhbG9zIGNhCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
  tls.key: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCnRhbG9zIGtleQotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0tLS0tCg==`

// The bootstrap token of that key, computed outside Go: HMAC-SHA256 of the
// label "tenantkube kubelet bootstrap token" with the decoded tls.key,
// base32, lower case, characters 1-6 and 7-22:
//
//	printf '%s' 'tenantkube kubelet bootstrap token' | openssl dgst -sha256 \
//	  -mac HMAC -macopt hexkey:$(base64 -d <<<"$KEY" | xxd -p | tr -d '\n') -binary | base32
//
// It is the cluster.token of test/testdata/workers/talos.golden.yaml.
const (
	wantTokenID     = "e5amdg"
	wantTokenSecret = "pd63yt2fvbek7dsx"
)

// bootstrapTokenShape is Kubernetes' bootstrap token format
// (kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/).
var bootstrapTokenShape = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// keptNames are the names p keeps as observed, sorted.
func keptNames(p *function.Plan) []string {
	var out []string
	for _, k := range p.Kept {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

func TestTalosBootstrapTokenRelease(t *testing.T) {
	const (
		talosSpec  = `{nodeGroups: {md0: {os: Talos}, legacy: {os: Ubuntu}}}`
		ubuntuSpec = `{nodeGroups: {md0: {os: Ubuntu}}}`
	)
	caSelector := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: "demo-talos-ca"}, Namespace: ptr("tenant-demo")}
	observedRelease := map[string]string{
		"addon-talos-bootstrap-token":                             "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n" + readyTrue,
		"values-talos-bootstrap-token":                            "apiVersion: v1\nkind: Secret",
		"usage-kamajicontrolplane-by-addon-talos-bootstrap-token": "apiVersion: protection.crossplane.io/v1beta1\nkind: Usage",
	}
	type want struct {
		release  bool
		require  bool     // the Talos CA Secret is asked for
		kept     []string // composed-resource names kept as observed
		status   *v1alpha1.AddonStatus
		waitsFor bool // AddonsReady names the release as pending
	}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		want   want
	}{
		"Ubuntu": {
			reason: "No Talos group: no release, and the Talos CA is not even asked for, whatever exists.",
			args:   fntest.Call{Spec: ubuntuSpec, Required: map[string][]string{RequiredTalosCA: {talosCA}}},
		},
		"TalosWaiting": {
			reason: "A Talos group before its CA is observed: the CA is asked for, nothing is composed, the status says what the release waits for.",
			args:   fntest.Call{Spec: talosSpec},
			want: want{require: true, waitsFor: true,
				status: &v1alpha1.AddonStatus{Message: "waiting for the Talos CA Secret demo-talos-ca, from which the bootstrap token is derived"}},
		},
		"TalosCAWithoutKey": {
			reason: "A CA Secret without tls.key yields no token: nothing is composed.",
			args: fntest.Call{Spec: talosSpec, Required: map[string][]string{RequiredTalosCA: {
				"apiVersion: v1\nkind: Secret\nmetadata: {name: demo-talos-ca, namespace: tenant-demo}\ndata: {tls.crt: eA==}"}}},
			want: want{require: true, waitsFor: true,
				status: &v1alpha1.AddonStatus{Message: "waiting for the Talos CA Secret demo-talos-ca, from which the bootstrap token is derived"}},
		},
		"Talos": {
			reason: "A Talos group with its CA observed: the release and its values Secret.",
			args:   fntest.Call{Spec: talosSpec, Required: map[string][]string{RequiredTalosCA: {talosCA}}},
			want:   want{release: true, require: true, status: &v1alpha1.AddonStatus{Message: "HelmRelease not created yet"}, waitsFor: true},
		},
		"PlatformDefaultTalos": {
			reason: "A group naming no OS on a platform whose defaultWorkerOS is Talos boots Talos.",
			args: fntest.Call{Spec: `{nodeGroups: {md0: {}}}`, Input: "defaultWorkerOS: Talos",
				Required: map[string][]string{RequiredTalosCA: {talosCA}}},
			want: want{release: true, require: true, status: &v1alpha1.AddonStatus{Message: "HelmRelease not created yet"}, waitsFor: true},
		},
		"KeptWhileCAUnobserved": {
			reason: "A CA not observed for a moment does not uninstall the token: the composed release, values Secret and Usage stay as observed.",
			args:   fntest.Call{Spec: talosSpec, Observed: observedRelease},
			want: want{require: true, status: &v1alpha1.AddonStatus{Ready: true},
				kept: []string{"addon-talos-bootstrap-token", "usage-kamajicontrolplane-by-addon-talos-bootstrap-token", "values-talos-bootstrap-token"}},
		},
		"NoTalosGroupLeft": {
			reason: "Once no group boots Talos the release leaves the desired state (Flux uninstalls it), even with the CA still there.",
			args:   fntest.Call{Spec: ubuntuSpec, Observed: observedRelease, Required: map[string][]string{RequiredTalosCA: {talosCA}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, err := planFor(t, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.kept, keptNames(p)); diff != "" {
				t.Errorf("%s\nkept: -want, +got:\n%s", tc.reason, diff)
			}
			var wantSel *fnv1.ResourceSelector
			if tc.want.require {
				wantSel = caSelector
			}
			if diff := cmp.Diff(wantSel, p.Requirements[RequiredTalosCA], protocmp.Transform()); diff != "" {
				t.Errorf("%s\nTalos CA requirement: -want, +got:\n%s", tc.reason, diff)
			}
			statuses := p.Status["addons"].(map[string]v1alpha1.AddonStatus)
			got, ok := statuses[TalosBootstrapTokenRelease]
			switch {
			case tc.want.status == nil && ok:
				t.Errorf("%s\nwant no status.addons entry, got %+v", tc.reason, got)
			case tc.want.status != nil && (!ok || got != *tc.want.status):
				t.Errorf("%s\nstatus.addons entry: want %+v, got %+v (present %v)", tc.reason, *tc.want.status, got, ok)
			}
			var cond function.Condition
			for _, c := range p.Conditions {
				if c.Type == v1alpha1.ConditionAddonsReady {
					cond = c
				}
			}
			if named := strings.Contains(cond.Message, TalosBootstrapTokenRelease+": "); named != tc.want.waitsFor {
				t.Errorf("%s\nAddonsReady %q names the release: %v, want %v", tc.reason, cond.Message, named, tc.want.waitsFor)
			}
			hrObj, secretObj := composedObject(p, "addon-talos-bootstrap-token"), composedObject(p, "values-talos-bootstrap-token")
			usageObj := composedObject(p, "usage-kamajicontrolplane-by-addon-talos-bootstrap-token")
			if !tc.want.release {
				if hrObj != nil || secretObj != nil || usageObj != nil {
					t.Errorf("%s\nwant no release, values Secret or Usage composed, got %T %T %T", tc.reason, hrObj, secretObj, usageObj)
				}
				return
			}
			if usageObj == nil {
				t.Errorf("%s\nwant the Usage keeping the control plane until the release is gone", tc.reason)
			}
			hr, ok := hrObj.(*helmv2.HelmRelease)
			if !ok {
				t.Fatalf("%s\nwant the HelmRelease demo-talos-bootstrap-token, got %T", tc.reason, hrObj)
			}
			if hr.Name != "demo-talos-bootstrap-token" || hr.Namespace != "tenant-demo" || hr.Spec.TargetNamespace != "kube-system" ||
				hr.Spec.StorageNamespace != "kube-system" || hr.Spec.ReleaseName != "talos-bootstrap-token" ||
				hr.Spec.ChartRef == nil || hr.Spec.ChartRef.Kind != "ExternalArtifact" ||
				hr.Spec.ChartRef.Name != "tenantkube-addon-talos-bootstrap-token" || hr.Spec.ChartRef.Namespace != "flux-system" {
				t.Errorf("%s\nrelease %s/%s, target %s, storage %s, release name %s, chartRef %+v", tc.reason, hr.Namespace, hr.Name,
					hr.Spec.TargetNamespace, hr.Spec.StorageNamespace, hr.Spec.ReleaseName, hr.Spec.ChartRef)
			}
			if hr.Spec.Values != nil {
				t.Errorf("%s\nthe token must stay out of the HelmRelease; spec.values %s", tc.reason, hr.Spec.Values.Raw)
			}
			if diff := cmp.Diff([]helmv2.ValuesReference{{Kind: "Secret", Name: "demo-talos-bootstrap-token-values", ValuesKey: "values.yaml"}}, hr.Spec.ValuesFrom); diff != "" {
				t.Errorf("%s\nvaluesFrom: -want, +got:\n%s", tc.reason, diff)
			}
			secret, ok := secretObj.(*corev1.Secret)
			if !ok {
				t.Fatalf("%s\nwant the values Secret, got %T", tc.reason, secretObj)
			}
			if secret.Name != "demo-talos-bootstrap-token-values" || secret.Namespace != "tenant-demo" || secret.Type != corev1.SecretTypeOpaque ||
				secret.Labels["tenantkube.io/cluster"] != "demo" {
				t.Errorf("%s\nvalues Secret %s/%s type %s labels %v", tc.reason, secret.Namespace, secret.Name, secret.Type, secret.Labels)
			}
			var values map[string]string
			if err := yaml.UnmarshalStrict(secret.Data["values.yaml"], &values); err != nil {
				t.Fatalf("%s\nvalues.yaml: %v", tc.reason, err)
			}
			if diff := cmp.Diff(map[string]string{"tokenID": wantTokenID, "tokenSecret": wantTokenSecret}, values); diff != "" {
				t.Errorf("%s\nvalues: -want, +got:\n%s", tc.reason, diff)
			}
			if tok := values["tokenID"] + "." + values["tokenSecret"]; !bootstrapTokenShape.MatchString(tok) {
				t.Errorf("%s\ntoken %q is not a Kubernetes bootstrap token", tc.reason, tok)
			}
		})
	}
}

// TestTalosBootstrapTokenChart renders charts/talos-bootstrap-token's
// template with Go's text/template (Helm's engine, with Helm's quote,
// list and b64enc) and reads back the token Secret and the bindings of kubelet TLS
// bootstrapping, as Kubernetes documents them.
func TestTalosBootstrapTokenChart(t *testing.T) {
	src, err := os.ReadFile("../../charts/talos-bootstrap-token/templates/bootstrap-token.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Must(template.New("token").Funcs(template.FuncMap{
		"quote":  func(s string) string { return fmt.Sprintf("%q", s) },
		"list":   func(v ...any) []any { return v },
		"b64enc": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	}).Parse(string(src)))
	var out bytes.Buffer
	values := map[string]any{"tokenID": wantTokenID, "tokenSecret": wantTokenSecret}
	if err := tmpl.Execute(&out, map[string]any{"Values": values, "Release": map[string]any{"Name": "talos-bootstrap-token", "Service": "Helm"}}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("want a Secret and three ClusterRoleBindings, got %d documents:\n%s", len(docs), out.String())
	}
	labels := map[string]string{"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "talos-bootstrap-token"}
	var secret corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &secret); err != nil {
		t.Fatalf("%v in:\n%s", err, docs[0])
	}
	group := string(secret.Data["auth-extra-groups"])
	// Bootstrap token Secret format (kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/):
	// name bootstrap-token-<token-id> in kube-system, its type, the
	// usages, and extra groups under system:bootstrappers:.
	wantSecret := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + wantTokenID, Namespace: "kube-system", Labels: labels},
		Type:       "bootstrap.kubernetes.io/token",
		Data: map[string][]byte{
			"description": []byte("Talos workers' kubelet bootstrap token, managed by tenantkube"),
			"token-id":    []byte(wantTokenID), "token-secret": []byte(wantTokenSecret),
			"usage-bootstrap-authentication": []byte("true"), "usage-bootstrap-signing": []byte("true"),
			"auth-extra-groups": []byte(group),
		},
	}
	if diff := cmp.Diff(wantSecret, secret); diff != "" {
		t.Errorf("token Secret: -want, +got:\n%s", diff)
	}
	if !regexp.MustCompile(`^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$`).MatchString(group) {
		t.Errorf("auth-extra-groups %q is not a group the bootstrap authenticator accepts", group)
	}
	var got []rbacv1.ClusterRoleBinding
	for _, doc := range docs[1:] {
		var crb rbacv1.ClusterRoleBinding
		if err := yaml.UnmarshalStrict([]byte(doc), &crb); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		got = append(got, crb)
	}
	binding := func(name, role, subject string) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: subject}},
		}
	}
	// Kubelet TLS bootstrapping (kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/):
	// the token's group creates CSRs (system:node-bootstrapper) and gets
	// its client CSRs approved (…:nodeclient); nodes get their renewals
	// approved (…:selfnodeclient).
	want := []rbacv1.ClusterRoleBinding{
		binding("tenantkube:talos-node-bootstrapper", "system:node-bootstrapper", group),
		binding("tenantkube:talos-node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", group),
		binding("tenantkube:talos-node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterRoleBindings: -want, +got:\n%s", diff)
	}
}

// TestTalosEndpointDiscoveryChart renders charts/talos-bootstrap-token's
// endpoint-discovery template and checks it against what Talos workers
// ask: the list and the watch of the EndpointSlice kubernetes in default
// by its metadata.name (siderolabs/talos v1.13.9
// internal/app/machined/pkg/controllers/k8s/endpoint.go:330-338), resolved
// by the API server's own request resolver (k8s.io/apiserver
// requestinfo.go:247-252 takes the name from the field selector), are
// allowed to system:nodes; nothing beyond Talos' own ClusterRole
// system:talos-nodes (k8stemplates/talos.go:61-67) is, and only in
// default.
func TestTalosEndpointDiscoveryChart(t *testing.T) {
	src, err := os.ReadFile("../../charts/talos-bootstrap-token/templates/endpoint-discovery.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := template.Must(template.New("rbac").Parse(string(src))).Execute(&out, map[string]any{"Release": map[string]any{"Name": "talos-bootstrap-token", "Service": "Helm"}}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want a Role and a RoleBinding, got %d documents:\n%s", len(docs), out.String())
	}
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	for i, into := range []any{&role, &binding} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("%v in:\n%s", err, docs[i])
		}
	}
	if role.Namespace != "default" || binding.Namespace != "default" {
		t.Errorf("Role in %q, RoleBinding in %q: want both in default, the only namespace Talos reads", role.Namespace, binding.Namespace)
	}
	wantRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}
	wantSubjects := []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: "system:nodes"}}
	if diff := cmp.Diff(wantRef, binding.RoleRef); diff != "" {
		t.Errorf("roleRef: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(wantSubjects, binding.Subjects); diff != "" {
		t.Errorf("subjects (a kubelet's group): -want, +got:\n%s", diff)
	}

	resolver := &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	for _, query := range []string{"fieldSelector=metadata.name%3Dkubernetes", "fieldSelector=metadata.name%3Dkubernetes&watch=true"} {
		req, err := http.NewRequest(http.MethodGet, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		info, err := resolver.NewRequestInfo(req)
		if err != nil {
			t.Fatal(err)
		}
		asked := rbacv1.PolicyRule{APIGroups: []string{info.APIGroup}, Resources: []string{info.Resource}, ResourceNames: []string{info.Name}, Verbs: []string{info.Verb}}
		if info.Namespace != role.Namespace {
			t.Errorf("%s: Talos asks in %q, the Role is in %q", query, info.Namespace, role.Namespace)
		}
		if ok, _ := rbacvalidation.Covers(role.Rules, []rbacv1.PolicyRule{asked}); !ok {
			t.Errorf("%s: the Role does not allow Talos' request %+v", query, asked)
		}
	}
	talosNodes := []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}}}
	if ok, beyond := rbacvalidation.Covers(talosNodes, role.Rules); !ok {
		t.Errorf("the Role grants beyond Talos' system:talos-nodes: %+v", beyond)
	}
	if other := (rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, ResourceNames: []string{"other"}, Verbs: []string{"list"}}); func() bool {
		ok, _ := rbacvalidation.Covers(role.Rules, []rbacv1.PolicyRule{other})
		return ok
	}() {
		t.Error("the Role allows reading EndpointSlices other than kubernetes")
	}
	if ok, _ := rbacvalidation.Covers(role.Rules, []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, ResourceNames: []string{"kubernetes"}, Verbs: []string{"get"}}}); ok {
		t.Error("the Role allows get, which Talos' informer never sends")
	}
}

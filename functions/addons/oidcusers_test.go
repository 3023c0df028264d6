package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/template"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// janeBinding and joeBinding are the first 16 hex digits of sha256 of the
// emails (`printf jane@corp.test | sha256sum`, `printf joe@corp.test | sha256sum`).
const (
	janeBinding = "tenantkube-oidc-835d1bec07f176d7"
	joeBinding  = "tenantkube-oidc-4491f909a49e4715"
)

func TestOIDCUsersRelease(t *testing.T) {
	type want struct {
		release bool
		values  string // JSON; "" when no release
	}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		want   want
	}{
		"NoUsers": {
			reason: "No users, no release (and an emptied list uninstalls it: it leaves the desired state).",
			args:   fntest.Call{Spec: `{oidc: {mode: System}}`},
		},
		"Users": {
			reason: "admin binds cluster-admin, view binds view; sorted by email; the names are the emails' hashes.",
			args:   fntest.Call{Spec: `{oidc: {mode: System, users: [{email: joe@corp.test, role: view}, {email: jane@corp.test, role: admin}]}}`},
			want: want{release: true, values: `{"bindings": [
				{"name": "` + janeBinding + `", "user": "jane@corp.test", "clusterRole": "cluster-admin"},
				{"name": "` + joeBinding + `", "user": "joe@corp.test", "clusterRole": "view"}]}`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, err := planFor(t, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			obj := composedObject(p, ComposedReleaseName(OIDCUsersRelease))
			if !tc.want.release {
				if obj != nil {
					t.Errorf("%s\nwant no oidc-users release, got one", tc.reason)
				}
				return
			}
			hr, ok := obj.(*helmv2.HelmRelease)
			if !ok {
				t.Fatalf("%s\nwant the HelmRelease demo-oidc-users, got %T", tc.reason, obj)
			}
			if hr.Name != "demo-oidc-users" || hr.Spec.TargetNamespace != "kube-system" || hr.Spec.ChartRef == nil ||
				hr.Spec.ChartRef.Kind != "ExternalArtifact" || hr.Spec.ChartRef.Name != "tenantkube-addon-oidc-users" {
				t.Errorf("%s\nrelease %s, target %s, chartRef %+v", tc.reason, hr.Name, hr.Spec.TargetNamespace, hr.Spec.ChartRef)
			}
			if hr.Spec.Install == nil || hr.Spec.Install.Strategy == nil || hr.Spec.Install.Strategy.Name != "RetryOnFailure" {
				t.Errorf("%s\ninstall strategy: want RetryOnFailure like every add-on, got %+v", tc.reason, hr.Spec.Install)
			}
			var want, got any
			if err := json.Unmarshal([]byte(tc.want.values), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(hr.Spec.Values.Raw, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nvalues: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestOIDCUsersChart renders charts/oidc-users' template with Go's
// text/template (Helm's engine, with Helm's quote) from the values the
// release carries, and reads back the ClusterRoleBindings.
func TestOIDCUsersChart(t *testing.T) {
	src, err := os.ReadFile("../../charts/oidc-users/templates/clusterrolebindings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Must(template.New("crb").Funcs(template.FuncMap{
		"quote": func(s string) string { return fmt.Sprintf("%q", s) },
	}).Parse(string(src)))
	var values map[string]any
	if err := json.Unmarshal([]byte(`{"bindings": [
		{"name": "`+janeBinding+`", "user": "jane@corp.test", "clusterRole": "cluster-admin"},
		{"name": "`+joeBinding+`", "user": "joe@corp.test", "clusterRole": "view"}]}`), &values); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, map[string]any{"Values": values, "Release": map[string]any{"Name": "oidc-users", "Service": "Helm"}}); err != nil {
		t.Fatal(err)
	}
	var got []rbacv1.ClusterRoleBinding
	for _, doc := range strings.Split(out.String(), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var crb rbacv1.ClusterRoleBinding
		if err := yaml.UnmarshalStrict([]byte(doc), &crb); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		got = append(got, crb)
	}
	binding := func(name, user, role string) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "oidc-users"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
		}
	}
	want := []rbacv1.ClusterRoleBinding{
		binding(janeBinding, "jane@corp.test", "cluster-admin"),
		binding(joeBinding, "joe@corp.test", "view"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered ClusterRoleBindings: -want, +got:\n%s", diff)
	}
}

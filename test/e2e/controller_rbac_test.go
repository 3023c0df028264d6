//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// identity is how one upstream controller runs in the management cluster:
// a ServiceAccount bound to the ClusterRoles of the controller's own
// config/rbac/role.yaml, read from the module the tools module pins, named
// with the prefix its config/default kustomization gives them.
type identity struct {
	// name is the controller (its log and kubeconfig file name).
	name string
	// namespace and serviceAccount are its ServiceAccount.
	namespace, serviceAccount string
	// roles are the upstream role files; prefix the kustomize namePrefix.
	roles  []string
	prefix string
	// extra are rules the test adds beside the upstream role, each said why
	// (docs/testing.md, Live test).
	extra []rbacv1.PolicyRule
	// namespaceAdmin are namespaces where the ServiceAccount is bound to
	// the built-in ClusterRole admin.
	namespaceAdmin []string
}

// helmReferenceNS is where the helm-controller reference scenario installs
// a chart into the management cluster itself.
const helmReferenceNS = "helm-reference"

// controllerIdentities are the five controllers' identities. What the test
// adds to the upstream roles:
//   - helm-controller: its role.yaml (manager-role) holds only what the
//     controller's own kubebuilder markers list; upstream also binds
//     reconciler-role (every verb on every resource, config/rbac/
//     cluster_role.yaml), because Flux installs charts into its own cluster.
//     Here every release targets a tenant cluster through spec.kubeConfig,
//     so instead of reconciler-role the test grants: get on Secrets (the
//     tenant kubeconfig Secret each release names, read uncached), list and
//     watch on Secrets and ConfigMaps (helm-controller watches their
//     metadata to reconcile releases whose values or kubeconfig change; it
//     exits when that watch cannot sync: "timed out waiting for cache to be
//     synced for Kind *v1.PartialObjectMetadata"), create/update/patch/
//     delete on HelmCharts (it creates each release's HelmChart from
//     spec.chart), and admin in helm-reference, where the reference
//     scenario installs into the management cluster.
//   - the others: nothing.
func (e *env) controllerIdentities(cs *controllers) ([]identity, error) {
	flux, err := e.fluxIdentities()
	if err != nil {
		return nil, err
	}
	return append([]identity{
		{name: "capi-manager", namespace: "capi-system", serviceAccount: "capi-manager", prefix: "capi-",
			roles: []string{filepath.Join(cs.capiDir, "config", "rbac", "role.yaml")}},
		{name: "capi-kubeadm-bootstrap", namespace: "capi-kubeadm-bootstrap-system", serviceAccount: "capi-kubeadm-bootstrap-manager", prefix: "capi-kubeadm-bootstrap-",
			roles: []string{filepath.Join(cs.capiDir, "bootstrap", "kubeadm", "config", "rbac", "role.yaml")}},
		{name: "capk-manager", namespace: "capk-system", serviceAccount: "capk-manager", prefix: "capk-",
			roles: []string{filepath.Join(cs.capkDir, "config", "rbac", "role.yaml")}},
	}, flux...), nil
}

// fluxIdentities are source-controller's and helm-controller's identities
// (controllerIdentities).
func (e *env) fluxIdentities() ([]identity, error) {
	srcDir, _, err := e.moduleDir("flux-source", "github.com/fluxcd/source-controller")
	if err != nil {
		return nil, err
	}
	helmDir, _, err := e.moduleDir("flux-helm", "github.com/fluxcd/helm-controller")
	if err != nil {
		return nil, err
	}
	return []identity{
		{name: "source-controller", namespace: "flux-system", serviceAccount: "source-controller", prefix: "source-",
			roles: []string{filepath.Join(srcDir, "config", "rbac", "role.yaml")}},
		{name: "helm-controller", namespace: "flux-system", serviceAccount: "helm-controller", prefix: "helm-",
			roles: []string{filepath.Join(helmDir, "config", "rbac", "role.yaml")},
			extra: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"helmcharts"}, Verbs: []string{"create", "update", "patch", "delete"}},
			},
			namespaceAdmin: []string{helmReferenceNS}},
	}, nil
}

// setupIdentities creates each controller's ServiceAccount, ClusterRoles
// and bindings, checks by SubjectAccessReview that none is an
// administrator, and writes each a kubeconfig with a token of its
// ServiceAccount (TokenRequest). It returns the kubeconfig paths by
// controller name.
func (e *env) setupIdentities(ids []identity) (map[string]string, error) {
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		return nil, err
	}
	toU := func(o any) (*unstructured.Unstructured, error) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		return &unstructured.Unstructured{Object: m}, err
	}
	out := map[string]string{}
	for _, id := range ids {
		if err := e.ensureNamespace(ctx, id.namespace); err != nil {
			return nil, err
		}
		subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: id.serviceAccount, Namespace: id.namespace}
		objs := []any{map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": id.serviceAccount, "namespace": id.namespace}}}
		bind := func(role string) *rbacv1.ClusterRoleBinding {
			return &rbacv1.ClusterRoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: role},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{subject},
			}
		}
		for _, f := range id.roles {
			roles, err := decodeFile(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, r := range roles {
				if r.GetKind() != "ClusterRole" {
					return nil, fmt.Errorf("%s holds a %s", f, r.GetKind())
				}
				r.SetName(id.prefix + r.GetName())
				objs = append(objs, r, bind(r.GetName()))
			}
		}
		if len(id.extra) > 0 {
			name := "e2e:" + id.name + ":extra"
			objs = append(objs, &rbacv1.ClusterRole{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules:      id.extra,
			}, bind(name))
		}
		for _, ns := range id.namespaceAdmin {
			if err := e.ensureNamespace(ctx, ns); err != nil {
				return nil, err
			}
			objs = append(objs, &rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + id.name + ":admin", Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects:   []rbacv1.Subject{subject},
			})
		}
		for _, o := range objs {
			var u *unstructured.Unstructured
			switch o := o.(type) {
			case *unstructured.Unstructured:
				u = o
			case map[string]any:
				u = &unstructured.Unstructured{Object: o}
			default:
				if u, err = toU(o); err != nil {
					return nil, err
				}
			}
			if err := apply(ctx, e.c, u); err != nil {
				return nil, fmt.Errorf("%s: apply %s %s: %w", id.name, u.GetKind(), u.GetName(), err)
			}
		}
		if err := notAdmin(ctx, cs, "system:serviceaccount:"+id.namespace+":"+id.serviceAccount); err != nil {
			return nil, fmt.Errorf("%s: %w", id.name, err)
		}
		tok, err := cs.CoreV1().ServiceAccounts(id.namespace).CreateToken(ctx, id.serviceAccount, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(24 * 3600))},
		}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("token of ServiceAccount %s/%s: %w", id.namespace, id.serviceAccount, err)
		}
		path := filepath.Join(e.work, "controllers", id.name+".kubeconfig")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, tokenKubeconfig(e.apiPort, e.testCA.certPEM, id.name, tok.Status.Token), 0o600); err != nil {
			return nil, err
		}
		out[id.name] = path
	}
	return out, nil
}

// notAdmin fails when user may delete Namespaces or bind ClusterRoles
// (what system:masters, and Flux's upstream reconciler-role, may).
func notAdmin(ctx context.Context, cs kubernetes.Interface, user string) error {
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Verb: "delete", Resource: "namespaces"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
	} {
		ra := ra
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &ra},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if sar.Status.Allowed {
			return fmt.Errorf("%s may %s %s: more than its upstream role", user, ra.Verb, strings.TrimPrefix(ra.Group+"/"+ra.Resource, "/"))
		}
	}
	return nil
}

// tokenKubeconfig is a kubeconfig of the management cluster on loopback
// port with a bearer token.
func tokenKubeconfig(port int, caPEM []byte, user, token string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %s}
current-context: e2e
`, port, base64.StdEncoding.EncodeToString(caPEM), user, token, user))
}

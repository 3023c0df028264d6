//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
	"sigs.k8s.io/yaml"
)

// identity is how one upstream controller runs in the management cluster:
// a ServiceAccount bound to the ClusterRoles of the controller's own
// config/rbac/role.yaml, read from the module the tools module pins, named
// with the prefix its config/default kustomization gives them; or, for
// Flux, bound by the RBAC manifests of the Flux release that ships it.
type identity struct {
	// name is the controller (its log and kubeconfig file name).
	name string
	// namespace and serviceAccount are its ServiceAccount.
	namespace, serviceAccount string
	// roles are the upstream role files; prefix the kustomize namePrefix.
	roles  []string
	prefix string
	// release are manifests applied as their release ships them (names
	// unchanged; namespaced objects into namespace); they bind the
	// ServiceAccount themselves.
	release []string
	// clusterAdmin: the release binds the ServiceAccount to cluster-admin,
	// and the test checks that it holds what its release gives it.
	clusterAdmin bool
}

// helmReferenceNS is where the helm-controller reference scenario installs
// a chart into the management cluster itself.
const helmReferenceNS = "helm-reference"

// fluxRelease is the Flux release whose manifests install helm-controller
// v1.4.3, the version tools/flux-helm builds (manifests/bases/
// helm-controller/kustomization.yaml of the release names it; fluxRBAC
// checks that). Its manifests/rbac are the RBAC every Flux install applies.
const fluxRelease = "v2.7.3"

// fluxModule is the Go module of the Flux CLI, whose source carries the
// release's manifests.
const fluxModule = "github.com/fluxcd/flux2/v2"

// controllerIdentities are the five controllers' identities, each with
// exactly the RBAC of its own release: Cluster API's and the KubeVirt
// provider's role.yaml; Flux's manifests/rbac, which binds helm-controller
// to cluster-admin (cluster-reconciler) and source-controller to
// crd-controller, and aggregates flux-edit and flux-view into Kubernetes'
// admin, edit and view.
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
// (controllerIdentities), under the RBAC of Flux release fluxRelease.
func (e *env) fluxIdentities() ([]identity, error) {
	rbac, err := e.fluxRBAC()
	if err != nil {
		return nil, err
	}
	return []identity{
		{name: "source-controller", namespace: "flux-system", serviceAccount: "source-controller", release: rbac},
		{name: "helm-controller", namespace: "flux-system", serviceAccount: "helm-controller", release: rbac, clusterAdmin: true},
	}, nil
}

// fluxRBAC are the files of manifests/rbac of Flux release fluxRelease (its
// kustomization's resources), after checking that the release installs the
// helm-controller tools/flux-helm builds.
func (e *env) fluxRBAC() ([]string, error) {
	dir, err := downloadModule(fluxModule, fluxRelease)
	if err != nil {
		return nil, err
	}
	_, helmVersion, err := e.moduleDir("flux-helm", "github.com/fluxcd/helm-controller")
	if err != nil {
		return nil, err
	}
	base, err := os.ReadFile(filepath.Join(dir, "manifests", "bases", "helm-controller", "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(base), "/releases/download/"+helmVersion+"/helm-controller.deployment.yaml") {
		return nil, fmt.Errorf("Flux %s does not install helm-controller %s (tools/flux-helm): pin the release that does", fluxRelease, helmVersion)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifests", "rbac", "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, &k); err != nil || len(k.Resources) == 0 {
		return nil, fmt.Errorf("Flux %s manifests/rbac/kustomization.yaml: %v, resources %v", fluxRelease, err, k.Resources)
	}
	var files []string
	for _, r := range k.Resources {
		files = append(files, filepath.Join(dir, "manifests", "rbac", r))
	}
	return files, nil
}

// downloadModule is the directory of module mod at version in the module
// cache, downloaded from the module proxy if it is not there.
func downloadModule(mod, version string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", mod+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s", mod, version, err, m.Error)
	}
	return m.Dir, nil
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
		for _, f := range id.release {
			manifests, err := decodeFile(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, m := range manifests {
				if m.GetKind() != "ClusterRole" && m.GetKind() != "ClusterRoleBinding" {
					m.SetNamespace(id.namespace)
				}
				objs = append(objs, m)
			}
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
		if err := adminAsReleased(ctx, cs, "system:serviceaccount:"+id.namespace+":"+id.serviceAccount, id.clusterAdmin); err != nil {
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

// adminAsReleased fails unless user may delete Namespaces and bind and
// grant ClusterRoles (what cluster-admin may) exactly when its release
// makes it an administrator: never more than its release gives, and, for
// helm-controller, not less (a narrower test world hides what a tenant
// could make it do).
func adminAsReleased(ctx context.Context, cs kubernetes.Interface, user string, admin bool) error {
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
		if sar.Status.Allowed != admin {
			return fmt.Errorf("%s may %s %s: %t, but its release makes it cluster-admin: %t", user, ra.Verb, strings.TrimPrefix(ra.Group+"/"+ra.Resource, "/"), sar.Status.Allowed, admin)
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

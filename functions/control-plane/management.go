package main

import (
	"crypto/tls"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Composed-resource names of the claim API's management namespace
// (function.Identity.ManagementNamespace), its copy of the tenant
// kubeconfig, and the Usages keeping the namespace until each controller
// Deployment (N-<component>) is gone.
const (
	nameManagementNamespace    = function.ManagementNamespaceResourceName
	nameControllersKubeconfig  = "controllers-kubeconfig"
	nameNamespaceUsagePrefix   = "usage-namespace-by-"
	controllersKubeconfigUser  = "super-admin"
	controllersKubeconfigEntry = "tenant"
)

// managementNamespace is the Namespace of the claim's controllers.
func managementNamespace(id function.Identity) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: id.ManagementNamespace(), Labels: id.ManagementNamespaceLabels()},
	}
}

// namespaceUsages are the Usages, in the management namespace, that keep
// it until the Deployment of each controller component is gone: the
// Namespace goes last. The Namespace is cluster-scoped, so spec.of names
// the empty namespace (tenantUsages says why); spec.by is in the Usage's
// own namespace.
func namespaceUsages(id function.Identity) map[string]*protectionv1beta1.Usage {
	mgmt := id.ManagementNamespace()
	out := map[string]*protectionv1beta1.Usage{}
	for _, c := range function.ControllerComponents {
		u := id.Usage(id.Prefixed("namespace-used-by-"+c),
			function.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: mgmt},
			function.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: id.Prefixed(c)},
			"the controller "+c+" runs in this namespace until its Deployment is deleted")
		u.Namespace = mgmt
		u.Spec.Of.ResourceRef.Namespace = ptr.To("")
		out[nameNamespaceUsagePrefix+c] = u
	}
	return out
}

// errKubeconfigRefused wraps why the tenant kubeconfig Secret gives no
// controllers' kubeconfig.
var errKubeconfigRefused = errors.New("refused")

// controllersKubeconfig rebuilds, for the controllers in the management
// namespace, the kubeconfig of key function.KubeconfigSecretKey of
// Kamaji's Secret N-admin-kubeconfig in NS (secret; nil while it has not
// arrived): a tenant holding a write role in NS can rewrite that Secret, so
// nothing of it is taken as it is. The result has one cluster, one user
// and one context: the server is the tenant API server's Service,
// https://N.NS.svc:6443, set here (short: only the controllers' pods in
// the management cluster read it, and their resolv.conf carries the
// cluster's search path; Kamaji's certificate covers N.NS.svc); of the
// current context's cluster and user only certificate-authority-data,
// client-certificate-data and client-key-data are carried over, and only when the first two parse as
// PEM certificates and the key is the certificate's (crypto/tls). Exec
// plugins, auth providers, tokens and token files, user names and
// passwords, impersonation, file paths, proxy URLs, TLS server names and
// insecure-skip-tls-verify are dropped. It returns nil and no error while
// secret is nil, and an error wrapping errKubeconfigRefused that says what
// is missing or malformed otherwise.
func controllersKubeconfig(id function.Identity, secret *corev1.Secret) (*corev1.Secret, error) {
	if secret == nil {
		return nil, nil
	}
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("%w: key %s: %s", errKubeconfigRefused, function.KubeconfigSecretKey, fmt.Sprintf(format, a...))
	}
	raw, ok := secret.Data[function.KubeconfigSecretKey]
	if !ok {
		return nil, refuse("absent")
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, refuse("not a kubeconfig: %v", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, refuse("current context %q does not exist", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return nil, refuse("cluster %q of the current context does not exist", ctx.Cluster)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		return nil, refuse("user %q of the current context does not exist", ctx.AuthInfo)
	}
	if _, err := cert.ParseCertsPEM(cluster.CertificateAuthorityData); err != nil {
		return nil, refuse("certificate-authority-data of cluster %q: %v", ctx.Cluster, err)
	}
	if _, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData); err != nil {
		return nil, refuse("client-certificate-data and client-key-data of user %q: %v", ctx.AuthInfo, err)
	}
	out := clientcmdv1.Config{
		APIVersion:     "v1",
		Kind:           "Config",
		CurrentContext: controllersKubeconfigEntry,
		Clusters: []clientcmdv1.NamedCluster{{Name: controllersKubeconfigEntry, Cluster: clientcmdv1.Cluster{
			Server:                   fmt.Sprintf("https://%s:%d", id.APIServerServiceHost(), APIServerPort),
			CertificateAuthorityData: cluster.CertificateAuthorityData,
		}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: controllersKubeconfigUser, AuthInfo: clientcmdv1.AuthInfo{
			ClientCertificateData: user.ClientCertificateData,
			ClientKeyData:         user.ClientKeyData,
		}}},
		Contexts: []clientcmdv1.NamedContext{{Name: controllersKubeconfigEntry, Context: clientcmdv1.Context{
			Cluster: controllersKubeconfigEntry, AuthInfo: controllersKubeconfigUser,
		}}},
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: id.KubeconfigSecretName(), Namespace: id.ManagementNamespace(), Labels: id.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{function.KubeconfigSecretKey: b},
	}, nil
}

// composeManagement adds to p what the claim API composes for its
// controllers outside NS: the management namespace, then, once it is
// observed (Plan.AddInManagementNamespace), the Usages that keep it until
// the controllers are gone (with usages) and the controllers' kubeconfig
// rebuilt from Kamaji's Secret (controllersKubeconfig). While
// that Secret has not arrived, is gone or is refused, the copy last
// composed is kept as observed (none until one was composed: the
// controllers wait for it); a refused one also gets a Warning naming the
// Secret.
func composeManagement(p *function.Plan, r *function.Request, id function.Identity, secret *corev1.Secret, usages bool) error {
	p.Add(nameManagementNamespace, managementNamespace(id), function.ReadyOnceObserved)
	if usages {
		us := namespaceUsages(id)
		for _, name := range sortedKeys(us) {
			p.AddInManagementNamespace(r, name, us[name], readyOnReady)
		}
	}
	kc, err := controllersKubeconfig(id, secret)
	switch {
	case errors.Is(err, errKubeconfigRefused):
		keepObserved(p, r, nameControllersKubeconfig)
		p.Warn(tkv1alpha1.ReasonKubeconfigRefused, fmt.Sprintf("the kubeconfig Secret %s/%s is not one Kamaji writes (%v): the controllers keep the kubeconfig last rebuilt from it",
			id.Namespace, id.KubeconfigSecretName(), err))
	case err != nil:
		return err
	case kc == nil:
		keepObserved(p, r, nameControllersKubeconfig)
	default:
		p.AddInManagementNamespace(r, nameControllersKubeconfig, kc, function.ReadyOnceObserved)
	}
	return nil
}

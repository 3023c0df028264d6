package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// The kubeconfig a System-mode cluster hands its OIDC users: key
// OIDCKubeconfigKey of the Secret N-oidc-kubeconfig in NS (today's
// chart's name and key). It holds no credential: the server, its CA and
// the kubelogin (kubectl oidc-login) arguments that fetch a token.
const (
	nameOIDCKubeconfig = "oidc-kubeconfig"
	OIDCKubeconfigKey  = "kubeconfig"
)

// OIDCKubeconfigSecretName is the name of the OIDC kubeconfig Secret in NS.
func OIDCKubeconfigSecretName(id function.Identity) string {
	return id.Prefixed(nameOIDCKubeconfig)
}

// oidcKubeconfigSecret returns the Secret N-oidc-kubeconfig: one cluster N
// at server with the certificate authority ca (PEM), one user N-oidc whose
// exec plugin is kubelogin with the platform's issuer, the client ID the
// cluster's audience (OIDCAudience), PKCE, and the scopes email (the user
// name claim's) and, with a claim gate, groups; one context N, current.
// The arguments and exec settings are today's chart's.
func oidcKubeconfigSecret(id function.Identity, in cpinput.OIDCIssuer, server string, ca []byte) (*corev1.Secret, error) {
	args := []string{
		"oidc-login", "get-token",
		"--oidc-issuer-url=" + in.IssuerURL,
		"--oidc-client-id=" + OIDCAudience(id),
		"--oidc-extra-scope=email",
	}
	if len(groupsGate(in.GroupsClaim, in.TenantGroups)) > 0 {
		args = append(args, "--oidc-extra-scope=groups")
	}
	args = append(args, "--oidc-use-pkce")
	user := id.Name + "-oidc"
	cfg := clientcmdv1.Config{
		APIVersion:     "v1",
		Kind:           "Config",
		CurrentContext: id.Name,
		Clusters: []clientcmdv1.NamedCluster{{Name: id.Name, Cluster: clientcmdv1.Cluster{
			Server: server, CertificateAuthorityData: ca,
		}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: user, AuthInfo: clientcmdv1.AuthInfo{Exec: &clientcmdv1.ExecConfig{
			APIVersion:         "client.authentication.k8s.io/v1",
			Command:            "kubectl",
			Args:               args,
			InteractiveMode:    clientcmdv1.IfAvailableExecInteractiveMode,
			ProvideClusterInfo: true,
		}}}},
		Contexts: []clientcmdv1.NamedContext{{Name: id.Name, Context: clientcmdv1.Context{Cluster: id.Name, AuthInfo: user}}},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: OIDCKubeconfigSecretName(id), Namespace: id.Namespace, Labels: id.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{OIDCKubeconfigKey: b},
	}, nil
}

// tenantCA is the certificate authority (PEM) of the current context's
// cluster in Kamaji's admin kubeconfig (key function.KubeconfigSecretKey
// of secret), or nil when secret is nil or holds no PEM certificate there.
// Nothing else of that kubeconfig is read.
func tenantCA(secret *corev1.Secret) []byte {
	if secret == nil {
		return nil
	}
	cfg, err := clientcmd.Load(secret.Data[function.KubeconfigSecretKey])
	if err != nil {
		return nil
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return nil
	}
	if _, err := cert.ParseCertsPEM(cluster.CertificateAuthorityData); err != nil {
		return nil
	}
	return cluster.CertificateAuthorityData
}

// oidcServer is the tenant API server's address for users: its host on
// the shared ingress, port 443.
func oidcServer(host string) string {
	return fmt.Sprintf("https://%s:443", host)
}

// Package talos holds what several tenantkube functions compute alike for
// Talos workers: the names of the Talos PKI's objects and the tokens
// derived from its CA's private key, so the control plane (the CSR
// signer's token) and the workers (their machine configuration) agree
// without storing a token anywhere.
package talos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Ports and names of the Talos PKI of cluster N.
const (
	// TrustdPort is the port Talos workers ask for their certificates on
	// (trustd's), served by the CSR signer beside the tenant API server.
	TrustdPort = 50001
)

// CASecretName is the Secret N-talos-ca cert-manager writes the Talos
// machine CA into (tls.crt, tls.key).
func CASecretName(id function.Identity) string { return id.Prefixed("talos-ca") }

// TLSSecretName is the Secret N-talos-tls of the CSR signer's serving
// certificate.
func TLSSecretName(id function.Identity) string { return id.Prefixed("talos-tls") }

// ClusterCASecretName is Kamaji's Kubernetes CA Secret N-ca (ca.crt).
func ClusterCASecretName(id function.Identity) string { return id.Prefixed("ca") }

// Tokens are the secrets a Talos worker presents: the machine token to
// the CSR signer (trustd), the bootstrap token to the tenant API server.
type Tokens struct {
	// Machine is machine.token, [a-z2-7]{6}.[a-z2-7]{16}.
	Machine string
	// BootstrapID and BootstrapSecret are the Kubernetes bootstrap
	// token's parts ([a-z2-7]{6} and [a-z2-7]{16}); cluster.token is
	// BootstrapID.BootstrapSecret.
	BootstrapID, BootstrapSecret string
}

// DeriveTokens derives the tokens from the Talos CA's private key (PEM,
// the Secret's tls.key): HMAC-SHA256 of a fixed label, base32 in lower
// case. A new CA key gives new tokens; nobody without the key can compute
// them.
func DeriveTokens(caKey []byte) Tokens {
	derive := func(label string) string {
		m := hmac.New(sha256.New, caKey)
		m.Write([]byte(label))
		return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(m.Sum(nil)))
	}
	machine, bootstrap := derive("tenantkube talos machine token"), derive("tenantkube kubelet bootstrap token")
	return Tokens{
		Machine:         machine[:6] + "." + machine[6:22],
		BootstrapID:     bootstrap[:6],
		BootstrapSecret: bootstrap[6:22],
	}
}

// ClusterToken is cluster.token: BootstrapID.BootstrapSecret.
func (t Tokens) ClusterToken() string { return t.BootstrapID + "." + t.BootstrapSecret }

package talos

import (
	"regexp"
	"testing"

	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// TestDeriveTokens: the tokens have the shapes Talos and Kubernetes
// bootstrap tokens require (k8s.io/cluster-bootstrap:
// ^([a-z0-9]{6})\.([a-z0-9]{16})$), depend on the key, and are stable.
func TestDeriveTokens(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	a, b := DeriveTokens([]byte("key one")), DeriveTokens([]byte("key two"))
	for _, tok := range []string{a.Machine, a.ClusterToken(), b.Machine, b.ClusterToken()} {
		if !shape.MatchString(tok) {
			t.Errorf("token %q is not [a-z0-9]{6}.[a-z0-9]{16}", tok)
		}
	}
	if !bootstraputil.IsValidBootstrapToken(a.ClusterToken()) {
		t.Errorf("cluster token %q is not a valid Kubernetes bootstrap token", a.ClusterToken())
	}
	if a == b || a.Machine == a.ClusterToken() {
		t.Errorf("tokens do not depend on the key and the label: %+v %+v", a, b)
	}
	if DeriveTokens([]byte("key one")) != a {
		t.Error("derivation is not deterministic")
	}
}

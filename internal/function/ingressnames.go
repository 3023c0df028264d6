package function

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// Roles of the Services a tenant cluster exposes on the shared ingress
// controller (IngressBackendName): at most 3 characters, no '-'.
const (
	// IngressRoleAPIServer is the tenant API server (TLS passed through).
	IngressRoleAPIServer = "api"
	// IngressRoleApps is the tenant's own ingress-nginx (Proxied).
	IngressRoleApps = "app"
)

// IngressDigestLength is the length of the digest ending every
// IngressBackendName and ManagementNamespace: 128 bits of SHA-256 in
// unpadded base32.
const IngressDigestLength = 26

// identityDigest is the first 128 bits of SHA-256("<role>/<NS>/<N>") in
// lower-case unpadded base32 (a-z, 2-7: no '-'). NS and N are DNS labels
// and role has no '/', so the hashed string is injective in (role, NS, N).
func identityDigest(role string, id Identity) string {
	sum := sha256.Sum256([]byte(role + "/" + id.Namespace + "/" + id.Name))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// IngressBackendName is "<N>-<role>-<digest>", the name of a Service (and
// its Ingress) in NS that the shared ingress controller routes to.
// ingress-nginx names an upstream "<namespace>-<service>-<port>"
// (internal/ingress/controller/util.go upstreamName,
// https://github.com/kubernetes/ingress-nginx), so a name made only of NS
// and N by joining with '-' would be shared by (team, a-prod) and
// (team-a, prod). The digest has no '-' and a fixed length, so it is the
// second-last field of every upstream name and fixes (role, NS, N); 128
// bits leave no collision to search for. At most 32+1+3+1+26 = 63
// characters.
func (id Identity) IngressBackendName(role string) string {
	return id.Name + "-" + role + "-" + identityDigest(role, id)
}

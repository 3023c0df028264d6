package function

import (
	"fmt"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Labels Crossplane puts on the composite resource (XR) of a claim.
const (
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
)

// MaxClusterNameLength is the longest tenant cluster name N accepted, in
// characters. Every object name tenantkube derives from N (the longest is
// the HelmRelease N-cozy-victoria-metrics-operator, N+31) and the names
// CAPI derives from a MachineDeployment N-G (N+G+13 with a 16-character node
// group) then stay within the 63-character DNS label limit.
const MaxClusterNameLength = v1alpha1.MaxClusterNameLength

// Identity names a tenant cluster: N (Name) and the namespace NS all its
// namespaced objects live in.
type Identity struct {
	// Name is N: the claim's name, or a namespaced or claimless XR's own name.
	Name string
	// Namespace is NS: the claim's namespace, a namespaced XR's namespace,
	// or spec.namespace of a cluster-scoped XR created without a claim.
	Namespace string
}

// identityOf derives the tenant cluster's identity from the observed XR's
// labels, name and namespace and its spec.namespace (docs/architecture.md):
// a namespaced XR uses its own name and namespace (claim labels on it
// are ignored: it has no claim, and a tenant writes its labels); otherwise
// the claim labels win; a cluster-scoped XR without a claim takes N from its name and
// NS from spec.namespace (required then). When a claim (or a namespaced XR)
// fixes NS, spec.namespace must be empty or equal to it: a tenant can never
// make objects appear in another namespace. N must be a DNS-1123 label of at
// most MaxClusterNameLength characters and NS a DNS-1123 label. It returns
// the field NS was read from, or a *field.Error naming the offending field.
func identityOf(labels map[string]string, name, namespace, specNS string) (Identity, *field.Path, error) {
	var id Identity
	var nameField, nsField *field.Path
	switch {
	case namespace != "":
		// A namespaced XR has no claim: claim labels on it are the
		// tenant's own writing and are never read.
		id = Identity{Name: name, Namespace: namespace}
		nameField, nsField = field.NewPath("metadata", "name"), field.NewPath("metadata", "namespace")
	case labels[LabelClaimName] != "" || labels[LabelClaimNamespace] != "":
		id = Identity{Name: labels[LabelClaimName], Namespace: labels[LabelClaimNamespace]}
		nameField = field.NewPath("metadata", "labels").Key(LabelClaimName)
		nsField = field.NewPath("metadata", "labels").Key(LabelClaimNamespace)
	default:
		if specNS == "" {
			return Identity{}, nil, field.Required(field.NewPath("spec", "namespace"),
				"an XR created without a claim must name the namespace of its objects")
		}
		id = Identity{Name: name, Namespace: specNS}
		nameField, nsField = field.NewPath("metadata", "name"), field.NewPath("spec", "namespace")
	}
	if specNS != "" && specNS != id.Namespace {
		owner := "claim's"
		if namespace != "" {
			owner = "XR's"
		}
		return Identity{}, nil, field.Forbidden(field.NewPath("spec", "namespace"),
			fmt.Sprintf("%q: must be empty or the %s namespace %q; a cluster's objects always live in its %s namespace", specNS, owner, id.Namespace, owner))
	}
	if err := ValidateDNSLabel(nameField, id.Name, MaxClusterNameLength); err != nil {
		return Identity{}, nil, err
	}
	if err := ValidateDNSLabel(nsField, id.Namespace, validation.DNS1123LabelMaxLength); err != nil {
		return Identity{}, nil, err
	}
	return id, nsField, nil
}

// ValidateDNSLabel checks that value is a DNS-1123 label (lower-case
// alphanumerics and '-', starting and ending alphanumeric) of at most max
// characters. It returns a *field.Error for path, or nil.
func ValidateDNSLabel(path *field.Path, value string, max int) error {
	if value == "" {
		return field.Required(path, "must be a non-empty DNS-1123 label")
	}
	if len(value) > max {
		return TooLong(path, value, max)
	}
	if msgs := validation.IsDNS1123Label(value); len(msgs) > 0 {
		return field.Invalid(path, value, msgs[0])
	}
	return nil
}

// checkObservedNamespaces refuses an identity whose namespace NS (read
// from nsField) is not the namespace of every namespaced observed composed
// resource, NS's or the cluster's ManagementNamespace (itself derived from
// NS and N): a cluster never moves. A claim can bind an unbound
// cluster-scoped XR and rewrite its claim labels and spec.namespace
// (Crossplane's claim binding); composing in the new namespace would make
// Crossplane delete the objects of the old one. The error names both
// namespaces and one resource of the old one.
func checkObservedNamespaces(req *fnv1.RunFunctionRequest, id Identity, nsField *field.Path) error {
	names := slices.Sorted(observedNames(req))
	mgmt := id.ManagementNamespace()
	for _, name := range names {
		ns := observedValue(req, name, "metadata", "namespace").GetStringValue()
		if ns == "" || ns == id.Namespace || ns == mgmt {
			continue
		}
		return field.Forbidden(nsField, fmt.Sprintf("%q: the cluster's composed resources live in namespace %q (composed resource %q) and a cluster never moves to another namespace; nothing is composed or removed until it names %q again",
			id.Namespace, ns, name, ns))
	}
	return nil
}

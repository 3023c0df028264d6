package function_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// TestTenantScope: N and NS of a claim's XR come from the claim
// labels, those of a namespaced XR (TenantCluster) from its own name and
// namespace; spec.namespace is held to the same rule for both (empty or
// NS), and only a namespaced XR is Namespaced.
func TestTenantScope(t *testing.T) {
	type want struct {
		id         function.Identity
		namespaced bool
		err        string
	}
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   want
	}{
		"Claim": {
			reason: "A claim's XR takes N and NS from the claim labels and is not namespaced.",
			xr:     fntest.TenantXR("tenant-a", "demo", map[string]any{}),
			want:   want{id: function.Identity{Name: "demo", Namespace: "tenant-a"}},
		},
		"Namespaced": {
			reason: "A namespaced XR takes N and NS from its own metadata.",
			xr:     fntest.NamespacedXR("tenant-a", "demo", map[string]any{}),
			want:   want{id: function.Identity{Name: "demo", Namespace: "tenant-a"}, namespaced: true},
		},
		"NamespacedSpecNamespaceSame": {
			reason: "spec.namespace equal to the XR's namespace is accepted, as for a claim.",
			xr:     fntest.NamespacedXR("tenant-a", "demo", map[string]any{"namespace": "tenant-a"}),
			want:   want{id: function.Identity{Name: "demo", Namespace: "tenant-a"}, namespaced: true},
		},
		"NamespacedSpecNamespaceOther": {
			reason: "spec.namespace naming another namespace is rejected, naming the field and the value.",
			xr:     fntest.NamespacedXR("tenant-a", "demo", map[string]any{"namespace": "tenant-b"}),
			want:   want{err: `spec.namespace: Forbidden: "tenant-b": must be empty or the XR's namespace "tenant-a"; a cluster's objects always live in its XR's namespace`},
		},
		"NamespacedForgedClaimLabels": {
			reason: "Claim labels a tenant writes on its namespaced XR, which Crossplane would copy onto every composed resource, are refused, each named with its value.",
			xr: func() map[string]any {
				xr := fntest.NamespacedXR("tenant-a", "demo", map[string]any{})
				xr["metadata"].(map[string]any)["labels"] = map[string]any{"crossplane.io/claim-name": "victim", "crossplane.io/claim-namespace": "tenant-b"}
				return xr
			}(),
			want: want{err: `[metadata.labels[crossplane.io/claim-name]: Forbidden: "victim": a namespaced XR has no claim, and Crossplane would copy the claim labels onto every composed resource, ` +
				`metadata.labels[crossplane.io/claim-namespace]: Forbidden: "tenant-b": a namespaced XR has no claim, and Crossplane would copy the claim labels onto every composed resource]`},
		},
		"ClaimForgedLabels": {
			reason: "A claim's labels reach its XR: a composite label naming another XR and a tenantkube.io/ label are refused, each named with its value.",
			xr: func() map[string]any {
				xr := fntest.TenantXR("tenant-a", "demo", map[string]any{})
				md := xr["metadata"].(map[string]any)
				md["labels"].(map[string]any)["crossplane.io/composite"] = "victim-x7k2p"
				md["labels"].(map[string]any)["tenantkube.io/cluster"] = "victim"
				return xr
			}(),
			want: want{err: `[metadata.labels[crossplane.io/composite]: Invalid value: "victim-x7k2p": must be the XR's own name "demo-x7k2p": Crossplane copies it onto every composed resource, ` +
				`metadata.labels[tenantkube.io/cluster]: Forbidden: "victim": tenantkube.io/ labels are the platform's, which composed resources carry with the values the functions derive]`},
		},
		"ClaimOwnComposite": {
			reason: "The composite label Crossplane gives a claim's XR, its own name, is accepted.",
			xr: func() map[string]any {
				xr := fntest.TenantXR("tenant-a", "demo", map[string]any{})
				xr["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/composite"] = xr["metadata"].(map[string]any)["name"]
				return xr
			}(),
			want: want{id: function.Identity{Name: "demo", Namespace: "tenant-a"}},
		},
		"NamespacedNameTooLong": {
			reason: "A namespaced XR's name is N: at most 32 characters.",
			xr:     fntest.NamespacedXR("tenant-a", "a23456789012345678901234567890123", map[string]any{}),
			want:   want{err: `metadata.name: Invalid value: "a23456789012345678901234567890123": must be at most 32 characters (is 33)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr, err := structpb.NewStruct(tc.xr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := function.NewRequest(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}).Cluster()
			var g want
			if err != nil {
				g.err = err.Error()
			} else {
				g.id, g.namespaced = got.ID, got.Namespaced
			}
			if diff := cmp.Diff(tc.want, g, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nTenant(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTenantDataStoreName: the tenant's DataStore has two dots,
// so it is neither a cluster's dedicated DataStore <NS>.<N> nor a shared
// DataStore of the platform input (a DNS label).
func TestTenantDataStoreName(t *testing.T) {
	id := function.Identity{Name: "demo", Namespace: "tenant-a"}
	if got, want := id.TenantDataStoreName(), "tenantkube.tenant.tenant-a"; got != want {
		t.Errorf("TenantDataStoreName() = %q, want %q", got, want)
	}
	// The dedicated DataStore of cluster "tenant-a" in namespace "tenant"
	// is tenant.tenant-a: one dot, another name.
	if clash := (function.Identity{Name: "tenant-a", Namespace: "tenant"}).ClusterScopedName(); clash == id.TenantDataStoreName() {
		t.Errorf("a dedicated DataStore shares the tenant DataStore's name %q", clash)
	}
}

package main

import (
	"fmt"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// TestYields applies the rule from both sides of each pair, a
// TenantCluster created at tc and a claim (or claimless XR) created at
// claim: exactly one of them composes, the expected winner.
func TestYields(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type args struct {
		tc, claim string
		// composed: the TenantCluster's spec.crossplane.resourceRefs is
		// not empty.
		composed bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string // the winner: "TenantCluster" or "claim"
	}{
		"OlderTenantCluster": {
			reason: "A TenantCluster created first, which has composed, composes.",
			args:   args{tc: "2026-12-01T10:00:00Z", claim: "2026-12-01T10:00:01Z", composed: true},
			want:   "TenantCluster",
		},
		"OlderClaim": {
			reason: "A claim created first composes.",
			args:   args{tc: "2026-12-01T10:00:01Z", claim: "2026-12-01T10:00:00Z"},
			want:   "claim",
		},
		"OlderClaimTenantClusterComposed": {
			reason: "A claim created first composes even if the later TenantCluster composed in the meantime: the older always wins.",
			args:   args{tc: "2026-12-01T10:00:01Z", claim: "2026-12-01T10:00:00Z", composed: true},
			want:   "claim",
		},
		"OlderTenantClusterNotComposed": {
			reason: "A TenantCluster created first composes even before it has composed anything.",
			args:   args{tc: "2026-12-01T10:00:00Z", claim: "2026-12-01T10:00:01Z"},
			want:   "TenantCluster",
		},
		"TieNothingComposed": {
			reason: "The same second, the TenantCluster has composed nothing: the claim wins.",
			args:   args{tc: "2026-12-01T10:00:00Z", claim: "2026-12-01T10:00:00Z"},
			want:   "claim",
		},
		"TieTenantClusterComposed": {
			reason: "The same second, the TenantCluster has already composed (it ran before the claim existed): it wins.",
			args:   args{tc: "2026-12-01T10:00:00.2Z", claim: "2026-12-01T10:00:00.8Z", composed: true},
			want:   "TenantCluster",
		},
		"TieWithinTheSecond": {
			reason: "creationTimestamp counts whole seconds: 10:00:00.9 and 10:00:00.1 are a tie, which the claim wins while the TenantCluster composed nothing.",
			args:   args{tc: "2026-12-01T10:00:00.1Z", claim: "2026-12-01T10:00:00.9Z"},
			want:   "claim",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tcYields := yields(at(tc.args.tc), at(tc.args.claim), false, tc.args.composed)
			claimYields := yields(at(tc.args.claim), at(tc.args.tc), true, tc.args.composed)
			got := ""
			switch {
			case tcYields && !claimYields:
				got = "claim"
			case claimYields && !tcYields:
				got = "TenantCluster"
			default:
				got = fmt.Sprintf("TenantCluster yields %t, claim yields %t", tcYields, claimYields)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nwinner: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestNameClash runs plan for a TenantCluster demo in tenant-demo and for
// the XR of claim demo in tenant-demo with the other API's object of that
// name as a required resource. The later one gets a Fatal result naming
// metadata.name and the other object; nothing is Fatal before the required
// resources arrived.
func TestNameClash(t *testing.T) {
	const (
		t0 = "2026-12-01T10:00:00Z"
		t1 = "2026-12-01T10:00:01Z"
		t5 = "2026-12-01T10:00:05Z"
	)
	claim := func(created string) string {
		return `{apiVersion: tenantkube.io/v1alpha1, kind: KubernetesCluster, metadata: {name: demo, namespace: tenant-demo, creationTimestamp: "` + created + `"}}`
	}
	tc := func(created string) string {
		return `{apiVersion: tenantkube.io/v1alpha1, kind: TenantCluster, metadata: {name: demo, namespace: tenant-demo, creationTimestamp: "` + created + `"}}`
	}
	composedTC := func(created string) string {
		return `{apiVersion: tenantkube.io/v1alpha1, kind: TenantCluster, metadata: {name: demo, namespace: tenant-demo, creationTimestamp: "` + created + `"}, spec: {crossplane: {resourceRefs: [{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, name: demo}]}}}`
	}
	xr := func(created, labels, ns string) string {
		return `{apiVersion: tenantkube.io/v1alpha1, kind: XKubernetesCluster, metadata: {name: demo, creationTimestamp: "` + created + `", labels: {` + labels + `}}, spec: {namespace: ` + ns + `}}`
	}
	type args struct {
		namespaced bool
		// claimless makes the XR one created without a claim (claimless).
		claimless bool
		// created is the observed XR's creationTimestamp ("" for none).
		created string
		// composed gives the observed XR a spec.crossplane.resourceRefs.
		composed bool
		required map[string][]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string // the error; "" for none
	}{
		"TenantClusterFirst": {
			reason: "The TenantCluster was created before the claim: it composes.",
			args: args{namespaced: true, created: t0,
				required: map[string][]string{"same-name-claim": {claim(t5)}, "same-name-xr": nil}},
		},
		"TenantClusterAfterClaim": {
			reason: "The claim was created first: the TenantCluster gets the Fatal result.",
			args: args{namespaced: true, created: t5,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-xr": nil}},
			want: `metadata.name: Invalid value: "demo": the claim KubernetesCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this TenantCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this TenantCluster`,
		},
		"TenantClusterTie": {
			reason: "The same second, this TenantCluster has composed nothing: the claim wins.",
			args: args{namespaced: true, created: t0,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-xr": nil}},
			want: `metadata.name: Invalid value: "demo": the claim KubernetesCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created in the same second, and the claim API wins a tie while the TenantCluster has composed nothing (this TenantCluster: 2026-12-01T10:00:00Z): both would compose the same objects, only the first does; rename or delete this TenantCluster`,
		},
		"TenantClusterTieComposed": {
			reason: "The same second, but this TenantCluster has already composed: it wins, no Fatal on a running cluster.",
			args: args{namespaced: true, created: t0, composed: true,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-xr": nil}},
		},
		"TenantClusterAfterClaimComposed": {
			reason: "The claim is older: the TenantCluster yields even though it composed (it ran before it saw the claim).",
			args: args{namespaced: true, created: t5, composed: true,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-xr": nil}},
			want: `metadata.name: Invalid value: "demo": the claim KubernetesCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this TenantCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this TenantCluster`,
		},
		"TenantClusterNotArrived": {
			reason: "The claim has not been fetched yet: no Fatal on a guess.",
			args:   args{namespaced: true, created: t5, required: map[string][]string{"same-name-xr": nil}},
		},
		"TenantClusterNoTimestamp": {
			reason: "Without its own creationTimestamp nothing is compared.",
			args: args{namespaced: true,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-xr": nil}},
		},
		"TenantClusterAfterClaimlessXR": {
			reason: "An XR created without a claim for tenant-demo, created first: the TenantCluster gets the Fatal result.",
			args: args{namespaced: true, created: t5,
				required: map[string][]string{"same-name-claim": nil, "same-name-xr": {xr(t0, "", "tenant-demo")}}},
			want: `metadata.name: Invalid value: "demo": the XKubernetesCluster demo (an XR without a claim, spec.namespace tenant-demo), created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this TenantCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this TenantCluster`,
		},
		"TenantClusterOtherXRs": {
			reason: "An XKubernetesCluster demo of another namespace, or a claim's XR (its claim is the one compared), is no clash.",
			args: args{namespaced: true, created: t5,
				required: map[string][]string{"same-name-claim": nil, "same-name-xr": {
					xr(t0, "", "tenant-other"), xr(t0, `"crossplane.io/claim-name": demo, "crossplane.io/claim-namespace": tenant-demo`, "tenant-demo"),
				}}},
		},
		"ClaimFirst": {
			reason: "The claim was created first: it composes.",
			args: args{created: t1,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-tenantcluster": {tc(t5)}}},
		},
		"ClaimAfterTenantCluster": {
			reason: "The TenantCluster was created first: the claim's XR gets the Fatal result.",
			args: args{created: t5,
				required: map[string][]string{"same-name-claim": {claim(t5)}, "same-name-tenantcluster": {tc(t0)}}},
			want: `metadata.name: Invalid value: "demo": the TenantCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this claim KubernetesCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this claim KubernetesCluster`,
		},
		"ClaimTieXRLater": {
			reason: "The claim and the TenantCluster in the same second, the claim's XR a second later: the claim's timestamp counts, and the claim wins the tie (the TenantCluster has composed nothing).",
			args: args{created: t1,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-tenantcluster": {tc(t0)}}},
		},
		"ClaimTieTenantClusterComposed": {
			reason: "The same second, the TenantCluster has already composed: the claim's XR gets the Fatal result (the other side of TenantClusterTieComposed).",
			args: args{created: t1,
				required: map[string][]string{"same-name-claim": {claim(t0)}, "same-name-tenantcluster": {composedTC(t0)}}},
			want: `metadata.name: Invalid value: "demo": the TenantCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created in the same second and has already composed, which wins a tie (this claim KubernetesCluster: 2026-12-01T10:00:00Z): both would compose the same objects, only the first does; rename or delete this claim KubernetesCluster`,
		},
		"ClaimNotArrived": {
			reason: "The claim (whose creationTimestamp counts) has not been fetched yet: no Fatal on a guess.",
			args:   args{created: t5, required: map[string][]string{"same-name-tenantcluster": {tc(t0)}}},
		},
		"ClaimGone": {
			reason: "The claim is gone (its XR is being deleted): the XR's own creationTimestamp counts.",
			args: args{created: t5,
				required: map[string][]string{"same-name-claim": nil, "same-name-tenantcluster": {tc(t0)}}},
			want: `metadata.name: Invalid value: "demo": the TenantCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this claim KubernetesCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this claim KubernetesCluster`,
		},
		"ClaimlessXRAfterTenantCluster": {
			reason: "An XR created without a claim compares its own creationTimestamp and asks for no claim.",
			args: args{claimless: true, created: t5,
				required: map[string][]string{"same-name-tenantcluster": {tc(t0)}}},
			want: `metadata.name: Invalid value: "demo": the TenantCluster tenant-demo/demo, created 2026-12-01T10:00:00Z, names the same cluster in namespace tenant-demo and was created first (this XR XKubernetesCluster: 2026-12-01T10:00:05Z): both would compose the same objects, only the first does; rename or delete this XR XKubernetesCluster`,
		},
		"ClaimlessXRTie": {
			reason: "The same second, the TenantCluster has composed nothing: an XR of the claim API wins.",
			args: args{claimless: true, created: t0,
				required: map[string][]string{"same-name-tenantcluster": {tc(t0)}}},
		},
		"NoTenantCluster": {
			reason: "No TenantCluster of that name: the claim composes.",
			args: args{created: t5,
				required: map[string][]string{"same-name-claim": {claim(t5)}, "same-name-tenantcluster": nil}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			call := fntest.Call{Namespaced: tc.args.namespaced, Spec: `{}`, Required: tc.args.required}
			req := call.Request(t)
			if tc.args.claimless {
				claimless(t, req)
			}
			if tc.args.created != "" {
				md := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue()
				md.Fields["creationTimestamp"] = structpb.NewStringValue(tc.args.created)
			}
			if tc.args.composed {
				spec := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue()
				spec.Fields["crossplane"] = structpb.NewStructValue(fntest.YAMLStruct(t, `{resourceRefs: [{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, name: demo}]}`))
			}
			r := function.NewRequest(req)
			tenant, err := r.Cluster()
			if err != nil {
				t.Fatal(err)
			}
			in := &cpinput.ControlPlaneInput{}
			in.DataStoreName = "shared"
			in.Default()
			p, errs := plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, time.Time{})
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nplan(...) error: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want == "" && (p == nil || len(p.Composed) == 0) {
				t.Errorf("%s\nplan(...) composed nothing", tc.reason)
			}
		})
	}
}

func TestRequireSameName(t *testing.T) {
	sel := func(kind, ns string) *fnv1.ResourceSelector {
		s := &fnv1.ResourceSelector{ApiVersion: "tenantkube.io/v1alpha1", Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "demo"}}
		if ns != "" {
			s.Namespace = &ns
		}
		return s
	}
	cases := map[string]struct {
		reason    string
		call      fntest.Call
		claimless bool
		want      map[string]*fnv1.ResourceSelector
	}{
		"TenantCluster": {
			reason: "A TenantCluster asks for the claim of its name in its namespace and for the XR of its name (cluster-scoped).",
			call:   fntest.Call{Namespaced: true},
			want: map[string]*fnv1.ResourceSelector{
				"same-name-claim": sel("KubernetesCluster", "tenant-demo"), "same-name-xr": sel("XKubernetesCluster", ""),
			},
		},
		"ClaimlessXR": {
			reason:    "An XR created without a claim asks only for the TenantCluster of its name in spec.namespace.",
			claimless: true,
			want:      map[string]*fnv1.ResourceSelector{"same-name-tenantcluster": sel("TenantCluster", "tenant-demo")},
		},
		"ClaimXR": {
			reason: "A claim's XR asks for the TenantCluster of the claim's name and namespace, and for the claim.",
			want: map[string]*fnv1.ResourceSelector{
				"same-name-tenantcluster": sel("TenantCluster", "tenant-demo"), "same-name-claim": sel("KubernetesCluster", "tenant-demo"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := tc.call.Request(t)
			if tc.claimless {
				claimless(t, req)
			}
			r := function.NewRequest(req)
			tenant, err := r.Cluster()
			if err != nil {
				t.Fatal(err)
			}
			p := &function.Plan{}
			requireSameName(p, tenant, r)
			if diff := cmp.Diff(tc.want, p.Requirements, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nrequireSameName: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// claimless makes the observed XR of req the XR demo created without a
// claim, for namespace tenant-demo (spec.namespace).
func claimless(t *testing.T, req *fnv1.RunFunctionRequest) {
	t.Helper()
	xr := req.GetObserved().GetComposite().GetResource()
	md := xr.GetFields()["metadata"].GetStructValue()
	md.Fields["name"] = structpb.NewStringValue("demo")
	delete(md.Fields, "labels")
	spec := xr.GetFields()["spec"].GetStructValue()
	if spec == nil {
		spec = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		xr.Fields["spec"] = structpb.NewStructValue(spec)
	}
	spec.Fields["namespace"] = structpb.NewStringValue("tenant-demo")
}

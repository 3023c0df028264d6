package function

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestControlPlaneComposed(t *testing.T) {
	kcp := map[string]*fnv1.Resource{KamajiControlPlaneResourceName: {Resource: &structpb.Struct{}}}
	other := map[string]*fnv1.Resource{"cluster": {Resource: &structpb.Struct{}}}
	type args struct {
		desired, observed map[string]*fnv1.Resource
	}
	cases := map[string]struct {
		reason string
		args   args
		want   bool
	}{
		"Neither": {
			reason: "No KamajiControlPlane desired by the control-plane step nor observed: the cluster waits.",
			args:   args{desired: other, observed: other},
			want:   false,
		},
		"Desired": {
			reason: "The control-plane step composed one.",
			args:   args{desired: kcp},
			want:   true,
		},
		"Observed": {
			reason: "One exists (the control-plane step keeps it while it waits).",
			args:   args{observed: kcp},
			want:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewRequest(&fnv1.RunFunctionRequest{
				Desired:  &fnv1.State{Resources: tc.args.desired},
				Observed: &fnv1.State{Resources: tc.args.observed},
			})
			if diff := cmp.Diff(tc.want, r.ControlPlaneComposed()); diff != "" {
				t.Errorf("%s\nControlPlaneComposed(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestKeepOnlyObserved(t *testing.T) {
	observed := func(names ...string) *Request {
		res := map[string]*fnv1.Resource{}
		for _, n := range names {
			res[n] = &fnv1.Resource{Resource: &structpb.Struct{}}
		}
		return NewRequest(&fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: res}})
	}
	replicas := func(c Composed) []string {
		if c.Name == "md" {
			return []string{"spec.replicas"}
		}
		return nil
	}
	type args struct {
		r    *Request
		plan Plan
		omit func(Composed) []string
	}
	type want struct {
		composed []string
		kept     []Kept
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NothingObserved": {
			reason: "Nothing observed: nothing composed, nothing kept.",
			args:   args{r: observed(), plan: Plan{Composed: []Composed{{Name: "a", Ready: ReadyAlways}, {Name: "b"}}}},
			want:   want{},
		},
		"ObservedKeptWithReadinessAndOmit": {
			reason: "Observed objects are kept with the computed readiness and the paths omit names; the others leave, and so does one composed for cleanup (Write keeps it as composed); earlier Kept stay.",
			args: args{
				r: observed("md", "b", "k", "cleanup-service-x"),
				plan: Plan{
					Composed: []Composed{{Name: "md", Ready: ReadyAlways}, {Name: "a", Ready: ReadyAlways}, {Name: "b"}, {Name: "cleanup-service-x"}},
					Kept:     []Kept{{Name: "k"}},
				},
				omit: replicas,
			},
			want: want{kept: []Kept{{Name: "k"}, {Name: "md", Omit: []string{"spec.replicas"}, Ready: fnv1.Ready_READY_TRUE}, {Name: "b"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.args.plan
			p.KeepOnlyObserved(tc.args.r, tc.args.omit)
			var composed []string
			for _, c := range p.Composed {
				composed = append(composed, c.Name)
			}
			if diff := cmp.Diff(tc.want, want{composed: composed, kept: p.Kept}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nKeepOnlyObserved: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// RunAgainAfter is the response's TTL; none when zero.
func TestWriteRunAgainAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 90 * time.Minute: "1h30m0s"} {
		rsp := &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{}}
		if err := Write(rsp, NewRequest(&fnv1.RunFunctionRequest{}), &Plan{RunAgainAfter: d}); err != nil {
			t.Fatal(err)
		}
		if got := rsp.GetMeta().GetTtl().AsDuration().String(); got != want {
			t.Errorf("RunAgainAfter %s: response TTL %s, want %s", d, got, want)
		}
	}
}

func TestCompositeComposed(t *testing.T) {
	xr := func(spec map[string]any) *fnv1.RunFunctionRequest {
		s, err := structpb.NewStruct(map[string]any{"apiVersion": "tenantkube.io/v1alpha1", "kind": "TenantCluster", "spec": spec})
		if err != nil {
			t.Fatal(err)
		}
		return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}}
	}
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   bool
	}{
		"NoXR":     {reason: "No observed XR.", req: &fnv1.RunFunctionRequest{}, want: false},
		"NoRefs":   {reason: "A new XR: no spec.crossplane.", req: xr(map[string]any{}), want: false},
		"Empty":    {reason: "An empty list: nothing composed.", req: xr(map[string]any{"crossplane": map[string]any{"resourceRefs": []any{}}}), want: false},
		"Composed": {reason: "One reference: it has composed.", req: xr(map[string]any{"crossplane": map[string]any{"resourceRefs": []any{map[string]any{"kind": "Cluster", "name": "demo"}}}}), want: true},
		"Legacy":   {reason: "spec.resourceRefs (a legacy XR's) is not read.", req: xr(map[string]any{"resourceRefs": []any{map[string]any{"kind": "Cluster", "name": "demo"}}}), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewRequest(tc.req).CompositeComposed()); diff != "" {
				t.Errorf("%s\nCompositeComposed(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
)

// planFor runs plan on the request c describes, as RunFunction does.
func planFor(t *testing.T, c fntest.Call) (*function.Plan, *function.Request, error) {
	t.Helper()
	r, tenant := c.Read(t)
	in := fntest.AddonsInput(t, c.Input)
	hosts, err := r.TenantHostPolicy(tenant.ID, in.HostSettings())
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan(tenant, in, hosts, r, time.Time{})
	return p, r, err
}

// composedObject is the object p composes under name, or nil.
func composedObject(p *function.Plan, name string) any {
	for _, c := range p.Composed {
		if c.Name == name {
			return c.Object
		}
	}
	return nil
}

// Observed objects of the tests, with their Ready condition.
const (
	kcpReady       = "apiVersion: controlplane.cluster.x-k8s.io/v1alpha2\nkind: KamajiControlPlane\nstatus: {ready: true}"
	readyTrue      = "status: {conditions: [{type: Ready, status: 'True', reason: InstallSucceeded, message: ok, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	readyFailed    = "status: {conditions: [{type: Ready, status: 'False', reason: InstallFailed, message: 'install retries exhausted', lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	readyFalseBare = "status: {conditions: [{type: Ready, status: 'False', reason: InstallFailed, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	readyUnknown   = "status: {conditions: [{type: Ready, status: Unknown, reason: Progressing, message: installing, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	readyBare      = "status: {conditions: [{type: Ready, status: Unknown, lastTransitionTime: '2026-01-01T00:00:00Z'}]}"
	noConditions   = "status: {}"
)

// seedLabels are the labels of every object of claim demo
// (docs/architecture.md): the cluster and the manager.
var seedLabels = map[string]string{"tenantkube.io/cluster": "demo", "app.kubernetes.io/managed-by": "tenantkube"}

// wantRelease is a HelmRelease as docs/architecture.md describes it for claim
// demo in tenant-demo: N-<release> in NS through N-admin-kubeconfig's
// super-admin.svc, createNamespace, RetryOnFailure for install and upgrade
// with remediation retries -1 (the Cozystack chart's), no forced upgrades,
// interval 5m, timeout 10m, storage namespace = target
// namespace, and an uninstall that runs no hooks and does not wait.
func wantRelease(release, ns string, suspend bool, deps ...string) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-" + release, Namespace: "tenant-demo", Labels: seedLabels},
		Spec: helmv2.HelmReleaseSpec{
			Interval:         metav1.Duration{Duration: 5 * time.Minute},
			Timeout:          &metav1.Duration{Duration: 10 * time.Minute},
			KubeConfig:       &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "demo-admin-kubeconfig", Key: "super-admin.svc"}},
			ReleaseName:      release,
			TargetNamespace:  ns,
			StorageNamespace: ns,
			Suspend:          suspend,
			Install: &helmv2.Install{CreateNamespace: true, Strategy: &helmv2.InstallStrategy{Name: "RetryOnFailure"},
				Remediation: &helmv2.InstallRemediation{Retries: -1}},
			Upgrade: &helmv2.Upgrade{Strategy: &helmv2.UpgradeStrategy{Name: "RetryOnFailure"},
				Remediation: &helmv2.UpgradeRemediation{Retries: -1}},
			Uninstall: &helmv2.Uninstall{DisableHooks: true, DisableWait: true},
		},
	}
	for _, d := range deps {
		hr.Spec.DependsOn = append(hr.Spec.DependsOn, helmv2.DependencyReference{Name: "demo-" + d})
	}
	return hr
}

// TestPlanObjects: the typed objects plan composes for an add-on, against
// the add-on table of docs/tenant-guide.md and the input's documented default chart
// sources (velero: HelmRepository vmware-tanzu chart velero 12.2.1;
// ouroboros: ExternalArtifact flux-system/tenantkube-addon-ouroboros).
func TestPlanObjects(t *testing.T) {
	velero := func(suspend bool) *helmv2.HelmRelease {
		hr := wantRelease("velero", "cozy-velero", suspend, "cilium")
		hr.Spec.Chart = &helmv2.HelmChartTemplate{
			ObjectMeta: &helmv2.HelmChartTemplateObjectMeta{Labels: seedLabels},
			Spec: helmv2.HelmChartTemplateSpec{Chart: "velero", Version: "12.2.1",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "demo-vmware-tanzu"}},
		}
		return hr
	}
	ouroboros := wantRelease("ouroboros", "cozy-ouroboros", false, "cilium", "coredns", "ingress-nginx", "gateway-api-crds")
	ouroboros.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "tenantkube-addon-ouroboros", Namespace: "flux-system"}
	ouroboros.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"controller":{"clusterDomain":"cluster.local","gatewayApi":{"enabled":true},"mode":"coredns-import"}}`)}
	reason, replay := "Flux uninstalls add-on velero through the tenant API server before the control plane goes", true

	type args struct {
		call fntest.Call
		name string // composed-resource name
	}
	type want struct {
		object any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"VeleroSuspendedBeforeTheControlPlaneAnswers": {
			reason: "Before the KamajiControlPlane is observed ready every release is suspended.",
			args:   args{call: fntest.Call{Spec: "addons: {velero: {enabled: true}}"}, name: "addon-velero"},
			want:   want{object: velero(true)},
		},
		"VeleroOnceTheControlPlaneAnswers": {
			reason: "Once the KamajiControlPlane reports status.ready the release runs.",
			args: args{call: fntest.Call{Spec: "addons: {velero: {enabled: true}}", Observed: map[string]string{"kamajicontrolplane": kcpReady}},
				name: "addon-velero"},
			want: want{object: velero(false)},
		},
		"OuroborosWithGatewayAPI": {
			reason: "ouroboros depends on gateway-api-crds with gatewayAPI, and its gatewayApi.enabled mirrors addons.gatewayAPI.",
			args: args{call: fntest.Call{
				Spec:     "addons: {gatewayAPI: {enabled: true}, ingressNginx: {enabled: true}, ouroboros: {enabled: true}}",
				Observed: map[string]string{"kamajicontrolplane": kcpReady},
			}, name: "addon-ouroboros"},
			want: want{object: ouroboros},
		},
		"VeleroUsage": {
			reason: "A Usage keeps the KamajiControlPlane demo until the HelmRelease demo-velero is gone, replaying the blocked deletion.",
			args:   args{call: fntest.Call{Spec: "addons: {velero: {enabled: true}}"}, name: "usage-kamajicontrolplane-by-addon-velero"},
			want: want{object: &protectionv1beta1.Usage{
				TypeMeta:   metav1.TypeMeta{APIVersion: "protection.crossplane.io/v1beta1", Kind: "Usage"},
				ObjectMeta: metav1.ObjectMeta{Name: "demo-control-plane-used-by-addon-velero", Namespace: "tenant-demo", Labels: seedLabels},
				Spec: protectionv1beta1.UsageSpec{
					Of: protectionv1beta1.NamespacedResource{APIVersion: "controlplane.cluster.x-k8s.io/v1alpha2", Kind: "KamajiControlPlane",
						ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: "demo"}},
					By: &protectionv1beta1.Resource{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease",
						ResourceRef: &protectionv1beta1.ResourceRef{Name: "demo-velero"}},
					Reason:         &reason,
					ReplayDeletion: &replay,
				},
			}},
		},
		"NoUsageWithDeletionOrderNone": {
			reason: "deletionOrder None composes no Usage.",
			args: args{call: fntest.Call{Spec: "addons: {velero: {enabled: true}}", Input: "deletionOrder: None"},
				name: "usage-kamajicontrolplane-by-addon-velero"},
			want: want{object: nil},
		},
		"NoDisabledAddon": {
			reason: "A disabled add-on's HelmRelease is not composed.",
			args:   args{call: fntest.Call{Spec: "{}"}, name: "addon-velero"},
			want:   want{object: nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, err := planFor(t, tc.args.call)
			if err != nil {
				t.Fatalf("%s\nplan(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.object, composedObject(p, tc.args.name)); diff != "" {
				t.Errorf("%s\nplan(...) %s: -want, +got:\n%s", tc.reason, tc.args.name, diff)
			}
		})
	}
}

// TestPlanAddonsReady: status.addons and AddonsReady from the observed
// Ready condition of each release. The six base
// releases are observed Ready unless a case says otherwise; velero is
// enabled.
func TestPlanAddonsReady(t *testing.T) {
	observed := func(extra map[string]string, missing ...string) map[string]string {
		m := map[string]string{}
		for _, r := range baseReleases {
			m["addon-"+r] = readyTrue
		}
		for _, r := range missing {
			delete(m, "addon-"+r)
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	status := func(velero v1alpha1.AddonStatus, others map[string]v1alpha1.AddonStatus) map[string]any {
		s := map[string]v1alpha1.AddonStatus{"velero": velero}
		for _, r := range baseReleases {
			s[r] = v1alpha1.AddonStatus{Ready: true}
		}
		for r, st := range others {
			s[r] = st
		}
		return map[string]any{"addons": s}
	}
	type args struct {
		observed map[string]string
	}
	type want struct {
		status     map[string]any
		conditions []function.Condition
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NotCreated": {
			reason: "A release not observed yet is pending.",
			args:   args{observed: observed(nil)},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "HelmRelease not created yet"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "WaitingForHelmRelease", Message: "velero: HelmRelease not created yet"}},
			},
		},
		"NoReadyCondition": {
			reason: "A release observed without a Ready condition is pending.",
			args:   args{observed: observed(map[string]string{"addon-velero": noConditions})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "waiting for the HelmRelease's Ready condition"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "WaitingForHelmRelease", Message: "velero: waiting for the HelmRelease's Ready condition"}},
			},
		},
		"AllReady": {
			reason: "Every enabled release, base or optional, Ready=True: AddonsReady is True.",
			args:   args{observed: observed(map[string]string{"addon-velero": readyTrue})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Ready: true}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", True: true, Reason: "AllAddonsReady"}},
			},
		},
		"Failed": {
			reason: "Ready=False is a failed release, named with the condition's Flux reason; its message (text from the tenant's cluster) is not shown.",
			args:   args{observed: observed(map[string]string{"addon-velero": readyFailed})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "InstallFailed"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "HelmReleaseFailed", Message: "velero: InstallFailed"}},
			},
		},
		"FailedWithoutMessage": {
			reason: "Without a message the condition's reason names the failure as well.",
			args:   args{observed: observed(map[string]string{"addon-velero": readyFalseBare})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "InstallFailed"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "HelmReleaseFailed", Message: "velero: InstallFailed"}},
			},
		},
		"UnknownWithoutMessageOrReason": {
			reason: "Ready=Unknown saying nothing is pending: not ready.",
			args:   args{observed: observed(map[string]string{"addon-velero": readyBare})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "not ready"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "WaitingForHelmRelease", Message: "velero: not ready"}},
			},
		},
		"FailedBeforePending": {
			reason: "Failed releases are named first, then the pending ones, each group in release order (sorted).",
			args:   args{observed: observed(map[string]string{"addon-velero": readyUnknown, "addon-csi": readyFailed, "addon-cilium": readyFailed}, "coredns")},
			want: want{
				status: status(v1alpha1.AddonStatus{Message: "Progressing"}, map[string]v1alpha1.AddonStatus{
					"cilium":  {Message: "InstallFailed"},
					"csi":     {Message: "InstallFailed"},
					"coredns": {Message: "HelmRelease not created yet"},
				}),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "HelmReleaseFailed",
					Message: "cilium: InstallFailed; csi: InstallFailed; coredns: HelmRelease not created yet; velero: Progressing"}},
			},
		},
		"TenantTextNotShown": {
			reason: "A reason Flux does not define and the message are the tenant's text (a webhook of its cluster): not ready, nothing of them shown.",
			args:   args{observed: observed(map[string]string{"addon-velero": "status: {conditions: [{type: Ready, status: 'False', reason: 'URGENT_platform_admins_rotate_creds', message: 'admission webhook denied: URGENT platform-admins rotate creds at evil.example', lastTransitionTime: '2026-01-01T00:00:00Z'}]}"})},
			want: want{
				status:     status(v1alpha1.AddonStatus{Message: "not ready"}, nil),
				conditions: []function.Condition{{Type: "AddonsReady", Reason: "HelmReleaseFailed", Message: "velero: not ready"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, err := planFor(t, fntest.Call{Spec: "addons: {velero: {enabled: true}}", Observed: tc.args.observed})
			if err != nil {
				t.Fatalf("%s\nplan(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.status, p.Status); diff != "" {
				t.Errorf("%s\nplan(...) status: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.conditions, p.Conditions); diff != "" {
				t.Errorf("%s\nplan(...) conditions: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanReadiness: each composed resource's readiness rule on the
// observed state: Flux objects and Usages are ready on
// Ready=True, the management Service and Ingress once they exist.
func TestPlanReadiness(t *testing.T) {
	const spec = "addons: {velero: {enabled: true}, ingressNginx: {enabled: true, hosts: [tenant-demo.tenants.example.com]}}"
	names := []string{"addon-velero", "helmrepository-vmware-tanzu", "usage-kamajicontrolplane-by-addon-velero",
		"proxy-service", "proxy-ingress", "proxy-ingress-http"}
	type args struct {
		observed map[string]string
	}
	type want struct {
		ready map[string]fnv1.Ready
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NothingObserved": {
			reason: "Nothing is ready before it is observed Ready, but the Service and the Ingress, which only need to exist.",
			args:   args{},
			want: want{ready: map[string]fnv1.Ready{
				"addon-velero": fnv1.Ready_READY_FALSE, "helmrepository-vmware-tanzu": fnv1.Ready_READY_FALSE,
				"usage-kamajicontrolplane-by-addon-velero": fnv1.Ready_READY_FALSE,
				"proxy-service": fnv1.Ready_READY_TRUE, "proxy-ingress": fnv1.Ready_READY_TRUE, "proxy-ingress-http": fnv1.Ready_READY_TRUE,
			}},
		},
		"ObservedReady": {
			reason: "Ready=True makes a Flux object and a Usage ready.",
			args: args{observed: map[string]string{"addon-velero": readyTrue, "helmrepository-vmware-tanzu": readyTrue,
				"usage-kamajicontrolplane-by-addon-velero": readyTrue}},
			want: want{ready: map[string]fnv1.Ready{
				"addon-velero": fnv1.Ready_READY_TRUE, "helmrepository-vmware-tanzu": fnv1.Ready_READY_TRUE,
				"usage-kamajicontrolplane-by-addon-velero": fnv1.Ready_READY_TRUE,
				"proxy-service": fnv1.Ready_READY_TRUE, "proxy-ingress": fnv1.Ready_READY_TRUE, "proxy-ingress-http": fnv1.Ready_READY_TRUE,
			}},
		},
		"ObservedNotReady": {
			reason: "Ready=False or Unknown is not ready.",
			args: args{observed: map[string]string{"addon-velero": readyFailed, "helmrepository-vmware-tanzu": readyUnknown,
				"usage-kamajicontrolplane-by-addon-velero": readyFailed}},
			want: want{ready: map[string]fnv1.Ready{
				"addon-velero": fnv1.Ready_READY_FALSE, "helmrepository-vmware-tanzu": fnv1.Ready_READY_FALSE,
				"usage-kamajicontrolplane-by-addon-velero": fnv1.Ready_READY_FALSE,
				"proxy-service": fnv1.Ready_READY_TRUE, "proxy-ingress": fnv1.Ready_READY_TRUE, "proxy-ingress-http": fnv1.Ready_READY_TRUE,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, r, err := planFor(t, fntest.Call{Spec: spec, Observed: tc.args.observed})
			if err != nil {
				t.Fatalf("%s\nplan(...): %v", tc.reason, err)
			}
			got := map[string]fnv1.Ready{}
			for _, c := range p.Composed {
				for _, n := range names {
					if c.Name == n {
						got[n] = c.Ready(r, n)
					}
				}
			}
			if diff := cmp.Diff(tc.want.ready, got); diff != "" {
				t.Errorf("%s\nplan(...) readiness: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanRequirementsAndErrors: plan requires the tenant's Namespace, and
// returns the first bad field by its path with the value.
func TestPlanRequirementsAndErrors(t *testing.T) {
	const ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: tenant-demo}"
	type args struct {
		call fntest.Call
	}
	type want struct {
		requirements map[string]*fnv1.ResourceSelector
		err          string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"RequiresTheNamespace": {
			reason: "The tenant's Namespace carries its tenant host; helm-controller's HelmCharts labelled with the cluster are composed for cleanup.",
			args:   args{call: fntest.Call{Spec: "{}"}},
			want: want{requirements: map[string]*fnv1.ResourceSelector{
				"tenant-namespace": {ApiVersion: "v1", Kind: "Namespace", Match: &fnv1.ResourceSelector_MatchName{MatchName: "tenant-demo"}},
				"cleanup-helmchart.source.toolkit.fluxcd.io": {ApiVersion: "source.toolkit.fluxcd.io/v1", Kind: "HelmChart",
					Match:     &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"tenantkube.io/cluster": "demo"}}},
					Namespace: ptr("tenant-demo")},
			}},
		},
		"HostOfAnotherTenant": {
			reason: "Once the Namespace arrived, a host outside the tenant host tenant-demo.tenants.example.com is forbidden.",
			args: args{call: fntest.Call{Spec: "addons: {ingressNginx: {enabled: true, hosts: [demo.tenant-other.tenants.example.com]}}",
				Required: map[string][]string{"tenant-namespace": {ns}}}},
			want: want{err: `spec.addons.ingressNginx.hosts[0]: Forbidden: "demo.tenant-other.tenants.example.com": a host must be the tenant host or lie under tenant-demo.tenants.example.com`},
		},
		"HamiWithoutGPUOperator": {
			reason: "hami runs on top of the GPU operator.",
			args:   args{call: fntest.Call{Spec: "addons: {hami: {enabled: true}}"}},
			want:   want{err: "spec.addons.hami.enabled: Invalid value: true: hami requires addons.gpuOperator.enabled: true (HAMi runs on top of the NVIDIA GPU operator)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, err := planFor(t, tc.args.call)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, gotErr); diff != "" {
				t.Fatalf("%s\nplan(...) error: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want.requirements, p.Requirements, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nplan(...) requirements: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanHelmChartCleanup: the HelmCharts helm-controller made in NS with
// the cluster's label are composed for deletion with it, at most
// input.maxCleanupObjects (default 100) of them, with a warning counting
// the rest.
func TestPlanHelmChartCleanup(t *testing.T) {
	charts := func(n int) map[string][]string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata: {name: chart-%03d, namespace: tenant-demo, labels: {tenantkube.io/cluster: demo}}", i)
		}
		return map[string][]string{"cleanup-helmchart.source.toolkit.fluxcd.io": items}
	}
	type args struct {
		charts int
		input  string
	}
	type want struct {
		composed int
		warnings []function.Warning
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"AtTheLimit": {
			reason: "3 charts under a limit of 3 are all composed.",
			args:   args{charts: 3, input: "maxCleanupObjects: 3"},
			want:   want{composed: 3},
		},
		"OverTheLimit": {
			reason: "4 charts under a limit of 3: 3 composed, 1 counted.",
			args:   args{charts: 4, input: "maxCleanupObjects: 3"},
			want: want{composed: 3, warnings: []function.Warning{{Reason: "TooManyObjectsToCleanUp",
				Message: "1 more HelmCharts labelled tenantkube.io/cluster=demo in tenant-demo are not composed for deletion with the cluster: at most 3 are (input.maxCleanupObjects, bounded by gRPC's message size)"}}},
		},
		"OverTheDefaultLimit": {
			reason: "101 charts under the default limit of 100: 100 composed, 1 counted.",
			args:   args{charts: 101},
			want: want{composed: 100, warnings: []function.Warning{{Reason: "TooManyObjectsToCleanUp",
				Message: "1 more HelmCharts labelled tenantkube.io/cluster=demo in tenant-demo are not composed for deletion with the cluster: at most 100 are (input.maxCleanupObjects, bounded by gRPC's message size)"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, r, err := planFor(t, fntest.Call{Spec: "{}", Input: tc.args.input, Required: charts(tc.args.charts)})
			if err != nil {
				t.Fatalf("%s\nplan(...): %v", tc.reason, err)
			}
			n := 0
			for _, c := range p.Composed {
				if strings.HasPrefix(c.Name, "cleanup-helmchart-") {
					n++
					if got := c.Ready(r, c.Name); got != fnv1.Ready_READY_TRUE {
						t.Errorf("%s: ready %v, want READY_TRUE (it exists)", c.Name, got)
					}
				}
			}
			if n != tc.want.composed {
				t.Errorf("%s\nplan(...): %d HelmCharts composed, want %d", tc.reason, n, tc.want.composed)
			}
			if diff := cmp.Diff(tc.want.warnings, p.Warnings); diff != "" {
				t.Errorf("%s\nplan(...) warnings: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

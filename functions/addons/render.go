package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/talos"
)

// Settings shared by every add-on HelmRelease.
var (
	releaseInterval = metav1.Duration{Duration: 5 * time.Minute}
	releaseTimeout  = metav1.Duration{Duration: 10 * time.Minute}
)

// The apiVersions of Flux's HelmRelease and of its chart sources, written
// once (GroupVersion.String builds a new string on every call).
var (
	helmReleaseAPIVersion = helmv2.GroupVersion.String()
	sourceAPIVersion      = sourcev1.GroupVersion.String()
)

// Composed-resource names (stable across reconciles).
const (
	composedProxyService     = "proxy-service"
	composedProxyIngress     = "proxy-ingress"
	composedProxyHTTPIngress = "proxy-ingress-http"
)

// ComposedReleaseName is the composed-resource name of a release's
// HelmRelease: addon-<release>.
func ComposedReleaseName(release string) string { return "addon-" + release }

// composedOCIRepositoryName is the composed-resource name of a release's
// managed OCIRepository: ocirepository-<release>.
func composedOCIRepositoryName(release string) string { return "ocirepository-" + release }

// ComposedUsageName is the composed-resource name of the Usage that keeps
// the KamajiControlPlane until a release's HelmRelease is gone:
// usage-kamajicontrolplane-by-addon-<release>.
func ComposedUsageName(release string) string { return "usage-kamajicontrolplane-by-addon-" + release }

// Object is one object the function emits, under its composed-resource
// name.
type Object struct {
	// Name is the composed-resource name.
	Name string
	// Obj is the typed object.
	Obj any
	// Release is the add-on release of a HelmRelease, "" for other objects.
	Release string
	// Base is true for the HelmRelease of a base add-on.
	Base bool
}

// Render computes every object of the add-ons of one tenant cluster from
// its defaulted spec and the defaulted, validated input, in a stable order.
// suspend sets spec.suspend on every HelmRelease: the caller says so while
// the tenant API server does not answer, so that deleting the cluster then
// does not wait on an uninstall that cannot succeed (Flux skips the
// in-tenant uninstall of a suspended release). With the input's
// DeletionOrder Usages, each HelmRelease also gets a Crossplane Usage
// keeping the KamajiControlPlane until the release is uninstalled.
// talosTokens are the Talos workers' tokens (nil: no Talos group, or its CA
// not observed); with them the talos-bootstrap-token release is rendered.
// A release with SecretValues gets its Secret N-<release>-values beside it.
// The spec must have passed spec.Validate. It returns a *field.Error naming
// the spec field when an ouroboros override turns Gateway API watching on
// without addons.gatewayAPI.enabled, or a valuesOverride is not an object.
func Render(id function.Identity, spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput, suspend bool, talosTokens *talos.Tokens) ([]Object, error) {
	if err := checkSpec(spec, in); err != nil {
		return nil, err
	}
	c := &Context{ID: id, Spec: spec, Input: in, TalosTokens: talosTokens}
	a := &spec.Addons

	// At most a release, its values Secret, a Usage and a source per row,
	// and the proxy's three objects: sized once.
	objs := make([]Object, 0, 4*len(Table)+3)
	var sources, usages []Object
	seenRepo := map[string]bool{}
	for i := range Table {
		row := &Table[i]
		if !row.On(c) {
			continue
		}
		src, _ := in.Charts.Source(row.Release)
		values, err := releaseValues(row, c, src)
		if err != nil {
			return nil, err
		}
		hr, err := BuildHelmRelease(id, row, a, src, values)
		if err != nil {
			return nil, err
		}
		hr.Spec.Suspend = suspend
		retry := row.RetryInterval
		if r := in.ReleaseRetryInterval; retry == 0 && r != nil {
			retry = r.Duration
		}
		if retry != 0 {
			hr.Spec.Install.Strategy.RetryInterval = &metav1.Duration{Duration: retry}
			hr.Spec.Upgrade.Strategy.RetryInterval = &metav1.Duration{Duration: retry}
		}
		objs = append(objs, Object{Name: ComposedReleaseName(row.Release), Obj: hr, Release: row.Release, Base: row.Base})
		if row.SecretValues != nil {
			secret, err := valuesSecret(id, row.Release, row.SecretValues(c))
			if err != nil {
				return nil, err
			}
			hr.Spec.ValuesFrom = []helmv2.ValuesReference{{Kind: "Secret", Name: secret.Name, ValuesKey: ValuesSecretKey}}
			objs = append(objs, Object{Name: ComposedValuesSecretName(row.Release), Obj: secret})
		}
		if in.DeletionOrder == input.DeletionOrderUsages {
			usages = append(usages, Object{Name: ComposedUsageName(row.Release), Obj: id.Usage(
				id.Prefixed("control-plane-used-by-addon-"+row.Release), id.KamajiControlPlaneRef(),
				function.ObjectRef{APIVersion: helmReleaseAPIVersion, Kind: helmv2.HelmReleaseKind, Name: hr.Name},
				"Flux uninstalls add-on "+row.Release+" through the tenant API server before the control plane goes")})
		}
		if s := managedSource(id, row.Release, src, in); s != nil && !seenRepo[s.Name] {
			seenRepo[s.Name] = true
			sources = append(sources, *s)
		}
	}
	sort.Slice(sources, func(i, j int) bool { return sources[i].Name < sources[j].Name })
	objs = append(objs, sources...)
	objs = append(objs, usages...)

	// The Service whenever a Proxied ingress-nginx runs, so that other
	// management-cluster Ingresses can route to it; the Ingress only with hosts.
	ing := &a.IngressNginx
	if ing.Enabled && ing.ExposeMethod == v1alpha1.ExposeProxied {
		objs = append(objs, Object{Name: composedProxyService, Obj: proxyService(id)})
		if len(ing.Hosts) > 0 {
			primary, canary := proxyIngresses(id, in.IngressClassName, ing.Hosts)
			objs = append(objs,
				Object{Name: composedProxyIngress, Obj: primary},
				Object{Name: composedProxyHTTPIngress, Obj: canary})
		}
	}
	return objs, nil
}

// ValuesSecretKey is the key of a values Secret a release reads.
const ValuesSecretKey = "values.yaml"

// ComposedValuesSecretName is the composed-resource name of a release's
// values Secret: values-<release>.
func ComposedValuesSecretName(release string) string { return "values-" + release }

// ValuesSecretName is the values Secret of a release: N-<release>-values in
// NS, which only the cluster's own tenant and the platform read.
func ValuesSecretName(id function.Identity, release string) string {
	return id.Prefixed(release + "-values")
}

// valuesSecret is the Secret N-<release>-values holding values as JSON
// (valid YAML) under ValuesSecretKey.
func valuesSecret(id function.Identity, release string, values Values) (*corev1.Secret, error) {
	raw, err := MarshalValues(values)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: ValuesSecretName(id, release), Namespace: id.Namespace, Labels: id.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{ValuesSecretKey: raw.Raw},
	}, nil
}

// releaseValues is the add-on's defaults, nested when the source is
// Wrapped, deep-merged with the user's override (which is already in the
// source's layout).
func releaseValues(row *Addon, c *Context, src *input.ChartSource) (Values, error) {
	defaults := Values{}
	if row.Defaults != nil {
		if d := row.Defaults(c); d != nil {
			defaults = d
		}
	}
	if src.ValuesLayout == input.LayoutWrapped {
		if len(defaults) > 0 {
			defaults = Wrap(src.WrapperKey, defaults)
		}
		if row.WrapperDefaults != nil {
			defaults = DeepMerge(defaults, row.WrapperDefaults(c, src.WrapperKey))
		}
	}
	ov := Values{}
	if row.Override != nil {
		raw, path := row.Override(&c.Spec.Addons)
		var err error
		if ov, err = DecodeOverride(raw, path); err != nil {
			return nil, err
		}
	}
	return DeepMerge(defaults, ov), nil
}

// BuildHelmRelease turns one row of the add-on table into its HelmRelease
// N-<release> in NS: the tenant kubeconfig Secret, target and
// storage namespace, createNamespace, RetryOnFailure for install and upgrade
// (never remediation by uninstall, which tears down a CNI whose first install
// failed while workers were joining) with unbounded remediation retries,
// interval 5m, timeout
// 10m, dependsOn N-<dep> per the table, the chart from src and values. The
// uninstall runs no chart hooks and does not wait for the deleted objects
// to go: a hook Job needs a schedulable node and a LoadBalancer Service's
// finalizer needs the cloud controller, neither of which a cluster being
// deleted (or one that never got a Ready node) can promise, and a failed
// uninstall is retried by Flux for ever. It returns an error when
// the values do not encode.
func BuildHelmRelease(id function.Identity, row *Addon, a *v1alpha1.Addons, src *input.ChartSource, values Values) (*helmv2.HelmRelease, error) {
	labels := id.Labels() // the release's and its chart template's: only read
	hr := &helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmReleaseAPIVersion, Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      id.Prefixed(row.Release),
			Namespace: id.Namespace,
			Labels:    labels,
		},
		Spec: helmv2.HelmReleaseSpec{
			Interval: releaseInterval,
			// Kamaji's kubeconfig naming the short N.NS.svc: read by
			// helm-controller, a pod of the management cluster whose
			// search path resolves it.
			KubeConfig: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{
				Name: id.KubeconfigSecretName(), Key: function.KubeconfigSecretKey,
			}},
			ReleaseName:      row.HelmReleaseName(),
			TargetNamespace:  row.Namespace,
			StorageNamespace: row.Namespace,
			Timeout:          &releaseTimeout,
			// Retries -1 beside RetryOnFailure, as the chart sets: remediation
			// is consulted by retry count where no strategy applies (an absent
			// release for install, an out-of-sync one for upgrade).
			Install: &helmv2.Install{
				CreateNamespace: true,
				Strategy:        &helmv2.InstallStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure)},
				Remediation:     &helmv2.InstallRemediation{Retries: -1},
			},
			// No upgrade.force: helm-controller v1.5+ (Helm 4) upgrades by
			// server-side apply, which refuses a forced replacement, so
			// every upgrade would fail.
			Upgrade: &helmv2.Upgrade{
				Strategy:    &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure)},
				Remediation: &helmv2.UpgradeRemediation{Retries: -1},
			},
			Uninstall: &helmv2.Uninstall{DisableHooks: true, DisableWait: true},
		},
	}
	if row.KeepCRDs {
		hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{KeepCRDsPatch}}}}
	}
	for _, d := range row.DependsOn(a) {
		hr.Spec.DependsOn = append(hr.Spec.DependsOn, helmv2.DependencyReference{Name: id.Prefixed(d)})
	}
	switch src.Kind {
	case input.KindHelmRepository:
		ref := helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: src.Name, Namespace: src.Namespace}
		if src.URL != "" {
			ref = helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: id.Prefixed(src.Repository)}
		}
		// helm-controller creates the HelmChart from this template, with
		// these labels: the function finds it and composes it for
		// deletion with the cluster (Flux leaves it when a suspended
		// release is deleted).
		hr.Spec.Chart = &helmv2.HelmChartTemplate{
			ObjectMeta: &helmv2.HelmChartTemplateObjectMeta{Labels: labels},
			Spec:       helmv2.HelmChartTemplateSpec{Chart: src.Chart, Version: src.Version, SourceRef: ref},
		}
	case input.KindOCIRepository:
		ref := &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: src.Name, Namespace: src.Namespace}
		if src.URL != "" {
			ref = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: id.Prefixed(row.Release)}
		}
		hr.Spec.ChartRef = ref
	case input.KindExternalArtifact:
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: src.Name, Namespace: src.Namespace}
	default:
		return nil, fmt.Errorf("chart source of %s: unknown kind %q", row.Release, src.Kind)
	}
	if len(values) > 0 {
		raw, err := MarshalValues(values)
		if err != nil {
			return nil, err
		}
		hr.Spec.Values = raw
	}
	return hr, nil
}

// ResourcePolicyKeep is Helm's annotation (and value) that makes an
// uninstall, an upgrade dropping the object, or a failed install's cleanup
// leave the object in place.
const (
	AnnotationResourcePolicy = "helm.sh/resource-policy"
	ResourcePolicyKeep       = "keep"
)

// KeepCRDsPatch is the post-renderer patch that annotates every
// CustomResourceDefinition a release renders with helm.sh/resource-policy:
// keep, so Helm never deletes a tenant's CRDs (and with them every custom
// resource of their kinds; cozystack #3555). A strategic-merge patch with a
// target applies to every object the target selects, whatever name it
// carries.
var KeepCRDsPatch = kustomize.Patch{
	Patch: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: any\n  annotations:\n    " +
		AnnotationResourcePolicy + ": " + ResourcePolicyKeep + "\n",
	Target: &kustomize.Selector{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
}

// managedSource returns the source object the function emits for a managed
// chart source, or nil for a referenced one: HelmRepository
// N-<repository> (composed helmrepository-<repository>) or OCIRepository
// N-<release> (composed ocirepository-<release>).
func managedSource(id function.Identity, release string, src *input.ChartSource, in *input.AddonsInput) *Object {
	if src.URL == "" {
		return nil
	}
	meta := metav1.ObjectMeta{Namespace: id.Namespace, Labels: id.Labels()}
	switch src.Kind {
	case input.KindHelmRepository:
		meta.Name = id.Prefixed(src.Repository)
		repo := &sourcev1.HelmRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: sourceAPIVersion, Kind: sourcev1.HelmRepositoryKind},
			ObjectMeta: meta,
			Spec:       sourcev1.HelmRepositorySpec{URL: src.URL, Interval: *in.SourceInterval},
		}
		if strings.HasPrefix(src.URL, "oci://") {
			repo.Spec.Type = sourcev1.HelmRepositoryTypeOCI
		}
		return &Object{Name: "helmrepository-" + src.Repository, Obj: repo}
	case input.KindOCIRepository:
		meta.Name = id.Prefixed(release)
		return &Object{Name: composedOCIRepositoryName(release), Obj: &sourcev1.OCIRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: sourceAPIVersion, Kind: sourcev1.OCIRepositoryKind},
			ObjectMeta: meta,
			Spec: sourcev1.OCIRepositorySpec{
				URL:       src.URL,
				Reference: &sourcev1.OCIRepositoryRef{Tag: src.Version},
				LayerSelector: &sourcev1.OCILayerSelector{
					MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
					Operation: sourcev1.OCILayerCopy,
				},
				Interval: *in.SourceInterval,
			},
		}}
	}
	return nil
}

// ProxySelector is the selector of the management-cluster Service
// ProxyServiceName: the labels the VM template of a node group with the
// ingress-nginx role carries, which KubeVirt copies onto the VMs'
// virt-launcher pods.
func ProxySelector(id function.Identity) map[string]string {
	return map[string]string{
		function.LabelCAPICluster:               id.Name,
		"node-role.kubernetes.io/ingress-nginx": "",
	}
}

// ProxyServiceName is the management-cluster Service (and primary Ingress)
// of a Proxied ingress: N-app-<digest>, injective across tenants in the
// upstream names ingress-nginx derives from it
// (function.Identity.IngressBackendName).
func ProxyServiceName(id function.Identity) string {
	return id.IngressBackendName(function.IngressRoleApps)
}

// ProxyHTTPIngressName is the canary Ingress that sends plain HTTP to the
// Service's port 80: ProxyServiceName + "-http".
func ProxyHTTPIngressName(id function.Identity) string { return ProxyServiceName(id) + "-http" }

// Ports of the proxy Service: http and https, named by number in the
// Ingresses (ingress-nginx names an upstream <namespace>-<service>-<port
// as written>).
const (
	ProxyHTTPPort  = 80
	ProxyHTTPSPort = 443
)

// proxyService is the proxy Service: http 80 → node port 30000, https
// 443 → 30001 of N's ingress-nginx nodes, each with its appProtocol.
func proxyService(id function.Identity) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: ProxyServiceName(id), Namespace: id.Namespace, Labels: id.Labels()},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: ProxySelector(id),
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, AppProtocol: ptr("http"), Port: ProxyHTTPPort, TargetPort: intstr.FromInt32(ProxyHTTPNodePort)},
				{Name: "https", Protocol: corev1.ProtocolTCP, AppProtocol: ptr("https"), Port: ProxyHTTPSPort, TargetPort: intstr.FromInt32(ProxyHTTPSNodePort)},
			},
		},
	}
}

// Annotations of the proxy Ingresses (ingress-nginx's annotation names;
// each of risk level Low, so none needs snippets or a raised
// annotations-risk-level on the shared controller).
const (
	AnnotationSSLPassthrough = "nginx.ingress.kubernetes.io/ssl-passthrough"
	AnnotationSSLRedirect    = "nginx.ingress.kubernetes.io/ssl-redirect"
	AnnotationCanary         = "nginx.ingress.kubernetes.io/canary"
	AnnotationCanaryWeight   = "nginx.ingress.kubernetes.io/canary-weight"
)

// ProxyHTTPUpstream is the name ingress-nginx gives the upstream of the
// proxy Service's port 80: <namespace>-<service>-<port>.
func ProxyHTTPUpstream(id function.Identity) string {
	return fmt.Sprintf("%s-%s-%d", id.Namespace, ProxyServiceName(id), ProxyHTTPPort)
}

// proxyIngresses are the management-cluster Ingresses of a Proxied
// ingress, one rule per distinct host, each with the single path "/":
//   - the primary, ProxyServiceName → port 443 with ssl-passthrough:
//     ingress-nginx passes TLS by SNI, at layer 4, to the Service of the
//     location "/" (the tenant's HTTPS node port);
//   - the canary, ProxyHTTPIngressName → port 80, weight 100 of 100: every
//     plain-HTTP request of the host's location "/" goes to the canary's
//     upstream (the tenant's HTTP node port). ssl-redirect is off so ACME
//     HTTP-01 challenges and the tenant's own redirects reach its ingress.
//
// Canary routing only acts on requests nginx proxies at layer 7, never on
// passed-through TLS (https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/annotations/#canary).
func proxyIngresses(id function.Identity, class string, hosts []string) (primary, canary *networkingv1.Ingress) {
	pathType := networkingv1.PathTypeImplementationSpecific
	svc := ProxyServiceName(id)
	ingress := func(name string, port int32, annotations map[string]string) *networkingv1.Ingress {
		ing := &networkingv1.Ingress{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: id.Labels(), Annotations: annotations},
			Spec:       networkingv1.IngressSpec{IngressClassName: &class},
		}
		seen := map[string]bool{}
		for _, h := range hosts {
			if seen[h] {
				continue
			}
			seen[h] = true
			ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{
				Host: h,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: svc, Port: networkingv1.ServiceBackendPort{Number: port},
						}},
					}},
				}},
			})
		}
		return ing
	}
	primary = ingress(svc, ProxyHTTPSPort, map[string]string{AnnotationSSLPassthrough: "true", AnnotationSSLRedirect: "false"})
	canary = ingress(ProxyHTTPIngressName(id), ProxyHTTPPort, map[string]string{AnnotationCanary: "true", AnnotationCanaryWeight: "100"})
	return primary, canary
}

// checkSpec applies the cross-field rule of docs/architecture.md that depends on
// the input's chart layout (where the ouroboros override keeps its Gateway
// API switch). The rules of the spec alone are spec.Validate's
// (apis/v1alpha1), run before Render.
func checkSpec(spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput) error {
	a := &spec.Addons
	if !a.GatewayAPI.Enabled {
		src, _ := in.Charts.Source("ouroboros")
		path := addonsPath("ouroboros").Child("valuesOverride")
		ov, err := DecodeOverride(a.Ouroboros.ValuesOverride, path)
		if err != nil {
			return err
		}
		keys := []string{"controller", "gatewayApi", "enabled"}
		if src.ValuesLayout == input.LayoutWrapped {
			keys = append([]string{src.WrapperKey}, keys...)
		}
		if v, ok := Lookup(ov, keys...); ok && Truthy(v) {
			p := path
			for _, k := range keys {
				p = p.Child(k)
			}
			return field.Invalid(p, fmt.Sprint(v),
				"ouroboros Gateway API watching requires addons.gatewayAPI.enabled: true; without the Gateway API CRDs the controller crash-loops")
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

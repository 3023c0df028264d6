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
	composedProxyService = "ingress-nginx-proxy-service"
	composedProxyIngress = "ingress-nginx-proxy-ingress"
)

// ComposedReleaseName is the composed-resource name of a release's
// HelmRelease: addon-<release>.
func ComposedReleaseName(release string) string { return "addon-" + release }

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
// The spec must have passed spec.Validate. It returns a *field.Error naming
// the spec field when an ouroboros override turns Gateway API watching on
// without addons.gatewayAPI.enabled, or a valuesOverride is not an object.
func Render(id function.Identity, spec *v1alpha1.KubernetesClusterSpec, in *input.AddonsInput, suspend bool) ([]Object, error) {
	if err := checkSpec(spec, in); err != nil {
		return nil, err
	}
	c := &Context{ID: id, Spec: spec, Input: in}
	a := &spec.Addons

	// At most a release, a Usage and a source per row, and the proxy's two
	// objects: sized once.
	objs := make([]Object, 0, 3*len(Table)+2)
	var sources, usages []Object
	seenRepo := map[string]bool{}
	for i := range Table {
		row := &Table[i]
		if !row.On(spec) {
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
		if r := in.ReleaseRetryInterval; r != nil {
			hr.Spec.Install.Strategy.RetryInterval = &metav1.Duration{Duration: r.Duration}
			hr.Spec.Upgrade.Strategy.RetryInterval = &metav1.Duration{Duration: r.Duration}
		}
		objs = append(objs, Object{Name: ComposedReleaseName(row.Release), Obj: hr, Release: row.Release, Base: row.Base})
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

	ing := &a.IngressNginx
	if ing.Enabled && ing.ExposeMethod == v1alpha1.ExposeProxied && len(ing.Hosts) > 0 {
		objs = append(objs,
			Object{Name: composedProxyService, Obj: proxyService(id)},
			Object{Name: composedProxyIngress, Obj: proxyIngress(id, in.IngressClassName, ing.Hosts)})
	}
	return objs, nil
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
	if src.ValuesLayout == input.LayoutWrapped && len(defaults) > 0 {
		defaults = Wrap(src.WrapperKey, defaults)
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
// failed while workers were joining), forced upgrades, interval 5m, timeout
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
			KubeConfig: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{
				Name: id.KubeconfigSecretName(), Key: function.KubeconfigSecretKey,
			}},
			ReleaseName:      row.HelmReleaseName(),
			TargetNamespace:  row.Namespace,
			StorageNamespace: row.Namespace,
			Timeout:          &releaseTimeout,
			Install: &helmv2.Install{
				CreateNamespace: true,
				Strategy:        &helmv2.InstallStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure)},
			},
			Upgrade: &helmv2.Upgrade{
				Force:    true,
				Strategy: &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure)},
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
		return &Object{Name: "ocirepository-" + release, Obj: &sourcev1.OCIRepository{
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
// N-ingress-nginx: the labels the VM template of a node group with the
// ingress-nginx role carries, which KubeVirt copies onto the VMs'
// virt-launcher pods.
func ProxySelector(id function.Identity) map[string]string {
	return map[string]string{
		function.LabelCAPICluster:               id.Name,
		"node-role.kubernetes.io/ingress-nginx": "",
	}
}

// Ports of the management-cluster Service N-ingress-nginx: http and
// https, as the Ingress N-ingress-nginx names them by number (ingress-nginx
// names an upstream <namespace>-<service>-<port as written>).
const (
	ProxyHTTPPort  = 80
	ProxyHTTPSPort = 443
)

// proxyService is the management-cluster Service N-ingress-nginx: http 80 →
// node port 30000, https 443 → 30001 of N's ingress-nginx nodes, each with
// its appProtocol.
func proxyService(id function.Identity) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: id.Prefixed("ingress-nginx"), Namespace: id.Namespace, Labels: id.Labels()},
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

// Annotations of the Ingress N-ingress-nginx (ingress-nginx's annotation
// names).
const (
	AnnotationSSLPassthrough       = "nginx.ingress.kubernetes.io/ssl-passthrough"
	AnnotationBackendProtocol      = "nginx.ingress.kubernetes.io/backend-protocol"
	AnnotationSSLRedirect          = "nginx.ingress.kubernetes.io/ssl-redirect"
	AnnotationConfigurationSnippet = "nginx.ingress.kubernetes.io/configuration-snippet"
)

// ProxyHTTPUpstream is the name ingress-nginx gives the upstream of the
// Service N-ingress-nginx's port 80: <namespace>-<service>-<port>.
func ProxyHTTPUpstream(id function.Identity) string {
	return fmt.Sprintf("%s-%s-%d", id.Namespace, id.Prefixed("ingress-nginx"), ProxyHTTPPort)
}

// proxyIngress is the management-cluster Ingress N-ingress-nginx. Each host
// has two paths "/": the Service's port 443 first (TLS is passed through to
// the tenant's HTTPS node port by SNI) and port 80, which only makes
// ingress-nginx create the port-80 upstream. nginx chooses the backend by
// scheme (backend-protocol AUTO_HTTP); the snippet sends plain HTTP to the
// port-80 upstream, and ssl-redirect is off so ACME HTTP-01 challenges and
// the tenant's own redirects reach its ingress.
func proxyIngress(id function.Identity, class string, hosts []string) *networkingv1.Ingress {
	pathType := networkingv1.PathTypeImplementationSpecific
	upstream := ProxyHTTPUpstream(id)
	svc := id.Prefixed("ingress-nginx")
	ing := &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: svc, Namespace: id.Namespace, Labels: id.Labels(),
			Annotations: map[string]string{
				AnnotationSSLPassthrough:  "true",
				AnnotationBackendProtocol: "AUTO_HTTP",
				AnnotationSSLRedirect:     "false",
				AnnotationConfigurationSnippet: "if ($scheme = http) {\n" +
					"  set $proxy_upstream_name \"" + upstream + "\";\n" +
					"  set $proxy_host $proxy_upstream_name;\n" +
					"}\n",
			},
		},
		Spec: networkingv1.IngressSpec{IngressClassName: &class},
	}
	path := func(port int32) networkingv1.HTTPIngressPath {
		return networkingv1.HTTPIngressPath{
			Path: "/", PathType: &pathType,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: svc, Port: networkingv1.ServiceBackendPort{Number: port},
			}},
		}
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
				Paths: []networkingv1.HTTPIngressPath{path(ProxyHTTPSPort), path(ProxyHTTPPort)},
			}},
		})
	}
	return ing
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

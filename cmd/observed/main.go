// Command observed writes the composed resources of a live tenant cluster
// into a directory, one YAML file each, in the form `make preview
// OBSERVED=<dir>` reads: the objects the XR's resource references name
// (spec.resourceRefs of a claim's XKubernetesCluster, spec.crossplane.resourceRefs
// of a TenantCluster; crossplane-runtime v2.4
// pkg/resource/unstructured/composite/composite.go:251-261), read with the
// kubeconfig of KUBECONFIG or ~/.kube/config. `make observed` runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/composite"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

type cli struct {
	Name      string `help:"Name of the KubernetesCluster claim or TenantCluster." required:""`
	Namespace string `help:"Its namespace."                                       required:""`
	Out       string `help:"Directory to write the composed resources to (created; must hold no YAML file)." required:""`
	XROut     string `help:"Also write the XR (without status) to this file, to edit for make preview." name:"xr-out"`
}

func main() {
	var c cli
	kong.Parse(&c, kong.Name("observed"),
		kong.Description("Write a live tenant cluster's composed resources into a directory for make preview OBSERVED=."),
		kong.UsageOnError())
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fail(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		fail(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	n, err := run(context.Background(), dyn, mapper, c.Name, c.Namespace, c.Out, c.XROut, os.Stderr)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "observed: wrote %d composed resources to %s\n", n, c.Out) //nolint:errcheck // diagnostics
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "observed: %v\n", err) //nolint:errcheck // exiting
	os.Exit(1)
}

// The resources of the kinds a tenant creates.
var (
	claims         = v1alpha1.GroupVersion.WithResource("kubernetesclusters")
	composites     = v1alpha1.GroupVersion.WithResource("xkubernetesclusters")
	tenantClusters = v1alpha1.GroupVersion.WithResource("tenantclusters")
)

// composite finds the XR of name in namespace: the XKubernetesCluster a
// KubernetesCluster claim's spec.resourceRef names, else the TenantCluster.
func compositeOf(ctx context.Context, dyn dynamic.Interface, name, namespace string) (*composite.Unstructured, error) {
	cm, err := dyn.Resource(claims).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		xrName, _, _ := unstructured.NestedString(cm.Object, "spec", "resourceRef", "name")
		if xrName == "" {
			return nil, fmt.Errorf("%s %s/%s is not bound to an XR yet (no spec.resourceRef.name)", v1alpha1.ClaimKind, namespace, name)
		}
		u, err := dyn.Resource(composites).Get(ctx, xrName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s %s of %s %s/%s: %w", v1alpha1.CompositeKind, xrName, v1alpha1.ClaimKind, namespace, name, err)
		}
		return &composite.Unstructured{Unstructured: *u, Schema: composite.SchemaLegacy}, nil
	case !kerrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return nil, err
	}
	u, err := dyn.Resource(tenantClusters).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if kerrors.IsNotFound(err) {
		return nil, fmt.Errorf("neither a %s nor a %s %s/%s exists", v1alpha1.ClaimKind, v1alpha1.NamespacedKind, namespace, name)
	}
	if err != nil {
		return nil, err
	}
	return &composite.Unstructured{Unstructured: *u, Schema: composite.SchemaModern}, nil
}

// run writes the composed resources of name in namespace into out and
// returns how many; a reference whose object is gone is reported on warn
// and left out.
func run(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, name, namespace, out, xrOut string, warn io.Writer) (int, error) {
	if err := emptyOfYAML(out); err != nil {
		return 0, err
	}
	xr, err := compositeOf(ctx, dyn, name, namespace)
	if err != nil {
		return 0, err
	}
	refs := xr.GetResourceReferences()
	if len(refs) == 0 {
		return 0, fmt.Errorf("%s %s has no resource references: nothing composed yet", xr.GetKind(), xr.GetName())
	}
	var objs []*unstructured.Unstructured
	for _, ref := range refs {
		o, err := get(ctx, dyn, mapper, ref, xr.GetNamespace())
		if kerrors.IsNotFound(err) {
			fmt.Fprintf(warn, "observed: %s %s/%s is referenced but does not exist; left out\n", ref.Kind, ref.Namespace, ref.Name) //nolint:errcheck // diagnostics
			continue
		}
		if err != nil {
			return 0, err
		}
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool { return fileName(objs[i]) < fileName(objs[j]) })
	if err := os.MkdirAll(out, 0o750); err != nil {
		return 0, err
	}
	for _, o := range objs {
		if err := writeYAML(filepath.Join(out, fileName(o)), o.Object); err != nil {
			return 0, err
		}
	}
	if xrOut != "" {
		x := xr.DeepCopy()
		unstructured.RemoveNestedField(x.Object, "status")
		unstructured.RemoveNestedField(x.Object, "metadata", "managedFields")
		if err := writeYAML(xrOut, x.Object); err != nil {
			return 0, err
		}
	}
	return len(objs), nil
}

// get reads the object ref names; a namespaced kind without a namespace
// in the reference lives in the XR's namespace (xrNS).
func get(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, ref corev1.ObjectReference, xrNS string) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("resource reference %s %s: %w", ref.Kind, ref.Name, err)
	}
	m, err := mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("resource reference %s %s: %w", ref.Kind, ref.Name, err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := ref.Namespace
		if ns == "" {
			ns = xrNS
		}
		ri = dyn.Resource(m.Resource).Namespace(ns)
	}
	o, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	// As kubectl get -o yaml shows it.
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	return o, nil
}

// fileName is <kind>.<group>_<namespace>_<name>.yaml (the kind alone for
// the core group, no namespace part for a cluster-scoped object).
func fileName(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	parts := []string{strings.ToLower(gvk.Kind)}
	if gvk.Group != "" {
		parts[0] += "." + gvk.Group
	}
	if o.GetNamespace() != "" {
		parts = append(parts, o.GetNamespace())
	}
	return strings.Join(append(parts, o.GetName()), "_") + ".yaml"
}

// emptyOfYAML refuses a directory holding YAML files: make preview would
// read them as observed too.
func emptyOfYAML(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			return fmt.Errorf("%s holds %s already: make preview would read it too; name an empty or new directory", dir, e.Name())
		}
	}
	return nil
}

func writeYAML(path string, obj map[string]any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

package v1alpha1

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Names of the composite resource, its claim and their XRD.
const (
	CompositePlural = "xkubernetesclusters"
	ClaimPlural     = "kubernetesclusters"
	// XRDName is the CompositeResourceDefinition's (and the default
	// Composition's) name.
	XRDName = CompositePlural + "." + Group

	NamespacedPlural = "tenantclusters"
	// NamespacedXRDName is the name of the v2 XRD of NamespacedKind (and
	// of its default Composition).
	NamespacedXRDName = NamespacedPlural + "." + Group
)

// ConnectionSecretKeys are the keys of Kamaji's admin kubeconfig Secret that
// are published as the claim's connection secret.
var ConnectionSecretKeys = []string{"admin.conf", "admin.svc", "super-admin.conf", "super-admin.svc"}

// CompositeResourceDefinition builds the Crossplane XRD
// (apiextensions.crossplane.io/v1) from the CRD controller-gen generates for
// XKubernetesCluster: the spec and status schema are taken unchanged, and
// the printer columns, short names and claim names are added. The result is a
// plain map so it marshals with sorted keys (deterministic YAML). It returns
// an error when the CRD has no v1alpha1 schema.
func CompositeResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	version, err := xrdVersion(crd, clusterColumns, ClusterQuantityBounds, ruleTables())
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1",
		"kind":       "CompositeResourceDefinition",
		"metadata": map[string]any{
			"name":   XRDName,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "tenantkube"},
		},
		"spec": map[string]any{
			"group": Group,
			"names": map[string]any{
				"kind": CompositeKind, "listKind": CompositeKind + "List", "plural": CompositePlural,
				"singular": "xkubernetescluster", "shortNames": []string{"xkc"},
				"categories": []string{"crossplane", "composite", "tenantkube"},
			},
			"claimNames": map[string]any{
				"kind": ClaimKind, "listKind": ClaimKind + "List", "plural": ClaimPlural,
				"singular": "kubernetescluster", "shortNames": []string{"kc"},
				"categories": []string{"crossplane", "claim", "tenantkube"},
			},
			"connectionSecretKeys":  ConnectionSecretKeys,
			"defaultCompositionRef": map[string]any{"name": XRDName},
			"versions":              []map[string]any{version},
		},
	}, nil
}

// NamespacedCompositeResourceDefinition builds the Crossplane v2 XRD
// (apiextensions.crossplane.io/v2, scope Namespaced) of TenantCluster from
// the same CRD and the same spec and status schema as
// CompositeResourceDefinition: one Go type, two XRDs. A v2 XRD offers no
// claim and no connection secret (Crossplane's XRD CRD rejects
// claimNames and connectionSecretKeys outside scope LegacyCluster), and
// Crossplane adds its own machinery under spec.crossplane, which the
// schema leaves to it.
func NamespacedCompositeResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	version, err := xrdVersion(crd, clusterColumns, ClusterQuantityBounds, ruleTables())
	if err != nil {
		return nil, err
	}
	return v2XRD(NamespacedXRDName, "Namespaced", map[string]any{
		"kind": NamespacedKind, "listKind": NamespacedKind + "List", "plural": NamespacedPlural,
		"singular": "tenantcluster", "shortNames": []string{"tc"},
		"categories": []string{"crossplane", "composite", "tenantkube"},
	}, version), nil
}

// clusterColumns are the printer columns of the cluster XRDs.
var clusterColumns = []map[string]any{
	{"name": "VERSION", "type": "string", "jsonPath": ".status.version", "description": "Patch version the control plane runs."},
	{"name": "NODES", "type": "string", "jsonPath": ".status.nodes", "description": "Ready worker nodes / worker nodes, over all node groups."},
	{"name": "ENDPOINT", "type": "string", "jsonPath": ".status.controlPlane.endpoint", "description": "Tenant API server URL."},
}

// xrdVersion is an XRD's one version: the spec and status schema of the
// CRD's v1alpha1 version, the CEL rules of the rule tables, then the
// quantity bounds', added to the spec, with the printer columns. It
// returns an error when the CRD has no v1alpha1 schema or the spec schema
// has no object a rule or bound names.
func xrdVersion(crd *apiextensionsv1.CustomResourceDefinition, columns []map[string]any, bounds map[string][]QuantityBound, tables []rules) (map[string]any, error) {
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == Version && v.Schema != nil {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		return nil, fmt.Errorf("CRD %s has no %s schema", crd.Name, Version)
	}
	spec, err := withTableRules(schema.Properties["spec"], tables)
	if err != nil {
		return nil, err
	}
	if spec, err = withQuantityRules(spec, bounds); err != nil {
		return nil, err
	}
	root := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec":   spec,
			"status": schema.Properties["status"],
		},
	}
	return map[string]any{
		"name":                     Version,
		"served":                   true,
		"referenceable":            true,
		"additionalPrinterColumns": columns,
		"schema":                   map[string]any{"openAPIV3Schema": root},
	}, nil
}

// v2XRD is a Crossplane v2 XRD (apiextensions.crossplane.io/v2) named name
// with the given scope, names and one version, whose default Composition
// has the XRD's name.
func v2XRD(name, scope string, names, version map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v2",
		"kind":       "CompositeResourceDefinition",
		"metadata": map[string]any{
			"name":   name,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "tenantkube"},
		},
		"spec": map[string]any{
			"scope":                 scope,
			"group":                 Group,
			"names":                 names,
			"defaultCompositionRef": map[string]any{"name": name},
			"versions":              []map[string]any{version},
		},
	}
}

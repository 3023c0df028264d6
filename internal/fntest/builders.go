package fntest

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Call describes one RunFunctionRequest in YAML: the observed XR's spec,
// the step's input, and the observed, desired and required objects.
type Call struct {
	// Namespace and Name are the claim's (default tenant-demo and demo).
	Namespace, Name string
	// UID is the XR's metadata.uid (default XRUID).
	UID string
	// Namespaced makes the XR a namespaced TenantCluster named Name in
	// Namespace, without a claim (NamespacedXR).
	Namespaced bool
	// Spec is the XR's spec ("" for none).
	Spec string
	// XRStatus is the observed XR's status ("" for none).
	XRStatus string
	// Input is the step's input ("" for none).
	Input string
	// Observed are the observed composed resources, by composed-resource
	// name.
	Observed map[string]string
	// Desired are composed resources earlier steps desired, by
	// composed-resource name; DesiredXR is the desired XR ("" for none).
	Desired   map[string]string
	DesiredXR string
	// Required are the required resources by requirement key; a key with
	// no objects is a requirement Crossplane answered with nothing.
	Required map[string][]string
	// NoManagementNamespace leaves a claim's management namespace out of
	// the observed state (a cluster's first reconcile). Otherwise a
	// claim's request observes it, as every reconcile after the first.
	NoManagementNamespace bool
}

// YAMLStruct converts an object given as YAML to a Struct; it fails t when
// the YAML is no object.
func YAMLStruct(t testing.TB, y string) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatalf("bad test object: %v", err)
	}
	return s
}

// Request builds the RunFunctionRequest c describes; it fails t on bad
// YAML.
func (c Call) Request(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	ns, n := c.Namespace, c.Name
	if ns == "" {
		ns = ClaimNamespace
	}
	if n == "" {
		n = ClaimName
	}
	var spec map[string]any
	if c.Spec != "" {
		spec = YAMLStruct(t, c.Spec).AsMap()
	}
	xrMap := TenantXR(ns, n, spec)
	if c.Namespaced {
		xrMap = NamespacedXR(ns, n, spec)
	}
	uid := c.UID
	if uid == "" {
		uid = XRUID
	}
	xrMap["metadata"].(map[string]any)["uid"] = uid
	if c.XRStatus != "" {
		xrMap["status"] = YAMLStruct(t, c.XRStatus).AsMap()
	}
	xr, err := Struct(xrMap)
	if err != nil {
		t.Fatalf("bad test spec: %v", err)
	}
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
		Desired:  &fnv1.State{},
	}
	if c.Input != "" {
		req.Input = YAMLStruct(t, c.Input)
	}
	if len(c.Observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, y := range c.Observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: YAMLStruct(t, y)}
		}
	}
	if _, ok := c.Observed[function.ManagementNamespaceResourceName]; !ok && !c.Namespaced && !c.NoManagementNamespace {
		if req.Observed.Resources == nil {
			req.Observed.Resources = map[string]*fnv1.Resource{}
		}
		req.Observed.Resources[function.ManagementNamespaceResourceName] = &fnv1.Resource{Resource: ManagementNamespaceObject(ns, n)}
	}
	if len(c.Desired) > 0 {
		req.Desired.Resources = map[string]*fnv1.Resource{}
		for name, y := range c.Desired {
			req.Desired.Resources[name] = &fnv1.Resource{Resource: YAMLStruct(t, y)}
		}
	}
	if c.DesiredXR != "" {
		req.Desired.Composite = &fnv1.Resource{Resource: YAMLStruct(t, c.DesiredXR)}
	}
	if len(c.Required) > 0 {
		req.RequiredResources = map[string]*fnv1.Resources{}
		for key, objs := range c.Required {
			items := &fnv1.Resources{}
			for _, y := range objs {
				items.Items = append(items.Items, &fnv1.Resource{Resource: YAMLStruct(t, y)})
			}
			req.RequiredResources[key] = items
		}
	}
	return req
}

// Run runs fn on c's request as served (fntest.Run) and returns the
// response as Crossplane receives it; it fails t when fn errors or the
// response does not encode.
func (c Call) Run(t testing.TB, fn Runner) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := Run(fn, c.Request(t))
	if err != nil {
		t.Fatal(err)
	}
	return rsp
}

// Read is the read side of c's request and its tenant, as a plan gets
// them; it fails t when the XR does not decode.
func (c Call) Read(t testing.TB) (*function.Request, *function.Cluster) {
	t.Helper()
	r := function.NewRequest(c.Request(t))
	tenant, err := r.Cluster()
	if err != nil {
		t.Fatalf("reading the tenant: %v", err)
	}
	return r, tenant
}

// NoFatal fails t when rsp carries a Fatal result.
func NoFatal(t testing.TB, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if m := FatalMessage(rsp); m != "" {
		t.Fatalf("unexpected Fatal result: %s", m)
	}
}

// ManagementNamespaceObject is the observed management namespace of the
// claim N in NS, as the control-plane step composes it.
func ManagementNamespaceObject(ns, n string) *structpb.Struct {
	id := function.Identity{Namespace: ns, Name: n}
	labels := map[string]any{}
	for k, v := range id.ManagementNamespaceLabels() {
		labels[k] = v
	}
	s, err := structpb.NewStruct(map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ManagementNamespace(ns, n), "labels": labels}})
	if err != nil {
		panic(err)
	}
	return s
}

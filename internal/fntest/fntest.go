// Package fntest helps the tests of the tenantkube composition functions:
// it builds RunFunctionRequests from YAML and checks the invariants every
// function keeps on any input (no panic, no hang, errors only as Fatal
// results, never a smaller desired state).
package fntest

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/platform"
)

// Claim labels used by XR returns.
const (
	ClaimName      = "demo"
	ClaimNamespace = "tenant-demo"
)

// XRUID is the metadata.uid of the XR a Call builds unless it sets one.
const XRUID = "5d6f2a7e-3b1c-4e8a-9f04-c2b7d1e0a913"

// XR returns the observed composite resource of claim demo in tenant-demo
// with the given spec (any JSON-like value; nil for none).
func XR(spec any) map[string]any {
	xr := map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1",
		"kind":       "XKubernetesCluster",
		"metadata": map[string]any{
			"name": ClaimName + "-x7k2p",
			"labels": map[string]any{
				"crossplane.io/claim-name":      ClaimName,
				"crossplane.io/claim-namespace": ClaimNamespace,
			},
		},
	}
	if spec != nil {
		xr["spec"] = spec
	}
	return xr
}

// Struct converts a JSON-like map to a structpb.Struct. It returns an error
// for values structpb cannot hold.
func Struct(m map[string]any) (*structpb.Struct, error) { return structpb.NewStruct(m) }

// RequestFromYAML builds a request whose observed XR has the spec given as
// YAML. It returns an error when the YAML does not decode to an object.
func RequestFromYAML(specYAML string) (*fnv1.RunFunctionRequest, error) {
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		return nil, err
	}
	xr, err := Struct(XR(spec))
	if err != nil {
		return nil, err
	}
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}, nil
}

// FatalMessage returns the message of the first Fatal result, or "".
func FatalMessage(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// Runner is a function's RunFunction.
type Runner func(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)

// CheckInvariants runs fn on req as served (Run), and returns an error
// when it breaks an invariant: it panics, takes longer than timeout,
// returns a Go error instead of a Fatal result, returns no response, or
// returns a desired state that lacks a composed resource the request's desired state
// held (an earlier step's) — whatever the input.
func CheckInvariants(fn Runner, req *fnv1.RunFunctionRequest, timeout time.Duration) (err error) {
	before := map[string]bool{}
	for k := range req.GetDesired().GetResources() {
		before[k] = true
	}
	type result struct {
		rsp *fnv1.RunFunctionResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		rsp, err := Run(fn, req)
		done <- result{rsp: rsp, err: err}
	}()
	select {
	case <-time.After(timeout):
		return fmt.Errorf("RunFunction did not return within %s", timeout)
	case r := <-done:
		if r.err != nil {
			return fmt.Errorf("RunFunction returned an error instead of a Fatal result: %w", r.err)
		}
		if r.rsp == nil {
			return fmt.Errorf("RunFunction returned no response")
		}
		for k := range before {
			if _, ok := r.rsp.GetDesired().GetResources()[k]; !ok {
				return fmt.Errorf("desired composed resource %q of an earlier step was dropped", k)
			}
		}
		return nil
	}
}

// Run runs fn once on req as a served function receives it, and returns
// the response as Crossplane receives it: each encoded and decoded by
// protobuf-go, as gRPC's codec does. It returns fn's error, an error for a
// response that does not encode, and
// an error for a response with a TTL under a minute: Crossplane v2.4
// requeues an XR after the shortest non-zero TTL of its pipeline, which
// overrides the platform's --poll-interval (function.ResponseTTL); a TTL is
// only for a change the clock brings (function.Plan.RunAgainAfter).
func Run(fn Runner, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	served := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(b, served); err != nil {
		return nil, fmt.Errorf("decoding the request as served: %w", err)
	}
	rsp, err := fn(context.Background(), served)
	if err != nil {
		return nil, err
	}
	if b, err = proto.Marshal(rsp); err != nil {
		return nil, fmt.Errorf("encoding the response: %w", err)
	}
	rsp = &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, rsp); err != nil {
		return nil, fmt.Errorf("decoding the response: %w", err)
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != 0 && ttl < time.Minute {
		return rsp, fmt.Errorf("response TTL %s, want none or at least a minute", ttl)
	}
	return rsp, nil
}

// WithPlatformSettings adds to req the platform settings as Crossplane
// sends them: the EnvironmentConfig tenantkube with the data given as YAML
// under the requirement key the functions ask for.
func WithPlatformSettings(req *fnv1.RunFunctionRequest, dataYAML string) error {
	data := map[string]any{}
	if err := yaml.Unmarshal([]byte(dataYAML), &data); err != nil {
		return err
	}
	obj, err := Struct(map[string]any{
		"apiVersion": platform.APIVersion, "kind": platform.Kind,
		"metadata": map[string]any{"name": platform.Name}, "data": data,
	})
	if err != nil {
		return err
	}
	if req.RequiredResources == nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
	}
	req.RequiredResources[platform.RequirementKey] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: obj}}}
	return nil
}

// TenantXR returns the observed composite resource of claim n in namespace
// ns with the given spec (any JSON-like value; nil for none).
func TenantXR(ns, n string, spec any) map[string]any {
	xr := XR(spec)
	xr["metadata"] = map[string]any{
		"name":   n + "-x7k2p",
		"labels": map[string]any{"crossplane.io/claim-name": n, "crossplane.io/claim-namespace": ns},
	}
	return xr
}

// NamespacedXR returns the observed namespaced composite resource
// (TenantCluster) n in namespace ns with the given spec (nil for none).
func NamespacedXR(ns, n string, spec any) map[string]any {
	xr := XR(spec)
	xr["apiVersion"] = "tenantkube.io/v1alpha1"
	xr["kind"] = "TenantCluster"
	xr["metadata"] = map[string]any{"name": n, "namespace": ns}
	return xr
}

// ClusterScoped names the cluster-scoped kinds a function may compose, by
// "<apiVersion group>/<kind>", with the name each must have for tenant
// (ns, n).
type ClusterScoped map[string]func(ns, n string) string

// ManagementNamespace is the claim API's management namespace of tenant
// (ns, n), worked out here from its definition (docs/architecture.md,
// Names): "tenantkube-" and the first 128 bits of SHA-256("mgmt/<NS>/<N>")
// in lower-case unpadded base32.
func ManagementNamespace(ns, n string) string {
	sum := sha256.Sum256([]byte("mgmt/" + ns + "/" + n))
	return "tenantkube-" + strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString(sum[:16]), "="))
}

// CheckConfined returns an error unless every composed resource of rsp's
// desired state beside those of before (an earlier step's) is an object of
// namespace ns (or, with management, of ManagementNamespace(ns, n)), or of
// a kind of clusterScoped carrying exactly the name it gives for (ns, n) —
// what keeps a tenant inside its namespace and its names outside it its
// own. A response with a Fatal result composes nothing, so it passes.
func CheckConfined(rsp *fnv1.RunFunctionResponse, before map[string]bool, ns, n string, management bool, clusterScoped ClusterScoped) error {
	if FatalMessage(rsp) != "" {
		return nil
	}
	for name := range rsp.GetDesired().GetResources() {
		if before[name] {
			continue
		}
		obj := rsp.GetDesired().GetResources()[name].GetResource()
		apiVersion := obj.GetFields()["apiVersion"].GetStringValue()
		kind := obj.GetFields()["kind"].GetStringValue()
		meta := obj.GetFields()["metadata"].GetStructValue().GetFields()
		objNS, objName := meta["namespace"].GetStringValue(), meta["name"].GetStringValue()
		group := apiVersion
		if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
			group = apiVersion[:i]
		} else {
			group = ""
		}
		if want, ok := clusterScoped[group+"/"+kind]; ok {
			if objNS != "" || objName != want(ns, n) {
				return fmt.Errorf("%s: cluster-scoped %s %s/%s of tenant (%s, %s), want the name %q", name, kind, objNS, objName, ns, n, want(ns, n))
			}
			continue
		}
		if objNS != ns && (!management || objNS != ManagementNamespace(ns, n)) {
			return fmt.Errorf("%s: %s %s lands in namespace %q, not the tenant's %q", name, kind, objName, objNS, ns)
		}
	}
	return nil
}

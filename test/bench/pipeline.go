package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// Runner runs one pipeline step's function.
type Runner func(ctx context.Context, step string, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)

// maxIterations is Crossplane's MaxRequirementsIterations: how often a
// step is called again while its requirements change.
const maxIterations = 5

// StepInputs reads each step's input from package/composition.yaml, the
// Composition the Configuration package ships.
func StepInputs() (map[string]*structpb.Struct, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "package", "composition.yaml"))
	if err != nil {
		return nil, err
	}
	var comp struct {
		Spec struct {
			Pipeline []struct {
				Step  string         `json:"step"`
				Input map[string]any `json:"input"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &comp); err != nil {
		return nil, err
	}
	out := map[string]*structpb.Struct{}
	for _, p := range comp.Spec.Pipeline {
		if p.Input == nil {
			continue
		}
		s, err := structpb.NewStruct(p.Input)
		if err != nil {
			return nil, fmt.Errorf("step %s input: %w", p.Step, err)
		}
		out[p.Step] = s
	}
	for _, s := range Steps {
		if _, ok := out[s]; !ok {
			return nil, fmt.Errorf("package/composition.yaml has no input for step %q", s)
		}
	}
	return out, nil
}

// Cluster is what a fake management cluster holds for required-resource
// lookups.
type Cluster []*structpb.Struct

// Fetch resolves a selector as Crossplane does: by kind and apiVersion, in
// the namespace when one is given, by name or by labels. Nothing found is an
// empty Resources (the requirement answered, none found).
func (c Cluster) Fetch(sel *fnv1.ResourceSelector) *fnv1.Resources {
	out := &fnv1.Resources{}
	for _, o := range c {
		f := o.GetFields()
		md := f["metadata"].GetStructValue().GetFields()
		if f["apiVersion"].GetStringValue() != sel.GetApiVersion() || f["kind"].GetStringValue() != sel.GetKind() {
			continue
		}
		if sel.Namespace != nil && md["namespace"].GetStringValue() != sel.GetNamespace() {
			continue
		}
		switch {
		case sel.GetMatchName() != "":
			if md["name"].GetStringValue() != sel.GetMatchName() {
				continue
			}
		case sel.GetMatchLabels() != nil:
			labels := md["labels"].GetStructValue().GetFields()
			match := true
			for k, v := range sel.GetMatchLabels().GetLabels() {
				if labels[k].GetStringValue() != v {
					match = false
				}
			}
			if !match {
				continue
			}
		}
		out.Items = append(out.Items, &fnv1.Resource{Resource: o})
	}
	return out
}

// Reconcile is one run of the whole pipeline.
type Reconcile struct {
	// Requests and Responses are each step's final call, by step.
	Requests  map[string]*fnv1.RunFunctionRequest
	Responses map[string]*fnv1.RunFunctionResponse
	// Calls is how many calls each step took (1 in steady state).
	Calls map[string]int
	// Desired is the pipeline's desired state: the last step's.
	Desired *fnv1.State
	// Requirements are each step's last requirements, which Crossplane
	// seeds into the step's first request next reconcile.
	Requirements map[string]*fnv1.Requirements
	// Fatal is the first Fatal message and its step, if any.
	Fatal, FatalStep string
}

// RunPipeline runs the steps once, as Crossplane 2.4's function composer
// does: an empty desired state and context to start, each step's desired
// state and context fed to the next, every step given the same observed
// state and its input; each step's first request is seeded with the
// resources its requirements of the previous reconcile (seed) select, and
// a step whose requirements are not yet met is called again with them.
// It stops at the first Fatal result.
func RunPipeline(ctx context.Context, run Runner, inputs map[string]*structpb.Struct, observed *fnv1.State, cluster Cluster, seed map[string]*fnv1.Requirements) (*Reconcile, error) {
	rec := &Reconcile{
		Requests: map[string]*fnv1.RunFunctionRequest{}, Responses: map[string]*fnv1.RunFunctionResponse{},
		Calls: map[string]int{}, Requirements: map[string]*fnv1.Requirements{},
	}
	d := &fnv1.State{}
	fctx := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for _, step := range Steps {
		req := &fnv1.RunFunctionRequest{Observed: observed, Desired: d, Context: fctx, Input: inputs[step]}
		req.RequiredResources = map[string]*fnv1.Resources{}
		for name, sel := range seed[step].GetResources() {
			req.RequiredResources[name] = cluster.Fetch(sel)
		}
		req.Meta = &fnv1.RequestMeta{Tag: Tag(req), Capabilities: capabilities}

		var rsp *fnv1.RunFunctionResponse
		var last *fnv1.Requirements
		for i := 0; ; i++ {
			if i > maxIterations {
				return nil, fmt.Errorf("step %s: requirements did not stabilise after %d calls", step, i)
			}
			// Each call gets its own copy: the function answers with the
			// desired state it was given (response.To), so a retried call
			// must not see the previous call's additions.
			call := proto.Clone(req).(*fnv1.RunFunctionRequest)
			var err error
			rsp, err = run(ctx, step, call)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", step, err)
			}
			rec.Calls[step]++
			if msg := FatalOf(rsp); msg != "" {
				rec.Fatal, rec.FatalStep = msg, step
				rec.Requests[step], rec.Responses[step] = req, rsp
				return rec, nil
			}
			reqs := rsp.GetRequirements()
			if proto.Equal(reqs, last) {
				break
			}
			next := map[string]*fnv1.Resources{}
			for name, sel := range reqs.GetResources() {
				next[name] = cluster.Fetch(sel)
			}
			if i == 0 && resourcesEqual(req.GetRequiredResources(), next) {
				break
			}
			last = reqs
			req.RequiredResources = next
			req.Meta = &fnv1.RequestMeta{Tag: Tag(req), Capabilities: capabilities}
		}
		rec.Requests[step], rec.Responses[step] = req, rsp
		rec.Requirements[step] = rsp.GetRequirements()
		d = rsp.GetDesired()
		if d == nil {
			d = &fnv1.State{}
		}
		fctx = rsp.GetContext()
	}
	rec.Desired = d
	return rec, nil
}

func resourcesEqual(a, b map[string]*fnv1.Resources) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !proto.Equal(v, w) {
			return false
		}
	}
	return true
}

// capabilities are what Crossplane 2.4 advertises to functions.
var capabilities = []fnv1.Capability{
	fnv1.Capability_CAPABILITY_CAPABILITIES,
	fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES,
	fnv1.Capability_CAPABILITY_CREDENTIALS,
	fnv1.Capability_CAPABILITY_CONDITIONS,
	fnv1.Capability_CAPABILITY_REQUIRED_SCHEMAS,
}

// Tag is the request's cache tag as Crossplane computes it: the SHA-256 of
// its deterministic wire form.
func Tag(req *fnv1.RunFunctionRequest) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

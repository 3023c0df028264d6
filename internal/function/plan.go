package function

import (
	"errors"
	"fmt"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Plan is what a function's pure plan computes from the tenant spec, its
// input and the observed state; Write turns it into the response.
type Plan struct {
	// Composed are the composed resources this function desires.
	Composed []Composed
	// Kept are observed composed resources put back into the desired
	// state unchanged, because this call cannot compute them (a required
	// resource has not arrived): Crossplane would delete them otherwise.
	Kept []Kept
	// Status are keys of the XR's status, each a JSON-like or typed value
	// (marshalled with encoding/json); other status keys are left as
	// earlier steps set them.
	Status map[string]any
	// ConnectionDetails are added to the XR's connection details.
	ConnectionDetails map[string][]byte
	// Conditions are set on the XR and its claim, in order.
	Conditions []Condition
	// Context are keys of the pipeline's context set for the later steps,
	// each a typed value (marshalled with encoding/json).
	Context map[string]any
	// Warnings are Warning results on the XR and its claim, in order.
	Warnings []Warning
	// Requirements are the required resources asked for the next call,
	// by key.
	Requirements map[string]*fnv1.ResourceSelector
	// RunAgainAfter, when positive, is the response's TTL: the XR is
	// reconciled again after it although nothing it watches changed (a
	// change driven by the clock, such as the next backup slot); steps
	// ask through RunAgainWithin, so the earliest ask holds.
	RunAgainAfter time.Duration
}

// Composed is one composed resource of a Plan.
type Composed struct {
	// Name is the composed-resource name.
	Name string
	// Object is the typed object (a struct with TypeMeta and ObjectMeta,
	// or a JSON-like map).
	Object any
	// Ready is the rule reading its readiness from the observed state;
	// nil leaves readiness to Crossplane (READY_UNSPECIFIED).
	Ready Readiness
}

// Kept names an observed composed resource kept unchanged, less the dotted
// field paths in Omit (e.g. "spec.replicas", owned by cluster-autoscaler),
// with readiness Ready (READY_UNSPECIFIED leaves it to Crossplane).
type Kept struct {
	Name  string
	Omit  []string
	Ready fnv1.Ready
}

// Condition is a condition of the XR and its claim.
type Condition struct {
	Type    string
	True    bool
	Reason  string
	Message string
}

// Warning is a Warning result shown on the XR and its claim.
type Warning struct {
	Reason  string
	Message string
}

// Readiness reads the readiness of the composed resource called name from
// the observed state.
type Readiness func(r *Request, name string) fnv1.Ready

// Readiness rules.
var (
	// ReadyAlways: always ready (objects that only need to exist, composed
	// anew by Crossplane when missing).
	ReadyAlways Readiness = func(*Request, string) fnv1.Ready { return fnv1.Ready_READY_TRUE }
	// ReadyOnceObserved: ready once observed.
	ReadyOnceObserved Readiness = func(r *Request, name string) fnv1.Ready { return ReadyIf(r.ObservedExists(name)) }
	// ReadyOnStatusReady: ready when status.ready is true (Kamaji, the
	// KubeVirt provider).
	ReadyOnStatusReady Readiness = func(r *Request, name string) fnv1.Ready {
		return ReadyIf(r.ObservedBool(name, "status", "ready"))
	}
)

// ReadyOnCondition: ready when the condition typ is "True".
func ReadyOnCondition(typ string) Readiness {
	return func(r *Request, name string) fnv1.Ready {
		s, _, _ := r.ObservedCondition(name, typ)
		return ReadyIf(s == "True")
	}
}

// Add appends a composed resource.
func (p *Plan) Add(name string, obj any, ready Readiness) {
	p.Composed = append(p.Composed, Composed{Name: name, Object: obj, Ready: ready})
}

// Require asks Crossplane for the required resources selector matches,
// under key, for the next call.
func (p *Plan) Require(key string, selector *fnv1.ResourceSelector) {
	if p.Requirements == nil {
		p.Requirements = map[string]*fnv1.ResourceSelector{}
	}
	p.Requirements[key] = selector
}

// Warn appends a Warning result.
func (p *Plan) Warn(reason, message string) {
	p.Warnings = append(p.Warnings, Warning{Reason: reason, Message: message})
}

// SetCondition appends a condition.
func (p *Plan) SetCondition(typ string, isTrue bool, reason, message string) {
	p.Conditions = append(p.Conditions, Condition{Type: typ, True: isTrue, Reason: reason, Message: message})
}

// Write adds plan p to rsp, the response to the request r reads: its
// composed resources with their readiness, the kept ones, then every
// composed resource named cleanup-… any step composed earlier
// (keepComposedForCleanup), the XR's status and connection details,
// requirements, warnings and conditions. It never removes what earlier
// steps put into the desired state. It returns an error when an object
// does not convert.
func Write(rsp *fnv1.RunFunctionResponse, r *Request, p *Plan) error {
	for key, sel := range p.Requirements {
		Require(rsp, key, sel)
	}
	if p.RunAgainAfter > 0 {
		if rsp.Meta == nil {
			rsp.Meta = &fnv1.ResponseMeta{}
		}
		rsp.Meta.Ttl = durationpb.New(p.RunAgainAfter)
	}
	for _, c := range p.Composed {
		ready := fnv1.Ready_READY_UNSPECIFIED
		if c.Ready != nil {
			ready = c.Ready(r, c.Name)
		}
		if err := setDesired(rsp, c.Name, c.Object, ready); err != nil {
			return err
		}
	}
	for _, k := range p.Kept {
		if keepObserved(r.req, rsp, k.Name, k.Omit...) && k.Ready != fnv1.Ready_READY_UNSPECIFIED {
			rsp.Desired.Resources[k.Name].Ready = k.Ready
		}
	}
	if err := keepComposedForCleanup(r.req, rsp); err != nil {
		return err
	}
	if len(p.Status) > 0 {
		status := make(map[string]any, len(p.Status))
		for k, v := range p.Status {
			if pv, ok := v.(*structpb.Value); ok {
				status[k] = pv
				continue
			}
			pv, err := toValue(v) // typed values as encoding/json writes them
			if err != nil {
				return fmt.Errorf("cannot set status.%s: %w", k, err)
			}
			status[k] = pv
		}
		if err := setCompositeStatus(rsp, status); err != nil {
			return err
		}
	}
	if len(p.ConnectionDetails) > 0 {
		setConnectionDetails(rsp, p.ConnectionDetails)
	}
	for k, v := range p.Context {
		pv, err := toValue(v)
		if err != nil {
			return fmt.Errorf("cannot set context %s: %w", k, err)
		}
		response.SetContextKey(rsp, k, pv)
	}
	for _, w := range p.Warnings {
		response.Warning(rsp, errors.New(w.Message)).WithReason(w.Reason).TargetCompositeAndClaim()
	}
	for _, c := range p.Conditions {
		var cond *response.ConditionOption
		if c.True {
			cond = response.ConditionTrue(rsp, c.Type, c.Reason)
		} else {
			cond = response.ConditionFalse(rsp, c.Type, c.Reason)
		}
		if c.Message != "" {
			cond = cond.WithMessage(c.Message)
		}
		cond.TargetCompositeAndClaim()
	}
	return nil
}

// Fatal makes rsp a Fatal response for err: one Fatal result with err's
// message. It returns rsp.
func Fatal(rsp *fnv1.RunFunctionResponse, err error) *fnv1.RunFunctionResponse {
	response.Fatal(rsp, err)
	return rsp
}

// FatalList makes rsp a Fatal response listing every problem of errs in
// one Fatal result. It returns rsp.
func FatalList(rsp *fnv1.RunFunctionResponse, errs field.ErrorList) *fnv1.RunFunctionResponse {
	return Fatal(rsp, errs.ToAggregate())
}

// KeepOnlyObserved makes p compose nothing new: each composed resource of
// p that is observed becomes a Kept (the observed object unchanged, less
// the dotted paths omit returns for it; omit may be nil) with the
// readiness p computed for it, and the others leave p. An object composed
// for cleanup (cleanup-…) leaves p too: Write keeps the observed ones as
// they were composed (name and namespace only). What was composed stays in
// the desired state; Kept, status, conditions and requirements are left
// as they are.
func (p *Plan) KeepOnlyObserved(r *Request, omit func(Composed) []string) {
	composed := p.Composed
	p.Composed = nil
	for _, c := range composed {
		if !r.ObservedExists(c.Name) || strings.HasPrefix(c.Name, CleanupPrefix) {
			continue
		}
		k := Kept{Name: c.Name}
		if c.Ready != nil {
			k.Ready = c.Ready(r, c.Name)
		}
		if omit != nil {
			k.Omit = omit(c)
		}
		p.Kept = append(p.Kept, k)
	}
}

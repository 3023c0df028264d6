package function

import (
	"context"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Logged returns runner with one log line per call: at info the XR, the
// step (the function's name) and what the call decided; at debug the
// composed-resource names, the requirements and every result. It logs
// names, keys, reasons and result messages, never an object's content, so
// no Secret data reaches the log.
func Logged(step string, runner fnv1.FunctionRunnerServiceServer, log Logger) fnv1.FunctionRunnerServiceServer {
	return &loggedRunner{FunctionRunnerServiceServer: runner, step: step, log: log}
}

type loggedRunner struct {
	fnv1.FunctionRunnerServiceServer

	step string
	log  Logger
}

func (l *loggedRunner) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := l.FunctionRunnerServiceServer.RunFunction(ctx, req)
	kv := append([]any{"step", l.step}, callKeys(req)...)
	if err != nil {
		l.log.Info("call failed", append(kv, "error", err.Error())...)
		return rsp, err
	}
	decision, detail := callDecision(req, rsp)
	l.log.Info(decision, append(kv, detail...)...)
	l.log.Debug("call details", append(kv, callDetails(rsp)...)...)
	return rsp, nil
}

// callKeys names the XR of req: its kind, namespace and name, and its
// claim's when Crossplane labelled it with one.
func callKeys(req *fnv1.RunFunctionRequest) []any {
	xr := req.GetObserved().GetComposite().GetResource()
	meta := xr.GetFields()["metadata"].GetStructValue()
	name := meta.GetFields()["name"].GetStringValue()
	if ns := meta.GetFields()["namespace"].GetStringValue(); ns != "" {
		name = ns + "/" + name
	}
	kv := []any{"xr", xr.GetFields()["kind"].GetStringValue() + " " + name}
	labels := meta.GetFields()["labels"].GetStructValue().GetFields()
	if c := labels["crossplane.io/claim-name"].GetStringValue(); c != "" {
		kv = append(kv, "claim", labels["crossplane.io/claim-namespace"].GetStringValue()+"/"+c)
	}
	return kv
}

// callDecision is the message and keys of a call's info line: refused (a
// Fatal result, with its message), waiting (required resources asked for
// that the request does not hold yet), or composed (the desired composed
// resources), with the count of Warnings.
func callDecision(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) (string, []any) {
	var warnings int
	for _, r := range rsp.GetResults() {
		switch r.GetSeverity() {
		case fnv1.Severity_SEVERITY_FATAL:
			return "refused", []any{"reason", r.GetReason(), "message", r.GetMessage()}
		case fnv1.Severity_SEVERITY_WARNING:
			warnings++
		}
	}
	var waiting []string
	for key := range rsp.GetRequirements().GetResources() {
		if _, ok := req.GetRequiredResources()[key]; !ok {
			waiting = append(waiting, key)
		}
	}
	if len(waiting) > 0 {
		slices.Sort(waiting)
		return "waiting", []any{"for", strings.Join(waiting, ","), "warnings", warnings}
	}
	return "composed", []any{"resources", len(rsp.GetDesired().GetResources()), "warnings", warnings}
}

// callDetails are a call's debug keys: composed-resource names, the
// required-resource keys, the XR's conditions and every result.
func callDetails(rsp *fnv1.RunFunctionResponse) []any {
	names := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for n := range rsp.GetDesired().GetResources() {
		names = append(names, n)
	}
	slices.Sort(names)
	keys := make([]string, 0, len(rsp.GetRequirements().GetResources()))
	for k := range rsp.GetRequirements().GetResources() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var conds, results []string
	for _, c := range rsp.GetConditions() {
		conds = append(conds, c.GetType()+"="+strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")+"("+c.GetReason()+")")
	}
	for _, r := range rsp.GetResults() {
		results = append(results, strings.TrimPrefix(r.GetSeverity().String(), "SEVERITY_")+" "+r.GetReason()+": "+r.GetMessage())
	}
	return []any{"composed", names, "requirements", keys, "conditions", conds, "results", results}
}

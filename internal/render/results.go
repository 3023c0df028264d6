package render

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// ResultsFlag is the `crossplane composition render` flag that appends
// the events the reconciler would record on the XR to the output, as
// documents of kind Result (apiVersion render.crossplane.io/v1beta1).
const ResultsFlag = "--include-function-results"

// Result is one event the reconciler records on the XR (and what a tenant
// reads in `kubectl describe`): a function's Normal or Warning result, or
// one of the engine's own.
type Result struct {
	// Severity is Normal or Warning.
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
	// Step is the pipeline step that returned it, "" for the engine's own.
	Step    string `json:"-"`
	Message string `json:"message"`
}

// String is the result as printed on stderr:
// "<severity> <reason>: step <step>: <message>".
func (r Result) String() string {
	if r.Step == "" {
		return fmt.Sprintf("%s %s: %s", r.Severity, r.Reason, r.Message)
	}
	return fmt.Sprintf("%s %s: step %s: %s", r.Severity, r.Reason, r.Step, r.Message)
}

// stepPrefix is the prefix the reconciler gives a function's result in its
// event: Detail "Pipeline step %q", joined to the message by ": "
// (crossplane internal/controller/apiextensions/composite/composition_functions.go:524-528).
var stepPrefix = regexp.MustCompile(`^Pipeline step "([^"]*)": `)

// includesResults reports whether args ask crossplane for the Result
// documents in the output (--include-function-results, or -r).
func includesResults(args []string) bool {
	return slices.Contains(args, ResultsFlag) || slices.Contains(args, "-r")
}

// splitResults takes the Result documents out of a rendered YAML stream:
// it returns the other documents byte for byte, and the results in order.
// A document starts at a line "---" (the CLI writes one before each).
func splitResults(out []byte) ([]byte, []Result, error) {
	var kept strings.Builder
	var results []Result
	for _, doc := range documents(string(out)) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Result
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, nil, fmt.Errorf("crossplane composition render printed a document that is not YAML: %w", err)
		}
		if head.APIVersion != "render.crossplane.io/v1beta1" || head.Kind != "Result" {
			kept.WriteString(doc)
			continue
		}
		r := head.Result
		if m := stepPrefix.FindStringSubmatch(r.Message); m != nil {
			r.Step, r.Message = m[1], r.Message[len(m[0]):]
		}
		results = append(results, r)
	}
	return []byte(kept.String()), results, nil
}

// documents splits s before each line "---", keeping every byte.
func documents(s string) []string {
	var docs []string
	start := 0
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s) - i
		} else {
			end++
		}
		if line := strings.TrimRight(s[i:i+end], "\n"); line == "---" && i > start {
			docs = append(docs, s[start:i])
			start = i
		}
		i += end
	}
	if start < len(s) {
		docs = append(docs, s[start:])
	}
	return docs
}

// printResults writes to w, one a line, every result a function returned
// and every Warning of the engine: the engine's Normal events (composition
// selected, a composed resource not ready yet) are left out.
func printResults(w io.Writer, results []Result) {
	for _, r := range results {
		if r.Step == "" && r.Severity == "Normal" {
			continue
		}
		fmt.Fprintln(w, r) //nolint:errcheck // diagnostics only
	}
}

package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// LoadRequest reads the recorded request of step for input.
func LoadRequest(input, step string) (*fnv1.RunFunctionRequest, error) {
	f, err := os.Open(RequestPath(input, step))
	if os.IsNotExist(err) {
		if note, nerr := os.ReadFile(incompletePath(input)); nerr == nil {
			return nil, &IncompleteError{Input: input, Note: strings.TrimSpace(string(note))}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w (run `go generate ./test/bench` to create the inputs)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RequestPath(input, step), err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RequestPath(input, step), err)
	}
	req := &fnv1.RunFunctionRequest{}
	if err := protojson.Unmarshal(raw, req); err != nil {
		return nil, fmt.Errorf("%s: %w", RequestPath(input, step), err)
	}
	return req, nil
}

// WriteRequest writes req as the recorded request of step for input:
// indented JSON with sorted keys, gzipped without a timestamp, so identical
// requests give byte-identical files (`zcat` shows them).
func WriteRequest(input, step string, req *fnv1.RunFunctionRequest) error {
	raw, err := marshalStable(req)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	p := RequestPath(input, step)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

// marshalStable marshals m through protojson (whose whitespace is
// deliberately unstable) and re-indents it with encoding/json, which keeps
// protojson's sorted map order.
func marshalStable(m proto.Message) ([]byte, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Fresh returns a request for one call: the parts a function may write to
// (desired state and context: response.To hands them to the response) are
// deep copies, everything it only reads is shared with req.
func Fresh(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	out := &fnv1.RunFunctionRequest{
		Meta:              req.GetMeta(),
		Observed:          req.GetObserved(),
		Input:             req.GetInput(),
		Credentials:       req.GetCredentials(),
		RequiredResources: req.GetRequiredResources(),
		RequiredSchemas:   req.GetRequiredSchemas(),
	}
	out.ExtraResources = req.GetExtraResources() //nolint:staticcheck // carried as Crossplane carries it
	if req.GetDesired() != nil {
		out.Desired = proto.Clone(req.GetDesired()).(*fnv1.State)
	}
	if req.GetContext() != nil {
		out.Context = proto.Clone(req.GetContext()).(*structpb.Struct)
	}
	return out
}

// FatalOf returns the messages of rsp's Fatal results joined, or "" when it
// has none.
func FatalOf(rsp *fnv1.RunFunctionResponse) string {
	var msgs []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			msgs = append(msgs, r.GetMessage())
		}
	}
	return strings.Join(msgs, "; ")
}

// NodeGroupCount is the number of entries under spec.nodeGroups of req's
// observed XR (1 when absent: the default md0).
func NodeGroupCount(req *fnv1.RunFunctionRequest) int {
	spec := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue()
	if n := len(spec.GetFields()["nodeGroups"].GetStructValue().GetFields()); n > 0 {
		return n
	}
	return 1
}

// MessageSize is the protobuf wire size of m, as gRPC sends it.
func MessageSize(m proto.Message) int { return proto.Size(m) }

// IncompleteError is LoadRequest's error for an input the pipeline cannot
// run in steady state (a step answers Fatal), so no request was recorded.
type IncompleteError struct{ Input, Note string }

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("input %s has no recorded requests: %s", e.Input, e.Note)
}

func incompletePath(input string) string {
	return filepath.Join(TestdataDir(), input, "incomplete.txt")
}

// LoadOrSkip is LoadRequest for a benchmark: it skips b when the input is
// incomplete and fails it on any other error.
func LoadOrSkip(b testing.TB, input, step string) *fnv1.RunFunctionRequest {
	b.Helper()
	req, err := LoadRequest(input, step)
	var inc *IncompleteError
	switch {
	case errors.As(err, &inc):
		b.Skip(inc.Error())
	case err != nil:
		b.Fatal(err)
	}
	return req
}

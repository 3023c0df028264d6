package function

import (
	"context"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/logging"
	pb "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/go-logr/logr/funcr"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// fakeRunner answers every call with rsp.
type fakeRunner struct {
	pb.UnimplementedFunctionRunnerServiceServer

	rsp *pb.RunFunctionResponse
}

func (f fakeRunner) RunFunction(context.Context, *pb.RunFunctionRequest) (*pb.RunFunctionResponse, error) {
	return f.rsp, nil
}

func yamlStruct(t *testing.T, y string) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLogged: one info line per call saying what was decided, names at
// debug, and never a Secret's data, whether it came in the request or goes
// out in the desired state.
func TestLogged(t *testing.T) {
	const secret = "czNjcjN0LXZhbHVl" // base64 of s3cr3t-value
	secretObj := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: tenant-demo}\ndata: {key: " + secret + "}"
	req := &pb.RunFunctionRequest{
		Observed: &pb.State{Composite: &pb.Resource{Resource: yamlStruct(t,
			"apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nmetadata: {name: demo-x7k2p, labels: {crossplane.io/claim-name: demo, crossplane.io/claim-namespace: tenant-demo}}\nspec: {password: "+secret+"}")},
			Resources: map[string]*pb.Resource{"creds": {Resource: yamlStruct(t, secretObj)}}},
		RequiredResources: map[string]*pb.Resources{"platform": {Items: []*pb.Resource{{Resource: yamlStruct(t, secretObj)}}}},
	}
	desired := &pb.State{Resources: map[string]*pb.Resource{"b": {Resource: yamlStruct(t, secretObj)}, "a": {Resource: yamlStruct(t, secretObj)}}}
	cases := map[string]struct {
		rsp  *pb.RunFunctionResponse
		info string // the info line, as funcr writes it
	}{
		"Composed": {
			rsp: &pb.RunFunctionResponse{Desired: desired,
				Results: []*pb.Result{{Severity: pb.Severity_SEVERITY_WARNING, Reason: ptr("R"), Message: "w"}}},
			info: `"msg"="composed" "step"="function-x" "xr"="XKubernetesCluster demo-x7k2p" "claim"="tenant-demo/demo" "resources"=2 "warnings"=1`,
		},
		"Waiting": {
			rsp: &pb.RunFunctionResponse{Desired: desired, Requirements: &pb.Requirements{Resources: map[string]*pb.ResourceSelector{
				"platform": {}, "quotas": {}, "instancetype-u1": {}}}},
			info: `"msg"="waiting" "step"="function-x" "xr"="XKubernetesCluster demo-x7k2p" "claim"="tenant-demo/demo" "for"="instancetype-u1,quotas" "warnings"=0`,
		},
		"Refused": {
			rsp:  &pb.RunFunctionResponse{Results: []*pb.Result{{Severity: pb.Severity_SEVERITY_FATAL, Reason: ptr("InvalidSpec"), Message: `spec.version: Unsupported value: "v1.29"`}}},
			info: `"msg"="refused" "step"="function-x" "xr"="XKubernetesCluster demo-x7k2p" "claim"="tenant-demo/demo" "reason"="InvalidSpec" "message"="spec.version: Unsupported value: \"v1.29\""`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lines []string
			log := fnv1.NewLogrLogger(funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1}))
			if _, err := Logged("function-x", fakeRunner{rsp: tc.rsp}, log).RunFunction(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if len(lines) != 2 || lines[0] != `"level"=0 `+tc.info {
				t.Fatalf("log lines:\n%s\nwant the info line\n\"level\"=0 %s\nthen one debug line", strings.Join(lines, "\n"), tc.info)
			}
			if !strings.HasPrefix(lines[1], `"level"=1 "msg"="call details"`) {
				t.Errorf("debug line %s", lines[1])
			}
			for _, l := range lines {
				if strings.Contains(l, secret) || strings.Contains(l, "s3cr3t") {
					t.Errorf("a Secret's data was logged: %s", l)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Command testfn is a composition function for the render driver's tests
// only. It passes the desired state through unchanged unless the observed XR
// carries one of these annotations:
//
//	render.test.tenantkube.io/fatal: <message>  -> a Fatal result with message
//	render.test.tenantkube.io/error: <message>  -> a gRPC error with message
//	render.test.tenantkube.io/hang: "true"      -> blocks until cancelled
//	render.test.tenantkube.io/warning: <message> -> a Warning result, reason Tested
//	render.test.tenantkube.io/normal: <message>  -> a Normal result, reason Tested
//
// It lives under testdata so that `go build ./...` and `go vet ./...` skip
// it; the tests build it explicitly.
package main

import (
	"context"
	"errors"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/tenantkube/tenantkube/internal/function"
)

const prefix = "render.test.tenantkube.io/"

type fn struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (fn) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r := function.NewRequest(req)
	ann := func(key string) string { return r.CompositeString("metadata", "annotations", prefix+key) }
	rsp := response.To(req, response.DefaultTTL)
	if msg := ann("fatal"); msg != "" {
		response.Fatal(rsp, errors.New(msg))
		return rsp, nil
	}
	if msg := ann("error"); msg != "" {
		return nil, errors.New(msg)
	}
	if msg := ann("warning"); msg != "" {
		response.Warning(rsp, errors.New(msg)).WithReason("Tested")
	}
	if msg := ann("normal"); msg != "" {
		response.Normal(rsp, msg).WithReason("Tested")
	}
	if ann("hang") == "true" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return rsp, nil
}

func main() {
	function.Main("testfn", "Test-only composition function of the render driver.",
		func(function.Logger) fnv1.FunctionRunnerServiceServer { return fn{} })
}

package main

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// server is the function's gRPC server. The Compositions of the Tenant and
// of every cluster kind name this one function: a Tenant XR is
// TenantFunction's, every other XR Function's.
type server struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	cluster *Function
	tenant  *TenantFunction
}

// newServer is the server logging to log; now, when not nil, fixes both
// functions' clock.
func newServer(log function.Logger, now func() time.Time) *server {
	return &server{cluster: &Function{log: log, now: now}, tenant: &TenantFunction{now: now}}
}

// RunFunction hands req to the function of its XR's kind.
func (s *server) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	if req.GetObserved().GetComposite().GetResource().GetFields()["kind"].GetStringValue() == tkv1alpha1.TenantKind {
		return s.tenant.RunFunction(ctx, req)
	}
	return s.cluster.RunFunction(ctx, req)
}

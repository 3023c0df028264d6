package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/tenantkube/tenantkube/test/bench"
)

// BenchmarkRunFunction measures RunFunction in process on the recorded
// steady-state request of this step for the small, reference and large
// inputs of test/bench, each call on a fresh desired state.
func BenchmarkRunFunction(b *testing.B) {
	bench.BenchmarkFunction(b, "control-plane", (&Function{log: logging.NewNopLogger()}).RunFunction)
}

// BenchmarkScaling measures RunFunction in process on the scaling inputs
// (1 to 200 node groups), per node group.
func BenchmarkScaling(b *testing.B) {
	bench.BenchmarkFunctionScaling(b, "control-plane", (&Function{log: logging.NewNopLogger()}).RunFunction)
}

// BenchmarkServedWork measures what a served call of this function does
// besides gRPC's transport: decode the wire request, RunFunction, encode
// the response (see bench.BenchmarkFunctionServedWork).
func BenchmarkServedWork(b *testing.B) {
	bench.BenchmarkFunctionServedWork(b, "control-plane", (&Function{log: logging.NewNopLogger()}).RunFunction)
}

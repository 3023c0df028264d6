package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/tenantkube/tenantkube/test/bench"
)

// BenchmarkRunFunction measures RunFunction in process on the recorded
// steady-state request of this step for the small, reference and large
// inputs of test/bench (issue 7), each call on a fresh desired state.
func BenchmarkRunFunction(b *testing.B) {
	bench.BenchmarkFunction(b, "workers", (&Function{log: logging.NewNopLogger()}).RunFunction)
}

// BenchmarkScaling measures RunFunction in process on the scaling inputs
// (1 to 200 node groups), per node group.
func BenchmarkScaling(b *testing.B) {
	bench.BenchmarkFunctionScaling(b, "workers", (&Function{log: logging.NewNopLogger()}).RunFunction)
}

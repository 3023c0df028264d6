package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/tenantkube/tenantkube/test/bench"
)

// BenchmarkStep runs test/bench's in-process benchmarks of this function:
// RunFunction on the small, reference and large inputs, Scaling over 1 to
// 200 node groups, and ServedWork (decode, RunFunction, encode).
func BenchmarkStep(b *testing.B) {
	bench.BenchmarkStep(b, "workers", (&Function{log: logging.NewNopLogger(), now: fixedClock}).RunFunction)
}

// Command function-workers serves the tenantkube workers composition function over gRPC.
package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/function"
)

func main() {
	function.Main("function-workers", "tenantkube workers composition function.",
		func(log function.Logger) fnv1.FunctionRunnerServiceServer { return &Function{log: log} })
}

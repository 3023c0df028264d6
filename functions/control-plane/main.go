// Command function-control-plane serves the tenantkube control-plane composition function over gRPC.
package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/function"
)

func main() {
	function.Main("function-control-plane", "tenantkube control-plane composition function.",
		func(log function.Logger) fnv1.FunctionRunnerServiceServer { return newServer(log, nil) })
}

package function

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// ReadyWhenObserved is READY_TRUE once the composed resource called name
// exists in the observed state.
func ReadyWhenObserved(req *fnv1.RunFunctionRequest, name string) fnv1.Ready {
	return ReadyIf(ObservedExists(req, name))
}

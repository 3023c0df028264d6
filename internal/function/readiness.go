package function

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// ObservedExists reports whether the composed resource called name is in
// req's observed state (it has been created). Templates, ConfigMaps,
// ServiceAccounts and RBAC objects are ready once they exist.
func ObservedExists(req *fnv1.RunFunctionRequest, name string) bool {
	return req.GetObserved().GetResources()[name].GetResource() != nil
}

// ReadyWhenObserved is READY_TRUE once the composed resource called name
// exists in the observed state.
func ReadyWhenObserved(req *fnv1.RunFunctionRequest, name string) fnv1.Ready {
	return ReadyIf(ObservedExists(req, name))
}

package function

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// desiredComposite returns rsp's desired composite resource, creating the
// empty entry (and its status) when earlier steps set none.
func desiredComposite(rsp *fnv1.RunFunctionResponse) *fnv1.Resource {
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	if rsp.Desired.Composite.Resource == nil {
		rsp.Desired.Composite.Resource = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	return rsp.Desired.Composite
}

// setCompositeStatus sets each key of fields under status of rsp's desired
// composite resource, replacing that key's earlier value and leaving every
// other status key (set by earlier pipeline steps) untouched. Values are
// JSON-like (maps, slices, strings, numbers, bools), typed (set as
// encoding/json writes them, see toValue), or a *structpb.Value, set as it
// is. It returns an error when a value does not convert.
func setCompositeStatus(rsp *fnv1.RunFunctionResponse, fields map[string]any) error {
	xr := desiredComposite(rsp).Resource
	status := xr.Fields["status"].GetStructValue()
	if status == nil {
		status = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		xr.Fields["status"] = structpb.NewStructValue(status)
	}
	for k, v := range fields {
		if pv, ok := v.(*structpb.Value); ok {
			status.Fields[k] = pv
			continue
		}
		pv, err := structpb.NewValue(v)
		if err != nil {
			pv, err = toValue(v) // a typed value (Plan.Status)
		}
		if err != nil {
			return fmt.Errorf("cannot set status.%s: %w", k, err)
		}
		status.Fields[k] = pv
	}
	return nil
}

// setConnectionDetails adds details to the desired composite resource's
// connection details, which Crossplane writes to the claim's connection
// secret.
func setConnectionDetails(rsp *fnv1.RunFunctionResponse, details map[string][]byte) {
	xr := desiredComposite(rsp)
	if xr.ConnectionDetails == nil {
		xr.ConnectionDetails = make(map[string][]byte, len(details))
	}
	for k, v := range details {
		xr.ConnectionDetails[k] = v
	}
}

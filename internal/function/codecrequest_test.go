package function

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function/wire"
	"github.com/tenantkube/tenantkube/internal/function/wire/wiretest"
)

// The codec's entry points the accessor tests drive (their locals are often
// called wire).
var (
	unmarshalRequest  = wire.UnmarshalRequest
	appendMessage     = wire.AppendMessage
	decodeKeptObjects = wire.DecodeKeptObjects
)

// desiredResource returns the object of the desired composed resource
// called name in req (an earlier step's, or this function's once it is
// set: a response shares the request's desired state), or nil when there
// is none. An object UnmarshalRequest kept encoded is decoded now, once.
func desiredResource(req *fnv1.RunFunctionRequest, name string) *structpb.Struct {
	return wire.Decode(req.GetDesired().GetResources()[name])
}

// observedComposite returns the observed composite resource's object (the
// XR as Crossplane sent it), or nil when there is none. An object
// UnmarshalRequest kept encoded is decoded now, once: a function that needs
// a few fields reads them with observedCompositeValue instead.
func observedComposite(req *fnv1.RunFunctionRequest) *structpb.Struct {
	return wire.Decode(req.GetObserved().GetComposite())
}

// The shared codec fixtures, under the names this package's tests use.
var (
	codecStruct  = wiretest.Struct
	codecRequest = wiretest.Request
	randomObject = wiretest.RandomObject
	randomValue  = wiretest.RandomValue
	randomString = wiretest.RandomString
)

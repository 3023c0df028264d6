package function

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Tenant is what every function reads first from a RunFunctionRequest: the
// tenant cluster's identity and its spec with the seed's defaults applied.
type Tenant struct {
	// ID is the tenant cluster's name N and namespace NS.
	ID Identity
	// Spec is the XR's spec, decoded and defaulted (v1alpha1 Default).
	Spec *v1alpha1.KubernetesClusterSpec
}

// ReadTenant decodes the observed XR of req into a Tenant. It returns an
// error suitable for a Fatal result when the XR is missing, its spec does not
// decode into the API types (the error names the field), or its identity
// breaks the rules of IdentityOf.
//
// Only the XR's spec and metadata are converted: the rest of the observed
// XR (status, resourceRefs, managedFields) is never decoded.
func ReadTenant(req *fnv1.RunFunctionRequest) (*Tenant, error) {
	xr := req.GetObserved().GetComposite().GetResource()
	if xr == nil {
		return nil, fmt.Errorf("the request has no observed composite resource")
	}
	var spec any
	if v, ok := xr.GetFields()["spec"]; ok {
		spec = v.AsInterface()
	}
	decoded, err := DecodeSpec(spec)
	if err != nil {
		return nil, err
	}
	md := xr.GetFields()["metadata"].GetStructValue().GetFields()
	labels := map[string]string{}
	for k, v := range md["labels"].GetStructValue().GetFields() {
		labels[k] = v.GetStringValue()
	}
	id, err := identityOf(labels, md["name"].GetStringValue(), md["namespace"].GetStringValue(), decoded.Namespace)
	if err != nil {
		return nil, err
	}
	return &Tenant{ID: id, Spec: decoded}, nil
}

// DecodeSpec decodes an XR's spec (the unstructured value under "spec") into
// the typed spec and applies the seed's defaults. A nil spec is the all-
// defaults spec. It returns a *field.Error under "spec" when a value has the
// wrong type.
func DecodeSpec(spec any) (*v1alpha1.KubernetesClusterSpec, error) {
	out := &v1alpha1.KubernetesClusterSpec{}
	if spec != nil {
		// appendJSON encodes the unstructured spec without reflection
		// (jsonencode.go); anything else goes through encoding/json.
		raw, ok := appendJSON(make([]byte, 0, 4096), spec)
		if !ok {
			var err error
			if raw, err = json.Marshal(spec); err != nil {
				return nil, field.Invalid(field.NewPath("spec"), "<unencodable>", err.Error())
			}
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, decodeError(spec, err)
		}
	}
	out.Default()
	return out, nil
}

// decodeError turns a decoding error of spec into a *field.Error under
// "spec" that names the field. encoding/json names struct fields but not map
// keys, so each node group is decoded alone to name the group
// (spec.nodeGroups[md0].kubelet.systemReservedMemory).
func decodeError(spec any, err error) error {
	path, value := field.NewPath("spec"), "<see message>"
	specMap, _ := spec.(map[string]any)
	if groups, ok := specMap["nodeGroups"].(map[string]any); ok {
		names := make([]string, 0, len(groups))
		for k := range groups {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			raw, _ := json.Marshal(groups[k])
			if gerr := json.Unmarshal(raw, &v1alpha1.NodeGroup{}); gerr != nil {
				path, err = path.Child("nodeGroups").Key(k), gerr
				break
			}
		}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		for _, f := range strings.Split(te.Field, ".") {
			if f != "" {
				path = path.Child(f)
			}
		}
		return field.Invalid(path, value, fmt.Sprintf("a JSON %s cannot be a %s", te.Value, te.Type))
	}
	return field.Invalid(path, value, err.Error())
}

// ObservedInto decodes the observed composed resource called name into out
// (a pointer to a typed object). Its metadata.managedFields, often the
// largest part of an observed object and never read by a function, is left
// out. It reports false when the resource is not in the observed state, and
// an error when it does not decode.
func ObservedInto(req *fnv1.RunFunctionRequest, name string, out any) (bool, error) {
	r, ok := req.GetObserved().GetResources()[name]
	if !ok || r.GetResource() == nil {
		return false, nil
	}
	obj := make(map[string]any, len(r.GetResource().GetFields()))
	for k, v := range r.GetResource().GetFields() {
		if k != "metadata" {
			obj[k] = v.AsInterface()
			continue
		}
		md := make(map[string]any, len(v.GetStructValue().GetFields()))
		for mk, mv := range v.GetStructValue().GetFields() {
			if mk != "managedFields" {
				md[mk] = mv.AsInterface()
			}
		}
		obj[k] = md
	}
	return true, StructInto(obj, out)
}

// StructInto decodes an unstructured object (a map as found in a structpb
// Struct or an unstructured.Unstructured) into out, a pointer to a typed
// object, through JSON. It returns the decoding error.
func StructInto(obj map[string]any, out any) error {
	// appendJSON encodes JSON-like maps without reflection (jsonencode.go);
	// anything else goes through encoding/json as before.
	raw, ok := appendJSON(make([]byte, 0, 4096), obj)
	if !ok {
		var err error
		if raw, err = json.Marshal(obj); err != nil {
			return err
		}
	}
	return json.Unmarshal(raw, out)
}

// protoJSON is the protojson decoder used to build structpb values from JSON.
var protoJSON = protojson.UnmarshalOptions{}

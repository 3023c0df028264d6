package function

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Cluster is what every function reads first from a RunFunctionRequest: the
// tenant cluster's identity and its spec with the seed's defaults applied.
type Cluster struct {
	// ID is the tenant cluster's name N and namespace NS.
	ID Identity
	// Spec is the XR's spec, decoded and defaulted (v1alpha1 Default).
	Spec *v1alpha1.KubernetesClusterSpec
	// Namespaced says the XR is a namespaced XR (the v2 TenantCluster):
	// it has a namespace (and no claim). Crossplane composes nothing
	// cluster-scoped for it and it has no connection details.
	Namespaced bool
}

// readCluster decodes the observed XR of req into a Cluster. It returns an
// error suitable for a Fatal result when the XR is missing, its spec does not
// decode into the API types (the error names the field), it carries a
// reserved label (checkReservedLabels, every one named), its identity
// breaks the rules of identityOf, or its namespace is not the one its
// observed composed resources live in (checkObservedNamespaces).
func readCluster(req *fnv1.RunFunctionRequest) (*Cluster, error) {
	if observedComposite(req) == nil {
		return nil, fmt.Errorf("the request has no observed composite resource")
	}
	decoded, err := decodeSpec(observedCompositeValue(req, "spec").AsInterface())
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range observedCompositeValue(req, "metadata", "labels").GetStructValue().GetFields() {
		labels[k] = v.GetStringValue()
	}
	namespace := observedCompositeValue(req, "metadata", "namespace").GetStringValue()
	name := observedCompositeValue(req, "metadata", "name").GetStringValue()
	if errs := checkReservedLabels(labels, name, namespace != ""); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	id, nsField, err := identityOf(labels, name, namespace, decoded.Namespace)
	if err != nil {
		return nil, err
	}
	if err := checkObservedNamespaces(req, id, nsField); err != nil {
		return nil, err
	}
	return &Cluster{ID: id, Spec: decoded, Namespaced: namespace != ""}, nil
}

// decodeSpec decodes an XR's spec (the unstructured value under "spec") into
// the typed spec and applies the seed's defaults. A nil spec is the all-
// defaults spec. It returns a *field.Error under "spec" when a value has the
// wrong type.
func decodeSpec(spec any) (*v1alpha1.KubernetesClusterSpec, error) {
	out := &v1alpha1.KubernetesClusterSpec{}
	if spec != nil {
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, field.Invalid(field.NewPath("spec"), "<unencodable>", err.Error())
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
	path, value := field.NewPath("spec"), any("<see message>")
	specMap, _ := spec.(map[string]any)
	decoded := specMap // the object err is about: the spec, or one node group
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
				decoded, _ = groups[k].(map[string]any)
				break
			}
		}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		var at any = decoded
		for _, f := range strings.Split(te.Field, ".") {
			if f != "" {
				path = path.Child(f)
				at = jsonMember(at, f)
			}
		}
		if at != nil {
			value = at
		}
		return field.Invalid(path, value, fmt.Sprintf("a JSON %s cannot be a %s", te.Value, te.Type))
	}
	return field.Invalid(path, value, err.Error())
}

// jsonMember returns the member of the decoded JSON object obj that
// encoding/json decodes into the field with JSON name name (an exact key,
// else one equal regardless of case, as encoding/json matches), or nil.
func jsonMember(obj any, name string) any {
	m, _ := obj.(map[string]any)
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// observedInto decodes the observed composed resource called name into out
// (a pointer to a typed object), as decodeStruct does. It reports false when
// the resource is not in the observed state, and an error when it does not
// decode.
func observedInto(req *fnv1.RunFunctionRequest, name string, out any) (bool, error) {
	obj := observedResource(req, name)
	if obj == nil {
		return false, nil
	}
	return true, decodeStruct(obj, out)
}

// requiredResources returns the objects Crossplane sent for the required
// resources of key (Crossplane v2 rsp.requirements.resources), and whether
// it answered that requirement.
func requiredResources(req *fnv1.RunFunctionRequest, key string) ([]*structpb.Struct, bool) {
	required, ok := req.GetRequiredResources()[key]
	if !ok {
		return nil, false
	}
	out := make([]*structpb.Struct, 0, len(required.GetItems()))
	for _, it := range required.GetItems() {
		out = append(out, it.GetResource())
	}
	return out, true
}

// decodeStruct decodes a Kubernetes object as the request carries it into
// out (a pointer to a typed object) through JSON, without its
// metadata.managedFields: often the largest part of an object and never
// read by a function. It returns the decoding error.
func decodeStruct(s *structpb.Struct, out any) error {
	obj := s.AsMap()
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	return structInto(obj, out)
}

// structInto decodes an unstructured object (a map as found in a structpb
// Struct or an unstructured.Unstructured) into out, a pointer to a typed
// object, through JSON. It returns the decoding error.
func structInto(obj map[string]any, out any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

package fntest

import (
	"fmt"
	"sort"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// StatusString is one string a function wrote for the XR or its claim:
// Path is "status.<dotted path>" (list indexes as [i]), "condition <type>
// reason|message" or "result <severity>".
type StatusString struct {
	Path, Value string
}

// StatusStrings returns every string rsp shows on the XR and its claim: the
// string leaves of the desired XR's status, the conditions' reasons and
// messages, and the results' messages, sorted by path.
func StatusStrings(rsp *fnv1.RunFunctionResponse) []StatusString {
	var out []StatusString
	var walk func(path string, v *structpb.Value)
	walk = func(path string, v *structpb.Value) {
		switch k := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			out = append(out, StatusString{path, k.StringValue})
		case *structpb.Value_StructValue:
			for key, f := range k.StructValue.GetFields() {
				walk(path+"."+key, f)
			}
		case *structpb.Value_ListValue:
			for i, e := range k.ListValue.GetValues() {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	if st, ok := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; ok {
		walk("status", st)
	}
	for _, c := range rsp.GetConditions() {
		out = append(out, StatusString{"condition " + c.GetType() + " reason", c.GetReason()},
			StatusString{"condition " + c.GetType() + " message", c.GetMessage()})
	}
	for _, r := range rsp.GetResults() {
		out = append(out, StatusString{"result " + r.GetSeverity().String(), r.GetMessage()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

package function

import (
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// composedFieldManagerPrefix starts the name of the field manager with which
// Crossplane applies composed resources:
// apiextensions.crossplane.io/composed/<hash of the XR> (Crossplane v2,
// FieldOwnerComposedPrefix in its function composer).
const composedFieldManagerPrefix = "apiextensions.crossplane.io/composed/"

// keptMetadata is the metadata under which keepObserved puts an observed
// composed resource back into the desired state: its name and namespace,
// the labels and annotations Crossplane itself applied, and the
// non-controller ownerReferences it applied (a backup's reference to its
// Namespace: left out of an apply, the reference would be removed).
// The labels, annotations and references other controllers wrote (CAPI's
// revision annotation, the in-use label of a Usage) are left out: applying
// them would make Crossplane co-own them and, with the values of this
// observation, undo a later change their owner makes. Controller
// references are never kept: Crossplane sets the XR's itself. When the
// object records no Crossplane apply in metadata.managedFields (nothing
// tells the owners apart), every label, annotation and non-controller
// reference is kept.
func keptMetadata(obj *structpb.Struct) *structpb.Struct {
	md := obj.GetFields()["metadata"].GetStructValue()
	out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if md == nil {
		return out
	}
	for _, k := range []string{"name", "namespace"} {
		if v, ok := md.Fields[k]; ok {
			out.Fields[k] = v
		}
	}
	owned, recorded := appliedMetadataKeys(md)
	for _, k := range []string{"labels", "annotations"} {
		v, ok := md.Fields[k]
		if !ok {
			continue
		}
		if !recorded {
			out.Fields[k] = v
			continue
		}
		kept := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for key, val := range v.GetStructValue().GetFields() {
			if owned[k][key] {
				kept.Fields[key] = val
			}
		}
		if len(kept.Fields) > 0 {
			out.Fields[k] = structpb.NewStructValue(kept)
		}
	}
	var refs []*structpb.Value
	for _, ref := range md.Fields["ownerReferences"].GetListValue().GetValues() {
		f := ref.GetStructValue().GetFields()
		if f["controller"].GetBoolValue() || (recorded && !owned["ownerReferences"][f["uid"].GetStringValue()]) {
			continue
		}
		refs = append(refs, ref)
	}
	if len(refs) > 0 {
		out.Fields["ownerReferences"] = structpb.NewListValue(&structpb.ListValue{Values: refs})
	}
	return out
}

// appliedMetadataKeys reads metadata.managedFields of md: for "labels" and
// "annotations", the keys that Crossplane's composed-resource field manager
// owns through an Apply operation (fieldsV1 entries f:metadata →
// f:labels/f:annotations → f:<key>); for "ownerReferences", the UIDs of the
// references it owns (f:metadata → f:ownerReferences → k:{"uid":"<uid>"},
// the list's key). recorded is false when no such manager appears.
func appliedMetadataKeys(md *structpb.Struct) (owned map[string]map[string]bool, recorded bool) {
	owned = map[string]map[string]bool{"labels": {}, "annotations": {}, "ownerReferences": {}}
	for _, e := range md.GetFields()["managedFields"].GetListValue().GetValues() {
		f := e.GetStructValue().GetFields()
		if f["operation"].GetStringValue() != "Apply" || !strings.HasPrefix(f["manager"].GetStringValue(), composedFieldManagerPrefix) {
			continue
		}
		recorded = true
		meta := valueAt(f["fieldsV1"].GetStructValue(), "f:metadata").GetStructValue()
		for _, k := range []string{"labels", "annotations"} {
			for key := range valueAt(meta, "f:"+k).GetStructValue().GetFields() {
				if name, ok := strings.CutPrefix(key, "f:"); ok {
					owned[k][name] = true
				}
			}
		}
		for key := range valueAt(meta, "f:ownerReferences").GetStructValue().GetFields() {
			var k struct {
				UID string `json:"uid"`
			}
			if rest, ok := strings.CutPrefix(key, "k:"); ok && json.Unmarshal([]byte(rest), &k) == nil && k.UID != "" {
				owned["ownerReferences"][k.UID] = true
			}
		}
	}
	return owned, recorded
}

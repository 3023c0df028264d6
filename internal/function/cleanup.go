package function

import (
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// CleanupKind names a kind of object that controllers of the tenant
// cluster (not Crossplane) create in NS on the cluster's behalf, labelled
// tenantkube.io/cluster=N: the KubeVirt CSI driver's DataVolumes, the
// KubeVirt cloud controller's LoadBalancer Services, cert-manager's PKI
// Secrets.
type CleanupKind struct {
	// APIVersion is the kind's group/version, e.g. cdi.kubevirt.io/v1beta1.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind, e.g. DataVolume.
	Kind string `json:"kind"`
}

// CleanupPrefix starts the composed-resource name of every object a
// function composes because a tenant controller created it
// (cleanup-<kind>-<name>, kind in lower case).
const CleanupPrefix = "cleanup-"

// annotationComposedName is the annotation Crossplane writes on every
// composed resource with its composed-resource name.
const annotationComposedName = "crossplane.io/composition-resource-name"

// requiredKey is the required-resources key under which Crossplane sends
// the labelled objects of k: cleanup-<kind>.<group> (cleanup-<kind> for
// the core group).
func (k CleanupKind) requiredKey() string {
	key := CleanupPrefix + strings.ToLower(k.Kind)
	if group, _, ok := strings.Cut(k.APIVersion, "/"); ok {
		key += "." + group
	}
	return key
}

// composedName is the composed-resource name under which an object of k
// called name is composed: cleanup-<kind>-<name>.
func (k CleanupKind) composedName(name string) string {
	return CleanupPrefix + strings.ToLower(k.Kind) + "-" + name
}

// ComposeForCleanup makes Crossplane delete, with the cluster, the objects
// of kind k that a tenant controller created in NS (SPEC §7: nothing is
// left in NS). Crossplane runs no function while it deletes an XR and
// deletes only composed resources, so such objects are composed up front:
//
//   - it asks Crossplane (required resources) for every object of k in NS
//     labelled tenantkube.io/cluster=N;
//   - each one that no other controller owns (no controller
//     ownerReference but the XR's) and that is not composed under another
//     name goes into the desired state as apiVersion, kind, name and
//     namespace only — Crossplane adds its labels and owner reference and
//     takes no field of the owner's;
//   - each object composed this way earlier and still observed stays in
//     the desired state, also before Crossplane has sent the required
//     resources (a desired state never shrinks because something was not
//     fetched yet); one its creator deleted is no longer observed and
//     leaves.
//
// keep, when not nil, limits the objects composed to the names it accepts.
// It returns the object names composed, sorted. Such objects are always
// ready: they exist.
func ComposeForCleanup(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, id Identity, k CleanupKind, keep func(name string) bool) ([]string, error) {
	Require(rsp, k.requiredKey(), &fnv1.ResourceSelector{
		ApiVersion: k.APIVersion,
		Kind:       k.Kind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{LabelCluster: id.Name},
		}},
		Namespace: proto.String(id.Namespace),
	})
	xrUID := ValueAt(req.GetObserved().GetComposite().GetResource(), "metadata", "uid").GetStringValue()
	prefix := k.composedName("")
	names := map[string]bool{}
	for composed, r := range req.GetObserved().GetResources() {
		obj := r.GetResource()
		if strings.HasPrefix(composed, prefix) && sameKind(obj, k) {
			names[ValueAt(obj, "metadata", "name").GetStringValue()] = true
		}
	}
	for _, item := range req.GetRequiredResources()[k.requiredKey()].GetItems() {
		obj := item.GetResource()
		if !sameKind(obj, k) || ValueAt(obj, "metadata", "namespace").GetStringValue() != id.Namespace {
			continue
		}
		if c := ValueAt(obj, "metadata", "annotations", annotationComposedName).GetStringValue(); c != "" && !strings.HasPrefix(c, prefix) {
			continue // composed by a pipeline step under its own name
		}
		if controlledByOther(obj, xrUID) {
			continue // a VM's root disk, a Kamaji Secret: its owner deletes it
		}
		names[ValueAt(obj, "metadata", "name").GetStringValue()] = true
	}
	out := make([]string, 0, len(names))
	for n := range names {
		if n != "" && (keep == nil || keep(n)) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	for _, n := range out {
		obj := map[string]any{
			"apiVersion": k.APIVersion,
			"kind":       k.Kind,
			"metadata":   map[string]any{"name": n, "namespace": id.Namespace},
		}
		if err := SetDesired(rsp, k.composedName(n), obj, fnv1.Ready_READY_TRUE); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sameKind reports whether obj is of kind k.
func sameKind(obj *structpb.Struct, k CleanupKind) bool {
	return obj.GetFields()["apiVersion"].GetStringValue() == k.APIVersion && obj.GetFields()["kind"].GetStringValue() == k.Kind
}

// controlledByOther reports whether obj has a controller ownerReference
// whose uid is not xrUID.
func controlledByOther(obj *structpb.Struct, xrUID string) bool {
	for _, ref := range ValueAt(obj, "metadata", "ownerReferences").GetListValue().GetValues() {
		f := ref.GetStructValue().GetFields()
		if f["controller"].GetBoolValue() && (xrUID == "" || f["uid"].GetStringValue() != xrUID) {
			return true
		}
	}
	return false
}

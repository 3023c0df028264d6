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

// CleanupOptions narrow what Plan.ComposeForCleanup composes.
type CleanupOptions struct {
	// Keep, when not nil, limits the objects considered to the names it
	// accepts.
	Keep func(name string) bool
	// Labels, when set, select the objects instead of
	// tenantkube.io/cluster=N (a Tenant's objects belong to no cluster).
	Labels map[string]string
	// Limit, when positive, is the most objects of the kind composed for
	// cleanup: every composed object of the kind adds its size to each
	// later function request (gRPC caps a message at 4 MiB), so objects
	// beyond it are left uncomposed and counted in CleanupResult.Skipped.
	Limit int
}

// CleanupResult is what Plan.ComposeForCleanup found and composed.
type CleanupResult struct {
	// Present are the names of the labelled objects of the kind in NS that
	// Keep accepts, whoever owns them (sorted): those Crossplane sent, and
	// those composed earlier and still observed.
	Present []string
	// Composed are the names of those composed for cleanup (sorted).
	Composed []string
	// Skipped is how many were left uncomposed because of Limit.
	Skipped int
}

// ComposeForCleanup makes Crossplane delete, with the cluster, the objects
// of kind k that a controller of the cluster (not Crossplane) created in NS
// (docs/architecture.md: nothing is left in NS). Crossplane runs no function while it
// deletes an XR and deletes only composed resources, so such objects are
// composed up front:
//
//   - it asks Crossplane (required resources) for every object of k in NS
//     labelled tenantkube.io/cluster=N (or opts.Labels);
//   - each one that no other controller owns (no controller
//     ownerReference but the XR's) and that is not composed under another
//     name goes into p as apiVersion, kind, name, namespace and, when the
//     object has one, its immutable top-level type (a Secret's: were the
//     object deleted between Crossplane's fetch and its apply, the apply
//     could then not re-create it as something else) — Crossplane adds its
//     labels and owner reference and takes no other field of the owner's;
//   - the objects composed this way earlier are kept by Write
//     (keepComposedForCleanup).
//
// Such objects are always ready (ReadyAlways): they exist. The error is
// always nil today; it is kept for objects that may not convert.
func (p *Plan) ComposeForCleanup(r *Request, id Identity, k CleanupKind, opts CleanupOptions) (CleanupResult, error) {
	labels := opts.Labels
	if labels == nil {
		labels = map[string]string{LabelCluster: id.Name}
	}
	p.Require(k.requiredKey(), k.selector(id.Namespace, labels))
	res, objs := cleanupObjects(r.req, id, k, opts)
	for _, o := range objs {
		p.Add(o.name, o.object, ReadyAlways)
	}
	return res, nil
}

// selector selects the objects of k in namespace ns carrying labels.
func (k CleanupKind) selector(ns string, labels map[string]string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: k.APIVersion,
		Kind:       k.Kind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
		Namespace:  proto.String(ns),
	}
}

// cleanupObject is an object to compose for cleanup: its composed-resource
// name and the object (cleanupObjectOf).
type cleanupObject struct {
	name   string
	object map[string]any
}

// cleanupObjects finds, in req, the objects of k to compose for cleanup
// (see Plan.ComposeForCleanup), sorted by name.
func cleanupObjects(req *fnv1.RunFunctionRequest, id Identity, k CleanupKind, opts CleanupOptions) (CleanupResult, []cleanupObject) {
	accept := func(name string) bool { return name != "" && (opts.Keep == nil || opts.Keep(name)) }
	xrUID := observedCompositeValue(req, "metadata", "uid").GetStringValue()
	prefix := k.composedName("")
	present := map[string]bool{}
	composed := map[string]bool{}
	for name := range observedNames(req) {
		if !strings.HasPrefix(name, prefix) {
			continue // most observed objects: not looked into
		}
		obj := observedResource(req, name)
		if n := valueAt(obj, "metadata", "name").GetStringValue(); sameKind(obj, k) && accept(n) {
			present[n], composed[n] = true, true
		}
	}
	var candidates []*structpb.Struct
	for _, item := range req.GetRequiredResources()[k.requiredKey()].GetItems() {
		obj := item.GetResource()
		n := valueAt(obj, "metadata", "name").GetStringValue()
		if !sameKind(obj, k) || valueAt(obj, "metadata", "namespace").GetStringValue() != id.Namespace || !accept(n) {
			continue
		}
		present[n] = true
		if c := valueAt(obj, "metadata", "annotations", annotationComposedName).GetStringValue(); c != "" && !strings.HasPrefix(c, prefix) {
			continue // composed by a pipeline step under its own name
		}
		if controlledByOther(obj, xrUID) {
			continue // a VM's root disk, a Kamaji Secret: its owner deletes it
		}
		if !composed[n] {
			candidates = append(candidates, obj)
		}
	}
	sort.Slice(candidates, func(i, j int) bool {
		return valueAt(candidates[i], "metadata", "name").GetStringValue() < valueAt(candidates[j], "metadata", "name").GetStringValue()
	})
	var res CleanupResult
	var out []cleanupObject
	for _, obj := range candidates {
		if opts.Limit > 0 && len(composed) >= opts.Limit {
			res.Skipped++
			continue
		}
		n := valueAt(obj, "metadata", "name").GetStringValue()
		composed[n] = true
		out = append(out, cleanupObject{name: k.composedName(n), object: cleanupObjectOf(obj)})
	}
	res.Present, res.Composed = sortedSet(present), sortedSet(composed)
	return res, out
}

// keepComposedForCleanup keeps in rsp's desired state every observed
// composed resource named cleanup-… (composed by Plan.ComposeForCleanup in any
// step) that the desired state does not hold yet. Such an object leaves the
// desired state only when its creator has deleted it (it is no longer
// observed) or with the cluster — never because a kind left a function's
// input, a required resource was not fetched yet, or another step ran
// first: dropping it would make Crossplane delete a tenant's volume. It
// returns an error when an object does not convert.
func keepComposedForCleanup(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	names := make([]string, 0)
	for name := range observedNames(req) {
		if !strings.HasPrefix(name, CleanupPrefix) {
			continue
		}
		if _, desired := rsp.GetDesired().GetResources()[name]; !desired {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if err := setCleanupObject(rsp, name, observedResource(req, name)); err != nil {
			return err
		}
	}
	return nil
}

// setCleanupObject puts the object obj names into rsp's desired state under
// composed, ready (cleanupObjectOf).
func setCleanupObject(rsp *fnv1.RunFunctionResponse, composed string, obj *structpb.Struct) error {
	return setDesired(rsp, composed, cleanupObjectOf(obj), fnv1.Ready_READY_TRUE)
}

// cleanupObjectOf is what is composed for cleanup of the object obj names:
// its apiVersion, kind, name, namespace and (when obj has one) its
// top-level type.
func cleanupObjectOf(obj *structpb.Struct) map[string]any {
	f := obj.GetFields()
	out := map[string]any{
		"apiVersion": f["apiVersion"].GetStringValue(),
		"kind":       f["kind"].GetStringValue(),
		"metadata": map[string]any{
			"name":      valueAt(obj, "metadata", "name").GetStringValue(),
			"namespace": valueAt(obj, "metadata", "namespace").GetStringValue(),
		},
	}
	if t := f["type"].GetStringValue(); t != "" {
		out["type"] = t
	}
	return out
}

// sortedSet returns the members of set, sorted.
func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sameKind reports whether obj is of kind k.
func sameKind(obj *structpb.Struct, k CleanupKind) bool {
	return obj.GetFields()["apiVersion"].GetStringValue() == k.APIVersion && obj.GetFields()["kind"].GetStringValue() == k.Kind
}

// controlledByOther reports whether obj has a controller ownerReference
// whose uid is not xrUID.
func controlledByOther(obj *structpb.Struct, xrUID string) bool {
	for _, ref := range valueAt(obj, "metadata", "ownerReferences").GetListValue().GetValues() {
		f := ref.GetStructValue().GetFields()
		if f["controller"].GetBoolValue() && (xrUID == "" || f["uid"].GetStringValue() != xrUID) {
			return true
		}
	}
	return false
}

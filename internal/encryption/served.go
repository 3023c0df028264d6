package encryption

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// notStored are kinds client-go registers with a list that kube-apiserver
// serves without storage, read-only: componentstatuses (kubernetes
// pkg/registry/core/componentstatus/rest.go, List and Get only), which a
// move's `kubectl annotate` could not write.
var notStored = []string{"componentstatuses"}

// metaTypes is the package of the discovery and options types
// (APIGroup/APIGroupList, Status, ...) that metav1.AddToGroupVersion
// registers in every group version: messages, not stored resources.
var metaTypes = reflect.TypeFor[metav1.APIGroup]().PkgPath()

// lifecycle is what k8s.io/api generates for a pre-release version's
// types (zz_generated.prerelease-lifecycle.go): the minor it was
// deprecated in, by convention the one its successor shipped in.
type lifecycle interface{ APILifecycleDeprecated() (major, minor int) }

// Served are the resources a move or rewrite can name on every tenant
// API server from Kubernetes 1.<oldest> on, sorted, as an
// EncryptionConfiguration names them ("<plural>" in the core group,
// "<plural>.<group>" else): each kind client-go's scheme registers at
// version v1 of its group with a list kind beside it (a stored,
// listable resource) and not one of metaTypes, whose every pre-release version there was
// deprecated by 1.<oldest> (so v1 is served from then on), less
// notStored and what kube-apiserver refuses (CheckResources). The plural
// is meta.UnsafeGuessKindToResource's, which the built-in kinds follow.
func Served(oldest int) []string {
	types := scheme.Scheme.AllKnownTypes()
	var out []string
	for gvk := range types {
		if gvk.Version != "v1" || strings.HasSuffix(gvk.Kind, "List") || types[gvk].PkgPath() == metaTypes {
			continue
		}
		if _, listed := types[gvk.GroupVersion().WithKind(gvk.Kind+"List")]; !listed || !gaBy(gvk, oldest) {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		name := plural.Resource
		if gvk.Group != "" {
			name += "." + gvk.Group
		}
		if !slices.Contains(notStored, name) && len(CheckResources([]string{name})) == 0 {
			out = append(out, name)
		}
	}
	return sorted(out)
}

// gaBy says whether every pre-release version of gvk's kind in the
// scheme (one with a lifecycle) was deprecated by 1.<oldest>.
func gaBy(gvk schema.GroupVersionKind, oldest int) bool {
	for other := range scheme.Scheme.AllKnownTypes() {
		if other.Group != gvk.Group || other.Kind != gvk.Kind || other.Version == gvk.Version {
			continue
		}
		obj, err := scheme.Scheme.New(other)
		if err != nil {
			return false
		}
		l, ok := obj.(lifecycle)
		if !ok {
			continue // a GA version (autoscaling/v2): k8s.io/api marks only pre-release ones
		}
		if major, minor := l.APILifecycleDeprecated(); major != 1 || minor > oldest {
			return false
		}
	}
	return true
}

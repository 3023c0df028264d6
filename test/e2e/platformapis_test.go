//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenantkube/tenantkube/internal/function"
)

var gvkAPIService = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// platformAPIServices checks the names the control-plane function asks
// for against the live kube-apiserver: with the CRDs of ../shared/crds
// and those of crds/later serving the table's other versions (CABPT's
// TalosConfigTemplate, the Cozystack etcd-operator's EtcdCluster), the
// APIService of every entry of function.PlatformAPIs exists, and none
// exists for v1alpha1.controlplane.cluster.x-k8s.io, a version no
// installed CRD serves (the Kamaji control-plane provider v0.20.0 CRD
// serves v1alpha2 only).
func (e *env) platformAPIServices() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var later []*unstructured.Unstructured
	for _, f := range []string{"bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml", "etcd-operator.cozystack.io_etcdclusters.yaml"} {
		objs, err := decodeFile(filepath.Join(e.shared, "crds", "later", f))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		later = append(later, objs...)
	}
	if err := e.applyCRDs(ctx, later, time.Minute); err != nil {
		return err
	}
	size := 0
	err := poll(time.Minute, func(ctx context.Context) (bool, string, error) {
		var missing []string
		size = 0
		for _, a := range function.PlatformAPIs {
			o, err := get(ctx, e.c, gvkAPIService, "", a.APIServiceName())
			if kerrors.IsNotFound(err) {
				missing = append(missing, a.APIServiceName())
				continue
			} else if err != nil {
				return false, "", err
			}
			// As the request carries it: required resources under their
			// key (a map entry of a Resources message).
			s, err := structpb.NewStruct(o.Object)
			if err != nil {
				return false, "", err
			}
			size += proto.Size(&fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{
				"apiservice-" + a.APIServiceName(): {Items: []*fnv1.Resource{{Resource: s}}},
			}})
		}
		for _, a := range function.PlatformAPIs {
			for _, k := range a.Kinds {
				if k.CRD == "" {
					continue
				}
				if _, err := get(ctx, e.c, gvkCRD, "", k.CRD); kerrors.IsNotFound(err) {
					missing = append(missing, "CRD "+k.CRD)
				} else if err != nil {
					return false, "", err
				}
			}
		}
		if len(missing) > 0 {
			return false, "no APIService " + strings.Join(missing, ", "), nil
		}
		const unserved = "v1alpha1.controlplane.cluster.x-k8s.io"
		if _, err := get(ctx, e.c, gvkAPIService, "", unserved); !kerrors.IsNotFound(err) {
			return false, "", fmt.Errorf("APIService %s: %v, want NotFound (no CRD serves that version)", unserved, err)
		}
		return true, "", nil
	})
	if err == nil {
		report("platform APIs: the %d APIServices add %d bytes to each control-plane RunFunctionRequest", len(function.PlatformAPIs), size)
	}
	return err
}

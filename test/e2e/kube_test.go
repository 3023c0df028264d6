//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const fieldOwner = "tenantkube-e2e"

// handedOut holds every port freePort returned in this process: the kernel
// may hand a closed ephemeral port out again, and two components given the
// same port fail to bind.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now and
// that no earlier call returned.
func freePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 64 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no port on 127.0.0.1 left that was not handed out before")
}

// decodeYAML splits a multi-document YAML stream into objects.
func decodeYAML(b []byte) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
}

func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeYAML(b)
}

// apply is `kubectl apply --server-side --force-conflicts`.
func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	u = u.DeepCopy()
	u.SetResourceVersion("")
	u.SetManagedFields(nil)
	//nolint:staticcheck // Patch with client.Apply works for unstructured objects.
	return c.Patch(ctx, u, client.Apply, client.FieldOwner(fieldOwner), client.ForceOwnership)
}

func mergePatch(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name, patch string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(fieldOwner))
}

func get(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}

func list(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// waitFor polls cond every 500ms until it is true or timeout passes; then it
// fails the test with the last reason cond gave.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	if err := poll(timeout, cond); err != nil {
		fatalf(t, "waiting for %s: %v", what, err)
	}
}

func poll(timeout time.Duration, cond func(ctx context.Context) (bool, string, error)) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ok, why, err := cond(ctx)
		cancel()
		if err != nil {
			why = err.Error()
		}
		if ok {
			return nil
		}
		last = why
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s: %s", timeout, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// condition returns the status, reason and message of a condition type.
func condition(u *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return s, r, msg
	}
	return "", "", ""
}

// labelled lists every object of every listable API type that carries the
// label selector sel, in all namespaces (claims and XRs included).
func labelled(ctx context.Context, cfg *rest.Config, c client.Client, sel string) ([]unstructured.Unstructured, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	selector, err := metav1.ParseToLabelSelector(sel)
	if err != nil {
		return nil, err
	}
	ls, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, err
	}
	var found []unstructured.Unstructured
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			items, err := list(ctx, c, gv.WithKind(r.Kind), client.MatchingLabelsSelector{Selector: ls})
			if err != nil {
				if kerrors.IsNotFound(err) || meta.IsNoMatchError(err) || kerrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("list %s: %w", gv.WithKind(r.Kind), err)
			}
			for _, it := range items {
				it.SetGroupVersionKind(gv.WithKind(r.Kind))
				found = append(found, it)
			}
		}
	}
	return found, nil
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

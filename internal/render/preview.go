package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/preview"
)

// Preview renders opts.XR, a changed XR, over opts.Observed, the composed
// resources running now, and reports what applying it does
// (preview.Report; `make preview`). When the control plane's version
// changes, it renders a second time over the first render's objects with
// the control plane at the new version, since the workers function holds
// each node group's version until then. opts.Observed and opts.Required
// may hold `kind: List` documents (`kubectl get -o yaml`); objects of
// Observed without the crossplane.io/composition-resource-name annotation
// are not composed resources and are left out.
func Preview(ctx context.Context, opts Options) (preview.Report, error) {
	if opts.Observed == "" {
		return preview.Report{}, errors.New("no observed composed resources to compare with")
	}
	objs, err := preview.ReadPath(opts.Observed)
	if err != nil {
		return preview.Report{}, err
	}
	observed, err := preview.Composed(objs)
	if err != nil {
		return preview.Report{}, err
	}
	tmp, err := os.MkdirTemp("", "tenantkube-preview-")
	if err != nil {
		return preview.Report{}, err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // best effort

	o := opts
	if len(opts.Required) > 0 {
		var req []*unstructured.Unstructured
		for _, p := range opts.Required {
			objs, err := preview.ReadPath(p)
			if err != nil {
				return preview.Report{}, err
			}
			req = append(req, objs...)
		}
		b, err := preview.WriteYAML(req)
		if err != nil {
			return preview.Report{}, err
		}
		path := filepath.Join(tmp, "required.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return preview.Report{}, err
		}
		o.Required = []string{path}
	}

	var last []byte // the latest render's output
	var maintenance *v1alpha1.MaintenanceStatus
	renderOver := func(name string, objs preview.Objects) (preview.Objects, error) {
		path := filepath.Join(tmp, name)
		b, err := objs.YAML()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
		o.Observed = path
		out, err := Render(ctx, o)
		if err != nil {
			return nil, err
		}
		last = out
		if maintenance == nil {
			if maintenance, err = preview.RenderMaintenance(out); err != nil {
				return nil, err
			}
		}
		return preview.RenderOutput(out)
	}
	first, err := renderOver("observed.yaml", observed)
	if err != nil {
		return preview.Report{}, err
	}
	sleep, err := previewHibernation(observed, first, last, &o, renderOver)
	if err != nil {
		return preview.Report{}, err
	}
	var final preview.Objects
	if next, ok := preview.AfterControlPlaneUpgrade(observed, first); ok {
		if final, err = renderOver("observed-upgraded.yaml", next); err != nil {
			return preview.Report{}, err
		}
	}
	rep, err := preview.Compare(observed, first, final)
	rep.Hibernation = sleep
	rep.Maintenance = maintenance
	return rep, err
}

// previewHibernation is the preview's hibernation (nil when the cluster
// does not use it): the state the first render's XR records, the sleep
// changes from observed to first, and those of a render at the next
// transition (o's clock set to it) over first applied.
func previewHibernation(observed, first preview.Objects, out []byte, o *Options,
	renderOver func(string, preview.Objects) (preview.Objects, error)) (*preview.Hibernation, error) {
	state, next, err := preview.RenderedHibernation(out)
	if err != nil || state == "" {
		return nil, err
	}
	h := &preview.Hibernation{State: state, Now: preview.HibernationChanges(observed, first), Next: next}
	if next.IsZero() {
		return h, nil
	}
	clock := o.Clock
	o.Clock = next
	at, err := renderOver("observed-next-transition.yaml", preview.Applied(observed, first))
	o.Clock = clock
	if err != nil {
		return nil, err
	}
	h.AtNext = preview.HibernationChanges(first, at)
	return h, nil
}

package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// talosMD is md with its bootstrap.configRef on the TalosConfigTemplate
// demo-<g>.
func talosMD(g, version, tmpl, min string) *unstructured.Unstructured {
	u := md(g, version, tmpl, min)
	ref := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["bootstrap"].(map[string]any)["configRef"].(map[string]any)
	ref["kind"] = "TalosConfigTemplate"
	return u
}

func tct(g, talosVersion, patch string) *unstructured.Unstructured {
	return obj("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", "demo-"+g, "nodegroup-"+g+"-talosconfig", nil,
		map[string]any{"template": map[string]any{"spec": map[string]any{"generateType": "join", "talosVersion": talosVersion, "strategicPatches": []any{patch}}}})
}

// TestOSChangePreview: moving a group from Ubuntu to Talos rolls it, and
// the preview names the OS as the cause (not the templates that follow
// from it); a Talos group whose talos.version changes rolls for talos.
func TestOSChangePreview(t *testing.T) {
	observed := objects(kcp("v1.35.1"), md("md0", "v1.35.1", "demo-md0-aaaaaa", "0"), kmt("demo-md0-aaaaaa", "20Gi", image135), kct("md0", "v1.35.1"))
	first := objects(kcp("v1.35.1"), talosMD("md0", "v1.35.1", "demo-md0-bbbbbb", "0"), kmt("demo-md0-aaaaaa", "20Gi", image135), kct("md0", "v1.35.1"),
		kmt("demo-md0-bbbbbb", "20Gi", ""), tct("md0", "v1.13.6", "machine: {}"))
	got, err := Compare(observed, first, first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]NodeGroup{{Name: "md0", Roll: &Roll{Causes: []string{"os (Ubuntu to Talos)"}}}}, got.NodeGroups); diff != "" {
		t.Errorf("node groups (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.String(), "md0: rolls (os (Ubuntu to Talos))") {
		t.Errorf("preview text does not say md0 rolls for its OS:\n%s", got.String())
	}

	talosObserved := first
	upgraded := objects(kcp("v1.35.1"), talosMD("md0", "v1.35.1", "demo-md0-cccccc", "0"), kmt("demo-md0-cccccc", "20Gi", ""), tct("md0", "v1.13.7", "machine: {}"))
	got, err = Compare(talosObserved, upgraded, upgraded)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]NodeGroup{{Name: "md0", Roll: &Roll{Causes: []string{"talos"}}}}, got.NodeGroups); diff != "" {
		t.Errorf("Talos release change (-want +got):\n%s", diff)
	}
}

package preview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// RenderMaintenance reads status.maintenance of the XR a render printed
// first (the changes that wait for the cluster's maintenance window);
// nil when nothing waits.
func RenderMaintenance(stream []byte) (*v1alpha1.MaintenanceStatus, error) {
	objs, err := ReadYAML(bytes.NewReader(stream))
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, errors.New("the render printed no XR")
	}
	status, _ := objs[0].Object["status"].(map[string]any)
	raw, ok := status["maintenance"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	out := &v1alpha1.MaintenanceStatus{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("status.maintenance of the rendered XR: %w", err)
	}
	if len(out.Pending) == 0 {
		return nil, nil
	}
	return out, nil
}

// maintenanceLines are the report's lines of what waits for the window:
// one naming the window, one per pending change.
func maintenanceLines(m *v1alpha1.MaintenanceStatus) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "maintenance: %d change(s) wait for the window opening at %s\n", len(m.Pending), m.NextWindowStart)
	for _, c := range m.Pending {
		fmt.Fprintf(&b, "maintenance: %s %s -> %s (%s)\n", c.What, c.From, c.To, c.Reason)
	}
	return b.String()
}

package preview

import (
	"strings"
	"testing"
)

// TestRenderMaintenance: the rendered XR's status.maintenance becomes
// the report's maintenance lines; an XR without it adds none.
func TestRenderMaintenance(t *testing.T) {
	stream := `apiVersion: tenantkube.io/v1alpha1
kind: XKubernetesCluster
metadata: {name: demo}
status:
  maintenance:
    nextWindowStart: "2026-12-08T01:00:00Z"
    pending:
    - {what: controlPlane, from: v1.35.1, to: v1.35.6, reason: a new patch}
    - {what: nodeGroup/md0, from: demo-md0-aaaaaa v1.35.1, to: demo-md0-bbbbbb v1.35.6, reason: the platform changed it}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: y}
`
	m, err := RenderMaintenance([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	got := Report{Maintenance: m}.String()
	for _, want := range []string{
		"maintenance: 2 change(s) wait for the window opening at 2026-12-08T01:00:00Z\n",
		"maintenance: controlPlane v1.35.1 -> v1.35.6 (a new patch)\n",
		"maintenance: nodeGroup/md0 demo-md0-aaaaaa v1.35.1 -> demo-md0-bbbbbb v1.35.6 (the platform changed it)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	m, err = RenderMaintenance([]byte("apiVersion: tenantkube.io/v1alpha1\nkind: XKubernetesCluster\nmetadata: {name: demo}\n"))
	if err != nil || m != nil || strings.Contains(Report{Maintenance: m}.String(), "maintenance") {
		t.Errorf("no status.maintenance: %+v %v", m, err)
	}
}

package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CRD's kubebuilder defaults and Default agree.
func TestCRDDefaultsMatchGo(t *testing.T) {
	props := schemaProperties(t)
	charts := props["charts"].Properties
	in := &Settings{}
	in.Default()
	for _, release := range Releases() {
		src, key := in.Charts.Source(release)
		def := charts[key].Default
		if def == nil {
			t.Errorf("%s: no CRD default", key)
			continue
		}
		var got ChartSource
		if err := json.Unmarshal(def.Raw, &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(*src, got); d != "" {
			t.Errorf("%s: CRD default differs from Default (-go +crd):\n%s", key, d)
		}
	}
	for k, want := range map[string]string{"ingressClassName": `"nginx"`, "serviceCIDR": `"10.95.0.0/16"`, "sourceInterval": `"1h"`} {
		if got := string(props[k].Default.Raw); got != want {
			t.Errorf("%s: CRD default %s, want %s", k, got, want)
		}
	}
	mon := props["monitoring"].Properties
	for k, want := range map[string]any{
		"metricsWriteURL": in.Monitoring.MetricsWriteURL, "metricsReadURL": in.Monitoring.MetricsReadURL,
		"logsURL": in.Monitoring.LogsURL, "logsHeaders": map[string]any{"AccountID": in.Monitoring.LogsHeaders["AccountID"], "ProjectID": in.Monitoring.LogsHeaders["ProjectID"]},
	} {
		var got any
		if mon[k].Default == nil || json.Unmarshal(mon[k].Default.Raw, &got) != nil {
			t.Errorf("monitoring.%s: no CRD default", k)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("monitoring.%s: CRD default differs from Default (-go +crd):\n%s", k, d)
		}
	}
	if len(in.Monitoring.LogsHeaders) != 2 {
		t.Errorf("logsHeaders %v", in.Monitoring.LogsHeaders)
	}
	if got := in.SourceInterval.Duration.String(); got != "1h0m0s" {
		t.Errorf("sourceInterval %s", got)
	}
}

func TestDefaultPartialSource(t *testing.T) {
	in := &Settings{Charts: Charts{
		Cilium:       ChartSource{Version: "1.19.0"},
		IngressNginx: ChartSource{Kind: KindOCIRepository, URL: "oci://registry.example/charts/ingress-nginx", Version: "4.14.0"},
		CSI:          ChartSource{Name: "my-csi"},
	}}
	in.Default()
	want := ChartSource{Kind: KindHelmRepository, URL: "https://helm.cilium.io/", Repository: "cilium", Chart: "cilium", Version: "1.19.0",
		ValuesLayout: LayoutUpstream, WrapperKey: "cilium"}
	if d := cmp.Diff(want, in.Charts.Cilium); d != "" {
		t.Errorf("cilium (-want +got):\n%s", d)
	}
	want = ChartSource{Kind: KindOCIRepository, URL: "oci://registry.example/charts/ingress-nginx", Version: "4.14.0",
		ValuesLayout: LayoutUpstream, WrapperKey: "ingress-nginx"}
	if d := cmp.Diff(want, in.Charts.IngressNginx); d != "" {
		t.Errorf("ingress-nginx (-want +got):\n%s", d)
	}
	if in.Charts.CSI.Name != "my-csi" || in.Charts.CSI.Namespace != DefaultArtifactNamespace {
		t.Errorf("csi %+v", in.Charts.CSI)
	}
	if err := in.Validate().ToAggregate(); err != nil {
		t.Error(err)
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		mutate func(*Settings)
		field  string
	}{
		"defaults":           {func(*Settings) {}, ""},
		"bad CIDR":           {func(in *Settings) { in.ServiceCIDR = "10.95.0.0" }, "input.serviceCIDR"},
		"tiny CIDR":          {func(in *Settings) { in.ServiceCIDR = "10.95.0.0/29" }, "input.serviceCIDR"},
		"unknown kind":       {func(in *Settings) { in.Charts.Velero.Kind = "GitRepository" }, "input.charts.velero.kind"},
		"unknown layout":     {func(in *Settings) { in.Charts.Velero.ValuesLayout = "Nested" }, "input.charts.velero.valuesLayout"},
		"OCI with https":     {func(in *Settings) { in.Charts.FluxCD.URL = "https://x.example" }, "input.charts.fluxcd.url"},
		"helm without chart": {func(in *Settings) { in.Charts.Velero.Chart = "" }, "input.charts.velero.chart"},
		"reference, no name": {func(in *Settings) { in.Charts.CSI.Name = "" }, "input.charts.csi.name"},
		"artifact with url":  {func(in *Settings) { in.Charts.CSI.URL = "https://x.example" }, "input.charts.csi.url"},
		"repo URL clash": {func(in *Settings) {
			in.Charts.HAMi.URL = "https://other.example"
			in.Charts.HAMi.Repository = "cilium"
		}, "input.charts.hami.url"},
		"bad repository name": {func(in *Settings) { in.Charts.Velero.Repository = "Bad_Name" }, "input.charts.velero.repository"},
		"retry at 10s":        {func(in *Settings) { in.ReleaseRetryInterval = &metav1.Duration{Duration: 10 * time.Second} }, ""},
		"retry under 10s": {func(in *Settings) {
			in.ReleaseRetryInterval = &metav1.Duration{Duration: 10*time.Second - time.Millisecond}
		}, "input.releaseRetryInterval"},
		"Talos workers":     {func(in *Settings) { in.DefaultWorkerOS = "Talos" }, ""},
		"unknown worker OS": {func(in *Settings) { in.DefaultWorkerOS = "Flatcar" }, "input.defaultWorkerOS"},
		"retry at 1h":       {func(in *Settings) { in.ReleaseRetryInterval = &metav1.Duration{Duration: time.Hour} }, ""},
		"retry over 1h": {func(in *Settings) {
			in.ReleaseRetryInterval = &metav1.Duration{Duration: time.Hour + time.Second}
		}, "input.releaseRetryInterval"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := &Settings{}
			in.Default()
			c.mutate(in)
			err := in.Validate().ToAggregate()
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("want an error naming %s, got %v", c.field, err)
			}
		})
	}
}

func TestTenthAddress(t *testing.T) {
	for cidr, want := range map[string]string{"10.95.0.0/16": "10.95.0.10", "10.96.0.0/12": "10.96.0.10", "10.95.1.7/24": "10.95.1.10", "fd00::/108": "fd00::a"} {
		if got, err := TenthAddress(cidr); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", cidr, got, err, want)
		}
	}
}

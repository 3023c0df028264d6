package v1alpha1

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateEarlierVersions checks every entry of earlierVersions on
// its own: each bad entry is one error at its index, in order, and good
// ones none. Expectations by hand: Helm chart versions and ranges as
// Masterminds semver constraints, OCI tags as [\w][\w.-]{0,127}.
func TestValidateEarlierVersions(t *testing.T) {
	long := strings.Repeat("1", MaxChartVersionLength+1)
	cases := map[string]struct {
		mutate func(*Charts)
		want   []string // "<type> <field>"
	}{
		"helm entries": {func(c *Charts) {
			c.Cilium.EarlierVersions = []string{"1.18.2", "", "1.18.4", "1.18.2", "not a version!", long, ">=1.17.0 <1.18.0", "v1.16.3"}
		}, []string{
			"FieldValueRequired input.charts.cilium.earlierVersions[1]",
			"FieldValueInvalid input.charts.cilium.earlierVersions[2]", // the version itself
			"FieldValueDuplicate input.charts.cilium.earlierVersions[3]",
			"FieldValueInvalid input.charts.cilium.earlierVersions[4]",
			"FieldValueTooLong input.charts.cilium.earlierVersions[5]",
		}},
		"oci entries": {func(c *Charts) {
			c.FluxCD.EarlierVersions = []string{"0.32.0", "-bad", "v0.31.0", "a b", "_x.y-z"}
		}, []string{
			"FieldValueInvalid input.charts.fluxcd.earlierVersions[1]",
			"FieldValueInvalid input.charts.fluxcd.earlierVersions[3]",
		}},
		"too many": {func(c *Charts) {
			for i := range MaxEarlierVersions + 1 {
				c.Velero.EarlierVersions = append(c.Velero.EarlierVersions, fmt.Sprintf("12.0.%d", i))
			}
		}, []string{"FieldValueTooMany input.charts.velero.earlierVersions"}},
		"eight": {func(c *Charts) {
			for i := range MaxEarlierVersions {
				c.Velero.EarlierVersions = append(c.Velero.EarlierVersions, fmt.Sprintf("12.0.%d", i))
			}
		}, nil},
		"artifact": {func(c *Charts) { c.CSI.EarlierVersions = []string{"1.0.0"} },
			[]string{"FieldValueForbidden input.charts.csi.earlierVersions"}},
		"referenced oci": {func(c *Charts) {
			c.GatewayAPICRDs = ChartSource{Kind: KindOCIRepository, Name: "gw", ValuesLayout: LayoutUpstream, EarlierVersions: []string{"v1.8.1"}}
		}, []string{"FieldValueForbidden input.charts.gatewayAPICRDs.earlierVersions"}},
		"helm version": {func(c *Charts) { c.Velero.Version = "twelve" },
			[]string{"FieldValueInvalid input.charts.velero.version"}},
		"oci version": {func(c *Charts) { c.FluxCD.Version = "0.33.0+x" },
			[]string{"FieldValueInvalid input.charts.fluxcd.version"}},
		"long version": {func(c *Charts) { c.Velero.Version = long },
			[]string{"FieldValueTooLong input.charts.velero.version"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := &Settings{}
			in.Default()
			c.mutate(&in.Charts)
			var got []string
			for _, e := range in.Validate() {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors -want +got:\n%s", diff)
			}
		})
	}
}

// TestDefaultKeepsEarlierVersions: a source that sets only its earlier
// versions keeps them and inherits the rest of its default.
func TestDefaultKeepsEarlierVersions(t *testing.T) {
	in := &Settings{Charts: Charts{Cilium: ChartSource{EarlierVersions: []string{"1.18.2"}}}}
	in.Default()
	want := ChartSource{Kind: KindHelmRepository, URL: "https://helm.cilium.io/", Repository: "cilium", Chart: "cilium", Version: "1.18.4",
		ValuesLayout: LayoutUpstream, WrapperKey: "cilium", EarlierVersions: []string{"1.18.2"}}
	if diff := cmp.Diff(want, in.Charts.Cilium); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

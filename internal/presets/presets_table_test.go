package presets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPresetTable pins every resources preset to the presets of docs/tenant-guide.md, typed out
// by hand (CPU of the size × memory per CPU of the series: t1 0.5 GiB, c1
// 1 GiB, s1 2 GiB, u1 4 GiB, m1 8 GiB), and the deprecated flat aliases to
// their old values. Quantities compare in canonical form (1024Mi = 1Gi).
func TestPresetTable(t *testing.T) {
	type preset struct{ CPU, Memory string }
	want := map[string]preset{
		"t1.nano": {"250m", "128Mi"}, "t1.micro": {"500m", "256Mi"}, "t1.small": {"1", "512Mi"}, "t1.medium": {"2", "1Gi"},
		"t1.large": {"4", "2Gi"}, "t1.xlarge": {"8", "4Gi"}, "t1.2xlarge": {"16", "8Gi"}, "t1.4xlarge": {"32", "16Gi"},

		"c1.nano": {"250m", "256Mi"}, "c1.micro": {"500m", "512Mi"}, "c1.small": {"1", "1Gi"}, "c1.medium": {"2", "2Gi"},
		"c1.large": {"4", "4Gi"}, "c1.xlarge": {"8", "8Gi"}, "c1.2xlarge": {"16", "16Gi"}, "c1.4xlarge": {"32", "32Gi"},

		"s1.nano": {"250m", "512Mi"}, "s1.micro": {"500m", "1Gi"}, "s1.small": {"1", "2Gi"}, "s1.medium": {"2", "4Gi"},
		"s1.large": {"4", "8Gi"}, "s1.xlarge": {"8", "16Gi"}, "s1.2xlarge": {"16", "32Gi"}, "s1.4xlarge": {"32", "64Gi"},

		"u1.nano": {"250m", "1Gi"}, "u1.micro": {"500m", "2Gi"}, "u1.small": {"1", "4Gi"}, "u1.medium": {"2", "8Gi"},
		"u1.large": {"4", "16Gi"}, "u1.xlarge": {"8", "32Gi"}, "u1.2xlarge": {"16", "64Gi"}, "u1.4xlarge": {"32", "128Gi"},

		"m1.nano": {"250m", "2Gi"}, "m1.micro": {"500m", "4Gi"}, "m1.small": {"1", "8Gi"}, "m1.medium": {"2", "16Gi"},
		"m1.large": {"4", "32Gi"}, "m1.xlarge": {"8", "64Gi"}, "m1.2xlarge": {"16", "128Gi"}, "m1.4xlarge": {"32", "256Gi"},

		"nano": {"250m", "128Mi"}, "micro": {"500m", "256Mi"}, "small": {"1", "512Mi"}, "medium": {"1", "1Gi"},
		"large": {"2", "2Gi"}, "xlarge": {"4", "4Gi"}, "2xlarge": {"8", "8Gi"},
	}
	canonical := func(s string) string { q := resource.MustParse(s); return q.String() }
	for name, p := range want {
		want[name] = preset{canonical(p.CPU), canonical(p.Memory)}
	}
	got := map[string]preset{}
	for _, name := range Names() {
		p, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q), a name Names lists: %v", name, err)
		}
		got[name] = preset{p.CPU.String(), p.Memory.String()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources presets: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff("2Gi", EphemeralStorage.String()); diff != "" {
		t.Errorf("every preset's ephemeral-storage: -want, +got:\n%s", diff)
	}
}

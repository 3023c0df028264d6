package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFloorMiB(t *testing.T) {
	cases := map[string]int64{"8Gi": 8192, "1e9": 953, "500e6": 476, "1Gi": 1024, "1.5Gi": 1536, "1048575": 0, "0": 0, "409.9Mi": 409}
	for in, want := range cases {
		if got := FloorMiB(resource.MustParse(in)); got != want {
			t.Errorf("FloorMiB(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestMillicores(t *testing.T) {
	cases := map[string]int64{"0.5": 500, "100m": 100, "2": 2000, "1.0001": 1001}
	for in, want := range cases {
		if got := Millicores(resource.MustParse(in)); got != want {
			t.Errorf("Millicores(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestDivideBytes(t *testing.T) {
	cases := []struct {
		in   string
		div  int64
		want string
	}{
		{"2Gi", 40, "53687091200m"}, // 51.2Mi
		{"1Gi", 2, "512Mi"},
		{"7", 2, "3500m"},
		{"1", 3, "334m"}, // rounded up, never down
		{"1e9", 40, "25e6"},
	}
	for _, c := range cases {
		got := DivideBytes(resource.MustParse(c.in), c.div)
		if got.String() != c.want {
			t.Errorf("DivideBytes(%s, %d) = %s, want %s", c.in, c.div, got.String(), c.want)
		}
	}
	if got, want := DivideBytes(resource.MustParse("2Gi"), 40), resource.MustParse("51.2Mi"); got.Cmp(want) != 0 {
		t.Errorf("2Gi/40 = %s, not equal to 51.2Mi", got.String())
	}
}

func TestPresets(t *testing.T) {
	cases := map[string][2]string{
		"c1.medium": {"2", "2Gi"}, "t1.micro": {"500m", "256Mi"}, "t1.nano": {"250m", "128Mi"},
		"m1.4xlarge": {"32", "256Gi"}, "s1.large": {"4", "8Gi"}, "medium": {"1", "1Gi"}, "2xlarge": {"8", "8Gi"},
	}
	for name, want := range cases {
		p, err := LookupPreset(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]string{p.CPU.String(), p.Memory.String()}; got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	if _, err := LookupPreset("x9.huge"); err == nil {
		t.Error("unknown preset accepted")
	}
	if n := len(PresetNames()); n != 47 {
		t.Errorf("%d presets, want 47 (5 series × 8 sizes + 7 aliases)", n)
	}
}

func TestContainerResources(t *testing.T) {
	p, _ := LookupPreset("c1.medium")
	r := ContainerResources(p.CPU, p.Memory, PresetEphemeralStorage, 10)
	got := map[string]string{}
	for k, v := range r.Limits {
		got["limits."+string(k)] = v.String()
	}
	for k, v := range r.Requests {
		got["requests."+string(k)] = v.String()
	}
	want := map[string]string{
		"limits.cpu": "2", "limits.memory": "2Gi", "limits.ephemeral-storage": "2Gi",
		"requests.cpu": "200m", "requests.memory": "2Gi", "requests.ephemeral-storage": "53687091200m",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("c1.medium resources (-want +got):\n%s", d)
	}
}

package storageclass

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func sc(infra string, isDefault bool) map[string]any {
	return map[string]any{"infraStorageClass": infra, "default": isDefault}
}

// TestTenant: the tenant StorageClasses of today's Cozystack kubernetes
// chart (head-chart-README: "Remote-accessible LINSTOR classes are
// auto-propagated to the tenant under the same name"; storageClass, default
// replicated, is the default class inside the tenant), and the defaults of
// its kubevirt-csi-node chart: replicated → replicated the default class,
// kubevirt → replicated not default.
func TestTenant(t *testing.T) {
	cases := map[string]struct {
		cluster string
		remote  []string
		want    map[string]any
	}{
		"chart defaults": {
			cluster: "replicated", remote: []string{"replicated"},
			want: map[string]any{"replicated": sc("replicated", true), "kubevirt": sc("replicated", false)},
		},
		"every remote class under its own name, the cluster's the default": {
			cluster: "replicated", remote: []string{"replicated", "replicated-nvme", "linstor-r1"},
			want: map[string]any{
				"replicated": sc("replicated", true), "replicated-nvme": sc("replicated-nvme", false),
				"linstor-r1": sc("linstor-r1", false), "kubevirt": sc("replicated", false),
			},
		},
		"the alias follows the cluster's class": {
			cluster: "replicated-nvme", remote: []string{"replicated", "replicated-nvme"},
			want: map[string]any{
				"replicated": sc("replicated", false), "replicated-nvme": sc("replicated-nvme", true),
				"kubevirt": sc("replicated-nvme", false),
			},
		},
		"a remote class named kubevirt is itself": {
			cluster: "replicated", remote: []string{"replicated", "kubevirt"},
			want: map[string]any{"replicated": sc("replicated", true), "kubevirt": sc("kubevirt", false)},
		},
		"a remote class named kubevirt as the cluster's": {
			cluster: "kubevirt", remote: []string{"kubevirt"},
			want: map[string]any{"kubevirt": sc("kubevirt", true)},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := Tenant(c.cluster, c.remote)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Tenant(%q, %v) (-want +got):\n%s", c.cluster, c.remote, d)
			}
			defaults := 0
			for _, v := range got {
				if v.(map[string]any)["default"] == true {
					defaults++
				}
			}
			if defaults != 1 {
				t.Errorf("%d default classes, want exactly 1", defaults)
			}
		})
	}
}

// TestCheck: spec.storageClass outside the platform's list is refused,
// naming the field, the value and the classes allowed.
func TestCheck(t *testing.T) {
	p := field.NewPath("spec", "storageClass")
	if err := Check(p, "replicated", []string{"replicated", "fast"}); err != nil {
		t.Errorf("replicated among [replicated fast]: %v", err)
	}
	err := Check(p, "local", []string{"replicated", "fast"})
	if err == nil {
		t.Fatal("local outside [replicated fast] accepted")
	}
	want := `spec.storageClass: Unsupported value: "local": supported values: "replicated", "fast"`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err.Error(), want)
	}
}

func TestValidateRemote(t *testing.T) {
	p := field.NewPath("input", "remoteStorageClasses")
	many := make([]string, MaxRemote+1)
	for i := range many {
		many[i] = "c" + strings.Repeat("x", i)
	}
	cases := map[string]struct {
		remote []string
		want   string // "" when valid
	}{
		"default":    {remote: DefaultRemote()},
		"thirty-two": {remote: many[:MaxRemote]},
		"empty":      {remote: []string{}, want: "input.remoteStorageClasses: Required value"},
		"too many":   {remote: many, want: "input.remoteStorageClasses: Too many: 33: must have at most 32 items"},
		"not a name": {remote: []string{"replicated", "Fast_SSD"}, want: `input.remoteStorageClasses[1]: Invalid value: "Fast_SSD"`},
		"duplicate":  {remote: []string{"replicated", "fast", "replicated"}, want: `input.remoteStorageClasses[2]: Duplicate value: "replicated"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := ValidateRemote(p, c.remote)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%v: %v", c.remote, err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("%v: error %v, want one starting %q", c.remote, err, c.want)
			}
		})
	}
}

// TestEnforcement: the driver's infraStorageClassEnforcement YAML
// (kubevirt/csi-driver docs/snapshot-driver-config.md: allowAll,
// allowDefault, allowList) allows exactly the listed classes.
func TestEnforcement(t *testing.T) {
	want := "allowAll: false\nallowDefault: true\nallowList:\n- replicated\n- replicated-nvme\n"
	if got := Enforcement([]string{"replicated", "replicated-nvme"}); got != want {
		t.Errorf("Enforcement = %q, want %q", got, want)
	}
}

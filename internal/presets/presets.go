// Package presets is the table of resource presets (the seed chart's
// resourcesPreset names) and the container resources each one sets.
package presets

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenantkube/tenantkube/internal/quantity"
)

// Preset is the CPU and memory of a resources preset.
type Preset struct {
	CPU    resource.Quantity
	Memory resource.Quantity
}

// EphemeralStorage is the ephemeral-storage limit of every preset.
var EphemeralStorage = resource.MustParse("2Gi")

// presetSizes are the CPUs of each preset size.
var presetSizes = map[string]string{
	"nano": "250m", "micro": "500m", "small": "1", "medium": "2",
	"large": "4", "xlarge": "8", "2xlarge": "16", "4xlarge": "32",
}

// presetSeries are the MiB of memory per whole CPU of each preset series: t1
// 0.5 GiB, c1 1 GiB, s1 2 GiB, u1 4 GiB, m1 8 GiB.
var presetSeries = map[string]int64{"t1": 512, "c1": 1024, "s1": 2048, "u1": 4096, "m1": 8192}

// legacyPresets are the deprecated flat aliases, which keep their old values.
var legacyPresets = map[string][2]string{
	"nano": {"250m", "128Mi"}, "micro": {"500m", "256Mi"}, "small": {"1", "512Mi"},
	"medium": {"1", "1Gi"}, "large": {"2", "2Gi"}, "xlarge": {"4", "4Gi"}, "2xlarge": {"8", "8Gi"},
}

// presets is every preset by name, computed once.
var presets = buildPresets()

func buildPresets() map[string]Preset {
	out := map[string]Preset{}
	for series, mibPerCPU := range presetSeries {
		for size, cpu := range presetSizes {
			c := resource.MustParse(cpu)
			mem := c.MilliValue() * mibPerCPU / 1000
			out[series+"."+size] = Preset{CPU: c, Memory: resource.MustParse(quantity.FormatMiB(mem))}
		}
	}
	for name, v := range legacyPresets {
		out[name] = Preset{CPU: resource.MustParse(v[0]), Memory: resource.MustParse(v[1])}
	}
	return out
}

// Names returns every accepted preset name, sorted.
func Names() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the preset called name (t1.micro → 500m / 256Mi). It
// returns an error listing the allowed names when there is none.
func Lookup(name string) (Preset, error) {
	p, ok := presets[name]
	if !ok {
		return Preset{}, fmt.Errorf("unknown resources preset %q; allowed: %s", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// ContainerResources are the container resources emitted for a component
// sized cpu/memory with the given ephemeral-storage limit: limits
// are the values; requests are cpu = limit / cpuAllocationRatio (rounded up
// to a millicore), memory = limit, ephemeral-storage = limit / 40 in whole
// bytes (the fraction dropped, as the seed chart writes it). It panics
// if cpuAllocationRatio is not positive (validated with the input).
func ContainerResources(cpu, memory, ephemeral resource.Quantity, cpuAllocationRatio int64) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:              cpu,
			corev1.ResourceMemory:           memory,
			corev1.ResourceEphemeralStorage: ephemeral,
		},
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:              quantity.DivideMillicores(cpu, cpuAllocationRatio),
			corev1.ResourceMemory:           memory,
			corev1.ResourceEphemeralStorage: quantity.DivideWholeBytes(ephemeral, 40),
		},
	}
}

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// TestCloudConfigYAMLMatchesSigsYAML holds the cloud-config file to what
// sigs.k8s.io/yaml.Marshal (JSON, then YAML with sorted keys) writes for
// the same configuration, for names YAML would read as other types unless
// quoted.
func TestCloudConfigYAMLMatchesSigsYAML(t *testing.T) {
	for _, s := range []string{"demo", "tenant-foo", "true", "no", "y", "null", "123", "1e3", "0x1f", "0o17", "1-2", "e", "on", "-", "~", "a:b", "é", ""} {
		id := function.Identity{Name: s, Namespace: "ns-" + s}
		if s != "" {
			id.Namespace = s
		}
		cm, err := buildCloudConfig(id, v1alpha1.LoadBalancerSelectorless)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sigsyaml.Marshal(cloudConfigFile{
			Namespace:    id.Namespace,
			InfraLabels:  map[string]string{function.LabelCluster: id.Name, function.LabelCAPICluster: id.Name},
			LoadBalancer: cloudConfigLoadBalancer{Enabled: true, CreationPollInterval: 5, CreationPollTimeout: 60, Selectorless: true, EnableEPSController: true},
			InstancesV2:  cloudConfigInstancesV2{Enabled: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want), cm.Data[cloudConfigKey]); d != "" {
			t.Errorf("%q: (-sigs.k8s.io/yaml +buildCloudConfig):\n%s", s, d)
		}
	}
}

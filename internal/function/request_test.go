package function

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestDecodeSpecNamesTheField(t *testing.T) {
	cases := map[string][]string{
		`{nodeGroups: {md0: {}, gpu: {kubelet: {systemReservedMemory: {a: 1}}}}}`: {"spec.nodeGroups[gpu].kubelet.systemReservedMemory", "a JSON object cannot be a string"},
		`{nodeGroups: {md0: {minReplicas: "two"}}}`:                               {"spec.nodeGroups[md0].minReplicas", "a JSON string cannot be a int32"},
		`{nodeGroups: {md0: {roles: ingress}}}`:                                   {"spec.nodeGroups[md0].roles"},
		`{controlPlane: {replicas: true}}`:                                        {"spec.controlPlane.replicas", "a JSON bool"},
		`{addons: {certManager: {enabled: "yes"}}}`:                               {"spec.addons.certManager.enabled"},
	}
	for in, want := range cases {
		var spec any
		if err := yaml.Unmarshal([]byte(in), &spec); err != nil {
			t.Fatal(err)
		}
		_, err := DecodeSpec(spec)
		if err == nil {
			t.Errorf("%s: decoded", in)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", in, err, w)
			}
		}
	}
}

func TestDecodeSpecAcceptsNumbersForQuantities(t *testing.T) {
	var spec any
	if err := yaml.Unmarshal([]byte(`{nodeGroups: {md0: {diskSize: 1e10, kubelet: {systemReservedMemory: 500e6, evictionHardMemory: 7%, kubeReservedCpu: 0.5}}}}`), &spec); err != nil {
		t.Fatal(err)
	}
	s, err := DecodeSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	k := s.NodeGroups["md0"].Kubelet
	if k.SystemReservedMemory != "500000000" || k.KubeReservedCPU != "0.5" || k.EvictionHardMemory != "7%" || s.NodeGroups["md0"].DiskSize != "10000000000" {
		t.Errorf("decoded %+v disk %s", k, s.NodeGroups["md0"].DiskSize)
	}
}

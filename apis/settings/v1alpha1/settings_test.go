package v1alpha1

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The defaults of the settings several functions read
// (docs/architecture.md: service CIDR 10.95.0.0/16; KubeVirt's
// developerConfiguration.cpuAllocationRatio default 10; the nginx ingress
// class; Kubernetes' default cluster domain), in Default and in the
// generated schema alike.
func TestSharedDefaults(t *testing.T) {
	props := schemaProperties(t)
	s := &Settings{}
	s.Default()
	var got map[string]any
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &got)
	for k, want := range map[string]any{
		"serviceCIDR": "10.95.0.0/16", "podCIDR": "10.243.0.0/16", "cpuAllocationRatio": float64(10), "ingressClassName": "nginx",
		"deletionOrder": "Usages", "clusterDomain": "cluster.local", "baseDomain": "tenants.example.com", "defaultWorkerOS": "Ubuntu",
		"maxCleanupObjects": float64(100),
	} {
		if got[k] != want {
			t.Errorf("Default: %s = %v, want %v", k, got[k], want)
		}
		var schema any
		if d := props[k].Default; d == nil || json.Unmarshal(d.Raw, &schema) != nil || schema != want {
			t.Errorf("schema: default of %s = %v, want %v", k, schema, want)
		}
	}
	if rs := s.RemoteStorageClasses; !slices.Equal(rs, []string{"replicated"}) {
		t.Errorf("remoteStorageClasses = %v, want [replicated]", rs)
	}
}

// Validate reports every bad setting at once, each by its path under
// input, with the messages the functions print (the podCIDR one as in
// test/testdata/control-plane/fatal-platform-cidr.golden.yaml).
func TestValidateReportsEveryProblem(t *testing.T) {
	s := &Settings{}
	s.Default()
	s.PodCIDR = "10.243.0.0/33"
	s.Etcd.Replicas = -1
	s.MaxReplicas = 5001
	s.Charts.Velero.Kind = "GitRepository"
	var got []string
	for _, e := range s.Validate() {
		got = append(got, e.Error())
	}
	want := []string{
		`input.podCIDR: Invalid value: "10.243.0.0/33": must be a CIDR such as 10.95.0.0/16`,
		`input.etcd.replicas: Invalid value: -1: must be at least 1`,
		`input.maxReplicas: Invalid value: 5001: must be between 1 and 5000`,
		`input.charts.velero.kind: Unsupported value: "GitRepository": supported values: "HelmRepository", "OCIRepository", "ExternalArtifact"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Validate() =\n%q\nwant\n%q", got, want)
	}
	d := &Settings{}
	d.Default()
	if errs := d.Validate(); len(errs) > 0 {
		t.Errorf("the defaults: %v", errs.ToAggregate())
	}
}

// schemaProperties are the top-level properties of the generated schema
// of the settings (package/settings).
func schemaProperties(t *testing.T) map[string]apiextensionsv1.JSONSchemaProps {
	t.Helper()
	raw, err := os.ReadFile("../../../package/settings/settings.tenantkube.io_platformsettings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
}

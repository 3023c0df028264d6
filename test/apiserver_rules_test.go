package test

import (
	"strings"
	"testing"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestXRDHoldsGoLists: the XRD's CEL rules on the API server's extra
// flags, volumes and mounts carry the lists Validate uses
// (v1alpha1.ReservedFlags, OIDCFlags, VerbosityFlag, ReservedVolumeNames,
// ReservedMountPaths), so
// the two cannot drift apart.
func TestXRDHoldsGoLists(t *testing.T) {
	api := xrdRootSchema(t).Properties["spec"].Properties["controlPlane"].Properties["apiServer"]
	rules := func(v []string) string { return strings.Join(v, "\n") }
	var argRules, volumeRules, mountRules []string
	for _, r := range api.Properties["extraArgs"].Items.Schema.XValidations {
		argRules = append(argRules, r.Rule)
	}
	for _, r := range api.Properties["extraVolumes"].Items.Schema.XValidations {
		volumeRules = append(volumeRules, r.Rule)
	}
	for _, r := range api.Properties["extraVolumeMounts"].Items.Schema.XValidations {
		mountRules = append(mountRules, r.Rule)
	}
	if !strings.Contains(rules(argRules), "'"+v1alpha1.ReservedFlags+"'") {
		t.Errorf("no CEL rule of extraArgs items matches v1alpha1.ReservedFlags %s:\n%s", v1alpha1.ReservedFlags, rules(argRules))
	}
	if !strings.Contains(rules(argRules), "!self.matches('"+v1alpha1.OIDCFlags+"')") {
		t.Errorf("no CEL rule of extraArgs items refuses v1alpha1.OIDCFlags %s:\n%s", v1alpha1.OIDCFlags, rules(argRules))
	}
	if !strings.Contains(rules(argRules), "!self.matches('"+v1alpha1.VerbosityFlag+"') || self.matches('"+v1alpha1.MaxVerbosityFlag+"')") {
		t.Errorf("no CEL rule of extraArgs items bounds --v as v1alpha1.VerbosityFlag and MaxVerbosityFlag:\n%s", rules(argRules))
	}
	quoted := func(v []string) string { return "['" + strings.Join(v, "', '") + "']" }
	if !strings.Contains(rules(volumeRules), quoted(v1alpha1.ReservedVolumeNames)) {
		t.Errorf("no CEL rule of extraVolumes items lists v1alpha1.ReservedVolumeNames %s:\n%s", quoted(v1alpha1.ReservedVolumeNames), rules(volumeRules))
	}
	if !strings.Contains(rules(mountRules), quoted(v1alpha1.ReservedMountPaths)) {
		t.Errorf("no CEL rule of extraVolumeMounts items lists v1alpha1.ReservedMountPaths %s:\n%s", quoted(v1alpha1.ReservedMountPaths), rules(mountRules))
	}
}

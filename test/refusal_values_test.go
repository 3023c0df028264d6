package test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestRefusalsNameTheValue: a refusal names the value the tenant gave, at
// admission (the XRD's schema and CEL messageExpressions) and in the
// functions (spec.Validate). The cases are the Cozystack chart's own
// failure tests (evictionHardMemory 150%, a hard 1Gi against a soft 200Mi,
// a malformed podCpuLimit) and their neighbours.
func TestRefusalsNameTheValue(t *testing.T) {
	xrd := clusterAdmission(t)
	ng := func(fields string) string { return "{nodeGroups: {md0: {" + fields + "}}}" }
	kubelet := func(fields string) string { return ng("kubelet: {" + fields + "}") }
	apiServer := func(fields string) string { return "{controlPlane: {apiServer: {" + fields + "}}}" }
	cases := map[string]struct {
		spec   string
		values []string // each named by admission and by the functions
	}{
		"EvictionHardPercent150":   {kubelet(`evictionHardMemory: 150%, evictionSoftMemory: 160%`), []string{"150%", "160%"}},
		"EvictionHardAboveSoft":    {kubelet(`evictionHardMemory: 1Gi, evictionSoftMemory: 200Mi`), []string{"1Gi", "200Mi"}},
		"EvictionHardEqualsSoftPc": {kubelet(`evictionHardMemory: 12%, evictionSoftMemory: 12%`), []string{"12%"}},
		"EvictionMixedUnits":       {kubelet(`evictionHardMemory: 7%, evictionSoftMemory: 3Gi`), []string{"7%", "3Gi"}},
		"EvictionNegative":         {kubelet(`evictionHardMemory: -5Gi, evictionSoftMemory: 1Gi`), []string{"-5Gi"}},
		"VolumeNoSource":           {apiServer(`extraVolumes: [{name: sourceless}]`), []string{"sourceless"}},
		"PodCPULimitMalformed":     {ng(`instanceType: '', podCpuLimit: 1.5.5`), []string{"1.5.5"}},
		"PodCPURequestMalformed":   {ng(`instanceType: '', podCpuRequest: 2.5m`), []string{"2.5m"}},
		"PodCPULimit300":           {ng(`instanceType: '', podCpuLimit: 300`), []string{"300"}},
		"ReservedCPUMalformed":     {kubelet(`systemReservedCpu: 0.5m, kubeReservedCpu: 1.25m`), []string{"0.5m", "1.25m"}},
		"ReservedMemoryTooBig":     {kubelet(`systemReservedMemory: 5Ti, kubeReservedMemory: 6Ti`), []string{"5Ti", "6Ti"}},
		"DiskTooBig":               {ng(`diskSize: 65Ti`), []string{"65Ti"}},
		"DiskZero":                 {ng(`diskSize: 0Gi`), []string{"0Gi"}},
		"NodeCPUTooMany":           {ng(`resources: {cpu: 257, memory: 4Gi}`), []string{"257"}},
		"NodeMemoryTooBig":         {ng(`resources: {cpu: 2, memory: 5Ti}`), []string{"5Ti"}},
		"VolumeNameRepeated": {apiServer(`extraVolumes: [{name: authn, secret: {secretName: a}}, {name: authn, configMap: {name: b}}]`),
			[]string{"authn"}},
		"MountWithoutVolume": {apiServer(`extraVolumes: [{name: authn, secret: {secretName: a}}], extraVolumeMounts: [{name: authz, mountPath: /etc/authz}]`),
			[]string{"authz"}},
		"MountPathRepeated": {apiServer(`extraVolumes: [{name: a, secret: {secretName: a}}, {name: b, secret: {secretName: b}}], ` +
			`extraVolumeMounts: [{name: a, mountPath: /etc/authn}, {name: b, mountPath: /etc/authn}]`), []string{"/etc/authn"}},
		"MountPathDotDot": {apiServer(`extraVolumes: [{name: a, secret: {secretName: a}}], extraVolumeMounts: [{name: a, mountPath: /srv/../etc}]`),
			[]string{"/srv/../etc"}},
		"UserRepeated":                  {`{oidc: {users: [{email: jane@example.com, role: view}, {email: jane@example.com, role: admin}]}}`, []string{"jane@example.com"}},
		"MinAboveMax":                   {ng(`minReplicas: 4321, maxReplicas: 1234`), []string{"4321", "1234"}},
		"InstanceTypeNotDNS":            {ng(`instanceType: U1_Large`), []string{"U1_Large"}},
		"PodCPULimitBesideInstanceType": {ng(`instanceType: u1.large, podCpuLimit: 2500m`), []string{"2500m", "u1.large"}},
		"PodCPURequestAboveLimit":       {ng(`instanceType: '', podCpuLimit: 1500m, podCpuRequest: 1501m`), []string{"1501m", "1500m"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			admission, functions := xrd.admit(t, c.spec, ""), clusterValidate(t, c.spec)
			for who, errs := range map[string]field.ErrorList{"XRD admission": admission, "spec.Validate()": functions} {
				agg := errs.ToAggregate()
				if agg == nil {
					t.Errorf("%s: accepted", who)
					continue
				}
				for _, v := range c.values {
					if !strings.Contains(agg.Error(), v) {
						t.Errorf("%s: message %q does not name %q", who, agg.Error(), v)
					}
				}
			}
		})
	}
}

// TestAdmissionWritesReplicasInDecimal: the minReplicas <= maxReplicas
// refusal writes both numbers in decimal at admission (its
// messageExpression spells integers digit by digit: CEL's cost estimator
// bounds no string(int)), at each digit count's edges.
func TestAdmissionWritesReplicasInDecimal(t *testing.T) {
	xrd := clusterAdmission(t)
	for _, c := range []struct{ min, max, want string }{
		{"1", "0", "maxReplicas (0), not 1"},
		{"10", "9", "maxReplicas (9), not 10"},
		{"100", "99", "maxReplicas (99), not 100"},
		{"1000", "999", "maxReplicas (999), not 1000"},
		{"2020", "2019", "maxReplicas (2019), not 2020"},
		{"5000", "4999", "maxReplicas (4999), not 5000"},
	} {
		errs := xrd.admit(t, "{nodeGroups: {md0: {minReplicas: "+c.min+", maxReplicas: "+c.max+"}}}", "")
		if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), c.want) {
			t.Errorf("minReplicas %s, maxReplicas %s: message %v does not contain %q", c.min, c.max, agg, c.want)
		}
	}
}

// TestAdmissionNamesMaintenanceDay: the refusal of a bad
// spec.maintenance.window.days entry names it at admission: the first
// day that is none of the seven, else the first one repeated.
func TestAdmissionNamesMaintenanceDay(t *testing.T) {
	xrd := clusterAdmission(t)
	window := func(days string) string {
		return "{maintenance: {window: {start: '02:00', duration: 1h, timeZone: UTC, days: " + days + "}}}"
	}
	for days, want := range map[string]string{
		"[Mon, Xyz]":           "each at most once, not Xyz",
		"[Mon, xyz, Tue, Tue]": "each at most once, not xyz",
		"[Tue, Wed, Tue]":      "each at most once, not Tue",
		"[Sun, Sun]":           "each at most once, not Sun",
	} {
		agg := xrd.admit(t, window(days), "").ToAggregate()
		if agg == nil || !strings.Contains(agg.Error(), want) {
			t.Errorf("days %s: admission says %v, want %q", days, agg, want)
		}
	}
	// A message of more than one line is dropped for the rule's message
	// (apiextensions-apiserver v0.36.4
	// pkg/apiserver/schema/cel/validation.go:738-741).
	if agg := xrd.admit(t, window(`["M\nn"]`), "").ToAggregate(); agg == nil || !strings.Contains(agg.Error(), "Sun, each at most once") {
		t.Errorf("days [\"M\\nn\"]: admission says %v, want the rule's message", agg)
	}
	if errs := xrd.admit(t, window("[Mon, Tue, Sun]"), ""); len(errs) > 0 {
		t.Errorf("days [Mon, Tue, Sun]: refused: %v", errs.ToAggregate())
	}
}

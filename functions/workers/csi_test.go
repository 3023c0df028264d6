package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tenantkube/tenantkube/internal/fntest"
)

// TestCSIRateLimits holds the CSI controller's client rate limits to the
// input: --kube-api-qps and --kube-api-burst (the kubernetes-csi sidecars'
// and snapshot controller's flags, client-go's 5 and 10 by default) on
// every container that talks to an API server, by default Cozystack's 100
// and 200; on the driver only when the platform says its image has them
// (kubevirt/csi-driver's cmd/kubevirt-csi-driver defines no such flag).
func TestCSIRateLimits(t *testing.T) {
	type args struct {
		qps, burst  int32
		driverFlags bool
	}
	type want struct {
		withFlags []string // containers whose args end in the two flags
		flags     []string
	}
	sidecars := []string{"csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "snapshot-controller"}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Defaults": {
			reason: "100 QPS and 200 burst on the sidecars and the snapshot controller; the default driver image has no such flags.",
			want:   want{withFlags: sidecars, flags: []string{"--kube-api-qps=100", "--kube-api-burst=200"}},
		},
		"Set": {
			reason: "The input's values, on the driver too when driver flags are on.",
			args:   args{qps: 50, burst: 75, driverFlags: true},
			want:   want{withFlags: append([]string{"csi-driver"}, sidecars...), flags: []string{"--kube-api-qps=50", "--kube-api-burst=75"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := defaultInput()
			if tc.args.qps != 0 {
				in.Controllers.CSIKubeAPIQPS, in.Controllers.CSIKubeAPIBurst = tc.args.qps, tc.args.burst
			}
			in.Controllers.CSIDriverKubeAPIFlags = tc.args.driverFlags
			var got []string
			for _, c := range buildCSIController(testID, in, "busybox").Deployment.Spec.Template.Spec.Containers {
				n := len(c.Args)
				switch {
				case n >= 2 && cmp.Equal(c.Args[n-2:], tc.want.flags):
					got = append(got, c.Name)
				case slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--kube-api-") }):
					t.Errorf("%s\n%s: args %v carry other rate limits", tc.reason, c.Name, c.Args)
				}
			}
			if d := cmp.Diff(tc.want.withFlags, got); d != "" {
				t.Errorf("%s\ncontainers with %v (-want +got):\n%s", tc.reason, tc.want.flags, d)
			}
		})
	}
}

// TestCSIStorageClassEnforcement: the CSI driver creates volumes only of
// the platform's remote StorageClasses, set by the EnvironmentConfig
// (kubevirt/csi-driver reads INFRA_STORAGE_CLASS_ENFORCEMENT:
// allowAll false limits infraStorageClassName to allowList), and a cluster
// whose storageClass the platform does not list is refused, naming the
// field, the value and the allowed classes.
func TestCSIStorageClassEnforcement(t *testing.T) {
	cases := map[string]struct {
		reason   string
		spec     string
		settings string // the EnvironmentConfig's data; "" for none
		want     string // the driver's enforcement; "" when Fatal
		fatal    string
	}{
		"Default": {
			reason: "Without settings only replicated, the chart's default storageClass.",
			spec:   `{}`,
			want:   "allowAll: false\nallowDefault: true\nallowList:\n- replicated\n",
		},
		"Listed": {
			reason:   "The platform's list, in its order; the cluster's class is one of them.",
			spec:     `{storageClass: replicated-nvme}`,
			settings: "remoteStorageClasses: [replicated, replicated-nvme]",
			want:     "allowAll: false\nallowDefault: true\nallowList:\n- replicated\n- replicated-nvme\n",
		},
		"NotListed": {
			reason:   "local is not a remote class of the platform.",
			spec:     `{storageClass: local}`,
			settings: "remoteStorageClasses: [replicated]",
			fatal:    `spec.storageClass: Unsupported value: "local": supported values: "replicated"`,
		},
		"NotListedGroup": {
			reason:   "A node group's class, its VMs' disk class, is held to the same list.",
			spec:     `{nodeGroups: {md0: {storageClass: local}}}`,
			settings: "remoteStorageClasses: [replicated]",
			fatal:    `spec.nodeGroups[md0].storageClass: Unsupported value: "local": supported values: "replicated"`,
		},
		"SettingsPending": {
			reason: "Before the settings arrive the classes wait for them (Crossplane calls again with them; only that call counts): the defaults compose meanwhile.",
			spec:   `{storageClass: local, nodeGroups: {md0: {storageClass: local}}}`,
			want:   "allowAll: false\nallowDefault: true\nallowList:\n- replicated\n",
		},
		"BadSetting": {
			reason:   "An empty list would leave no class: Fatal naming the setting.",
			spec:     `{}`,
			settings: "remoteStorageClasses: []",
			fatal:    "EnvironmentConfig(tenantkube).data.remoteStorageClasses: Required value",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, c.spec, withInstancetypes(t, "u1.medium"), withMachineSets(t))
			if c.settings != "" {
				if err := fntest.WithPlatformSettings(req, c.settings); err != nil {
					t.Fatal(err)
				}
			}
			rsp := run(t, req)
			if c.fatal != "" {
				if msgs := fatals(rsp); len(msgs) != 1 || !strings.Contains(msgs[0], c.fatal) {
					t.Errorf("%s\nFatal = %q, want one containing %q", c.reason, msgs, c.fatal)
				}
				return
			}
			mustNoFatal(t, rsp)
			var got []any
			for _, e := range get(desired(t, rsp, managementPrefix+nameCSIDeployment), "spec", "template", "spec", "containers", 0, "env").([]any) {
				if e.(map[string]any)["name"] == "INFRA_STORAGE_CLASS_ENFORCEMENT" {
					got = append(got, e.(map[string]any)["value"])
				}
			}
			if d := cmp.Diff([]any{c.want}, got); d != "" {
				t.Errorf("%s\ncsi-driver INFRA_STORAGE_CLASS_ENFORCEMENT (-want +got):\n%s", c.reason, d)
			}
		})
	}
}

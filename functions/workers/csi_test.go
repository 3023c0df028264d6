package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

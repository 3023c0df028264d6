package versions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The rows below are typed from today's Cozystack chart
// (packages/apps/kubernetes), not read from versionTable: the minors and
// their order are its `version` enum (v1.35 … v1.31, default v1.35; its
// README: "supported patch versions from 1.31 to 1.35"), the patch of each
// minor its files/versions.yaml, the konnectivity override its
// files/konnectivity-versions.yaml, the earlier patch its versions.yaml
// before commit 1df8c7c55 ("v1.35": "v1.35.1", "v1.34": "v1.34.4",
// "v1.33": "v1.33.8", "v1.32": "v1.32.12"; v1.31.14 unchanged).

func TestLookupVersion(t *testing.T) {
	type args struct {
		minor string
	}
	type want struct {
		row KubernetesVersion
		err bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"V135": {
			reason: "v1.35 deploys v1.35.6 and pins konnectivity v0.34.0; it is the default",
			args:   args{minor: "v1.35"},
			want:   want{row: KubernetesVersion{Minor: "v1.35", Patch: "v1.35.6", Konnectivity: "v0.34.0", Default: true, Earlier: []string{"v1.35.1"}}},
		},
		"V134": {
			reason: "v1.34 deploys v1.34.9; Kamaji derives konnectivity",
			args:   args{minor: "v1.34"},
			want:   want{row: KubernetesVersion{Minor: "v1.34", Patch: "v1.34.9", Earlier: []string{"v1.34.4"}}},
		},
		"V133": {
			reason: "v1.33 deploys v1.33.13",
			args:   args{minor: "v1.33"},
			want:   want{row: KubernetesVersion{Minor: "v1.33", Patch: "v1.33.13", Earlier: []string{"v1.33.8"}}},
		},
		"V132": {
			reason: "v1.32 deploys v1.32.13",
			args:   args{minor: "v1.32"},
			want:   want{row: KubernetesVersion{Minor: "v1.32", Patch: "v1.32.13", Earlier: []string{"v1.32.12"}}},
		},
		"V131": {
			reason: "v1.31 deploys v1.31.14",
			args:   args{minor: "v1.31"},
			want:   want{row: KubernetesVersion{Minor: "v1.31", Patch: "v1.31.14"}},
		},
		"V130": {
			reason: "v1.30 left the chart's supported minors",
			args:   args{minor: "v1.30"},
			want:   want{err: true},
		},
		"OlderThanSeed": {
			reason: "v1.29 is below the chart's oldest version",
			args:   args{minor: "v1.29"},
			want:   want{err: true},
		},
		"NewerThanSeed": {
			reason: "v1.36 is above the chart's newest version",
			args:   args{minor: "v1.36"},
			want:   want{err: true},
		},
		"PatchVersion": {
			reason: "the table is keyed by minor: a patch version is not a row",
			args:   args{minor: "v1.35.6"},
			want:   want{err: true},
		},
		"NoPrefix": {
			reason: "the seed's versions carry the v prefix",
			args:   args{minor: "1.35"},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			row, err := Lookup(tc.args.minor)
			if diff := cmp.Diff(tc.want.row, row); diff != "" {
				t.Errorf("%s\nLookupVersion(%q): -want row, +got row:\n%s", tc.reason, tc.args.minor, diff)
			}
			if diff := cmp.Diff(tc.want.err, err != nil); diff != "" {
				t.Errorf("%s\nLookupVersion(%q): -want error, +got error (%v):\n%s", tc.reason, tc.args.minor, err, diff)
			}
		})
	}
}

func TestLookupVersionErrorListsSupported(t *testing.T) {
	_, err := Lookup("v1.29")
	want := `unsupported version "v1.29"; supported: v1.35, v1.34, v1.33, v1.32, v1.31`
	if err == nil {
		t.Fatalf("Lookup(v1.29): no error, want %q", want)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Lookup(v1.29) error: -want, +got:\n%s", diff)
	}
}

func TestSupportedVersions(t *testing.T) {
	// The chart's version enum, in its order (newest first).
	want := []string{"v1.35", "v1.34", "v1.33", "v1.32", "v1.31"}
	if diff := cmp.Diff(want, Supported()); diff != "" {
		t.Errorf("Supported(): -want, +got:\n%s", diff)
	}
}

func TestMinorOf(t *testing.T) {
	type args struct {
		version string
	}
	type want struct {
		minor int
		err   bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Minor": {
			reason: "v1.N is minor N",
			args:   args{version: "v1.35"},
			want:   want{minor: 35},
		},
		"Patch": {
			reason: "v1.N.P is minor N",
			args:   args{version: "v1.34.4"},
			want:   want{minor: 34},
		},
		"NoPrefix": {
			reason: "a version without the v1. prefix is rejected",
			args:   args{version: "1.34"},
			want:   want{err: true},
		},
		"MajorTwo": {
			reason: "only Kubernetes 1.x exists",
			args:   args{version: "v2.1"},
			want:   want{err: true},
		},
		"NotANumber": {
			reason: "the minor must be a number",
			args:   args{version: "v1.x"},
			want:   want{err: true},
		},
		"Negative": {
			reason: "a negative minor is rejected",
			args:   args{version: "v1.-1"},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := MinorOf(tc.args.version)
			if diff := cmp.Diff(tc.want.minor, got); diff != "" {
				t.Errorf("%s\nMinorOf(%q): -want, +got:\n%s", tc.reason, tc.args.version, diff)
			}
			if diff := cmp.Diff(tc.want.err, err != nil); diff != "" {
				t.Errorf("%s\nMinorOf(%q): -want error, +got error (%v):\n%s", tc.reason, tc.args.version, err, diff)
			}
		})
	}
}

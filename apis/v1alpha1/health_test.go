package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDurationParse(t *testing.T) {
	p := field.NewPath("spec", "maxNodeProvisionTime")
	cases := map[string]struct {
		reason string
		in     Duration
		want   time.Duration
		err    bool
	}{
		"Minutes":    {reason: "The chart's default.", in: "30m", want: 30 * time.Minute},
		"Mixed":      {reason: "1h30m = 90 minutes.", in: "1h30m", want: 90 * time.Minute},
		"Canonical":  {reason: "Go's own form of 20 minutes.", in: "20m0s", want: 20 * time.Minute},
		"Seconds":    {reason: "90s.", in: "90s", want: 90 * time.Second},
		"Top":        {reason: "24h is the most.", in: "24h", want: 24 * time.Hour},
		"Overflow":   {reason: "Six digits a unit.", in: "100000s", err: true},
		"PastTop":    {reason: "1441m is 24h1m.", in: "1441m", err: true},
		"Zero":       {reason: "Not positive.", in: "0s", err: true},
		"Fraction":   {reason: "time.ParseDuration reads 1.5h; refused: the MachineHealthCheck counts whole seconds.", in: "1.5h", err: true},
		"Millis":     {reason: "ms is refused.", in: "1500ms", err: true},
		"Negative":   {reason: "A sign is refused.", in: "-5m", err: true},
		"OutOfOrder": {reason: "time.ParseDuration reads 30s1m; refused for one spelling.", in: "30s1m", err: true},
		"Empty":      {reason: "An empty value is the caller's to default.", in: "", err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.in.Parse(p, MinTimeout, MaxTimeout)
			if (err != nil) != tc.err {
				t.Fatalf("%s\nParse(%q) error %v, want error %v", tc.reason, tc.in, err, tc.err)
			}
			if got != tc.want {
				t.Errorf("%s\nParse(%q) = %v, want %v", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}

func TestIntOrPercentParse(t *testing.T) {
	p := field.NewPath("spec", "nodeHealthCheck", "maxUnhealthy")
	cases := map[string]struct {
		in   IntOrPercent
		want intstr.IntOrString
		err  bool
	}{
		"Percent":      {in: "50%", want: intstr.FromString("50%")},
		"Hundred":      {in: "100%", want: intstr.FromString("100%")},
		"ZeroPercent":  {in: "0%", want: intstr.FromString("0%")},
		"Machines":     {in: "1", want: intstr.FromInt32(1)},
		"Most":         {in: "5000", want: intstr.FromInt32(5000)},
		"Zero":         {in: "0", want: intstr.FromInt32(0)},
		"PastMost":     {in: "5001", err: true},
		"PastHundred":  {in: "101%", err: true},
		"Negative":     {in: "-1", err: true},
		"Fraction":     {in: "12.5%", err: true},
		"LeadingZero":  {in: "050%", err: true},
		"Empty":        {in: "", err: true},
		"NotAQuantity": {in: "half", err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.in.Parse(p)
			if (err != nil) != tc.err {
				t.Fatalf("Parse(%q) error %v, want error %v", tc.in, err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

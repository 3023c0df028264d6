package backup

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// Slots of tenant-demo/demo worked out by hand: the first 8 bytes of
// sha256("tenant-demo/demo") are 0x5e3740528f0aca54
// (`printf tenant-demo/demo | sha256sum`), which is 66644 modulo 86400
// (18h30m44s) and 1844 modulo 21600 (30m44s). So at 2026-12-03 12:00 UTC
// the 24h slot began 2026-12-02 18:30:44 and the 6h slot 06:30:44.
var (
	backupNow  = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	slot24h    = "20261202183044"
	slot6h     = "20261203063044"
	prevSlot6h = "20261203003044"
)

func TestSlotStart(t *testing.T) {
	id := function.Identity{Namespace: "tenant-demo", Name: "demo"}
	for _, tc := range []struct {
		interval time.Duration
		now      time.Time
		want     string
	}{
		{24 * time.Hour, backupNow, slot24h},
		{6 * time.Hour, backupNow, slot6h},
		// The boundary belongs to the new slot; a second before, the old.
		{6 * time.Hour, time.Date(2026, 12, 3, 6, 30, 44, 0, time.UTC), slot6h},
		{6 * time.Hour, time.Date(2026, 12, 3, 6, 30, 43, 0, time.UTC), prevSlot6h},
	} {
		if got := SlotStart(id, tc.interval, tc.now).Format(TimeLayout); got != tc.want {
			t.Errorf("SlotStart(%s, %s) = %s, want %s", tc.interval, tc.now, got, tc.want)
		}
	}
}

// TestBackupIntervalAsWritten: status and messages show the interval as
// the tenant (spec.backup.interval) or the platform wrote it, and ages
// without zero trailing units.
func TestBackupIntervalAsWritten(t *testing.T) {
	for _, c := range []struct{ asked, platform, want string }{
		{"", "24h", "24h"}, {"90m", "24h", "90m"}, {"", "1440m", "1440m"},
	} {
		if got := IntervalText(tkv1alpha1.Duration(c.asked), &cpinput.EtcdBackup{Interval: tkv1alpha1.Duration(c.platform)}); got != c.want {
			t.Errorf("asked %q, platform %q: %q, want %q", c.asked, c.platform, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{
		89*time.Hour + 29*time.Minute: "89h29m", 48 * time.Hour: "48h", 48*time.Hour + time.Minute: "48h1m",
		30 * time.Second: "30s", time.Hour + 30*time.Second: "1h0m30s", 0: "0s", 5 * time.Minute: "5m",
	} {
		if got := compactDuration(d); got != want {
			t.Errorf("compactDuration(%d) = %q, want %q", d, got, want)
		}
	}
}

// A backup's name fits the Job etcd-operator v0.5.4 runs for it,
// "<name>-snapshot", whose name Kubernetes copies into a label value (at
// most 63 characters), for every cluster name up to the longest; a
// Tenant's backup names never equal a cluster's.
func TestBackupNameFitsTheSnapshotJob(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	ts := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	tenant := Name("", "ffffff", ts)
	for range 2000 {
		n := make([]byte, 1+rng.IntN(function.MaxClusterNameLength))
		for i := range n {
			n[i] = alphabet[rng.IntN(len(alphabet)-1)] // no '-' at the ends
			if i > 0 && i < len(n)-1 && rng.IntN(5) == 0 {
				n[i] = '-'
			}
		}
		name := Name(string(n), "ffffff", ts)
		for _, s := range []string{name, tenant} {
			if msgs := validation.IsValidLabelValue(s + "-snapshot"); len(msgs) > 0 {
				t.Fatalf("the snapshot Job of backup %q: %v", s, msgs)
			}
			if !backupNamePattern.MatchString(s) {
				t.Fatalf("backup %q does not match the restore's pattern", s)
			}
		}
		if name == tenant {
			t.Fatalf("cluster %s's backup is named as the Tenant's: %s", n, name)
		}
	}
	if got := Name(strings.Repeat("a", function.MaxClusterNameLength), "ffffff", ts); len(got) != 54 || len(got) > maxBackupNameLength {
		t.Errorf("the longest cluster's backup name has %d characters, want 32+1+14+1+6 = 54, at most %d", len(got), maxBackupNameLength)
	}
}

package maintenance

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestDecide checks every combination outside and inside a daily
// 01:00-05:00 UTC window.
func TestDecide(t *testing.T) {
	w := mustParse(t, v1alpha1.MaintenanceWindow{Start: "01:00", Duration: "4h"})
	outside, inside := at("2026-12-07T12:00:00Z"), at("2026-12-07T02:00:00Z")
	for _, c := range []struct {
		p             Policy
		now           time.Time
		platform, own bool
		reason        string
	}{
		{Policy{ConfinePlatform: true}, outside, false, true, v1alpha1.ReasonWaitingForWindow},
		{Policy{ConfinePlatform: true}, inside, true, true, ""},
		{Policy{ConfinePlatform: false}, outside, true, true, ""},
		{Policy{ConfinePlatform: true, ConfineOwn: true}, outside, false, false, v1alpha1.ReasonWaitingForWindow},
		{Policy{ConfinePlatform: false, ConfineOwn: true}, outside, true, false, ""},
		{Policy{ConfinePlatform: true, ConfineOwn: true}, inside, true, true, ""},
		{Policy{ConfinePlatform: true, ConfineOwn: true, RollNow: true}, outside, true, true, ""},
	} {
		c.p.Window = w
		t.Run(fmt.Sprintf("%+v@%s", c.p, c.now.Format("15:04")), func(t *testing.T) {
			d := Decide(c.p, c.now)
			if d.Platform != c.platform || d.Own != c.own || d.Reason != c.reason {
				t.Errorf("Decide = platform %v own %v reason %q, want %v %v %q", d.Platform, d.Own, d.Reason, c.platform, c.own, c.reason)
			}
			if !d.NextStart.Equal(at("2026-12-07T01:00:00Z")) && !d.NextStart.Equal(at("2026-12-08T01:00:00Z")) {
				t.Errorf("NextStart %s", d.NextStart)
			}
			if d.Allows(true) != c.own || d.Allows(false) != c.platform {
				t.Errorf("Allows disagrees with the decision")
			}
		})
	}
}

// TestAdmit checks the spread by hand: 3 slots, a and c rolling.
func TestAdmit(t *testing.T) {
	now := at("2026-12-07T02:00:00Z")
	started := now.Add(-10 * time.Minute)
	rolls := []Roll{{Cluster: "ns/a", Since: started}, {Cluster: "ns/c", Since: started}, {Cluster: "ns/b", Waiting: true}, {Cluster: "ns/d", Waiting: true}}
	for _, c := range []struct {
		self   string
		rolls  []Roll
		max    int
		want   bool
		reason string
	}{
		{"ns/b", rolls, 3, true, ""},                                 // one slot, b first of b, d
		{"ns/d", rolls, 3, false, v1alpha1.ReasonWaitingForRollSlot}, // b takes it
		{"ns/d", rolls, 4, true, ""},                                 // two slots
		{"ns/a", rolls, 1, true, ""},                                 // rolling already
		{"ns/e", rolls, 2, false, v1alpha1.ReasonWaitingForRollSlot}, // no slot
		{"ns/b", append(rolls[:2:2], Roll{Cluster: "ns/x", Since: now.Add(-3 * time.Hour)}), 10, false, v1alpha1.ReasonRollsStopped},
		{"ns/b", append(rolls[:2:2], Roll{Cluster: "ns/x", Since: now.Add(-3 * time.Hour), Done: true}), 10, true, ""},
	} {
		got, reason := Admit(c.self, c.rolls, c.max, now, 2*time.Hour)
		if got != c.want || reason != c.reason {
			t.Errorf("Admit(%s, max %d) = %v %q, want %v %q", c.self, c.max, got, reason, c.want, c.reason)
		}
	}
}

// TestAdmitNeverExceeds: over generated records, the clusters rolling
// plus those admitted on the same records never exceed max (when the
// rolling ones alone do not).
func TestAdmitNeverExceeds(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	now := at("2026-12-07T02:00:00Z")
	for i := 0; i < 5000; i++ {
		n, max := 1+rng.Intn(20), 1+rng.Intn(6)
		var rolls []Roll
		rolling := 0
		for j := 0; j < n; j++ {
			r := Roll{Cluster: fmt.Sprintf("ns/c%02d", rng.Intn(40))}
			switch rng.Intn(3) {
			case 0:
				r.Since = now.Add(-time.Minute)
			case 1:
				r.Waiting = true
			}
			if seen(rolls, r.Cluster) {
				continue
			}
			if r.Rolling() {
				rolling++
			}
			rolls = append(rolls, r)
		}
		if rolling > max {
			continue
		}
		admitted := 0
		for _, r := range rolls {
			if ok, _ := Admit(r.Cluster, rolls, max, now, time.Hour); ok && r.Waiting {
				admitted++
			}
		}
		if rolling+admitted > max {
			t.Fatalf("records %+v, max %d: %d rolling + %d admitted", rolls, max, rolling, admitted)
		}
	}
}

func seen(rolls []Roll, c string) bool {
	for _, r := range rolls {
		if r.Cluster == c {
			return true
		}
	}
	return false
}

// TestAdmitSettledNeverExceeds simulates clusters that find a platform
// change at nearly the same instant (within two minutes) and decide
// whenever they run (their own runs, and runs triggered by others'
// writes): each sees its own record at once and the others' records
// only after a delay of up to 5s (Crossplane's apply, then its cache).
// A cluster starts when Admit lets it on what it sees and its own
// Waiting record has settled. Over generated runs the clusters started
// never exceed max, and once every record has settled max of them (or
// all) have started. Without the settle rule, clusters deciding in the
// same instant each see only themselves waiting and all start.
func TestAdmitSettledNeverExceeds(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	t0 := at("2026-12-07T02:00:00Z")
	type write struct {
		roll    Roll
		visible time.Time
	}
	for i := 0; i < 300; i++ {
		n, max := 2+rng.Intn(12), 1+rng.Intn(3)
		history := make([][]write, n) // each cluster's records, in order
		own := make([]Roll, n)
		waitingSince := make([]time.Time, n)
		type run struct {
			c  int
			at time.Time
		}
		var runs []run
		for c := 0; c < n; c++ {
			found := t0.Add(time.Duration(rng.Intn(120_000)) * time.Millisecond)
			for k := 0; k < 40; k++ {
				runs = append(runs, run{c, found.Add(time.Duration(rng.Intn(300_000)) * time.Millisecond)})
			}
			runs = append(runs, run{c, found})
		}
		slices.SortFunc(runs, func(a, b run) int { return a.at.Compare(b.at) })
		started := map[int]bool{}
		for _, r := range runs {
			if len(own[r.c].Cluster) > 0 && own[r.c].Rolling() {
				continue
			}
			// What cluster r.c sees: its own record, the others' latest
			// records visible at r.at.
			var view []Roll
			for c := 0; c < n; c++ {
				if c == r.c {
					if own[c].Cluster != "" {
						view = append(view, own[c])
					}
					continue
				}
				for k := len(history[c]) - 1; k >= 0; k-- {
					if !history[c][k].visible.After(r.at) {
						view = append(view, history[c][k].roll)
						break
					}
				}
			}
			self := fmt.Sprintf("ns/c%02d", r.c)
			if waitingSince[r.c].IsZero() {
				waitingSince[r.c] = r.at
			}
			ok, _ := Admit(self, view, max, r.at, time.Hour)
			next := Roll{Cluster: self, Waiting: true}
			if ok && Settled(waitingSince[r.c], r.at) {
				next = Roll{Cluster: self, Since: r.at}
				started[r.c] = true
			}
			if next != own[r.c] {
				own[r.c] = next
				history[r.c] = append(history[r.c], write{next, r.at.Add(time.Duration(rng.Intn(5_000)) * time.Millisecond)})
			}
		}
		if len(started) > max {
			t.Fatalf("case %d: %d clusters, max %d: %d started", i, n, max, len(started))
		}
		if want := min(n, max); len(started) < want {
			t.Fatalf("case %d: %d clusters, max %d: only %d started", i, n, max, len(started))
		}
	}
}

package suggest

import "testing"

// TestDistance: distances counted by hand.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},                  // three insertions
		{"abc", "", 3},                  // three deletions
		{"kitten", "sitting", 3},        // k->s, e->i, +g
		{"baseDomian", "baseDomain", 1}, // "ia" swapped
		{"enbaled", "enabled", 1},       // "ba" swapped
		{"ca", "abc", 3},                // optimal string alignment: not 2 (that would edit "ca" twice)
		{"maxReplicass", "maxReplicas", 1},
		{"größe", "grösse", 2}, // ß->s, +s: runes, not bytes
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"domain", "baseDomain", "images", "serviceCIDR", "Version"}
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"baseDomian", "baseDomain", true},
		{"basedomain", "baseDomain", true}, // case-insensitive: 0 away, but not the name itself
		{"domian", "domain", true},
		{"imgs", "images", true}, // two insertions: at the limit
		{"imag", "images", true}, // two insertions
		{"foo", "", false},       // nothing within 2
		{"domain", "", false},    // the name itself is no suggestion
		{"versoin", "Version", true},
		{"abcdefgh", "", false},
	} {
		got, ok := Nearest(c.name, known)
		if got != c.want || ok != c.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	// Ties go to the first in sorted order: "ab" is 1 from "aa" and "ac".
	if got, _ := Nearest("ab", []string{"ac", "aa"}); got != "aa" {
		t.Errorf("Nearest(ab) = %q, want aa (ties in sorted order)", got)
	}
	if got := DidYouMean("baseDomian", known); got != "; did you mean baseDomain?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("foo", known); got != "" {
		t.Errorf("DidYouMean(foo) = %q, want none", got)
	}
}

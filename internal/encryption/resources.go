package encryption

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Removed are the resources of ks.Rewrite it no longer lists: objects of
// them may still be stored encrypted.
func (ks KeySet) Removed() []string {
	var out []string
	for _, r := range ks.Rewrite {
		if !slices.Contains(ks.Resources, r) {
			out = append(out, r)
		}
	}
	return out
}

// MoveID names a move of ks (its Resources and Rewrite): 8 hex digits of
// their SHA-256. It names the move's Job and is the value of the
// annotation it writes, so that each move's update is a real write.
func (ks KeySet) MoveID() string {
	sum := sha256.Sum256([]byte(strings.Join(sorted(ks.Resources), ",") + "\x00" + strings.Join(sorted(ks.Rewrite), ",")))
	return hex.EncodeToString(sum[:4])
}

// Step is the key set that follows ks for the settings' resources want,
// the target generation and o (docs/architecture.md, Secrets encrypted at
// rest); its Keys are left to the caller. A key set that records no
// resources lists want. One change at a time:
//
//   - a rotation under way (not PhaseStable) goes on (Next); a change of
//     want waits for it; a move recorded (Rebuilt) goes on beside it, and
//     the old key is dropped only once it succeeded;
//   - want differs from Resources: Resources = want, and Rewrite gains
//     every resource added or removed;
//   - Rewrite is not empty: it empties once o says the configuration
//     rolled out and the move's Job succeeded; a rotation waits for it;
//   - else the rotation towards target (Next).
func (ks KeySet) Step(want []string, target int32, o Observation) KeySet {
	out := KeySet{State: ks.State, Resources: slices.Clone(ks.Resources), Rewrite: slices.Clone(ks.Rewrite)}
	if out.Resources == nil {
		out.Resources = slices.Clone(want)
	}
	if ks.UsesKMS() {
		want = slices.Clone(want)
		for _, r := range out.Resources {
			if !slices.Contains(want, r) {
				want = append(want, r)
			}
		}
	}
	switch {
	case ks.Phase() != PhaseStable:
		// Only a rebuilt set (Rebuilt) rotates with a move: the old key
		// stays until the move wrote the removed resources' objects.
		if len(out.Rewrite) > 0 && o.RolledOut && o.Moved {
			out.Rewrite = nil
		}
		if len(out.Rewrite) > 0 {
			o.Rewritten = false
		}
		out.State = Next(ks.State, target, o)
	case !sameSet(out.Resources, want):
		out.Rewrite = sorted(union(out.Rewrite, symmetricDifference(out.Resources, want)))
		out.Resources = slices.Clone(want)
	case len(out.Rewrite) > 0:
		if o.RolledOut && o.Moved {
			out.Rewrite = nil
		}
	default:
		out.State = Next(ks.State, target, o)
	}
	return out
}

func sameSet(a, b []string) bool { return slices.Equal(sorted(a), sorted(b)) }

func sorted(a []string) []string {
	out := slices.Clone(a)
	slices.Sort(out)
	return slices.Compact(out)
}

func union(a, b []string) []string { return append(slices.Clone(a), b...) }

func symmetricDifference(a, b []string) []string {
	var out []string
	for _, r := range a {
		if !slices.Contains(b, r) {
			out = append(out, r)
		}
	}
	for _, r := range b {
		if !slices.Contains(a, r) {
			out = append(out, r)
		}
	}
	return out
}

// Rebuilt is ks, whose record of resources (Resources, Rewrite) was lost
// with its Secret, made to keep readable every object the cluster may
// have encrypted: Resources and Rewrite are want and every resource of
// named (what status or settings ever listed) found in accepted. The
// configuration then reads each of them with the keys and in clear, and
// the next Step moves them all to want.
func (ks KeySet) Rebuilt(want, named, accepted []string) KeySet {
	all := slices.Clone(want)
	for _, r := range named {
		if slices.Contains(accepted, r) {
			all = append(all, r)
		}
	}
	ks.Resources = sorted(all)
	ks.Rewrite = sorted(all)
	return ks
}

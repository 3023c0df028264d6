// Package suggest finds the known name nearest a misspelt one, for "did you
// mean" hints in error messages.
package suggest

import (
	"sort"
	"strings"
)

// MaxDistance is the largest edit distance a suggestion may have: cobra's
// default for unknown commands (spf13/cobra command.go:786,
// SuggestionsMinimumDistance 2, compared case-insensitively at :867).
const MaxDistance = 2

// Nearest is the name in known nearest to name by Distance, compared
// case-insensitively, if it is at most MaxDistance away and not name
// itself; ties go to the name first in sorted order. ok is false when no
// name is near enough.
func Nearest(name string, known []string) (nearest string, ok bool) {
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	best := MaxDistance + 1
	for _, k := range sorted {
		if k == name {
			continue
		}
		if d := Distance(strings.ToLower(name), strings.ToLower(k)); d < best {
			nearest, best = k, d
		}
	}
	return nearest, best <= MaxDistance
}

// DidYouMean is "; did you mean <nearest>?" for the Nearest name, or "".
func DidYouMean(name string, known []string) string {
	if n, ok := Nearest(name, known); ok {
		return "; did you mean " + n + "?"
	}
	return ""
}

// Distance is the optimal string alignment distance between a and b: the
// fewest insertions, deletions, substitutions of one rune and swaps of two
// adjacent runes that turn a into b, no substring edited twice.
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}

package cli

import (
	"fmt"
	"sort"
	"strings"
)

// Suggest returns the candidate nearest to typed by edit distance (a
// swapped pair of letters counts one, as in "chekc"), or "" when none is
// near enough to be what was meant: at most 2 edits, and fewer than half
// the letters of the shorter word, so "x" suggests nothing.
func Suggest(typed string, candidates []string) string {
	best, bestD := "", 3
	low := strings.ToLower(typed)
	for _, c := range candidates {
		d := osaDistance(low, strings.ToLower(c))
		if d*2 >= min(len(low), len(c)) && !strings.HasPrefix(strings.ToLower(c), low) {
			continue
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	return best
}

// osaDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent bytes each cost
// one. Inputs are command-line words; the caller bounds their length.
func osaDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// maxWord bounds what Suggest compares: a longer word is no typo of a
// command or flag name, and the distance is quadratic in it.
const maxWord = 64

// unknownLine is the one line for a word that names nothing: the nearest
// valid name, or the list when none is near, and where to read more.
func unknownLine(who, what, typed string, valid []string, more string) string {
	msg := fmt.Sprintf("%s: unknown %s %q", who, what, typed)
	guess := ""
	if len(typed) <= maxWord {
		guess = Suggest(typed, valid)
		if what == "flag" {
			// -formt and --formt both mean --format: dashes are not letters.
			bare := make([]string, len(valid))
			for i, v := range valid {
				bare[i] = strings.TrimLeft(v, "-")
			}
			if g := Suggest(strings.TrimLeft(typed, "-"), bare); g != "" {
				guess = valid[indexOf(bare, g)]
			}
		}
	}
	if guess != "" {
		msg += fmt.Sprintf("; did you mean %q?", guess)
	} else if len(valid) > 0 {
		sorted := append([]string(nil), valid...)
		sort.Strings(sorted)
		msg += fmt.Sprintf("; the %ss are: %s", what, strings.Join(sorted, ", "))
	}
	return msg + fmt.Sprintf(" (%s -h for more)", more)
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

package layoutcheck

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// includeHint is what to say about an --include that names no header of
// the tree: the headers of that base name (`nec.h` is `nrt/nec.h`), else
// those whose path ends in it, else the nearest path by edit distance,
// else an example. Never an unrelated header offered as the fix
// (docs/nrtabi-check.md#options).
func includeHint(inc string, all []string) string {
	want := path.Clean(strings.ReplaceAll(inc, "\\", "/"))
	base := path.Base(want)
	var same, suffix []string
	for _, h := range all {
		switch {
		case path.Base(h) == base:
			same = append(same, h)
		case strings.HasSuffix(h, "/"+want):
			suffix = append(suffix, h)
		}
	}
	if m := pick(same, suffix); len(m) > 0 {
		return "did you mean " + oneOf(m) + "? (paths are relative to the headers directory)"
	}
	best, bestD := "", len(want)/3+1
	if len(want) <= maxHintLen {
		for _, h := range all {
			if len(h) > maxHintLen {
				continue
			}
			if d := levenshtein(want, h); d < bestD || d == bestD && best != "" && h < best {
				best, bestD = h, d
			}
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %s? (paths are relative to the headers directory)", best)
	}
	if len(all) == 0 {
		return "the directory holds no header"
	}
	return fmt.Sprintf("give a path relative to the headers directory, e.g. %s", all[0])
}

// maxHintLen bounds the paths compared by edit distance (quadratic).
const maxHintLen = 256

// maxHintNames bounds how many candidates a hint lists.
const maxHintNames = 5

func pick(lists ...[]string) []string {
	for _, l := range lists {
		if len(l) > 0 {
			return l
		}
	}
	return nil
}

func oneOf(names []string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	if len(names) == 1 {
		return names[0]
	}
	more := ""
	if len(names) > maxHintNames {
		more = fmt.Sprintf(" (and %d more)", len(names)-maxHintNames)
		names = names[:maxHintNames]
	}
	return "one of " + strings.Join(names, ", ") + more
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

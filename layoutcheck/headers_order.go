package layoutcheck

import (
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// A vendor header may use a type another header of the tree defines
// without including it: the code that includes both always included the
// other first. Compiled on its own it fails with "unknown type name"; it
// is then compiled after the header that defines the type, as that code
// is, and a note says so (docs/layoutcheck.md#headers-as-input). A type
// no header of the tree defines stays the header's error, with the fix.

// maxPrerequisites bounds how many headers one is compiled after.
const maxPrerequisites = 8

var unknownType = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`unknown type name ['‘"]([A-Za-z_][A-Za-z0-9_]*)['’"]`)
})

// definer is the header of the tree (not self, not in skip) whose text
// defines the typedef name, or "".
func (h *Headers) definer(name, self string, skip []string) string {
	re, err := regexp.Compile(`(?:\btypedef\b[^;{}]*[^A-Za-z0-9_]|\}\s*)` + regexp.QuoteMeta(name) + `\s*(?:\[[^\]]*\]\s*)?;`)
	if err != nil {
		return ""
	}
	for _, r := range h.Roots {
		if r == self || slices.Contains(skip, r) {
			continue
		}
		if t, ok := h.texts[r]; ok && re.Match(comments().ReplaceAll(t, []byte(" "))) {
			return r
		}
	}
	return ""
}

// withPrerequisites compiles the unit of a header that failed on its own
// again after the headers defining the types it lacks, one type at a time.
// It returns the headers it was compiled after and the result of the last
// run; pre is nil when no header of the tree defines the first type.
func (h *Headers) withPrerequisites(u unit, name string) (pre []string, obj string, track includeTrack, err error) {
	err = u.err
	var notes []string
	for range maxPrerequisites {
		m := unknownType().FindStringSubmatch(firstError(err))
		if m == nil {
			break
		}
		d := h.definer(m[1], u.root, pre)
		if d == "" {
			break
		}
		pre = append([]string{d}, pre...)
		notes = append(notes, fmt.Sprintf("%s uses %s, which %s defines, without including it: compiled after %s, as the code that includes it must be",
			esc.String(u.root), esc.String(m[1]), esc.String(d), esc.String(d)))
		track = includeTrack{entered: map[string]bool{}}
		obj, err = h.compileUnitTrack(name, append(append([]string{}, pre...), u.root), &track)
		if err == nil {
			h.Notes = append(h.Notes, notes...)
			return pre, obj, track, nil
		}
	}
	return pre, obj, track, err
}

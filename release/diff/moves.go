package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// MoveGroup is a run of consecutive members of one struct moved by the
// same delta: what one inserted, removed or resized member does to every
// member after it. The text form prints it as one row; the JSON keeps
// every field-moved change and lists the runs beside them.
type MoveGroup struct {
	Struct string   `json:"struct"`
	After  string   `json:"after"` // the member before the run in the new layout ("" at the start)
	Delta  int      `json:"delta"` // bytes; positive: moved towards the end
	Fields []string `json:"fields"`
	First  int      `json:"first_change"` // index of the run's first change in changes
}

// Summary is the one-line description of the run.
func (g MoveGroup) Summary() string {
	where := "at the start"
	if g.After != "" {
		where = "after `" + g.After + "`"
	}
	return fmt.Sprintf("%d fields %s moved %+d", len(g.Fields), where, g.Delta)
}

// minGroup is the shortest run printed as one row.
const minGroup = 2

// groupMoves finds the runs of field-moved changes with one delta. The
// struct changes are in new-offset order (structPair sorts them), so a
// run is consecutive in changes.
func groupMoves(changes []Change, new *spec.Spec) []MoveGroup {
	var out []MoveGroup
	for i := 0; i < len(changes); {
		st, delta, ok := moved(changes[i])
		if !ok {
			i++
			continue
		}
		j := i + 1
		for j < len(changes) {
			st2, d2, ok := moved(changes[j])
			if !ok || st2 != st || d2 != delta {
				break
			}
			j++
		}
		if j-i >= minGroup {
			g := MoveGroup{Struct: st, Delta: delta, First: i}
			for _, c := range changes[i:j] {
				g.Fields = append(g.Fields, c.Subject[len(st)+1:])
			}
			g.After = memberBefore(new.StructByName(st), g.Fields[0])
			out = append(out, g)
		}
		i = j
	}
	return out
}

// moved reports a field-moved change's struct and delta.
func moved(c Change) (string, int, bool) {
	if c.Kind != FieldMoved {
		return "", 0, false
	}
	var o, n int
	if _, err := fmt.Sscan(c.Old, &o); err != nil {
		return "", 0, false
	}
	if _, err := fmt.Sscan(c.New, &n); err != nil {
		return "", 0, false
	}
	st, _, ok := strings.Cut(c.Subject, ".")
	return st, n - o, ok
}

// memberBefore is the field laid out just before name in st.
func memberBefore(st *spec.Struct, name string) string {
	if st == nil {
		return ""
	}
	f := field(st, name)
	if f == nil {
		return ""
	}
	before, at := "", -1
	for _, g := range st.Fields {
		if g.Offset < f.Offset && g.Offset > at {
			before, at = g.Name, g.Offset
		}
	}
	return before
}

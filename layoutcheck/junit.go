package layoutcheck

import (
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/render"
)

// The JUnit XML form of a check, for a CI that shows each layout as a
// test: one suite per input, one test case per struct found and per
// link-contract rule. An incompatible finding fails its case; compatible
// ones are printed in its output. Structs absent from every input are
// skipped cases, a --require'd one missing a failed case. The document is
// render's, the one JUnit writer (diff's and check's error documents too).
type junitCase = render.Case

// junitCaseOf grades one struct or rule by its findings.
func junitCaseOf(class, name string, fs []Finding) junitCase {
	c := junitCase{Name: name, Classname: class}
	var fail, other []string
	for _, f := range fs {
		// One fact per line, its consequences indented under it in the
		// same body (docs/nrtabi-check.md#junit-output).
		var lines []string
		f.Walk(func(x Finding, depth int) {
			lines = append(lines, fmt.Sprintf("%s%s [%s, %s]", strings.Repeat("  -> ", min(depth, 1))+strings.Repeat("  ", max(depth-1, 0)), x.Message, x.Kind, x.Severity))
		})
		if f.Waived != nil {
			lines = append(lines, "  "+f.Waived.Note())
		}
		if worst([]Finding{f}) == Incompatible && f.Waived == nil {
			fail = append(fail, lines...)
		} else {
			other = append(other, lines...)
		}
	}
	if len(fail) > 0 {
		c.Failure = &render.Failure{Message: strings.SplitN(fail[0], " [", 2)[0], Type: "incompatible", Text: strings.Join(fail, "\n")}
	}
	c.Output = strings.Join(other, "\n")
	return c
}

// WriteJUnit prints the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	all := render.Suites{Name: "nrtabi check against " + r.Release}
	for _, f := range r.Files {
		s := render.Suite{Name: f.Path}
		for _, st := range f.Structs {
			c := junitCaseOf("struct", st.Name, st.Findings)
			if c.Failure == nil && st.Status == StatusIncompatible {
				// Its own members are as the spec says; a struct it embeds
				// is not, and that fact is reported at that struct.
				c.Failure = &render.Failure{Message: "an embedded struct changed incompatibly (reported at that struct)", Type: "incompatible", Text: "an embedded struct changed incompatibly; its facts are reported once, at the struct that defines the changed member"}
			}
			s.Add(c)
		}
		for _, c := range f.junitEnumCases() {
			s.Add(c)
		}
		for _, c := range f.Contract {
			s.Add(junitCaseOf("contract."+f.Role, c.Name, c.Findings))
		}
		all.Suites = append(all.Suites, s)
	}
	if len(r.Skipped) > 0 {
		s := render.Suite{Name: "entries not read"}
		for _, sk := range r.Skipped {
			s.Add(junitCase{Name: sk.Path, Classname: "input", Skipped: &render.Skipped{Message: sk.Reason}})
		}
		all.Suites = append(all.Suites, s)
	}
	if len(r.Absent) > 0 || len(r.Required) > 0 {
		s := render.Suite{Name: "structs of " + r.StructSpec + " found in no input"}
		for _, n := range r.Absent {
			var missing []Finding
			for _, f := range r.Findings {
				if f.Kind == KindMissingStruct && f.Struct == n {
					missing = append(missing, f)
				}
			}
			c := junitCaseOf("struct", n, missing)
			if c.Failure == nil {
				c.Skipped = &render.Skipped{Message: "absent from every input"}
			}
			s.Add(c)
		}
		all.Suites = append(all.Suites, s)
	}
	return render.JUnit(w, all)
}

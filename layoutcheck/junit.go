package layoutcheck

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML form of a check, for a CI that shows each layout as a
// test: one suite per input, one test case per struct found and per
// link-contract rule. An incompatible finding fails its case; compatible
// ones are printed in its output. Structs absent from every input are
// skipped cases, a --require'd one missing a failed case.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

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
		if worst([]Finding{f}) == Incompatible {
			fail = append(fail, lines...)
		} else {
			other = append(other, lines...)
		}
	}
	if len(fail) > 0 {
		c.Failure = &junitFailure{Message: strings.SplitN(fail[0], " [", 2)[0], Type: "incompatible", Text: strings.Join(fail, "\n")}
	}
	c.Output = strings.Join(other, "\n")
	return c
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
}

// WriteJUnit prints the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	all := junitSuites{Name: "nrtabi check against " + r.Release}
	for _, f := range r.Files {
		s := junitSuite{Name: f.Path}
		for _, st := range f.Structs {
			c := junitCaseOf("struct", st.Name, st.Findings)
			if c.Failure == nil && st.Status == StatusIncompatible {
				// Its own members are as the spec says; a struct it embeds
				// is not, and that fact is reported at that struct.
				c.Failure = &junitFailure{Message: "an embedded struct changed incompatibly (reported at that struct)", Type: "incompatible", Text: "an embedded struct changed incompatibly; its facts are reported once, at the struct that defines the changed member"}
			}
			s.add(c)
		}
		for _, c := range f.junitEnumCases() {
			s.add(c)
		}
		for _, c := range f.Contract {
			s.add(junitCaseOf("contract."+f.Role, c.Name, c.Findings))
		}
		all.Suites = append(all.Suites, s)
	}
	if len(r.Skipped) > 0 {
		s := junitSuite{Name: "entries not read"}
		for _, sk := range r.Skipped {
			s.add(junitCase{Name: sk.Path, Classname: "input", Skipped: &junitSkipped{Message: sk.Reason}})
		}
		all.Suites = append(all.Suites, s)
	}
	if len(r.Absent) > 0 || len(r.Required) > 0 {
		s := junitSuite{Name: "structs of " + r.StructSpec + " found in no input"}
		for _, n := range r.Absent {
			var missing []Finding
			for _, f := range r.Findings {
				if f.Kind == KindMissingStruct && f.Struct == n {
					missing = append(missing, f)
				}
			}
			c := junitCaseOf("struct", n, missing)
			if c.Failure == nil {
				c.Skipped = &junitSkipped{Message: "absent from every input"}
			}
			s.add(c)
		}
		all.Suites = append(all.Suites, s)
	}
	for _, s := range all.Suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

package diff

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/spec"
)

// The SARIF form of a diff (docs/sarif.md): one result per change, its
// rule the change's kind, its level the change's severity, its location
// the spec row that states the fact (the new side's, the old side's for
// what is gone), its consequences as related locations. The log is
// render's, the one SARIF writer (check's too).

// diffedHook, when set, sees every report Diff returns: the package's
// tests hold the SARIF form of each to the schema (sarif_test.go).
var diffedHook func(Report)

// Level is a severity's SARIF level: incompatible is an error,
// compatible a warning (the default --fail-on fails on it), informational
// a note (docs/sarif.md#levels).
func (s Severity) Level() string {
	switch s {
	case Incompatible:
		return render.LevelError
	case Compatible:
		return render.LevelWarning
	}
	return render.LevelNote
}

// worst is the severity of a change and what it forces.
func (c Change) worst() Severity {
	sev := Informational
	c.Walk(func(x Change, _ int) {
		if x.Severity == Incompatible || x.Severity == Compatible && sev != Incompatible {
			sev = x.Severity
		}
	})
	return sev
}

// SARIF is the report as a SARIF run: version is nrtabi's, sourceRoot
// the directory uris are relative to ("" for absolute file uris).
func (r Report) SARIF(version, sourceRoot string) render.SARIFRun {
	run := render.SARIFRun{Tool: "nrtabi", Version: version, InformationURI: "https://github.com/nrtabi/nrtabi", SourceRoot: sourceRoot,
		Properties: map[string]any{"command": "diff", "old": r.Old.Name, "new": r.New.Name, "verdict": r.Verdict(), "exit": r.Summary.Exit}}
	loc := &locator{r: r, root: sourceRoot, files: map[string]string{}}
	// A change no row states (a version node, the compatibility id, a
	// side read from binaries) is shown at the new side's release row,
	// else the old side's.
	for _, sp := range loc.sides() {
		if f := loc.file(sp.Release.Pos.File); sp.Release.Pos.File != "" && f != "" {
			run.Anchor = f
			break
		}
	}
	used := map[string]Severity{}
	groups := map[string]string{}
	for _, c := range r.Changes {
		sev := c.worst()
		if w, ok := used[c.Kind]; !ok || sev == Incompatible || sev == Compatible && w == Informational {
			used[c.Kind] = sev
		}
		groups[c.Kind] = c.Group
		res := render.SARIFResult{RuleID: c.Kind, Level: sev.Level(), Message: changeMessage(c), Place: loc.place(c),
			Key: c.Group + "\x00" + c.Subject, Properties: map[string]any{"severity": string(c.Severity), "group": c.Group}}
		if c.Grade != "" {
			res.Properties["grade"] = c.Grade
		}
		res.Waived = c.Waived
		for _, x := range c.Consequences {
			x.Walk(func(y Change, _ int) {
				res.Related = append(res.Related, render.Related{Message: changeMessage(y), Place: loc.place(y)})
			})
		}
		run.Findings = append(run.Findings, res)
	}
	kinds := make([]string, 0, len(used))
	for k := range used {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		short := groups[k] + ": " + strings.ReplaceAll(k, "-", " ")
		run.Rules = append(run.Rules, render.SARIFRule{ID: k, Short: short, Level: used[k].Level(),
			Full: "nrtabi diff, change kind " + k + " in the " + groups[k] + " area (docs/nrtabi-diff.md)."})
	}
	return run
}

// WriteSARIF prints the report as a SARIF 2.1.0 log.
func (r Report) WriteSARIF(w io.Writer, version, sourceRoot string) error {
	return render.SARIF(w, r.SARIF(version, sourceRoot))
}

// changeMessage words a change in one line, as the text report's row.
func changeMessage(c Change) string {
	msg := string(c.Severity) + " " + c.Kind + " " + c.Subject
	switch {
	case c.Old != "" && c.New != "":
		msg += ": " + c.Old + " -> " + c.New
	case c.Old != "":
		msg += ": " + c.Old
	case c.New != "":
		msg += ": " + c.New
	}
	if len(c.Fields) > 1 {
		msg += " (" + strings.Join(c.Fields, ", ") + ")"
	}
	if c.Detail != "" {
		msg += " (" + c.Detail + ")"
	}
	if len(c.EmbeddedIn) > 0 {
		msg += " (embedded in " + strings.Join(c.EmbeddedIn, ", ") + ")"
	}
	return msg
}

// locator finds the spec row a change's subject is stated in.
type locator struct {
	r     Report
	root  string
	files map[string]string // file's answers so far
}

// place is a change's logical name, and the row of the new side's spec
// that states it (the old side's when the new one has none), when that
// file is on disk: a spec loaded from a directory names its files as
// given, an embedded one as the checkout's spec/NAME/FILE, found under
// the working directory or the source root, or not at all
// (docs/sarif.md#locations).
func (l *locator) place(c Change) render.Place {
	var p render.Place
	subject, _, _ := strings.Cut(c.Subject, " .. ")
	var pos spec.Pos
	switch c.Group {
	case "structs", "constants":
		name, field, _ := strings.Cut(subject, ".")
		if i := strings.IndexAny(field, ".["); i >= 0 {
			field = field[:i]
		}
		if field != "" {
			p.Logical = []render.Logical{{Name: field, FullyQualifiedName: c.Subject, Kind: "member"}}
		} else {
			p.Logical = []render.Logical{{Name: name, FullyQualifiedName: name, Kind: "type"}}
		}
		pos = l.structPos(name, field)
	case "forward", "reverse":
		p.Logical = []render.Logical{{Name: subject, FullyQualifiedName: subject, Kind: "function"}}
		pos = l.symbolPos(c.Group, subject)
	default:
		p.Logical = []render.Logical{{Name: c.Subject, FullyQualifiedName: c.Group + "/" + c.Subject}}
	}
	if pos.File != "" {
		if f := l.file(pos.File); f != "" {
			p.File, p.Line = f, pos.Line
		}
	}
	return p
}

func (l *locator) sides() []*spec.Spec {
	var out []*spec.Spec
	for _, s := range []*spec.Spec{l.r.newSpec, l.r.oldSpec} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (l *locator) structPos(name, field string) spec.Pos {
	for _, s := range l.sides() {
		if st := s.StructByName(name); st != nil {
			for i := range st.Fields {
				if st.Fields[i].Name == field {
					return st.Fields[i].Pos
				}
			}
			return st.Pos
		}
		if c := s.ConstantByName(name); c != nil {
			return c.Pos
		}
		for i := range s.Enums {
			if s.Enums[i].Name == name {
				return s.Enums[i].Pos
			}
		}
	}
	return spec.Pos{}
}

func (l *locator) symbolPos(group, name string) spec.Pos {
	for _, s := range l.sides() {
		if group == "forward" {
			for i := range s.Forward {
				if s.Forward[i].Name == name {
					return s.Forward[i].Pos
				}
			}
			continue
		}
		for i := range s.Reverse {
			if s.Reverse[i].Name == name {
				return s.Reverse[i].Pos
			}
		}
	}
	return spec.Pos{}
}

// file is a spec file's absolute path, when it is a regular file: as
// given (relative to the working directory), else under the source root.
func (l *locator) file(name string) string {
	if f, ok := l.files[name]; ok {
		return f
	}
	f := l.stat(name)
	l.files[name] = f
	return f
}

func (l *locator) stat(name string) string {
	cands := []string{name}
	if l.root != "" && !filepath.IsAbs(name) {
		cands = append(cands, filepath.Join(l.root, name))
	}
	for _, c := range cands {
		abs, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() {
			return abs
		}
	}
	return ""
}

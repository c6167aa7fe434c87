package layoutcheck

import (
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/render"
)

// mark is a finding's two-column mark by severity. A switch, not a map: a
// package-level map is built at init, which every command runs
// (docs/benchmarks.md#start-up-2026-12-04).
func mark(s Severity) string {
	switch s {
	case Compatible:
		return " ~"
	case Incompatible:
		return " !"
	}
	return "  "
}

// WriteText prints the report grouped by file, then by struct and by
// contract rule, ending with the one-line verdict.
func (r *Report) WriteText(w io.Writer) {
	printf(w, "release %s; structs from %s\n", r.Release, r.StructSpec)
	for _, f := range r.Files {
		printf(w, "\n== %s (%s", f.Path, f.ELFKind)
		if f.BuildID != "" {
			printf(w, ", build-id %s", f.BuildID)
		}
		printf(w, ")\n   DWARF: %s (%s); role: %s (%s)\n", f.DWARFFile, f.DWARFVia, f.Role, f.RoleFrom)
		for _, p := range f.DWARFParts {
			printf(w, "   DWARF part: %s (%s)\n", p.File, p.Via)
		}
		for _, m := range f.DWARFMissing {
			printf(w, "   DWARF NOT READ: %s\n", m)
		}
		printf(w, "  structs (%d found)\n", len(f.Structs))
		for _, s := range f.Structs {
			printf(w, "    %-12s %-28s %7d B  %s", strings.ToUpper(s.Status), s.Name, s.Size, s.Via)
			if s.DWARFFile != "" && (s.DWARFFile != f.DWARFFile || s.DWARFVia != f.DWARFVia) {
				printf(w, "  [%s: %s]", s.DWARFVia, s.DWARFFile)
			}
			fmt.Fprintln(w)
			for _, fd := range s.Findings {
				r.writeFact(w, fd)
			}
			for _, t := range s.Through {
				printf(w, "        through %s, reported there\n", t)
			}
			for _, u := range s.Unresolved {
				if u.Type == "" { // the walk's bounds stopped it (unresolved.go)
					printf(w, "        unresolved: %s\n", u.Why)
					continue
				}
				printf(w, "        unresolved %s: %s stays a declaration: %s\n", u.Member, u.Type, u.Why)
			}
		}
		f.writeEnumsText(w, r.writeFact)
		if len(f.Contract) > 0 {
			printf(w, "  link contract (%s)\n", f.Role)
			for _, c := range f.Contract {
				st := "ok  "
				switch {
				case !c.OK:
					st = "FAIL"
				case worst(c.Findings) == Compatible:
					st = "CHG "
				}
				printf(w, "    %s %s\n", st, c.Name)
				for _, fd := range c.Findings {
					printf(w, "     %s %s [%s, %s]\n", mark(fd.Severity), fd.Message, fd.Kind, fd.Severity)
					if fd.Waived != nil {
						printf(w, "        %s\n", fd.Waived.Note())
					}
				}
			}
		}
	}
	if len(r.Skipped) > 0 {
		printf(w, "\nnot read (%d)\n", len(r.Skipped))
		for _, sk := range r.Skipped {
			printf(w, "    %s: %s\n", sk.Path, sk.Reason)
		}
	}
	if len(r.Absent) > 0 {
		printf(w, "\nabsent from every input (%d of %d spec structs): %s\n", len(r.Absent), r.StructsInSpec, strings.Join(r.Absent, ", "))
	}
	r.writeAbsentEnumsText(w)
	for _, fd := range r.Findings {
		if fd.Kind == KindMissingStruct {
			printf(w, "  %s %s [%s, %s]\n", mark(fd.Severity), fd.Message, fd.Kind, fd.Severity)
		}
	}
	for _, n := range r.Notes {
		printf(w, "note: %s\n", n)
	}
	printf(w, "\nverdict: %s (exit %d)\n", r.Verdict, r.Exit)
}

// writeFact prints one fact on one line, where the struct is embedded, and
// its consequences indented under it (not facts of their own); with
// Verbose, every field of a moved run.
func (r *Report) writeFact(w io.Writer, fd Finding) {
	fd.Walk(func(x Finding, depth int) {
		indent, arrow := render.Consequence(depth)
		printf(w, "     %s%s %s%s [%s, %s]\n", indent, mark(x.Severity), arrow, x.Message, x.Kind, x.Severity)
		if x.Waived != nil {
			printf(w, "     %s   %s\n", indent, x.Waived.Note())
		}
		if depth == 0 && len(x.EmbeddedIn) > 0 {
			printf(w, "         embedded in %s\n", strings.Join(x.EmbeddedIn, ", "))
		}
		if r.Verbose && len(x.Fields) > 1 {
			for i, f := range x.Fields {
				printf(w, "     %s       %s.%s %+d (%d of %d)\n", indent, x.Struct, f, x.Delta, i+1, len(x.Fields))
			}
		}
	})
}

// printf is render.Printf, the one escaping printer of report text
// (check's report, show's layout): names, paths, build-ids and messages
// come from the inputs.
func printf(w io.Writer, format string, args ...any) { render.Printf(w, format, args...) }

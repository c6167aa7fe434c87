package layoutcheck

import (
	"fmt"
	"io"
	"strings"
)

var marks = map[Severity]string{Info: "  ", Compatible: " ~", Incompatible: " !"}

// WriteText prints the report grouped by file, then by struct and by
// contract rule, ending with the one-line verdict.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "release %s; structs from %s\n", r.Release, r.StructSpec)
	for _, f := range r.Files {
		fmt.Fprintf(w, "\n== %s (%s", f.Path, f.ELFKind)
		if f.BuildID != "" {
			fmt.Fprintf(w, ", build-id %s", f.BuildID)
		}
		fmt.Fprintf(w, ")\n   DWARF: %s (%s); role: %s (%s)\n", f.DWARFFile, f.DWARFVia, f.Role, f.RoleFrom)
		for _, p := range f.DWARFParts {
			fmt.Fprintf(w, "   DWARF part: %s (%s)\n", p.File, p.Via)
		}
		for _, m := range f.DWARFMissing {
			fmt.Fprintf(w, "   DWARF NOT READ: %s\n", m)
		}
		fmt.Fprintf(w, "  structs (%d found)\n", len(f.Structs))
		for _, s := range f.Structs {
			fmt.Fprintf(w, "    %-12s %-28s %7d B  %s", strings.ToUpper(s.Status), s.Name, s.Size, s.Via)
			if s.DWARFFile != "" && (s.DWARFFile != f.DWARFFile || s.DWARFVia != f.DWARFVia) {
				fmt.Fprintf(w, "  [%s: %s]", s.DWARFVia, s.DWARFFile)
			}
			fmt.Fprintln(w)
			for _, fd := range s.Findings {
				fmt.Fprintf(w, "     %s %s [%s, %s]\n", marks[fd.Severity], fd.Message, fd.Kind, fd.Severity)
			}
		}
		if len(f.Contract) > 0 {
			fmt.Fprintf(w, "  link contract (%s)\n", f.Role)
			for _, c := range f.Contract {
				st := "ok  "
				switch {
				case !c.OK:
					st = "FAIL"
				case worst(c.Findings) == Compatible:
					st = "CHG "
				}
				fmt.Fprintf(w, "    %s %s\n", st, c.Name)
				for _, fd := range c.Findings {
					fmt.Fprintf(w, "     %s %s [%s, %s]\n", marks[fd.Severity], fd.Message, fd.Kind, fd.Severity)
				}
			}
		}
	}
	if len(r.Absent) > 0 {
		fmt.Fprintf(w, "\nabsent from every input (%d of %d spec structs): %s\n", len(r.Absent), r.StructsInSpec, strings.Join(r.Absent, ", "))
	}
	for _, fd := range r.Findings {
		if fd.Kind == KindMissingStruct {
			fmt.Fprintf(w, "  %s %s [%s, %s]\n", marks[fd.Severity], fd.Message, fd.Kind, fd.Severity)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "\nverdict: %s (exit %d)\n", r.Verdict, r.Exit)
}

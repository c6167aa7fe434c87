package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "spec validate", summary: "validate a release spec; print its counts or every error at file:line:col", run: specValidate})
	register(&command{name: "spec show", summary: "print a release spec as text or JSON", run: specShow})
}

func specValidate(args []string, out, errw io.Writer) int {
	fs := newFlags("spec validate", errw)
	var sf specFlags
	sf.register(fs)
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	s, err := sf.load()
	if err != nil {
		return reportSpecError(errw, sf.where(), err)
	}
	fmt.Fprintf(out, "%s: valid\n", sf.where())
	fmt.Fprint(out, summary(s))
	return exitOK
}

// reportSpecError prints every error of a failed load and returns exitError.
func reportSpecError(errw io.Writer, where string, err error) int {
	var errs spec.Errors
	if errors.As(err, &errs) {
		fmt.Fprintln(errw, errs.Error())
		fmt.Fprintf(errw, "%s: %d error(s)\n", where, len(errs))
	} else {
		fmt.Fprintf(errw, "nrtabi: %v\n", err)
	}
	return exitError
}

// summary is the one-screen count of a valid spec.
func summary(s *spec.Spec) string {
	var b strings.Builder
	nec, nrt := 0, 0
	for _, r := range s.Reverse {
		if strings.HasPrefix(r.Name, "nec_") {
			nec++
		} else {
			nrt++
		}
	}
	guarded := 0
	for _, f := range s.Forward {
		if f.Guard == spec.Guarded {
			guarded++
		}
	}
	fields, opaque := 0, 0
	for _, st := range s.Structs {
		fields += len(st.Fields)
		opaque += len(st.Opaque)
	}
	var nodes []string
	for _, n := range s.VersionNodes {
		nodes = append(nodes, n.Name)
	}
	fmt.Fprintf(&b, "release %s (libnrt %s, libnccom %s)\n", s.Release.Name, s.Release.LibNRT.SONAME, s.Release.LibNCCOM.SONAME)
	fmt.Fprintf(&b, "  forward:   %d forward (dlsym 0..%d, slots %#x..%#x, %d guarded + %d exempt)\n",
		len(s.Forward), len(s.Forward)-1, s.SlotTable.Base, s.SlotTable.Top, guarded, len(s.Forward)-guarded)
	fmt.Fprintf(&b, "  reverse:   %d+%d reverse (%d nec_ + %d nrt_), %d total\n", nec, nrt, nec, nrt, len(s.Reverse))
	fmt.Fprintf(&b, "  versions:  %s\n", strings.Join(nodes, ", "))
	fmt.Fprintf(&b, "  structs:   %d (%d known fields, %d opaque ranges, %d asserted sizes and offsets)\n",
		len(s.Structs), fields, opaque, gen.CountAsserts(s))
	fmt.Fprintf(&b, "  constants: %d, enums: %d, messages: %d, contradictions recorded: %d\n",
		len(s.Constants), len(s.Enums), len(s.Messages), len(s.Contradictions))
	return b.String()
}

func specShow(args []string, out, errw io.Writer) int {
	fs := newFlags("spec show", errw)
	var sf specFlags
	sf.register(fs)
	format := fs.String("format", "text", "output format: text or json")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(errw, "nrtabi spec show: --format %q: use text or json\n", *format)
		return exitUsage
	}
	s, err := sf.load()
	if err != nil {
		return reportSpecError(errw, sf.where(), err)
	}
	if *format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s.View()); err != nil {
			fmt.Fprintf(errw, "nrtabi: %v\n", err)
			return exitError
		}
		return exitOK
	}
	showText(out, s)
	return exitOK
}

func showText(out io.Writer, s *spec.Spec) {
	fmt.Fprint(out, summary(s))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "\nFORWARD (dlsym order)\n#\tsymbol\tslot\ttrampoline\tguard\tgroup\tconf\n")
	for _, f := range s.ByIndex() {
		fmt.Fprintf(w, "%d\t%s\t%#x\t%s\t%s\t%s\t%s\n", f.Index, f.Name, f.Slot, f.Trampoline, f.Guard, f.Group, f.ConfOf("index"))
	}
	fmt.Fprintf(w, "\nREVERSE\nsymbol\tversion\taddr\tshape\tgroup\n")
	for _, r := range s.Reverse {
		fmt.Fprintf(w, "%s\t%s\t%#x\t%s\t%s\n", r.Name, r.Version, r.Addr, r.Shape, r.Group)
	}
	fmt.Fprintf(w, "\nSTRUCTS\nname\tsize\talign\tfields\topaque\tside\n")
	for _, st := range s.Structs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\n", st.Name, st.Size, st.Align(), len(st.Fields), len(st.Opaque), st.Side)
	}
	w.Flush()
}

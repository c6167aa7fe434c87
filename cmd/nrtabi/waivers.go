package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/layoutcheck/waiver"
	"github.com/nrtabi/nrtabi/release/diff"
)

// waiverFlags are --waivers and --fail-on-unused-waivers of check and diff
// (docs/waivers.md): the accepted findings, which are reported as waived
// and set no exit bit.
type waiverFlags struct {
	file       string
	failUnused bool
	set        *waiver.Set
}

func (w *waiverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.file, "waivers", "", "TOML file of accepted findings (docs/waivers.md); default "+waiver.DefaultFile+" in the working directory when it exists; none reads none")
	fs.BoolVar(&w.failUnused, "fail-on-unused-waivers", false, "exit 1 when a waiver matches no finding (default: a note on stderr)")
}

// load reads the waivers and refuses an expired one by name, before
// anything is checked: an accepted finding past its date is a decision to
// make again, not a pass.
func (w *waiverFlags) load() error {
	path := w.file
	switch path {
	case "none":
		return nil
	case "":
		if _, err := os.Lstat(waiver.DefaultFile); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		path = waiver.DefaultFile
	}
	set, err := waiver.Load(path)
	if err != nil {
		return err
	}
	now, err := waiver.Now()
	if err != nil {
		return err
	}
	if exp := set.Expired(now); len(exp) > 0 {
		var lines []string
		for _, x := range exp {
			lines = append(lines, fmt.Sprintf("%s: waiver of %s (%s) expired on %s", x.At, x.What(), x.Who, x.Day()))
		}
		return fmt.Errorf("%s; review the finding and move until forward or remove the waiver", strings.Join(lines, "; "))
	}
	w.set = set
	return nil
}

// waivedOf is the waiver as the reports carry it.
func waivedOf(x *waiver.Waiver) *render.Waiver {
	return &render.Waiver{At: x.At.String(), Why: x.Why, Who: x.Who, Until: x.Day()}
}

// check marks the findings of a check report its waivers accept; the
// release is the spec's.
func (w *waiverFlags) check(rep *layoutcheck.Report) {
	if w.set == nil {
		return
	}
	rep.Waive(func(f layoutcheck.Finding) *render.Waiver {
		x := w.set.Match(waiver.Subject{Struct: f.Struct, Symbol: f.Symbol, Fields: append([]string{f.Field}, f.Fields...),
			Rules: []string{f.Kind, f.Grade}, Release: rep.Release})
		if x == nil {
			return nil
		}
		return waivedOf(x)
	})
	for _, x := range w.set.Unused() {
		rep.Notes = append(rep.Notes, fmt.Sprintf("waiver %s (%s) matched no finding", x.At, x.What()))
	}
}

// diff marks the changes of a diff report its waivers accept; the release
// is the NEW side's, the one the change arrives in.
func (w *waiverFlags) diff(r *diff.Report) {
	if w.set == nil {
		return
	}
	r.Waive(func(c diff.Change) *render.Waiver {
		sub := waiver.Subject{Rules: []string{c.Kind, c.Grade}, Release: r.New.Name}
		if c.Group == "structs" {
			st, field, _ := strings.Cut(c.Subject, ".")
			sub.Struct, sub.Fields = st, append([]string{field}, c.Fields...)
		} else {
			sub.Symbol = c.Subject
		}
		x := w.set.Match(sub)
		if x == nil {
			return nil
		}
		return waivedOf(x)
	})
}

// unused names each waiver that matched nothing on errw, and is the error
// to exit with under --fail-on-unused-waivers.
func (w *waiverFlags) unused(cmd string, errw io.Writer) error {
	un := w.set.Unused()
	var names []string
	for _, x := range un {
		names = append(names, x.At.String()+" ("+x.What()+")")
		fmt.Fprintf(errw, "%s: note: waiver %s matched no finding\n", cmd, esc.String(x.At.String()+" ("+x.What()+")"))
	}
	if w.failUnused && len(un) > 0 {
		return fmt.Errorf("%d waiver(s) matched no finding (--fail-on-unused-waivers): %s; remove them or fix what they name", len(un), strings.Join(names, ", "))
	}
	return nil
}

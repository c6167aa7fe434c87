package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

// refit is -refit: the committed rows refitted under the current model,
// no world run, the file rewritten (commit it before the projection).
func refit(_ context.Context, o options, out io.Writer) error {
	f, err := bootsim.LoadFitted(o.fitted)
	if err != nil {
		return err
	}
	f.FitMaxN = o.fitMax
	if o.merge != "" {
		if err := mergeRows(f, o.merge); err != nil {
			return err
		}
	}
	exclude := o.fitExclude
	if exclude == "" {
		// the rows the measuring run kept out of its fit stay out, for the
		// reason it recorded
		var kept []string
		for k, why := range f.Notes {
			if name, ok := strings.CutPrefix(k, "fit-exclude "); ok {
				kept = append(kept, name+"="+strings.ReplaceAll(why, ",", ";"))
			}
		}
		sort.Strings(kept)
		exclude = strings.Join(kept, ",")
	}
	fmt.Fprintf(out, "refit of the rows in %s (measured %s, nproc %s, load %s)\n", o.fitted, f.Date, f.NProc, f.Load)
	if err := fitAndValidate(out, f, exclude); err != nil {
		return err
	}
	return bootsim.SaveFitted(o.fitted, f)
}

// grade is -grade: another run's rows graded under the committed costs,
// nothing fitted or written: a check of the committed model on rows it
// never saw (every one a validation row).
func grade(ctx context.Context, o options, out io.Writer) error {
	if err := committed(ctx, o.fitted); err != nil {
		return err
	}
	f, err := bootsim.LoadFitted(o.fitted)
	if err != nil {
		return err
	}
	g, err := bootsim.LoadFitted(o.grade)
	if err != nil {
		return err
	}
	if g.NProc != f.NProc {
		return fmt.Errorf("-grade %s: measured on %s CPUs, the costs on %s", o.grade, g.NProc, f.NProc)
	}
	fmt.Fprintf(out, "the rows of %s (measured %s, load %s) under the committed costs of %s (fitted on N <= %d of %s), nothing refitted:\n", o.grade, g.Date, g.Load, o.fitted, f.FitMaxN, f.Date)
	h := *f
	h.Rows = g.Rows
	all := map[string]string{}
	for _, r := range g.Rows {
		all[r.Variant] = "not in the fit"
	}
	return printGrades(out, &h, all)
}

// mergeRows adds another run's rows to f, each run's date and load noted:
// a variant measured at the same size in both is refused (which median
// would be the row?), and so is a run on a host of another shape.
func mergeRows(f *bootsim.Fitted, path string) error {
	g, err := bootsim.LoadFitted(path)
	if err != nil {
		return err
	}
	if g.NProc != f.NProc {
		return fmt.Errorf("-merge %s: measured on %s CPUs, the rows here on %s: one host's shape per file", path, g.NProc, f.NProc)
	}
	if g.AgreePath != f.AgreePath {
		return fmt.Errorf("-merge %s: its worlds' group comm was %q, the rows here %q: one agree path per file", path, g.AgreePath, f.AgreePath)
	}
	have := map[[2]string]bool{}
	for _, r := range f.Rows {
		have[[2]string{label(r), strconv.Itoa(r.N)}] = true
	}
	var sizes []string
	for _, r := range g.Rows {
		k := [2]string{label(r), strconv.Itoa(r.N)}
		if have[k] {
			return fmt.Errorf("-merge %s: %s at N=%d is in both files", path, k[0], r.N)
		}
		have[k] = true
		f.Rows = append(f.Rows, r)
		sizes = append(sizes, k[0]+"@"+k[1])
	}
	if f.Notes == nil {
		f.Notes = map[string]string{}
	}
	f.Notes["merged "+g.Date] = fmt.Sprintf("rows %s from a run of %s, load %s", strings.Join(sizes, " "), g.Date, g.Load)
	for k, v := range g.Notes { // what that run said of its rows stays with them
		f.Notes["merged "+g.Date+": "+k] = v
	}
	return nil
}

// fitAndValidate fits f.Go to the Go rows (the star's included) and f.C to
// the C hosts' rows of at most f.FitMaxN ranks, prints every row's error
// (the larger rows are the validation) and the misses, each named.

// label is a row's variant and, when it ran beside the bench's burners,
// their count: one variant at one size is one row per background load.
func label(r bootsim.MeasuredRow) string {
	if r.Burn > 0 {
		return fmt.Sprintf("%s+burn%d", r.Variant, r.Burn)
	}
	return r.Variant
}

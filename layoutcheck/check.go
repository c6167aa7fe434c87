package layoutcheck

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/inputs"
	"github.com/nrtabi/nrtabi/spec"
)

// Options control a check run.
type Options struct {
	Spec       *spec.Spec // release-level facts: the link contract, addresses
	Structs    *spec.Spec // struct facts: Spec itself or a struct fragment
	StructsSrc string     // where the struct facts came from, for the report
	Role       string     // "auto", RoleLibnrt, RoleLibnccom or RoleNone
	Addresses  bool
	Require    []string // struct names that must be found in some input
	DebugDirs  []string
	// Fetch downloads a debug file by build-id when no directory has it
	// (the commands wire debuginfod to it); nil: none is downloaded.
	Fetch elfread.Fetcher
	// AllowMissingDebug: a supplementary file or .dwo the DWARF refers to
	// and that is not found is reported (the structs it holds are absent)
	// instead of failing the run.
	AllowMissingDebug bool
	// AllowEmpty accepts a run that found none of the spec's structs in
	// any input and checked no link contract (no input plays a library
	// role): without it that run is a *NothingCheckedError, never CLEAN
	// (docs/nrtabi-check.md#nothing-checked).
	AllowEmpty bool
	// Jobs is how many inputs are checked at once (at most that many are
	// open); 0 means 1. The report is the same whatever it is: files in
	// input order (docs/nrtabi-check.md#many-inputs).
	Jobs int
}

// UsageError is a command-line mistake (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Check runs every struct and link-contract check on the files. The error is
// an *InputError or *UsageError; findings are in the report.
func Check(ctx context.Context, files []string, opt Options) (*Report, error) {
	ins := make([]inputs.Input, len(files))
	for i, f := range files {
		ins[i] = inputs.Input{Name: f, Path: f}
	}
	return CheckInputs(ctx, ins, opt)
}

// CheckInputs is Check of inputs as package inputs expands them: files,
// walked directories' ELF files and archive members. A skipped input is
// listed in the report's Skipped, in its place of the input order.
func CheckInputs(ctx context.Context, ins []inputs.Input, opt Options) (*Report, error) {
	if opt.Structs == nil {
		opt.Structs = opt.Spec
	}
	r := &Report{Schema: Schema, Release: opt.Spec.Release.Name, StructSpec: opt.StructsSrc, Files: []*FileReport{}, Absent: []string{}, Required: []string{}, Findings: []Finding{}}
	for _, n := range opt.Require {
		if opt.Structs.StructByName(n) == nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--require %s: no such struct in %s", n, opt.StructsSrc)}
		}
		r.Required = append(r.Required, opt.Structs.StructByName(n).Name)
	}
	switch opt.Role {
	case "", "auto", specmatch.RoleLibnrt, specmatch.RoleLibnccom, specmatch.RoleLibnccomNet, specmatch.RoleNone:
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("--role %q: use libnrt, libnccom, libnccom-net, none or auto", opt.Role)}
	}
	frs, err := checkAll(ctx, ins, opt)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, fr := range frs {
		if ins[i].Skip != "" {
			r.Skipped = append(r.Skipped, SkippedInput{Path: ins[i].Name, Reason: ins[i].Skip})
			continue
		}
		r.Files = append(r.Files, fr)
		for _, s := range fr.Structs {
			seen[s.Name] = true
			for _, f := range s.Findings {
				r.add(f)
			}
		}
		for _, e := range fr.Enums {
			for _, f := range e.Findings {
				r.add(f)
			}
		}
		for _, c := range fr.Contract {
			for _, f := range c.Findings {
				r.add(f)
			}
		}
	}
	for _, st := range opt.Structs.Structs {
		if seen[st.Name] {
			r.StructsChecked++
		} else {
			r.Absent = append(r.Absent, st.Name)
		}
	}
	r.StructsInSpec = len(opt.Structs.Structs)
	r.AbsentEnums = absentEnums(r.Files, opt.Structs)
	for _, n := range r.Required {
		if !seen[n] {
			r.add(Finding{Severity: Incompatible, Kind: KindMissingStruct, Struct: n, Expected: n,
				Message: fmt.Sprintf("%s: required struct not found in any input (looked for %s)", n, strings.Join(specmatch.StructNames(opt.Structs.StructByName(n)), ", "))})
		}
	}
	if err := r.nothingChecked(opt); err != nil {
		return nil, err
	}
	r.setVerdict()
	if checkedHook != nil {
		checkedHook(r) // tests: its SARIF form (sarif.go)
	}
	return r, nil
}

// setVerdict words the counts; waived facts are named, not counted.
func (r *Report) setVerdict() {
	switch {
	case r.Exit&int(Incompatible) != 0:
		r.Verdict = fmt.Sprintf("INCOMPATIBLE: %d incompatible and %d compatible change(s)", r.Incompat, r.Compatible)
	case r.Exit&int(Compatible) != 0:
		r.Verdict = fmt.Sprintf("COMPATIBLE CHANGES: %d compatible change(s), nothing incompatible", r.Compatible)
	default:
		r.Verdict = "CLEAN: " + r.coverage()
	}
	if r.Waived > 0 {
		r.Verdict += fmt.Sprintf("; %d waived", r.Waived)
	}
}

// checkAll checks each input, opt.Jobs at a time, and returns their
// reports by input index, whatever order they finish in.
func checkAll(ctx context.Context, ins []inputs.Input, opt Options) ([]*FileReport, error) {
	frs := make([]*FileReport, len(ins))
	err := forEach(len(ins), opt.Jobs, func(i int) (err error) {
		if ins[i].Skip == "" {
			frs[i], err = checkFile(ctx, ins[i], opt)
		}
		return err
	})
	return frs, err
}

// forEach runs fn(0..n-1), jobs at a time, each under elfread.Guard (a
// fault is per goroutine: elfread/fault.go), and returns the error of the
// lowest index that failed, so the error, like the results fn stores by
// index, is the same whatever jobs is. An index after a failed one is not
// started. A panic (a bug) is raised again on the caller's goroutine, where
// the command's one recover reports it (internal/cli runGuarded).
func forEach(n, jobs int, fn func(i int) error) error {
	jobs = min(max(jobs, 1), max(n, 1))
	errs := make([]error, n)
	var next, failed atomic.Int64
	failed.Store(int64(n))
	var panicked atomic.Value
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicked.CompareAndSwap(nil, fmt.Sprintf("%v\n%s", r, debug.Stack()))
					failed.Store(-1)
				}
			}()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || i > failed.Load() {
					return
				}
				if errs[i] = elfread.Guard(func() error { return fn(int(i)) }); errs[i] == nil {
					continue
				}
				for f := failed.Load(); i < f && !failed.CompareAndSwap(f, i); f = failed.Load() {
				}
			}
		}()
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(p)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkFile(ctx context.Context, in inputs.Input, opt Options) (fr *FileReport, err error) {
	path := in.Path // "" for a member read in memory
	obj, err := in.Open()
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	fr = &FileReport{Path: in.Name, ELFKind: obj.Kind(), BuildID: obj.BuildID, SONAME: obj.SONAME, Structs: []*StructResult{}, Contract: []ContractCheck{}}
	fr.Role, fr.RoleFrom = specmatch.DetectRole(obj, opt.Spec)
	if _, headers := specmatch.Label(path); opt.Role != "" && opt.Role != "auto" && !headers {
		fr.Role, fr.RoleFrom = opt.Role, "--role" // headers declare types, not a library's symbols
	}
	var checks []ContractCheck
	switch fr.Role {
	case specmatch.RoleLibnrt:
		checks, err = CheckLibnrt(obj, opt.Spec)
	case specmatch.RoleLibnccom:
		checks, err = CheckLibnccom(obj, opt.Spec)
	case specmatch.RoleLibnccomNet:
		checks, err = CheckLibnccomNet(obj, opt.Spec)
	}
	if err != nil {
		return nil, err
	}
	fr.Contract = append(fr.Contract, checks...)
	if opt.Addresses && fr.Role != specmatch.RoleNone {
		checks, err := CheckAddresses(obj, fr.Role, opt.Spec)
		if err != nil {
			return nil, err
		}
		fr.Contract = append(fr.Contract, checks...)
	}

	lk := in.Lookup(elfread.Lookup{Dirs: opt.DebugDirs, Fetch: opt.Fetch})
	lk.AllowMissing = opt.AllowMissingDebug
	dbg, err := elfread.FindDebug(ctx, obj, lk)
	if err != nil {
		return nil, err
	}
	defer dbg.Close()
	fr.DWARFFile, fr.DWARFVia = dbg.Path(), dbg.Via
	for _, p := range dbg.Parts()[1:] {
		fr.DWARFParts = append(fr.DWARFParts, DWARFPart{File: p.Path, Via: p.Via})
	}
	fr.DWARFMissing = dbg.Missing
	if label, ok := specmatch.Label(path); ok {
		fr.Path, fr.ELFKind, fr.DWARFFile, fr.DWARFVia = label, "C headers", "gcc -g of the headers", "compiled"
	}
	structs := opt.Structs.Structs
	wants := make([][]string, len(structs))
	for i, st := range structs {
		wants[i] = specmatch.StructNames(st)
	}
	found, err := dbg.FindStructs(wants)
	if err != nil {
		return nil, err
	}
	types := dbg.Types()
	// One grader per input: a struct embedded in several checked structs
	// is graded once, its facts reported once with where it is embedded.
	sc := newStructChecker(opt.Structs)
	sc.found = specmatch.Found{}
	for i, st := range structs {
		if found[i] != nil {
			sc.found[st] = uint64(found[i].Offset)
		}
	}
	for i, st := range structs {
		if found[i] == nil {
			continue
		}
		l, err := types.Struct(found[i].Offset)
		if err != nil {
			// The graph's error names the file already: the struct's
			// name goes after it, not before a second copy of it.
			msg := err.Error()
			if ie, ok := err.(*elfread.InputError); ok && ie.Path == dbg.Path() {
				msg = ie.Msg
			}
			e := elfread.InputErrorf(dbg.Path(), "%s: %s", st.Name, msg).(*elfread.InputError)
			e.Err = err // the cause stays reachable (errors.As: a MissingPartError)
			return nil, e
		}
		sr := &StructResult{Name: st.Name, DWARFName: found[i].Name, Via: found[i].Via, DIE: fmt.Sprintf("%#x", found[i].DIE), Size: l.Size, SpecSize: st.Size,
			DWARFFile: found[i].File, DWARFVia: found[i].From, Unresolved: unresolvedDecls(types, l)}
		if _, headers := specmatch.Label(path); headers {
			sr.DWARFFile, sr.DWARFVia = fr.DWARFFile, fr.DWARFVia
		}
		sc.grade(st, l)
		fr.Structs = append(fr.Structs, sr)
	}
	// A library role's DWARF must describe the structs its definers take.
	if _, headers := specmatch.Label(path); !headers && (fr.Role == specmatch.RoleLibnrt || fr.Role == specmatch.RoleLibnccom) {
		have := map[string]bool{}
		for i, st := range structs {
			have[st.Name] = found[i] != nil
		}
		if rule, ok := roleStructsRule(fr.Role, opt.Spec, opt.Structs, have); ok {
			fr.Contract = append(fr.Contract, rule)
		}
	}
	if fr.Enums, err = checkEnums(dbg, opt); err != nil {
		return nil, err
	}
	facts, byEnum := foldEnumCauses(sc.findings(nil), fr.Enums, opt.Structs)
	sc.locate(facts, dbg)
	sc.locate(byEnum, dbg)
	attachFacts(fr.Structs, facts, byEnum)
	sort.SliceStable(fr.Structs, func(a, b int) bool { return fr.Structs[a].Name < fr.Structs[b].Name })
	return fr, nil
}

// attachFacts gives each fact to the struct that defines it, or, for a
// struct found only embedded, to the first checked struct embedding it; a
// struct's status is also the worst of the facts of what it embeds, and of
// the facts an enum's size change caused in it (byEnum: reported under the
// enum, docs/layoutcheck.md#enum-checks).
func attachFacts(srs []*StructResult, facts, byEnum []Finding) {
	byName := map[string]*StructResult{}
	for _, sr := range srs {
		byName[sr.Name] = sr
		sr.Findings = []Finding{}
	}
	for _, f := range facts {
		sr := byName[f.Struct]
		for _, at := range f.EmbeddedIn {
			if sr != nil {
				break
			}
			sr = byName[strings.SplitN(at, ".", 2)[0]]
		}
		if sr != nil {
			sr.Findings = append(sr.Findings, f)
		}
	}
	for _, sr := range srs {
		w := worst(sr.Findings)
		for _, f := range byEnum {
			if t := f.Struct + "." + f.Field + " (its enum's size changed)"; f.Struct == sr.Name && !slices.Contains(sr.Through, t) {
				w = max(w, worst([]Finding{f}))
				sr.Through = append(sr.Through, t)
			}
		}
		for _, f := range append(facts[:len(facts):len(facts)], byEnum...) {
			for _, at := range f.EmbeddedIn {
				if strings.HasPrefix(at, sr.Name+".") {
					w = max(w, worst([]Finding{f}))
					sr.Through = append(sr.Through, f.Struct+"."+f.Field+" (at "+at+")")
				}
			}
		}
		sr.Status = statusOfSeverity(w)
	}
}

func statusOfSeverity(w Severity) string {
	switch w {
	case Incompatible:
		return StatusIncompatible
	case Compatible:
		return StatusCompatible
	}
	return StatusOK
}

// coverage says what a clean verdict rests on, so that structs absent from
// every input (debug info stripped, moved to a file not found) are never read
// as checked.
func (r *Report) coverage() string {
	rules := 0
	for _, fr := range r.Files {
		rules += len(fr.Contract)
	}
	contract := fmt.Sprintf("every contract rule holds (%d)", rules)
	if rules == 0 {
		contract = "no link contract checked (no library role)"
	}
	skipped := 0
	for _, fr := range r.Files {
		skipped += len(fr.DWARFMissing)
	}
	if skipped > 0 {
		contract += fmt.Sprintf("; %d debug file(s) the DWARF refers to not read (--allow-missing-debug): the structs they hold are unchecked", skipped)
	}
	switch {
	case r.StructsInSpec > 0 && r.StructsChecked == r.StructsInSpec:
		return fmt.Sprintf("all %d spec structs found and checked; %s", r.StructsInSpec, contract)
	case r.StructsChecked == 0:
		return fmt.Sprintf("%s; 0 of %d spec structs found, no layout checked", contract, r.StructsInSpec)
	default:
		return fmt.Sprintf("%d of %d spec structs found and checked (%d absent); %s", r.StructsChecked, r.StructsInSpec, len(r.Absent), contract)
	}
}

// NothingCheckedError is a check that found none of the spec's structs in
// its inputs and checked no link contract: it rests on nothing, so it does
// not pass (docs/nrtabi-check.md#nothing-checked).
type NothingCheckedError struct {
	Inputs  []string // the inputs read
	Structs int      // the spec's structs, none found
	Release string
}

func (e *NothingCheckedError) Error() string {
	in := strings.Join(e.Inputs, ", ")
	if len(e.Inputs) > 3 {
		in = fmt.Sprintf("%s and %d more", strings.Join(e.Inputs[:3], ", "), len(e.Inputs)-3)
	}
	return fmt.Sprintf("nothing checked: none of the %d structs of %s found in %s, and none of them is libnrt, libnccom or the net plugin (by SONAME) for the link contract; give the release's libraries or their debug files, or pass --allow-empty to accept an empty check", e.Structs, e.Release, in)
}

// nothingChecked is the *NothingCheckedError of a report that found no
// spec struct and checked no contract rule, unless opt allows it. A run
// that names structs it requires (--require) has checked them: each one
// not found is a missing-struct finding, not an empty check.
func (r *Report) nothingChecked(opt Options) error {
	if opt.AllowEmpty || r.StructsChecked > 0 || len(r.Files) == 0 || len(r.Required) > 0 || r.StructsInSpec == 0 && len(r.Findings) > 0 {
		return nil
	}
	var names []string
	for _, fr := range r.Files {
		if len(fr.Contract) > 0 {
			return nil
		}
		names = append(names, fr.Path)
	}
	return &NothingCheckedError{Inputs: names, Structs: r.StructsInSpec, Release: r.Release}
}

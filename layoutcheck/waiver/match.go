package waiver

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Subject is a finding in the words a waiver matches: the struct and
// fields (a struct finding; a run of fields moved by one delta lists each) or the symbol (a link-contract or symbol-table
// finding), its rules (check's kind and the grading's rule, docs/
// layoutcheck.md#one-grading: a waiver may name either), and the release
// it is about.
type Subject struct {
	Struct, Symbol string
	Fields, Rules  []string
	Release        string
}

// Match returns the first waiver that accepts the finding, marking it
// used, or nil.
func (s *Set) Match(f Subject) *Waiver {
	if s == nil {
		return nil
	}
	for _, w := range s.Waivers {
		if w.matches(f) {
			w.used = true
			return w
		}
	}
	return nil
}

func (w *Waiver) matches(f Subject) bool {
	if w.Struct != "" && w.Struct != f.Struct || w.Field != "" && !slices.Contains(f.Fields, w.Field) ||
		w.Symbol != "" && w.Symbol != f.Symbol {
		return false
	}
	return slices.Contains(f.Rules, w.Rule) && w.inRange(f.Release)
}

// inRange: no range holds for every release; a range holds only for a
// release name inside it (a side named by a path is in none).
func (w *Waiver) inRange(rel string) bool {
	if w.Releases == "" {
		return true
	}
	v := "v" + rel
	if !semver.IsValid(v) {
		return false
	}
	return (w.From == "" || semver.Compare("v"+w.From, v) <= 0) && (w.To == "" || semver.Compare(v, "v"+w.To) <= 0)
}

// Unused lists the waivers no Match returned.
func (s *Set) Unused() []*Waiver {
	if s == nil {
		return nil
	}
	var out []*Waiver
	for _, w := range s.Waivers {
		if !w.used {
			out = append(out, w)
		}
	}
	return out
}

// Expired lists the waivers whose last day is before now's (UTC).
func (s *Set) Expired(now time.Time) []*Waiver {
	if s == nil {
		return nil
	}
	y, m, d := now.UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	var out []*Waiver
	for _, w := range s.Waivers {
		if w.Until.Before(today) {
			out = append(out, w)
		}
	}
	return out
}

// What is the waiver's subject in one line, for reports.
func (w *Waiver) What() string {
	subj := w.Symbol
	if w.Struct != "" {
		subj = w.Struct
		if w.Field != "" {
			subj += "." + w.Field
		}
	}
	s := w.Rule + " " + subj
	if w.Releases != "" {
		s += " in " + w.Releases
	}
	return s
}

// Day is the until date as written.
func (w *Waiver) Day() string { return w.Until.Format(time.DateOnly) }

// Now is the clock expiry is judged by: SOURCE_DATE_EPOCH (seconds since
// 1970, the reproducible-builds variable) when set, else the system's.
// A value that is not such a number is refused by name, not ignored.
func Now() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok {
		return time.Now(), nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > 253402300799 { // through 9999-12-31
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a count of seconds since 1970; unset it or set it to `date +%%s`", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

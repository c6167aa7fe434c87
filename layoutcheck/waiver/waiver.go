// Package waiver reads the checked-in file of accepted findings of nrtabi
// check and nrtabi diff (docs/waivers.md): each waiver names what it
// accepts (a struct, a field or symbol, a rule, a range of releases), why,
// who accepted it and until when. It validates the file as the spec loader
// validates the spec, every error at file:line:col, and matches findings;
// it knows neither report: the commands hand it a finding's words
// (Subject) and mark what it answers.
package waiver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/mod/semver"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// DefaultFile is the file check and diff read when --waivers is not given,
// in the directory they run in (the repository's root in CI). It is not
// inside the spec directory: the spec loader reads every *.toml there
// (docs/waivers.md#the-file).
const DefaultFile = "nrtabi-waivers.toml"

// Bounds on a waiver file: a project accepts a handful of findings; more
// than this is a file that is not one (docs/waivers.md#limits).
const (
	MaxFileSize = 256 << 10
	MaxWaivers  = 1000
	MaxText     = 1000 // bytes of one string value
)

// Waiver is one accepted finding.
type Waiver struct {
	Struct, Field, Symbol, Rule string
	// Releases is the range as written ("2.31.24", "2.31.24..2.32.0",
	// "2.31.24..", "..2.32.0"); empty is every release. From and To are
	// its ends ("" is open).
	Releases, From, To string
	Why, Who           string
	Until              time.Time // the last day it holds, UTC
	At                 Pos       // where its [[waiver]] header is
	used               bool
}

// Pos is a place in the file, 1-based.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Set is the waivers of one file.
type Set struct {
	File    string
	Waivers []*Waiver
}

// Load reads and validates the waiver file at path: a regular file of at
// most MaxFileSize bytes.
func Load(path string) (*Set, error) {
	data, err := regfile.ReadFile(path, MaxFileSize)
	if err != nil {
		var nr *regfile.NotRegularError
		var tl *regfile.TooLargeError
		switch {
		case errors.As(err, &nr):
			return nil, fmt.Errorf("waiver file %s: not a regular file (%s); name the checked-in TOML file", path, nr.Mode.Type())
		case errors.As(err, &tl):
			return nil, fmt.Errorf("waiver file %s: larger than %d bytes (MaxFileSize); a waiver file holds a handful of accepted findings", path, MaxFileSize)
		}
		return nil, fmt.Errorf("waiver file %s: %w", path, err)
	}
	return Parse(path, data)
}

// file is the TOML form: [[waiver]] tables.
type file struct {
	Waiver []entry `toml:"waiver"`
}

type entry struct {
	Struct   string `toml:"struct"`
	Field    string `toml:"field"`
	Symbol   string `toml:"symbol"`
	Rule     string `toml:"rule"`
	Releases string `toml:"releases"`
	Why      string `toml:"why"`
	Who      string `toml:"who"`
	Until    any    `toml:"until"`
}

// Parse validates data, the bytes of the file named name.
func Parse(name string, data []byte) (*Set, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("waiver file %s: larger than %d bytes (MaxFileSize)", name, MaxFileSize)
	}
	if err := nesting(name, data); err != nil {
		return nil, err
	}
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %s", Pos{name, pe.Position.Line, max(pe.Position.Col, 1)}, oneLine(pe.Message))
		}
		return nil, fmt.Errorf("waiver file %s: %s", name, oneLine(err.Error()))
	}
	x := index(name, data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		p := x.top(k[0])
		if len(k) > 1 {
			p = x.key(k[0], -1, k[len(k)-1])
		}
		return nil, fmt.Errorf("%s: unknown key %q; a [[waiver]] has struct, field, symbol, rule, releases, why, who, until", p, k.String())
	}
	if len(f.Waiver) > MaxWaivers {
		return nil, fmt.Errorf("%s: %d waivers, more than %d (MaxWaivers)", Pos{name, 1, 1}, len(f.Waiver), MaxWaivers)
	}
	s := &Set{File: name}
	for i, e := range f.Waiver {
		w, err := e.validate(x, i)
		if err != nil {
			return nil, err
		}
		s.Waivers = append(s.Waivers, w)
	}
	return s, nil
}

// validate checks one entry; errors name the key's place.
func (e entry) validate(x *posIndex, i int) (*Waiver, error) {
	at := func(key string) Pos { return x.key("waiver", i, key) }
	for _, kv := range [][2]string{{"struct", e.Struct}, {"field", e.Field}, {"symbol", e.Symbol}, {"rule", e.Rule},
		{"releases", e.Releases}, {"why", e.Why}, {"who", e.Who}} {
		if len(kv[1]) > MaxText {
			return nil, fmt.Errorf("%s: %s is %d bytes, more than %d (MaxText)", at(kv[0]), kv[0], len(kv[1]), MaxText)
		}
		if strings.ContainsFunc(kv[1], func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("%s: %s holds a control character; write it on one line", at(kv[0]), kv[0])
		}
	}
	w := &Waiver{Struct: e.Struct, Field: e.Field, Symbol: e.Symbol, Rule: e.Rule, Releases: e.Releases,
		Why: strings.TrimSpace(e.Why), Who: strings.TrimSpace(e.Who), At: x.entry(i)}
	switch {
	case e.Struct == "" && e.Symbol == "":
		return nil, fmt.Errorf("%s: waiver names no struct and no symbol; say what finding it accepts", w.At)
	case e.Struct != "" && e.Symbol != "":
		return nil, fmt.Errorf("%s: waiver names both struct and symbol; a finding is about one (split it in two)", at("symbol"))
	case e.Field != "" && e.Struct == "":
		return nil, fmt.Errorf("%s: field without struct; name the struct the field is in", at("field"))
	case e.Rule == "":
		return nil, fmt.Errorf("%s: waiver has no rule; name the finding's kind (offset, size, field-moved, ...) as the report prints it", w.At)
	case w.Why == "":
		return nil, fmt.Errorf("%s: waiver has no why; say why the finding is accepted", w.At)
	case w.Who == "":
		return nil, fmt.Errorf("%s: waiver has no who; name who accepted the finding", w.At)
	case e.Until == nil:
		return nil, fmt.Errorf("%s: waiver has no until; give the last day it holds (until = 2027-01-31)", w.At)
	}
	until, ok := e.Until.(time.Time)
	if !ok {
		return nil, fmt.Errorf("%s: until is %T, not a date; write it unquoted (until = 2027-01-31)", at("until"), e.Until)
	}
	if h, m, sec := until.Clock(); h != 0 || m != 0 || sec != 0 || until.Nanosecond() != 0 {
		return nil, fmt.Errorf("%s: until has a time of day; give a date (until = 2027-01-31)", at("until"))
	}
	if !ident(e.Rule) {
		return nil, fmt.Errorf("%s: rule %q is not a finding kind (lower-case words joined by -)", at("rule"), e.Rule)
	}
	w.Until = time.Date(until.Year(), until.Month(), until.Day(), 0, 0, 0, 0, time.UTC)
	if e.Releases != "" {
		from, to, ok := strings.Cut(e.Releases, "..")
		if !ok {
			to = from
		}
		for _, r := range []string{from, to} {
			if r != "" && !semver.IsValid("v"+r) {
				return nil, fmt.Errorf("%s: releases %q: %q is not a release name (2.31.24, 2.32.0-synthetic); write NAME, FROM..TO, FROM.. or ..TO", at("releases"), e.Releases, r)
			}
		}
		if from == "" && to == "" {
			return nil, fmt.Errorf("%s: releases %q names no release; leave it out to mean every release", at("releases"), e.Releases)
		}
		if from != "" && to != "" && semver.Compare("v"+from, "v"+to) > 0 {
			return nil, fmt.Errorf("%s: releases %q runs backwards; write the older release first", at("releases"), e.Releases)
		}
		w.From, w.To = from, to
	}
	return w, nil
}

// ident: a kind word as the reports print them ("offset", "field-moved").
func ident(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0) {
			return false
		}
	}
	return s != ""
}

// nesting bounds how deeply arrays and inline tables nest before the
// decoder recurses into them: a waiver has flat values only.
func nesting(name string, data []byte) error {
	depth, line, col := 0, 1, 0
	inStr, comment, escaped := byte(0), false, false
	for _, b := range data {
		col++
		switch {
		case escaped:
			escaped = false
		case b == '\\' && inStr == '"':
			escaped = true
		case b == '\n':
			line, col, comment = line+1, 0, false
			if inStr == '"' || inStr == '\'' {
				inStr = 0 // the decoder names the unclosed string
			}
		case comment:
		case inStr != 0:
			if b == inStr {
				inStr = 0
			}
		case b == '#':
			comment = true
		case b == '"' || b == '\'':
			inStr = b
		case b == '[' || b == '{':
			if depth++; depth > maxNesting {
				return fmt.Errorf("%s: values nested more than %d deep; a waiver's values are strings and a date", Pos{name, line, col}, maxNesting)
			}
		case b == ']' || b == '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

const maxNesting = 8

// oneLine keeps a decoder message on one line.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// Error is one violation, located at file:line:col and named by its rule.
type Error struct {
	Pos  Pos
	Rule string
	Msg  string
	key  string // the row and key the validator found it at (checker.at), for fold
}

// Error is one line: names quoted from the spec (and a directory's path)
// may hold line breaks, terminal escapes or bytes that are not UTF-8, which
// are escaped (esc.Text: the backslash is kept, as the message quotes
// names that may hold one).
func (e *Error) Error() string {
	return esc.Text(fmt.Sprintf("%s: [%s] %s", e.Pos, e.Rule, e.Msg))
}

// Errors is every violation found in one load, in file order.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// fold keeps one error per key of a row: a key with one bad value breaks
// several rules at once (a duplicate struct name is a duplicate, a clash of
// its Go names and of its C tag; a field name that is no identifier is
// neither a C member nor a Go field), and the first rule the validator
// checks names the fault; the others add lines, not facts. Errors not tied
// to a key (a table missing from every file) are distinct and all kept.
// es is sorted.
func (es Errors) fold() Errors {
	out := es[:0:0]
	seen := map[string]bool{}
	for _, e := range es {
		if e.key != "" {
			k := e.Pos.String() + "\x00" + e.key
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, e)
	}
	return out
}

func (es Errors) sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
}

// Rules lists every rule the loader and validator enforce, for documentation
// and for the test that holds a broken spec per rule.
var Rules = map[string]string{
	"syntax":          "the file is valid TOML",
	"decode":          "every value has the type its key expects",
	"unknown-key":     "every key is one the spec format defines (typos must not drop facts)",
	"required":        "required keys are present",
	"single-table":    "[release], [counts] and [slot_table] are defined exactly once",
	"conf":            "every fact carries conf = HIGH|MED|LOW|INFERRED and a source note",
	"count":           "declared counts hold (forward rows, nec_ and nrt_ reverse rows)",
	"unique":          "row keys are unique: names, message ids, contradiction and extension ids (one namespace), link behaviour variants",
	"forward-name":    "forward names are neuron*, trampolines nccl*",
	"reverse-name":    "reverse names are nec_* or nrt_*",
	"slot-range":      "slots are contiguous with the declared stride and cover exactly base..top",
	"dlsym-index":     "dlsym indices are a permutation, the probe at index 0 in the top slot, in the declared order",
	"guard":           "exactly the two documented exemptions are unguarded: the probe (index 0) and the hot proxy tick",
	"version-node":    "one BASE node; indices 1..n unique; parents declared and acyclic",
	"reverse-version": "every reverse symbol is bound to a declared, non-base version node",
	"adapter-mapping": "an adapter's target arguments name real parameters of the callback",
	"reentrant":       "a re-entrant callback re-enters only runtime queries, never a neuron* symbol",
	"type":            "type expressions parse and name declared types",
	"struct-order":    "fields are sorted by offset",
	"struct-overlap":  "fields do not overlap",
	"struct-bounds":   "fields and opaque ranges lie inside the struct size",
	"struct-align":    "fields are aligned for their type on x86-64 LP64",
	"struct-size":     "a declared field size agrees with its type; the struct size is a multiple of its alignment",
	"struct-cycle":    "structs do not embed themselves",
	"opaque-overlap":  "opaque ranges are non-empty and overlap neither fields nor each other",
	"enum":            "enums have size 1, 2, 4 or 8 and values that fit it; a shared value is an alias stated by alias_of naming the first enumerator with that value",
	"message-args":    "a message's printf verbs match its declared arguments",
	"constant":        "a constant's value has its declared type",
	"release-name":    "the release name matches its directory",
	"carried":         "carried_from names the derived_from release or one of its ancestors; a carried key list comes with carried_from",
	"release-version": "runtime_version and collectives_version are major.minor.patch[.maintenance], each part decimal without a leading zero, at most 999999999",
	"version-need":    "libnccom's version needs name declared libnrt nodes",
	"name":            "every name fits the grammar of each place the generator emits it: a C identifier that is no keyword, reserved or generator name; a GNU ld version node; a file name; one Go name per scope",
	"text":            "free text is UTF-8 without control characters; text emitted into a comment holds no */ or /*",
	"derive":          "derived_from names an existing release, the chain does not loop, [remove] names parent rows",
	"absent":          "an absent-field row names a C member that its struct does not also list as a field",
	"headers":         "[release.headers] names its tree; its prelude lists header names, its cflags single flags, its paths one line each",
}

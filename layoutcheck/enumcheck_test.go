package layoutcheck

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// enumHeader is a vendor-style header whose enums take every size and
// alias values; holder_t's fields put them across the boundary.
func enumHeader(event, status, size string) string {
	return `#include <stdint.h>
typedef enum ` + size + ` mesh_event_type {
` + event + `
} mesh_event_type_t;
typedef enum nrt_status_e {
` + status + `
} nrt_status_t;
typedef enum wide_e { WIDE_NEG = -1, WIDE_BIG = 0x100000000 } wide_t;
typedef struct holder {
	mesh_event_type_t event;
	nrt_status_t status;
	wide_t wide;
} holder_t;
`
}

const (
	baseEvents = "EVT_NONE = 0, EVT_SEND = 1, EVT_FIRST = 1, EVT_RECV = 2, EVT_REDUCE = 3, EVT_REDUCE_WRITE = 4, EVT_LAST = 4"
	baseStatus = "ST_SUCCESS = 0, ST_FAILURE = 1, ST_INVALID = 2"
	packed     = "__attribute__((packed))"
)

// extractEnums writes the fragment extracted from header's holder_t into
// a directory and loads it.
func extractEnums(t *testing.T, header string) (*spec.Spec, string) {
	t.Helper()
	h := compileHeaders(t, writeTree(t, map[string]string{"evt.h": header}))
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	return extractFragment(t, h.Object, release.ExtractOptions{Names: []string{"holder_t"}, Spec: sp})
}

// TestExtractKeepsEnums: an enum whose names share values (EVT_FIRST and
// EVT_SEND) is extracted as a spec enum with stated aliases and its size,
// a field of it keeps its enum type, and the fragment checks clean against
// the headers it came from.
func TestExtractKeepsEnums(t *testing.T) {
	header := enumHeader(baseEvents, baseStatus, packed)
	frag, text := extractEnums(t, header)
	for _, want := range []string{
		`{ name = "EVT_FIRST", value = 1, alias_of = "EVT_SEND" }`,
		`{ name = "EVT_LAST", value = 4, alias_of = "EVT_REDUCE_WRITE" }`,
		"name = \"mesh_event_type_t\"\ntag = \"mesh_event_type\"\nsize = 1\n",
		"name = \"wide_t\"\ntag = \"wide_e\"\nsize = 8\n",
		`type = "mesh_event_type_t"`, `type = "nrt_status_t"`, `type = "wide_t"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the fragment lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "do not make a spec enum") {
		t.Errorf("an enum was spelled by size:\n%s", text)
	}
	if e := frag.EnumByName("mesh_event_type_t"); e == nil || !frag.EnumCrosses(e) {
		t.Errorf("mesh_event_type_t: %+v, want an enum holder_t uses", e)
	}
	h := compileHeaders(t, writeTree(t, map[string]string{"evt.h": header}))
	r, err := Check(context.Background(), []string{h.Object}, Options{Spec: frag, Structs: frag, StructsSrc: "fragment", DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Exit != 0 || len(r.Files[0].Enums) != 3 || len(r.AbsentEnums) != 0 {
		t.Errorf("exit %d, enums %d, absent %v: %+v", r.Exit, len(r.Files[0].Enums), r.AbsentEnums, r.Findings)
	}
}

// enumFacts are the enum findings of a check and the enum changes of a
// diff as "severity kind enum.enumerator" lines, sorted.
func checkEnumFacts(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Kind, "enum") {
			subj := f.Struct
			if f.Field != "" {
				subj += "." + f.Field
			}
			out = append(out, fmt.Sprintf("%s %s %s", f.Severity, f.Kind, subj))
		}
	}
	sort.Strings(out)
	return out
}

func diffEnumFacts(r diff.Report) []string {
	var out []string
	for _, c := range r.Changes {
		if strings.HasPrefix(c.Kind, "enum") {
			out = append(out, fmt.Sprintf("%s %s %s", c.Severity, c.Kind, c.Subject))
		}
	}
	sort.Strings(out)
	return out
}

// TestEnumOneGrading feeds the same pairs of enums to check (the base
// fragment against the changed headers) and to diff (the base fragment
// against the changed headers' fragment) and requires the same facts with
// the same grades: one grading (grade.EnumGrade) behind both.
func TestEnumOneGrading(t *testing.T) {
	base, _ := extractEnums(t, enumHeader(baseEvents, baseStatus, packed))
	cases := []struct {
		name, events, status, size string
		want                       string
	}{
		{"inserted value shifts a run", "EVT_NONE = 0, EVT_SEND = 1, EVT_FIRST = 1, EVT_PROBE = 2, EVT_RECV = 3, EVT_REDUCE = 4, EVT_REDUCE_WRITE = 5, EVT_LAST = 5", baseStatus, packed,
			"compatible enumerator-added mesh_event_type_t.EVT_PROBE\nincompatible enumerator-shifted mesh_event_type_t.EVT_RECV..EVT_LAST"},
		{"status enumerators swapped", baseEvents, "ST_SUCCESS = 0, ST_FAILURE = 2, ST_INVALID = 1", packed,
			"incompatible enumerator-shifted nrt_status_t.ST_FAILURE\nincompatible enumerator-shifted nrt_status_t.ST_INVALID"},
		{"renamed", "EVT_NONE = 0, EVT_TX = 1, EVT_FIRST = 1, EVT_RECV = 2, EVT_REDUCE = 3, EVT_REDUCE_WRITE = 4, EVT_LAST = 4", baseStatus, packed,
			"compatible enumerator-renamed mesh_event_type_t.EVT_SEND"}, // EVT_FIRST follows its target: no second fact
		{"value removed", "EVT_NONE = 0, EVT_SEND = 1, EVT_FIRST = 1, EVT_REDUCE = 3, EVT_REDUCE_WRITE = 4, EVT_LAST = 4", baseStatus, packed,
			"incompatible enumerator-removed mesh_event_type_t.EVT_RECV"},
		{"alias shifted", "EVT_NONE = 0, EVT_SEND = 1, EVT_FIRST = 1, EVT_RECV = 2, EVT_REDUCE = 3, EVT_REDUCE_WRITE = 4, EVT_LAST = 3", baseStatus, packed,
			"incompatible enumerator-shifted mesh_event_type_t.EVT_LAST"},
		{"alias order swapped", "EVT_NONE = 0, EVT_FIRST = 1, EVT_SEND = 1, EVT_RECV = 2, EVT_REDUCE = 3, EVT_REDUCE_WRITE = 4, EVT_LAST = 4", baseStatus, packed,
			"compatible enumerator-alias mesh_event_type_t.EVT_FIRST\ncompatible enumerator-alias mesh_event_type_t.EVT_SEND"},
		{"size", baseEvents, baseStatus, "",
			"incompatible enum-size mesh_event_type_t"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header := enumHeader(tc.events, tc.status, tc.size)
			h := compileHeaders(t, writeTree(t, map[string]string{"evt.h": header}))
			r, err := Check(context.Background(), []string{h.Object}, Options{Spec: base, Structs: base, StructsSrc: "base", DebugDirs: []string{t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			next, _ := extractEnums(t, header)
			d := diff.Diff(base, next)
			got, fromDiff := strings.Join(checkEnumFacts(r), "\n"), strings.Join(diffEnumFacts(d), "\n")
			if got != tc.want {
				t.Errorf("check:\n%s\nwant:\n%s", got, tc.want)
			}
			if fromDiff != got {
				t.Errorf("diff grades otherwise than check:\ndiff:\n%s\ncheck:\n%s", fromDiff, got)
			}
		})
	}
}

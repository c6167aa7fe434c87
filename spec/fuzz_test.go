package spec

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzLoadSpec loads one mutated spec file as a whole release (seeds: every
// file of the embedded releases, testdata/fuzz/FuzzLoadSpec). The loader
// must return a spec or errors that each carry a file position; a panic,
// a hang or runaway memory fails the run.
func FuzzLoadSpec(f *testing.F) {
	for _, r := range Releases() {
		entries, err := fs.ReadDir(Embedded, r)
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data, err := fs.ReadFile(Embedded, path.Join(r, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	// A derived release with was and range rows (docs/spec-format.md#stable-field-names).
	f.Add([]byte(`[release]
name = "r"
derived_from = "2.31.24"
conf = "HIGH"
source = "seed"

[[struct]]
name = "bootstrap_msg_header"
size = 8
side = "wire"
conf = "HIGH"
source = "seed"

  [[struct.field]]
  name = "kind"
  offset = 0
  type = "u32"
  was = "type"
  conf = "HIGH"
  source = "seed"

  [[struct.field]]
  name = "length"
  offset = 4
  type = "i32"
  range = [0, 65536]
  conf = "HIGH"
  source = "seed"
`))
	// Extension and contradiction rows, the LOW grade (docs/spec-format.md#extensions).
	f.Add([]byte(`[release]
name = "r"
derived_from = "2.31.24"
conf = "LOW"
source = "seed"
conf_fields = { name = "LOW" }

[[extension]]
id = "a-b"
topic = "t"
seed = "s"
ours = "o"
reason = "r"
conf = "LOW"
source = "seed"

[[contradiction]]
id = "a-b"
topic = "t"
claims = ["x"]
chosen = "c"
conf = "INFERRED"
source = "seed"
`))
	// Enum rows: stated aliases, the four underlying sizes, signed values,
	// and the faults the enum rule names (docs/spec-format.md#enums).
	f.Add([]byte(`[release]
name = "r"
derived_from = "2.31.24"
conf = "HIGH"
source = "seed"

[[enum]]
name = "evt_t"
tag = "evt"
size = 1
conf = "HIGH"
source = "seed"
values = [
  { name = "EVT_A", value = 0 },
  { name = "EVT_B", value = 1 },
  { name = "EVT_FIRST", value = 0, alias_of = "EVT_A" },
  { name = "EVT_LAST", value = 1, alias_of = "EVT_A" },
  { name = "EVT_DUP", value = 1 },
  { name = "EVT_BIG", value = 300 },
]

[[enum]]
name = "wide_t"
size = 8
conf = "HIGH"
source = "seed"
values = [{ name = "WIDE_NEG", value = -1 }, { name = "WIDE_TOP", value = 0x7fffffffffffffff }]

[[enum]]
name = "half_t"
size = 2
conf = "HIGH"
source = "seed"
values = [{ name = "HALF_A", value = 65535 }, { name = "HALF_B", value = 7, alias_of = "HALF_B" }]

[[enum]]
name = "odd_t"
size = 3
conf = "HIGH"
source = "seed"
values = [{ name = "ODD_A", value = 1, alias_of = "NOWHERE" }]
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"r/spec.toml": {Data: data}}
		s, err := LoadFS(fsys, "r", "r")
		if err == nil {
			if s == nil {
				t.Fatal("no spec and no error")
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line plain error: %q", err)
			}
			return
		}
		// Errors about the file's text always point into it (release-wide
		// rules, such as the guard count, may have no one place).
		for _, e := range errs {
			if strings.Contains(e.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", e.Error())
			}
			switch e.Rule {
			case "syntax", "decode", "unknown-key", "derive", "single-table", "was", "range", "enum":
				if e.Pos.File == "" || e.Pos.Line == 0 {
					t.Fatalf("an error without a position: %v", e)
				}
			}
		}
	})
}

// FuzzParseType parses type expressions: a result must print back to a
// string that parses to the same type, and its size must never wrap.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"u32", "const char*", "void*[96]", "u8[2][3]", "u64[]", "volatile u32*",
		"std::vector<std::vector<u32>>", "pthread_mutex_t", "nrt_tensor_t*", "u8[1073741824][1073741824][16]",
		"std::vector<u8", "u8" + strings.Repeat("[1]", 20), "const volatile const u8**",
		// declarator compositions and qualifier placement (docs/spec-format.md#types)
		"int*[4]*[10]", "int[7]*", "char* const", "const volatile u32* volatile*",
		"std::vector<std::vector<u32*>>*[2]", "char*const[4]", "x*const const"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := ParseType(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		back := ty.String()
		ty2, err := ParseType(back)
		if err != nil {
			t.Fatalf("%q parses, but its spelling %q does not: %v", s, back, err)
		}
		if ty2.String() != back {
			t.Fatalf("%q -> %q -> %q", s, back, ty2.String())
		}
		if ty.Size() < 0 {
			t.Fatalf("%q has size %d", s, ty.Size())
		}
	})
}

// Package hostile builds the crafted inputs of the hostile-input tests: spec
// files and ELF objects that once crashed, hung or exhausted the memory of
// nrtabi. The package tests use them one by one; cmd/nrtabi runs every
// command on all of them under a memory limit.
//
// Why each input exists: docs/layoutcheck.md#hostile-inputs.
package hostile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SpecCase is one crafted spec file, added as hostile.toml to a copy of a
// valid release.
type SpecCase struct {
	Name string
	Text string
	// Release is a line added to the [release] table of release.toml.
	Release string
	// Want is a fragment of the one error the loader must report.
	Want string
}

func structWith(size, body string) string {
	return `[[struct]]
name = "hostile_t"
size = ` + size + `
conf = "HIGH"
source = "crafted"
` + body
}

func field(offset, typ string) string {
	return `
  [[struct.field]]
  name = "f"
  offset = ` + offset + `
  type = "` + typ + `"
  conf = "HIGH"
  source = "crafted"
`
}

// SpecCases are the crafted spec files. Each must give one clear error,
// quickly and in bounded memory.
func SpecCases() []SpecCase {
	return []SpecCase{
		{Name: "size-wraps", Text: structWith("16", field("0", "u8[1073741824][1073741824][16]")), Want: "larger than 2147483647 bytes"},
		{Name: "offset-near-2^63", Text: structWith("16", field("9223372036854775800", "u64")), Want: "lies outside the struct"},
		{Name: "opaque-near-2^63", Text: structWith("16", field("0", "u64")+`
  [[struct.opaque]]
  offset = 9223372036854775800
  size = 16
`), Want: "lies outside the struct"},
		{Name: "opaque-size-huge", Text: structWith("16", field("0", "u64")+`
  [[struct.opaque]]
  offset = 8
  size = 9223372036854775800
`), Want: "lies outside the struct"},
		{Name: "size-huge", Text: structWith("9223372036854775800", field("0", "u64")), Want: "cannot be laid out"},
		{Name: "nested-arrays", Text: "x = " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + "\n", Want: "nest more than"},
		{Name: "nested-inline-tables", Text: "x = " + strings.Repeat("{a = ", 10000) + "1" + strings.Repeat("}", 10000) + "\n", Want: "nest more than"},
		{Name: "long-line-array", Text: "unknown_list = [" + strings.Repeat(`"ab", `, 200000) + "]\n", Want: `unknown key "unknown_list"`},
		{Name: "many-dims", Text: structWith("16", field("0", "u8"+strings.Repeat("[1]", 30000))), Want: "characters; a type expression has at most"},
		{Name: "many-stars", Text: structWith("16", field("0", "u8"+strings.Repeat("*", 1000000))), Want: "characters; a type expression has at most"},
		{Name: "deep-dims", Text: structWith("16", field("0", "u8"+strings.Repeat("[1]", 20))), Want: "more than 16 levels"},
		{Name: "deep-vector", Text: structWith("16", field("0", strings.Repeat("std::vector<", 10000)+"u8"+strings.Repeat(">", 10000))), Want: "characters; a type expression has at most"},
		{Name: "deep-vector-short", Text: structWith("24", field("0", strings.Repeat("std::vector<", 20)+"u8"+strings.Repeat(">", 20))), Want: "more than 16 levels"},
		{Name: "derived-escapes", Release: `derived_from = "../../x"`, Want: `not a release name`},
		{Name: "nested-mismatch", Text: "[remove]\nforward = [\"a\", 1]\n", Want: "forward[1] = 1: expected a string"},
	}
}

// Apply writes the case into dir, a copy of a valid release.
func (c SpecCase) Apply(dir string) error {
	if c.Text != "" {
		if err := os.WriteFile(filepath.Join(dir, "hostile.toml"), []byte(c.Text), 0o644); err != nil {
			return err
		}
	}
	if c.Release == "" {
		return nil
	}
	p := filepath.Join(dir, "release.toml")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte("[release]\n")) {
		return fmt.Errorf("%s has no [release] table", p)
	}
	data = bytes.Replace(data, []byte("[release]\n"), []byte("[release]\n"+c.Release+"\n"), 1)
	return os.WriteFile(p, data, 0o644)
}

// row is a [[struct]] of one u64 field with the given keys after its name.
func row(name, keys string) string {
	return `[[struct]]
name = ` + name + `
size = 8
conf = "HIGH"
` + keys + `
  [[struct.field]]
  name = "f"
  offset = 0
  type = "u64"
  conf = "HIGH"
  source = "crafted"
`
}

// InjectionCases are spec files whose text the generator once emitted as
// live C, linker script or Go (docs/spec-format.md#where-spec-text-is-emitted):
// `spec validate` refuses each at
// its file:line:col. Text is added as hostile.toml to a copy of a release.
func InjectionCases() []SpecCase {
	return []SpecCase{
		{Name: "comment-end-in-struct-source", Text: row(`"hostile_t"`, `source = "x */ int injected; /*"`), Want: `would end or nest the C comment`},
		{Name: "comment-end-in-struct-note", Text: row(`"hostile_t"`, "source = \"crafted\"\nnote = \"*/ int injected; /*\""), Want: `would end or nest the C comment`},
		{Name: "comment-end-in-enum-source", Text: "[[enum]]\nname = \"hostile_e\"\nsize = 4\nvalues = [{ name = \"HOSTILE_A\", value = 0 }]\nconf = \"HIGH\"\nsource = \"*/ int injected; /*\"\n", Want: `would end or nest the C comment`},
		{Name: "enum-tag-not-ident", Text: "[[enum]]\nname = \"hostile_e\"\ntag = \"x; int y\"\nsize = 4\nvalues = [{ name = \"HOSTILE_A\", value = 0 }]\nconf = \"HIGH\"\nsource = \"crafted\"\n", Want: `enum tag "x; int y" cannot be emitted as C`},
		{Name: "enum-member-brace", Text: "[[enum]]\nname = \"hostile_e\"\nsize = 4\nvalues = [{ name = \"A } ; int z; enum { B\", value = 0 }]\nconf = \"HIGH\"\nsource = \"crafted\"\n", Want: `enumerator "A } ; int z; enum { B" cannot be emitted as C`},
		{Name: "version-node-script", Text: "[[version_node]]\nname = \"A { global: z; }\"\nindex = 4\nparent = \"NRT_2.0.0\"\nconf = \"HIGH\"\nsource = \"crafted\"\n", Want: `cannot be written into a linker version script`},
		{Name: "struct-name-space", Text: row(`"hostile t"`, `source = "crafted"`), Want: `struct "hostile t" cannot be emitted as C`},
		{Name: "struct-name-brace", Text: row(`"h{x}_t"`, `source = "crafted"`), Want: `struct "h{x}_t" cannot be emitted as C`},
		{Name: "struct-name-nul", Text: row(`"h\u0000_t"`, `source = "crafted"`), Want: `struct "h\x00_t" cannot be emitted as C`},
		{Name: "struct-name-esc", Text: row(`"h\u001b[31m_t"`, `source = "crafted"`), Want: `struct "h\x1b[31m_t" cannot be emitted as C`},
		{Name: "struct-name-keyword", Text: row(`"_Bool"`, `source = "crafted"`), Want: `struct "_Bool" cannot be emitted as C: it is a C or C++ keyword`},
		{Name: "struct-name-reserved", Text: row(`"__hostile"`, `source = "crafted"`), Want: `reserved to the C implementation`},
		{Name: "field-name-keyword", Text: "[[struct]]\nname = \"hostile_t\"\nsize = 8\nconf = \"HIGH\"\nsource = \"crafted\"\n  [[struct.field]]\n  name = \"typeof\"\n  offset = 0\n  type = \"u64\"\n  conf = \"HIGH\"\n  source = \"crafted\"\n", Want: `field of hostile_t "typeof" cannot be emitted as C`},
		{Name: "constant-name-macro", Text: "[[constant]]\nname = \"memset\"\ntype = \"int\"\nvalue = 1\nconf = \"HIGH\"\nsource = \"crafted\"\n", Want: `the generated C already uses it`},
		{Name: "struct-tag-brace", Text: row(`"hostile_t"`, "tag = \"h } x; struct {\"\nsource = \"crafted\""), Want: `struct tag "h } x; struct {" cannot be emitted as C`},
		{Name: "opaque-tag-space", Text: "[[opaque_type]]\nname = \"hostile_o_t\"\ntag = \"hostile o\"\nconf = \"HIGH\"\nsource = \"crafted\"\n", Want: `opaque type tag "hostile o" cannot be emitted as C`},
		{Name: "source-esc", Text: row(`"hostile_t"`, "source = \"a\\u001b]0;owned\\u0007\""), Want: `control character U+001B`},
	}
}

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

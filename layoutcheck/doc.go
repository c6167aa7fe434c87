// Package layoutcheck compares real ELF binaries with a release spec: struct
// layouts read from DWARF (through elfread), and the link contract read from
// the dynamic table, the version definitions and the version needs.
//
// The checks are described in docs/layoutcheck.md, the command and its report
// formats in docs/nrtabi-check.md.
package layoutcheck

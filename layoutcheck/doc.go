// Package layoutcheck compares real ELF binaries with a release spec: struct
// layouts read from DWARF (through elfread), and the link contract read from
// the dynamic table, the version definitions and the version needs.
package layoutcheck

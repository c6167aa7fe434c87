// Package specmatch ties spec rows to what a binary holds, for both the
// checker (layoutcheck) and the release workflow (release): the role a file
// plays by its SONAME, the names a spec struct may carry in DWARF, whether a
// DWARF type is the spec type, and how an input is named in reports and
// provenance (a compiled header set by its headers).
//
// See docs/layoutcheck.md#finding-structs.
package specmatch

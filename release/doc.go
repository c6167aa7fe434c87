// Package release is the release workflow: it observes binaries against a
// base spec (Observe: roles, symbols, versions, slots, prototypes and the
// structs their DWARF holds), extracts structs as spec rows (ExtractFrom;
// Extract renders them as a fragment file), and makes a derived release in
// memory (New), validated by spec.Assemble before anything is written. TOML
// is rendered only by Write and Extract, where a file is made.
package release

// Package layoutcheck compares real ELF binaries with a release spec: struct
// layouts read from DWARF (through godwarf), and the link contract read from
// the dynamic table, the version definitions and the version needs.
//
// Reading is lazy on purpose: a fast scanner walks .debug_info once, decoding
// only the names of type DIEs at namespace scope, skipping every subtree that
// cannot hold a wanted struct and stopping as soon as every wanted struct is
// found. Only the DIEs of the structs found are then decoded into types.
package layoutcheck

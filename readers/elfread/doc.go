// Package elfread reads what the checker and the release workflow need from
// ELF binaries: the object's identity (build-id, debuglink, SONAME, needed
// libraries), its dynamic symbol table with version definitions and needs,
// function bytes, and the DWARF of its structs, found in the file, in a
// separate debug file (build-id tree, .gnu_debuglink) or from debuginfod
// (package internal/debuginfod), together with the parts that DWARF
// refers to: a dwz supplementary file and split units (.dwo, .dwp). The
// parts share one offset space, so a struct found anywhere is read through
// one Reader. It knows nothing of specs. Its byte cursor (cursor.go) and
// bounded inflater (inflate.go) are its own, unexported, as debug/dwarf's
// buf is; files are opened through internal/regfile.
//
// Reading is lazy on purpose: a fast scanner walks .debug_info once, decoding
// only the names of type DIEs at namespace scope, skipping every subtree that
// cannot hold a wanted struct and stopping as soon as every wanted struct is
// found. Only the DIEs the structs found reach are then decoded, each
// once, into the type graph of package typemodel (Types, types.go): the
// package's own front end, over the same scanner; AllTypes decodes every
// unit on parallel workers instead, for a whole-library extraction.
//
// The API is debug/elf's shape: Open(path) maps a file and NewFile reads one
// through an io.ReaderAt, each giving a *File that Close releases;
// FindDebug(file, Lookup) and OpenDebug(path, Lookup) give its *Debug, whose
// Close releases the debug files it opened (and, from OpenDebug, the file).
// A mapped file truncated by another process while it is read faults; Guard
// (or SetPanicOnFault with FaultError, as the CLI does) makes that an
// *InputError naming the file (fault.go says why the files stay mapped).
//
// Every error about an input is an *InputError: one line naming the file
// (none for a File from NewFile, which has no name).
//
// The order in which debug files are looked for:
// docs/layoutcheck.md#how-debug-info-is-found.
package elfread

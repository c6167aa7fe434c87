// Package pkgfile reads software packages as they ship — .deb, .rpm and
// .tar.gz/.tar.xz/.tar.zst archives — in memory, never unpacking them to
// disk, and exposes their ELF members as in-memory inputs named
// PACKAGE!/path/in/package (docs/packages.md). Members under /usr/lib/debug
// are debug files: they answer the debug lookup of the other inputs by
// build-id and by .gnu_debuglink name, as abipkgdiff pairs a -dbgsym or
// -debuginfo package with its main package.
//
// Every archive is hostile input: member names are names only (nothing is
// written, so ../ and absolute names reach nothing), links are not
// followed, sizes are checked against what the archive holds, and the
// bytes decompressed from one package are bounded relative to its size
// (Limit), so a decompression bomb is refused by name.
package pkgfile
